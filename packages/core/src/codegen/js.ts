import { KernelBuildError } from '../errors.ts';
import { containsBarrier, walkStmts } from '../ir/analyze.ts';
import type { Kernel } from '../ir/builder.ts';
import { type BinaryFn, type Expr, type KernelIR, privateArrayLength, type Stmt, workgroupShapeOf } from '../ir/nodes.ts';
import { typeInfo, type ValueType } from '../ir/types.ts';
import { JS_RUNTIME } from './js-runtime.ts';

/**
 * JavaScript code generation for the CPU backend.
 *
 * The result is the source of an expression evaluating to
 * `run(B, U, wgStart, wgEnd, numWorkgroups, grid)`: B maps buffer names to typed arrays
 * (u32 -> Uint32Array, i32 -> Int32Array, f32 -> Float32Array), U maps uniform
 * names to numbers; it runs workgroups [wgStart, wgEnd) of the linearised grid,
 * whose extent along x, y, z is `grid` (workgroup wgi sits at
 * `x + y * grid[0] + z * grid[0] * grid[1]`).
 *
 * Values: u32 as numbers in [0, 2^32), i32 as int32 numbers, f32 as doubles rounded
 * with Math.fround after every operation, bool as booleans, vectors as arrays.
 *
 * Workgroups with barriers run by phase splitting (seed 000's meta-program, run
 * backwards): the statements between barriers form phases, each a loop over the
 * local ids; control flow that contains a barrier runs once per workgroup with its
 * condition taken from invocation 0 (such conditions must be uniform, as on a GPU);
 * variables used in more than one phase become per-invocation arrays.
 *
 * Private arrays are one typed array per kernel holding every invocation's slice
 * (`lid * length + i`), zeroed per workgroup: so they survive phase splitting the
 * way spilled variables do.
 *
 * Workgroup arrays are typed arrays private to the workgroup being run (one
 * worker runs the whole workgroup, its invocations one after another), so atomics
 * on atomic workgroup arrays go through the same `Atomics` helpers as buffer
 * atomics, only for the bounds check and the old-value result: no other thread
 * can see the array.
 */
export interface JsKernelSource {
  readonly source: string;
}

export function generateJs(kernel: Kernel, backend = 'cpu'): JsKernelSource {
  const gen = new JsGenerator(kernel.ir, backend);
  return { source: gen.generate() };
}

const SCALAR_ARRAY: Record<string, string> = { u32: 'Uint32Array', i32: 'Int32Array', f32: 'Float32Array' };

class JsGenerator {
  private readonly ir: KernelIR;
  private readonly vectorWidth = new Map<string, number>();
  private readonly varName = new Map<number, string>();
  private readonly hasBarrier: boolean;
  private readonly hasReturn: boolean;
  /** Variables kept per invocation across phases (barrier kernels only). */
  private spilled = new Set<number>();
  /** Which phases reference each variable; phase -1 is workgroup-level code. */
  private usage = new Map<number, Set<number>>();
  private phase = -1;
  private phaseCount = 0;
  private labelCount = 0;
  /** Innermost loop first: its labels and whether it lies outside the current phase. */
  private loops: Array<{ brk: string; cont: string; outsidePhase: boolean }> = [];
  /** Jumps (`break L0`, `break C0`) out of the current phase to barrier loops around it. */
  private phaseJumps: string[] = [];

  constructor(ir: KernelIR, backend: string) {
    this.ir = ir;
    void backend; // every IR construct runs on the CPU backend: nothing to refuse by name
    for (const [name, decl] of ir.params) if (decl.kind === 'buffer') this.vectorWidth.set(name, decl.vector);
    for (const v of ir.vars) this.varName.set(v.id, v.name);
    this.hasBarrier = containsBarrier(ir.body);
    let ret = false;
    walkStmts(ir.body, (s) => {
      if (s.op === 'return') ret = true;
    });
    this.hasReturn = ret;
  }

  generate(): string {
    if (this.hasBarrier) {
      // First pass: find which variables live across phases.
      this.spilled = new Set(this.ir.vars.map((v) => v.id));
      this.region(this.ir.body, '');
      this.spilled = new Set([...this.usage].filter(([, phases]) => phases.size > 1 || phases.has(-1)).map(([id]) => id));
      this.usage = new Map();
      this.phaseCount = 0;
      this.labelCount = 0;
    }
    const body = this.hasBarrier ? this.region(this.ir.body, '      ') : this.phaseLoop(this.ir.body, '      ');
    const ir = this.ir;
    const lines: string[] = [];
    lines.push('(() => {', `// Trident kernel '${ir.name}' (generated JavaScript, workgroup size ${ir.workgroupSize})`);
    lines.push(JS_RUNTIME.trim(), 'return function run(B, U, wgStart, wgEnd, nwg, G = [nwg, 1, 1]) {');
    lines.push(`  const WG = ${ir.workgroupSize};`);
    const [sx, sy] = workgroupShapeOf(ir);
    lines.push(`  const SX = ${sx}, SY = ${sy}; // workgroup shape (z = WG / (SX * SY))`);
    for (const [name, decl] of ir.params) {
      if (decl.kind === 'buffer') {
        lines.push(`  const b_${name} = B.${name};`);
        lines.push(`  const len_${name} = ${decl.vector === 1 ? `b_${name}.length` : `(b_${name}.length / ${decl.vector}) >>> 0`};`);
        // f32 atomics work on the bits: Atomics takes integer views only.
        if (decl.access === 'atomic' && decl.dtype === 'f32')
          lines.push(`  const bits_${name} = new Uint32Array(b_${name}.buffer, b_${name}.byteOffset, b_${name}.length);`);
      } else {
        lines.push(`  const u_${name} = U.${name};`);
      }
    }
    for (const a of ir.workgroupArrays) {
      const { scalar, width } = typeInfo(a.type);
      const ctor = width === 1 ? SCALAR_ARRAY[scalar] : undefined;
      lines.push(`  const wg_${a.id} = ${ctor ? `new ${ctor}(${a.length})` : `new Array(${a.length}).fill(${zeroOf(a.type)})`};`);
    }
    for (const v of ir.vars) {
      if (this.spilled.has(v.id)) lines.push(`  const ${v.name} = new Array(WG).fill(${zeroOf(v.type)});`);
      else lines.push(`  let ${v.name} = ${zeroOf(v.type)};`);
    }
    for (const a of ir.privateArrays ?? []) {
      const { scalar, width } = typeInfo(a.type);
      const ctor = width === 1 ? SCALAR_ARRAY[scalar] : undefined;
      const n = a.length * ir.workgroupSize;
      lines.push(`  const pa_${a.id} = ${ctor ? `new ${ctor}(${n})` : `new Array(${n}).fill(${zeroOf(a.type)})`};`);
    }
    if (this.hasBarrier && this.hasReturn) lines.push('  const done = new Uint8Array(WG);');
    if (this.hasBarrier) lines.push('  let $xf = 0; // a break/continue out of a barrier loop, taken after the phase');
    lines.push('  for (let wgi = wgStart; wgi < wgEnd; wgi++) {');
    for (const a of ir.workgroupArrays) lines.push(`    wg_${a.id}.fill(${zeroOf(a.type)});`);
    for (const a of ir.privateArrays ?? []) lines.push(`    pa_${a.id}.fill(${zeroOf(a.type)});`);
    lines.push('    const WX = wgi % G[0], WY = Math.floor(wgi / G[0]) % G[1], WZ = Math.floor(wgi / (G[0] * G[1]));');
    if (this.hasBarrier && this.hasReturn) lines.push('    done.fill(0);');
    lines.push(body);
    lines.push('  }', '};', '})()');
    return lines.join('\n');
  }

  // ---------- regions and phases ----------

  /** Code for a statement list that may contain barriers, at workgroup level. */
  private region(stmts: readonly Stmt[], ind: string): string {
    if (!containsBarrier(stmts)) return stmts.length ? this.phaseLoop(stmts, ind) : '';
    const out: string[] = [];
    let run: Stmt[] = [];
    const endRun = () => {
      if (run.length) out.push(this.phaseLoop(run, ind));
      run = [];
    };
    for (const s of stmts) {
      if (!containsBarrier([s])) {
        run.push(s);
        continue;
      }
      endRun();
      if (s.op === 'barrier') continue; // phases already run in order
      if (s.op === 'if') {
        out.push(`${ind}if (${this.uniformExpr(s.cond)}) {`);
        out.push(this.region(s.thenBlock, `${ind}  `));
        if (s.elseBlock.length) out.push(`${ind}} else {`, this.region(s.elseBlock, `${ind}  `));
        out.push(`${ind}}`);
      } else if (s.op === 'loop') {
        const brk = `L${this.labelCount++}`;
        const cont = `C${this.labelCount++}`;
        this.loops.unshift({ brk, cont, outsidePhase: true });
        out.push(`${ind}${brk}: for (;;) {`);
        out.push(this.region(s.condPrelude, `${ind}  `));
        out.push(`${ind}  if (!(${this.uniformExpr(s.cond)})) break;`);
        out.push(`${ind}  ${cont}: {`, this.region(s.body, `${ind}    `), `${ind}  }`);
        out.push(this.region(s.update, `${ind}  `));
        out.push(`${ind}}`);
        this.loops.shift();
      } else {
        throw new KernelBuildError(this.ir.name, `internal: unexpected '${s.op}' holding a barrier`);
      }
    }
    endRun();
    return out.filter((l) => l.length > 0).join('\n');
  }

  /** A condition of control flow that holds barriers, taken from invocation 0. */
  private uniformExpr(e: Expr): string {
    const saved = this.phase;
    this.phase = -1;
    const code = `((lid) => ${this.expr(e)})(0)`;
    this.phase = saved;
    return code;
  }

  /** A barrier-free statement list, run for every invocation of the workgroup. */
  private phaseLoop(stmts: readonly Stmt[], ind: string): string {
    const saved = this.phase;
    this.phase = this.phaseCount++;
    const savedLoops = this.loops;
    this.loops = this.loops.map((l) => ({ ...l, outsidePhase: true }));
    const savedJumps = this.phaseJumps;
    this.phaseJumps = [];
    const skip = this.hasBarrier && this.hasReturn ? `${ind}  if (done[lid]) continue;\n` : '';
    let code = `${ind}inv: for (let lid = 0; lid < WG; lid++) {\n${skip}${this.stmts(stmts, `${ind}  `)}\n${ind}}`;
    // A break/continue out of a barrier loop is workgroup-uniform (checked when the kernel
    // was built): each invocation leaves the phase, then the workgroup takes the jump.
    const jumps = this.phaseJumps.map((j, i) => `${ind}  if (j === ${i + 1}) ${j};`);
    if (jumps.length) code += `\n${ind}if ($xf !== 0) {\n${ind}  const j = $xf;\n${ind}  $xf = 0;\n${jumps.join('\n')}\n${ind}}`;
    this.phaseJumps = savedJumps;
    this.loops = savedLoops;
    this.phase = saved;
    return code;
  }

  // ---------- statements inside a phase ----------

  private stmts(stmts: readonly Stmt[], ind: string): string {
    return stmts.map((s) => this.stmt(s, ind)).join('\n');
  }

  private stmt(s: Stmt, ind: string): string {
    switch (s.op) {
      case 'let':
        return `${ind}${this.varRef(s.id)} = ${this.expr(s.init)};`;
      case 'assign':
        return `${ind}${this.varRef(s.id)} = ${this.expr(s.value)};`;
      case 'store': {
        const w = this.vectorWidth.get(s.buffer) ?? 1;
        const idx = this.expr(s.index);
        if (w > 1) return `${ind}$stv(b_${s.buffer}, ${idx}, ${w}, ${this.expr(s.value)});`;
        // Typed arrays ignore stores outside [0, length): the IR's out-of-range rule.
        return `${ind}b_${s.buffer}[${idx}] = ${this.expr(s.value)};`;
      }
      case 'wgStore':
        return `${ind}wg_${s.array}[${this.expr(s.index)}] = ${this.expr(s.value)};`;
      case 'privStore': {
        const n = this.privateLength(s.array);
        return `${ind}{ const $i = ${this.expr(s.index)}; if ($i >= 0 && $i < ${n}) pa_${s.array}[lid * ${n} + $i] = ${this.expr(s.value)}; }`;
      }
      case 'eval':
        return `${ind}${this.expr(s.expr)};`;
      case 'if': {
        const parts = [`${ind}if (${this.expr(s.cond)}) {`, this.stmts(s.thenBlock, `${ind}  `)];
        if (s.elseBlock.length) parts.push(`${ind}} else {`, this.stmts(s.elseBlock, `${ind}  `));
        parts.push(`${ind}}`);
        return parts.filter((p) => p.length > 0).join('\n');
      }
      case 'loop': {
        const brk = `L${this.labelCount++}`;
        const cont = `C${this.labelCount++}`;
        this.loops.unshift({ brk, cont, outsidePhase: false });
        const parts = [
          `${ind}${brk}: for (;;) {`,
          this.stmts(s.condPrelude, `${ind}  `),
          `${ind}  if (!(${this.expr(s.cond)})) break;`,
          `${ind}  ${cont}: {`,
          this.stmts(s.body, `${ind}    `),
          `${ind}  }`,
          this.stmts(s.update, `${ind}  `),
          `${ind}}`,
        ];
        this.loops.shift();
        return parts.filter((p) => p.length > 0).join('\n');
      }
      case 'break':
      case 'continue': {
        const loop = this.loops[0];
        if (!loop) throw new KernelBuildError(this.ir.name, `${s.op} outside a loop`);
        if (loop.outsidePhase) {
          const target = `break ${s.op === 'break' ? loop.brk : loop.cont}`;
          let code = this.phaseJumps.indexOf(target) + 1;
          if (code === 0) code = this.phaseJumps.push(target);
          return `${ind}$xf = ${code}; continue inv;`;
        }
        return `${ind}break ${s.op === 'break' ? loop.brk : loop.cont};`;
      }
      case 'return':
        return this.hasBarrier && this.hasReturn ? `${ind}done[lid] = 1; continue inv;` : `${ind}continue inv;`;
      case 'barrier':
        throw new KernelBuildError(this.ir.name, 'internal: barrier inside a phase');
    }
  }

  private varRef(id: number): string {
    const name = this.varName.get(id);
    if (name === undefined) throw new KernelBuildError(this.ir.name, `internal: unknown variable ${id}`);
    const phases = this.usage.get(id) ?? new Set<number>();
    phases.add(this.phase);
    this.usage.set(id, phases);
    return this.spilled.has(id) ? `${name}[lid]` : name;
  }

  // ---------- expressions ----------

  private expr(e: Expr): string {
    switch (e.op) {
      case 'const':
        return constant(e.type, e.value);
      case 'uniform':
        return `u_${e.name}`;
      case 'builtin':
        switch (e.name) {
          case 'globalIndex':
            return '(wgi * WG + lid)';
          case 'localIndex':
            return 'lid';
          case 'workgroupIndex':
            return 'wgi';
          case 'workgroupSize':
            return 'WG';
          case 'numWorkgroups':
            return 'nwg';
          case 'subgroupSize':
            return '1';
          case 'subgroupInvocation':
            return '0';
          case 'localId':
            return '[lid % SX, Math.floor(lid / SX) % SY, Math.floor(lid / (SX * SY))]';
          case 'workgroupId':
            return '[WX, WY, WZ]';
          case 'globalId':
            return '[WX * SX + lid % SX, WY * SY + (Math.floor(lid / SX) % SY), WZ * (WG / (SX * SY)) + Math.floor(lid / (SX * SY))]';
          case 'workgroupCount':
            return '[G[0], G[1], G[2]]';
        }
        break;
      case 'var':
        return this.varRef(e.id);
      case 'unary':
        return this.mapVec(e.type, [e.a], ([a]) => unary(e.fn, typeInfo(e.type).scalar, a as string));
      case 'binary': {
        const scalar = typeInfo(e.a.type).scalar;
        return this.mapVec(e.a.type, [e.a, e.b], ([a, b]) => binary(e.fn, scalar, a as string, b as string));
      }
      case 'call': {
        const scalar = typeInfo(e.type).scalar;
        return this.mapVec(e.type, e.args, (args) => mathCall(e.fn, scalar, args));
      }
      case 'select':
        return `(${this.expr(e.cond)} ? ${this.expr(e.ifTrue)} : ${this.expr(e.ifFalse)})`;
      case 'convert': {
        const from = typeInfo(e.a.type).scalar;
        const to = typeInfo(e.type).scalar;
        return this.mapVec(e.type, [e.a], ([a]) => convert(from, to, a as string));
      }
      case 'bitcast': {
        const from = typeInfo(e.a.type).scalar;
        const to = typeInfo(e.type).scalar;
        return this.mapVec(e.type, [e.a], ([a]) => bitcast(from, to, a as string));
      }
      case 'load': {
        const w = this.vectorWidth.get(e.buffer) ?? 1;
        const idx = this.expr(e.index);
        if (w > 1) return `$ldv(b_${e.buffer}, ${idx}, ${w})`;
        return `(b_${e.buffer}[${idx}] ?? 0)`;
      }
      case 'length':
        return `len_${e.buffer}`;
      case 'atomic':
        if (e.type === 'f32') return this.f32Atomic(e);
        return this.atomic(e, `b_${e.buffer}`);
      case 'wgAtomic':
        return this.atomic(e, `wg_${e.array}`);
      case 'wgLoad':
        return `(wg_${e.array}[${this.expr(e.index)}] ?? ${zeroOf(e.type)})`;
      case 'privLoad': {
        const n = this.privateLength(e.array);
        return `((i) => (i >= 0 && i < ${n} ? pa_${e.array}[lid * ${n} + i] : ${zeroOf(e.type)}))(${this.expr(e.index)})`;
      }
      case 'subgroup':
        // Subgroups of width 1: every reduction is the value itself.
        if (e.fn === 'exclusiveAdd') return `((${this.expr(e.a)}), ${zeroOf(e.type)})`;
        // The one lane is lane 0: bit 0 of the first word.
        if (e.fn === 'ballot') return `[(${this.expr(e.a)}) ? 1 : 0, 0, 0, 0]`;
        return this.expr(e.a);
      case 'construct':
        return `[${e.args.map((a) => this.expr(a)).join(', ')}]`;
      case 'extract':
        return `(${this.expr(e.a)})[${e.component}]`;
    }
    throw new KernelBuildError(this.ir.name, `internal: unknown expression ${(e as Expr).op}`);
  }

  private privateLength(id: number): number {
    const n = privateArrayLength(this.ir, id);
    if (n === undefined) throw new KernelBuildError(this.ir.name, `internal: unknown private array ${id}`);
    return n;
  }

  /** add, load or store on an f32 atomic buffer, through its bits view (a compare-exchange loop for add). */
  private f32Atomic(e: Extract<Expr, { op: 'atomic' }>): string {
    const b = `bits_${e.buffer}`;
    const i = this.expr(e.index);
    switch (e.fn) {
      case 'add':
        return `$faadd(${b}, ${i}, ${this.expr(e.value)})`;
      case 'load':
        return `$faload(${b}, ${i})`;
      case 'store':
        return `$fastore(${b}, ${i}, ${this.expr(e.value)})`;
      default:
        throw new KernelBuildError(this.ir.name, `internal: f32 atomic ${e.fn}`);
    }
  }

  /** An atomic on typed array `b` (a buffer's or a workgroup array's). */
  private atomic(e: Extract<Expr, { op: 'atomic' | 'wgAtomic' }>, b: string): string {
    const i = this.expr(e.index);
    const v = this.expr(e.value);
    switch (e.fn) {
      case 'add':
      case 'sub':
      case 'and':
      case 'or':
      case 'xor':
      case 'exchange':
      case 'load':
      case 'store':
        return `$aop(Atomics.${e.fn}, ${b}, ${i}, ${v})`;
      case 'min':
        return `$amin(${b}, ${i}, ${v})`;
      case 'max':
        return `$amax(${b}, ${i}, ${v})`;
      case 'compareExchange':
        return `$acas(${b}, ${i}, ${this.expr(e.compare as Expr)}, ${v})`;
    }
  }

  /** Applies a scalar code template per component for vectors. */
  private mapVec(type: ValueType, args: readonly Expr[], scalar: (a: string[]) => string): string {
    const { width } = typeInfo(type);
    const isVec = (x: Expr) => typeInfo(x.type).width > 1;
    if (width === 1 && !args.some(isVec)) return scalar(args.map((a) => this.expr(a)));
    const names = args.map((_, i) => `$v${i}`);
    const comps = Array.from({ length: width }, (_, c) =>
      scalar(args.map((a, i) => (isVec(a) ? `${names[i]}[${c}]` : (names[i] as string)))),
    );
    return `((${names.join(', ')}) => [${comps.join(', ')}])(${args.map((a) => this.expr(a)).join(', ')})`;
  }
}

function zeroOf(type: ValueType): string {
  const { scalar, width } = typeInfo(type);
  const z = scalar === 'bool' ? 'false' : '0';
  return width === 1 ? z : `[${new Array(width).fill(z).join(', ')}]`;
}

function num(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Number.POSITIVE_INFINITY) return 'Infinity';
  if (x === Number.NEGATIVE_INFINITY) return '(-Infinity)';
  if (Object.is(x, -0)) return '(-0)';
  return x < 0 ? `(${x})` : `${x}`;
}

function constant(type: ValueType, value: number | boolean | readonly number[]): string {
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return num(value);
  void type;
  return `[${value.map(num).join(', ')}]`;
}

function unary(fn: string, scalar: string, a: string): string {
  if (fn === 'not') return `(!${a})`;
  if (fn === 'bitnot') return scalar === 'u32' ? `(~${a} >>> 0)` : `(~${a})`;
  return scalar === 'i32' ? `(-${a} | 0)` : `(-${a})`;
}

function binary(fn: BinaryFn, scalar: string, a: string, b: string): string {
  switch (fn) {
    case 'eq':
      return `(${a} === ${b})`;
    case 'ne':
      return `(${a} !== ${b})`;
    case 'lt':
      return `(${a} < ${b})`;
    case 'le':
      return `(${a} <= ${b})`;
    case 'gt':
      return `(${a} > ${b})`;
    case 'ge':
      return `(${a} >= ${b})`;
    default:
      break;
  }
  if (scalar === 'bool') {
    if (fn === 'and') return `(${a} && ${b})`;
    if (fn === 'or') return `(${a} || ${b})`;
    return `(${a} !== ${b})`; // xor
  }
  if (scalar === 'f32') {
    const op = { add: '+', sub: '-', mul: '*', div: '/', rem: '%' }[fn as 'add'];
    return `Math.fround(${a} ${op} ${b})`;
  }
  const u = scalar === 'u32';
  const wrap = u ? '>>> 0' : '| 0';
  switch (fn) {
    case 'add':
      return `((${a} + ${b}) ${wrap})`;
    case 'sub':
      return `((${a} - ${b}) ${wrap})`;
    case 'mul':
      return u ? `(Math.imul(${a}, ${b}) >>> 0)` : `Math.imul(${a}, ${b})`;
    case 'div':
      return u ? `$udiv(${a}, ${b})` : `$idiv(${a}, ${b})`;
    case 'rem':
      return u ? `$urem(${a}, ${b})` : `$irem(${a}, ${b})`;
    case 'and':
      return `((${a} & ${b}) ${wrap})`;
    case 'or':
      return `((${a} | ${b}) ${wrap})`;
    case 'xor':
      return `((${a} ^ ${b}) ${wrap})`;
    // JS masks shift counts to 5 bits: the IR's "modulo 32" rule.
    case 'shl':
      return `((${a} << ${b}) ${wrap})`;
    case 'shr':
      return u ? `(${a} >>> ${b})` : `(${a} >> ${b})`;
    default:
      throw new Error(`unknown binary op ${fn}`);
  }
}

function mathCall(fn: string, scalar: string, args: string[]): string {
  const [a = '', b = '', c = ''] = args;
  const f = (x: string) => (scalar === 'f32' ? `Math.fround(${x})` : x);
  switch (fn) {
    case 'abs':
      return scalar === 'u32' ? a : scalar === 'i32' ? `(Math.abs(${a}) | 0)` : `Math.abs(${a})`;
    case 'min':
      return `Math.min(${a}, ${b})`;
    case 'max':
      return `Math.max(${a}, ${b})`;
    case 'clamp':
      return `Math.min(Math.max(${a}, ${b}), ${c})`;
    case 'sqrt':
      return f(`Math.sqrt(${a})`);
    case 'inverseSqrt':
      return f(`1 / Math.sqrt(${a})`);
    case 'exp':
      return f(`Math.exp(${a})`);
    case 'exp2':
      return f(`Math.pow(2, ${a})`);
    case 'log':
      return f(`Math.log(${a})`);
    case 'log2':
      return f(`Math.log2(${a})`);
    case 'pow':
      return f(`Math.pow(${a}, ${b})`);
    case 'sin':
      return f(`Math.sin(${a})`);
    case 'cos':
      return f(`Math.cos(${a})`);
    case 'floor':
      return `Math.floor(${a})`;
    case 'ceil':
      return `Math.ceil(${a})`;
    case 'trunc':
      return `Math.trunc(${a})`;
    case 'fma':
      return f(`${a} * ${b} + ${c}`);
    case 'countOneBits':
      return scalar === 'u32' ? `$popcnt(${a})` : `$popcnt(${a} >>> 0)`;
    default:
      throw new Error(`unknown math function ${fn}`);
  }
}

function convert(from: string, to: string, a: string): string {
  if (from === to) return a;
  if (from === 'bool') return to === 'f32' ? `(${a} ? 1 : 0)` : `(${a} ? 1 : 0)`;
  if (to === 'bool') return `(${a} !== 0)`;
  if (to === 'f32') return `Math.fround(${a})`;
  if (to === 'u32') return from === 'i32' ? `(${a} >>> 0)` : `$f2u(${a})`;
  return from === 'u32' ? `(${a} | 0)` : `$f2i(${a})`;
}

function bitcast(from: string, to: string, a: string): string {
  if (from === to) return a;
  if (from === 'f32') return to === 'u32' ? `$f2ubits(${a})` : `$f2ibits(${a})`;
  if (to === 'f32') return from === 'u32' ? `$u2fbits(${a})` : `$i2fbits(${a})`;
  return to === 'u32' ? `(${a} >>> 0)` : `(${a} | 0)`;
}
