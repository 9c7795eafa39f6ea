import {
  containsBarrier,
  type Expr,
  type Kernel,
  KernelBuildError,
  type KernelIR,
  privateArrayLength,
  type Stmt,
  typeInfo,
  type ValueType,
  walkExpr,
  walkStmts,
  workgroupShapeOf,
} from '@trident/core';
import { findBitsVars } from './js-bits.ts';
import { binary, bitcast, constant, convert, mathCall, num, unary, zeroOf } from './js-ops.ts';
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
 * with Math.fround after every operation (f32 uniforms too, once per dispatch), bool
 * as booleans. A u32 local holds its value's int32 bits and every read converts back
 * (see `pinned`: this keeps V8's code for long loops free of allocation).
 *
 * f32 bits that are only moved keep their bits: reading a Float32Array element into a
 * double quiets a signalling NaN on x86 (0x7f800001 comes back 0x7fc00001), so an f32
 * variable whose every value is a load from an f32 buffer and whose every use is a
 * bitcast (of it or of a component) or a store into an f32 buffer holds the element's
 * bits, read through a Uint32Array view (`bits_<name>`); a store of a bitcast to f32
 * writes the integer's bits through that view. The sorts' key transforms and value
 * moves take this path, so they return a permutation of their input's bits, as the
 * GPU backends and the wasm path do.
 *
 * Vectors are scalarised: nothing allocates. A vecN variable is N scalar locals
 * (`v$0` … `v$3`), vector workgroup and private arrays are flat typed arrays (N
 * elements per vector), and a vector expression lowers to a `setup` — comma
 * expressions, evaluated in the IR's order where the expression stands, that hold
 * every effect (atomics) and assign temporaries (`$t<k>`, function locals) — plus N
 * side-effect-free component expressions. A vector load is one bounds check and N
 * element reads into temporaries; a scalar used by every component (a splat) is
 * evaluated once; `select` still evaluates only the arm it takes.
 *
 * Workgroups with barriers run by phase splitting (Dulle 2016's meta-program transformation, PRAM algorithms on GPGPUs, run
 * backwards): the statements between barriers form phases, each a loop over the
 * local ids; control flow that contains a barrier runs once per workgroup with its
 * condition taken from invocation 0 (such conditions must be uniform, as on a GPU);
 * variables used in more than one phase become per-invocation arrays. The generated
 * function creates no closures, so V8 keeps every local in a register or stack slot.
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

/**
 * A vector value in generated code: `setup` runs first, in order (comma-expression
 * pieces that hold every effect and assign temporaries); `comps` are then
 * side-effect-free expressions, one per component, each evaluated at most once.
 */
interface VecCode {
  readonly setup: readonly string[];
  readonly comps: readonly string[];
}

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
  /** Temporaries (`$t<k>`) with their initial values, declared at the top of `run`. */
  private temps: string[] = [];
  /** Whether each expression node is free of effects (no atomics below it). */
  private readonly pure = new WeakMap<Expr, boolean>();
  /** Innermost loop first: its labels and whether it lies outside the current phase. */
  private loops: Array<{ brk: string; cont: string; outsidePhase: boolean }> = [];
  /** Jumps (`break L0`, `break C0`) out of the current phase to barrier loops around it. */
  private phaseJumps: string[] = [];
  /** f32 variables that only move bits: loaded from f32 buffers, used by bitcasts and stores (see the file comment). */
  private readonly bitsVars: ReadonlySet<number>;
  /** The f32 buffers read or written through their Uint32Array view. */
  private readonly bitsViews: ReadonlySet<string>;
  private readonly dtypeOf = new Map<string, string>();

  constructor(ir: KernelIR, backend: string) {
    this.ir = ir;
    void backend; // every IR construct runs on the CPU backend: nothing to refuse by name
    for (const [name, decl] of ir.params)
      if (decl.kind === 'buffer') {
        this.vectorWidth.set(name, decl.vector);
        this.dtypeOf.set(name, decl.dtype);
      }
    for (const v of ir.vars) this.varName.set(v.id, v.name);
    const bits = findBitsVars(ir);
    this.bitsVars = bits.vars;
    this.bitsViews = bits.views;
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
      this.temps = [];
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
        // f32 atomics work on the bits: Atomics takes integer views only; moved f32 bits too.
        if ((decl.access === 'atomic' || this.bitsViews.has(name)) && decl.dtype === 'f32')
          lines.push(`  const bits_${name} = new Uint32Array(b_${name}.buffer, b_${name}.byteOffset, b_${name}.length);`);
      } else {
        // An f32 uniform is an f32 value, as a GPU's uniform buffer holds it.
        lines.push(`  const u_${name} = ${decl.dtype === 'f32' ? `Math.fround(U.${name})` : `U.${name}`};`);
      }
    }
    for (const a of ir.workgroupArrays) lines.push(`  const wg_${a.id} = ${arrayOf(a.type, a.length)};`);
    for (const v of ir.vars) {
      const { scalar, width } = typeInfo(v.type);
      const z = zeroOf(scalar);
      for (const name of componentNames(v.name, width)) {
        if (this.spilled.has(v.id)) lines.push(`  const ${name} = new Array(WG).fill(${z});`);
        else lines.push(`  let ${name} = ${z};`);
      }
    }
    for (const a of ir.privateArrays ?? []) lines.push(`  const pa_${a.id} = ${arrayOf(a.type, a.length * ir.workgroupSize)};`);
    for (let i = 0; i < this.temps.length; i += 16) lines.push(`  let ${this.temps.slice(i, i + 16).join(', ')};`);
    if (this.hasBarrier && this.hasReturn) lines.push('  const done = new Uint8Array(WG);');
    if (this.hasBarrier) lines.push('  let $xf = 0; // a break/continue out of a barrier loop, taken after the phase');
    lines.push('  for (let wgi = wgStart; wgi < wgEnd; wgi++) {');
    for (const a of ir.workgroupArrays) lines.push(`    wg_${a.id}.fill(${zeroOf(typeInfo(a.type).scalar)});`);
    for (const a of ir.privateArrays ?? []) lines.push(`    pa_${a.id}.fill(${zeroOf(typeInfo(a.type).scalar)});`);
    lines.push('    const WX = wgi % G[0], WY = Math.floor(wgi / G[0]) % G[1], WZ = Math.floor(wgi / (G[0] * G[1]));');
    if (this.hasBarrier && this.hasReturn) lines.push('    done.fill(0);');
    lines.push(body);
    lines.push('  }', '};', '})()');
    return lines.join('\n');
  }

  /** A fresh temporary holding `zero` until assigned. */
  private temp(zero = '0'): string {
    const name = `$t${this.temps.length}`;
    this.temps.push(`${name} = ${zero}`);
    return name;
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
        out.push(...this.uniformCond(s.cond, ind, (c) => `if (${c}) {`));
        out.push(this.region(s.thenBlock, `${ind}  `));
        if (s.elseBlock.length) out.push(`${ind}} else {`, this.region(s.elseBlock, `${ind}  `));
        out.push(`${ind}}`);
      } else if (s.op === 'loop') {
        const brk = `L${this.labelCount++}`;
        const cont = `C${this.labelCount++}`;
        this.loops.unshift({ brk, cont, outsidePhase: true });
        out.push(`${ind}${brk}: for (;;) {`);
        out.push(this.region(s.condPrelude, `${ind}  `));
        out.push(...this.uniformCond(s.cond, `${ind}  `, (c) => `if (!${c}) break;`));
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

  /**
   * A condition of control flow that holds barriers, taken from invocation 0: its
   * value goes into a temporary in a block where `lid` is 0, then `use` tests it.
   */
  private uniformCond(e: Expr, ind: string, use: (cond: string) => string): string[] {
    const saved = this.phase;
    this.phase = -1;
    const t = this.temp('false');
    const code = `${ind}{ const lid = 0; ${t} = ${this.expr(e)}; }`;
    this.phase = saved;
    return [code, `${ind}${use(t)}`];
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
        return this.assignVar(s.id, s.init, ind);
      case 'assign':
        return this.assignVar(s.id, s.value, ind);
      case 'store': {
        const w = this.vectorWidth.get(s.buffer) ?? 1;
        if (w > 1) return this.storeVec(`b_${s.buffer}`, `len_${s.buffer}`, w, s.index, s.value, ind);
        // Typed arrays ignore stores outside [0, length): the IR's out-of-range rule.
        const moved = this.movedBits(s.buffer, s.value);
        if (moved !== undefined) return `${ind}bits_${s.buffer}[${this.expr(s.index)}] = ${moved};`;
        return `${ind}b_${s.buffer}[${this.expr(s.index)}] = ${this.stored(s.value)};`;
      }
      case 'wgStore': {
        const { width } = typeInfo(s.value.type);
        if (width > 1) return this.storeVec(`wg_${s.array}`, String(this.workgroupLength(s.array)), width, s.index, s.value, ind);
        return `${ind}wg_${s.array}[${this.expr(s.index)}] = ${this.stored(s.value)};`;
      }
      case 'privStore': {
        const n = this.privateLength(s.array);
        const { width } = typeInfo(s.value.type);
        if (width > 1) return this.storeVec(`pa_${s.array}`, String(n), width, s.index, s.value, ind, `lid * ${n * width} + `);
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
      case 'expectRange':
        // Buffers are single arrays here: the hint has nothing to choose.
        return this.stmts(s.body, ind);
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

  /** `let` and `assign`: a scalar variable takes the value; a vector one each component. */
  private assignVar(id: number, value: Expr, ind: string): string {
    const { width } = typeInfo(value.type);
    const bits = this.bitsVars.has(id) && value.op === 'load' ? value.buffer : undefined;
    if (width === 1) {
      if (bits !== undefined) return `${ind}${this.varRef(id)} = (bits_${bits}[${this.expr((value as { index: Expr }).index)}] ?? 0);`;
      // A load is held as the typed array gives it: loaded locals are not what loops carry.
      if (value.op === 'load') return `${ind}${this.varRef(id)} = ${this.expr(value)};`;
      return `${ind}${this.varRef(id)} = ${toHeld(this.expr(value), value.type)};`;
    }
    const v =
      bits !== undefined ? this.loadVec(`bits_${bits}`, `len_${bits}`, width, (value as { index: Expr }).index, '') : this.vexpr(value);
    const targets = Array.from({ length: width }, (_, c) => this.varComponent(id, c));
    const lines = v.setup.map((x) => `${ind}${x};`);
    // A component that reads the variable itself (`v = v.yx`) must see the old value.
    const own = new RegExp(`(?<![\\w$])${escapeRegExp(this.varName.get(id) ?? '')}\\$`);
    let comps = v.comps;
    if (comps.some((c) => own.test(c))) {
      comps = comps.map((c) => {
        const t = this.temp();
        lines.push(`${ind}${t} = ${c};`);
        return t;
      });
    }
    for (const [i, c] of comps.entries()) lines.push(`${ind}${targets[i]} = ${toHeld(c, value.type)};`);
    return lines.join('\n');
  }

  /**
   * A vector store into typed array `arr` (`length` vectors of `w` elements, element
   * offset `base` + index · w): the index, then the value (into temporaries), then
   * one bounds check and w element writes.
   */
  private storeVec(arr: string, length: string, w: number, index: Expr, value: Expr, ind: string, base = ''): string {
    const o = this.temp();
    const lines = [`${ind}${o} = ${this.expr(index)};`];
    const v = this.vexpr(value);
    lines.push(...v.setup.map((x) => `${ind}${x};`));
    // Components may read the array being written: take them all before the first write.
    const comps = v.comps.map((c) => {
      if (isTrivial(c)) return c;
      const t = this.temp();
      lines.push(`${ind}${t} = ${c};`);
      return t;
    });
    const writes = comps.map((c, i) => `${arr}[${o}${i ? ` + ${i}` : ''}] = ${c};`).join(' ');
    lines.push(`${ind}if (${o} >= 0 && ${o} < ${length}) { ${o} = ${base}${o} * ${w}; ${writes} }`);
    return lines.join('\n');
  }

  private varRef(id: number): string {
    const name = this.varName.get(id);
    if (name === undefined) throw new KernelBuildError(this.ir.name, `internal: unknown variable ${id}`);
    const phases = this.usage.get(id) ?? new Set<number>();
    phases.add(this.phase);
    this.usage.set(id, phases);
    return this.spilled.has(id) ? `${name}[lid]` : name;
  }

  /** A scalar value stored into a typed array, which converts it itself: a variable goes unpinned. */
  private stored(e: Expr): string {
    return e.op === 'var' ? this.varRef(e.id) : this.expr(e);
  }

  /** Component c of vector variable `id`: its own local (or per-invocation array, if spilled). */
  private varComponent(id: number, c: number): string {
    const ref = this.varRef(id);
    return this.spilled.has(id) ? ref.replace(/\[lid\]$/, `$${c}[lid]`) : `${ref}$${c}`;
  }

  // ---------- expressions ----------

  /** Code for a scalar expression. */
  private expr(e: Expr): string {
    if (typeInfo(e.type).width > 1) {
      throw new KernelBuildError(this.ir.name, `internal: vector '${e.op}' (${e.type}) where a scalar is expected`);
    }
    switch (e.op) {
      case 'const':
        return constant(e.value as number | boolean);
      case 'uniform':
        return pinned(`u_${e.name}`, e.type);
      case 'builtin':
        switch (e.name) {
          case 'globalIndex':
            return '((wgi * WG + lid) >>> 0)';
          case 'localIndex':
            return '(lid >>> 0)';
          case 'workgroupIndex':
            return '(wgi >>> 0)';
          case 'workgroupSize':
            return 'WG';
          case 'numWorkgroups':
            return '(nwg >>> 0)';
          case 'subgroupSize':
            return '1';
          case 'subgroupInvocation':
            return '0';
          default:
            break;
        }
        break;
      case 'var':
        return this.bitsVars.has(e.id) ? this.varRef(e.id) : pinned(this.varRef(e.id), e.type);
      case 'unary':
        return unary(e.fn, typeInfo(e.type).scalar, this.scalarArg(e, e.a));
      case 'binary':
        return binary(e.fn, typeInfo(e.a.type).scalar, this.scalarArg(e, e.a), this.scalarArg(e, e.b));
      case 'call':
        return mathCall(
          e.fn,
          typeInfo(e.type).scalar,
          e.args.map((a) => this.scalarArg(e, a)),
        );
      case 'select':
        return `(${this.expr(e.cond)} ? ${this.expr(e.ifTrue)} : ${this.expr(e.ifFalse)})`;
      case 'convert':
        return convert(typeInfo(e.a.type).scalar, typeInfo(e.type).scalar, this.scalarArg(e, e.a));
      case 'bitcast': {
        const held = this.heldBits(e.a);
        if (held !== undefined) return typeInfo(e.type).scalar === 'i32' ? `(${held} | 0)` : held;
        return bitcast(typeInfo(e.a.type).scalar, typeInfo(e.type).scalar, this.scalarArg(e, e.a));
      }
      case 'load':
        return `(b_${e.buffer}[${this.expr(e.index)}] ?? 0)`;
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
        const i = this.temp();
        return `((${i} = ${this.expr(e.index)}) >= 0 && ${i} < ${n} ? pa_${e.array}[lid * ${n} + ${i}] : ${zeroOf(e.type)})`;
      }
      case 'subgroup':
        // Subgroups of width 1: every reduction is the value itself.
        if (e.fn === 'exclusiveAdd') return `((${this.expr(e.a)}), ${zeroOf(e.type)})`;
        return this.expr(e.a);
      case 'extract': {
        const v = this.vexpr(e.a);
        return sequence(v.setup, v.comps[e.component] as string);
      }
      case 'construct':
        break;
    }
    throw new KernelBuildError(this.ir.name, `internal: unknown scalar expression ${(e as Expr).op}`);
  }

  /** An operand of a scalar operation: scalar itself (vector operands belong to vector operations). */
  private scalarArg(parent: Expr, a: Expr): string {
    if (typeInfo(a.type).width > 1) {
      throw new KernelBuildError(this.ir.name, `internal: '${parent.op}' of type ${parent.type} has a ${a.type} operand`);
    }
    return this.expr(a);
  }

  /** Code for a vector expression: its setup and one expression per component. */
  private vexpr(e: Expr): VecCode {
    const { scalar, width } = typeInfo(e.type);
    const lanes = (n: number, f: (c: number) => string) => Array.from({ length: n }, (_, c) => f(c));
    switch (e.op) {
      case 'const':
        return { setup: [], comps: (e.value as readonly number[]).map(num) };
      case 'var':
        return { setup: [], comps: lanes(width, (c) => pinned(this.varComponent(e.id, c), scalar)) };
      case 'builtin':
        switch (e.name) {
          case 'localId':
            return { setup: [], comps: pinnedU32(['(lid % SX)', '(Math.floor(lid / SX) % SY)', 'Math.floor(lid / (SX * SY))']) };
          case 'workgroupId':
            return { setup: [], comps: pinnedU32(['WX', 'WY', 'WZ']) };
          case 'globalId':
            return {
              setup: [],
              comps: pinnedU32([
                '(WX * SX + lid % SX)',
                '(WY * SY + (Math.floor(lid / SX) % SY))',
                '(WZ * (WG / (SX * SY)) + Math.floor(lid / (SX * SY)))',
              ]),
            };
          case 'workgroupCount':
            return { setup: [], comps: pinnedU32(['G[0]', 'G[1]', 'G[2]']) };
          default:
            break;
        }
        break;
      case 'unary':
        return this.componentwise(width, [e.a], ([a]) => unary(e.fn, scalar, a as string));
      case 'binary': {
        const s = typeInfo(e.a.type).scalar;
        return this.componentwise(width, [e.a, e.b], ([a, b]) => binary(e.fn, s, a as string, b as string));
      }
      case 'call':
        return this.componentwise(width, e.args, (args) => mathCall(e.fn, scalar, args));
      case 'convert': {
        const from = typeInfo(e.a.type).scalar;
        return this.componentwise(width, [e.a], ([a]) => convert(from, scalar, a as string));
      }
      case 'bitcast': {
        const from = typeInfo(e.a.type).scalar;
        return this.componentwise(width, [e.a], ([a]) => bitcast(from, scalar, a as string));
      }
      case 'select': {
        const cond = this.expr(e.cond);
        const a = this.vexpr(e.ifTrue);
        const b = this.vexpr(e.ifFalse);
        const pick = (c: string) => lanes(width, (i) => `(${c} ? ${a.comps[i]} : ${b.comps[i]})`);
        if (a.setup.length === 0 && b.setup.length === 0) {
          if (isTrivial(cond)) return { setup: [], comps: pick(cond) };
          const t = this.temp('false');
          return { setup: [`${t} = ${cond}`], comps: pick(t) };
        }
        // Only the arm taken runs its setup (as JavaScript's ?: evaluates one arm).
        const t = this.temp('false');
        const arm = (s: readonly string[]) => (s.length ? `(${s.join(', ')}, 0)` : '0');
        return { setup: [`(${t} = ${cond}) ? ${arm(a.setup)} : ${arm(b.setup)}`], comps: pick(t) };
      }
      case 'load': {
        const w = this.vectorWidth.get(e.buffer) ?? 1;
        return this.loadVec(`b_${e.buffer}`, `len_${e.buffer}`, w, e.index, '');
      }
      case 'wgLoad':
        return this.loadVec(`wg_${e.array}`, String(this.workgroupLength(e.array)), width, e.index, '');
      case 'privLoad': {
        const n = this.privateLength(e.array);
        return this.loadVec(`pa_${e.array}`, String(n), width, e.index, `lid * ${n * width} + `);
      }
      case 'subgroup': {
        // Subgroups of width 1: every reduction and shuffle is the value itself.
        if (e.fn === 'ballot') {
          // The one lane is lane 0: bit 0 of the first word.
          const a = this.expr(e.a);
          return { setup: [], comps: [`(${a} ? 1 : 0)`, '0', '0', '0'] };
        }
        const v = this.vexpr(e.a);
        if (e.fn === 'exclusiveAdd') return { setup: v.setup, comps: lanes(width, () => '0') };
        return v;
      }
      case 'construct': {
        const setup: string[] = [];
        const comps: string[] = [];
        // A splat (one node in every component) is evaluated once.
        const first = e.args[0];
        const splat = first !== undefined && e.args.length === width && e.args.every((a) => a === first) && this.isPure(first);
        if (splat && typeInfo(first.type).width === 1) {
          const one = this.once(this.expr(first), zeroOf(first.type));
          return { setup: one.setup, comps: lanes(width, () => one.code) };
        }
        for (const a of e.args) {
          if (typeInfo(a.type).width > 1) {
            const v = this.vexpr(a);
            setup.push(...v.setup);
            comps.push(...v.comps);
          } else if (this.isPure(a)) {
            comps.push(this.expr(a));
          } else {
            // An effect runs here, in argument order, once.
            const one = this.hoist(this.expr(a), zeroOf(a.type));
            setup.push(...one.setup);
            comps.push(one.code);
          }
        }
        return { setup, comps };
      }
      default:
        break;
    }
    throw new KernelBuildError(this.ir.name, `internal: unexpected vector expression '${e.op}' (${e.type})`);
  }

  /**
   * A component-wise operation: vector operands component by component, scalar ones
   * (evaluated once, in operand order) in every component.
   */
  private componentwise(width: number, args: readonly Expr[], scalar: (a: string[]) => string): VecCode {
    const setup: string[] = [];
    const parts = args.map((a) => {
      if (typeInfo(a.type).width > 1) {
        const v = this.vexpr(a);
        setup.push(...v.setup);
        return v.comps;
      }
      const one = this.once(this.expr(a), zeroOf(a.type));
      setup.push(...one.setup);
      return one.code;
    });
    const comps = Array.from({ length: width }, (_, c) => scalar(parts.map((p) => (typeof p === 'string' ? p : (p[c] as string)))));
    return { setup, comps };
  }

  /**
   * A vector load from typed array `arr` (`length` vectors of `w` elements at
   * `base` + index · w): one bounds check, then w reads into temporaries; zeros out of range.
   */
  private loadVec(arr: string, length: string, w: number, index: Expr, base: string): VecCode {
    const o = this.temp();
    const ts = Array.from({ length: w }, () => this.temp());
    const reads = ts.map((t, i) => `${t} = ${arr}[${o}${i ? ` + ${i}` : ''}]`).join(', ');
    const zeros = ts.map((t) => `${t} = 0`).join(', ');
    const check = `(${o} = ${this.expr(index)}) >= 0 && ${o} < ${length}`;
    return { setup: [`${check} ? (${o} = ${base}${o} * ${w}, ${reads}) : (${zeros})`], comps: ts };
  }

  /** `code` as a value used several times: itself if trivial, else a temporary set once. */
  private once(code: string, zero: string): { setup: string[]; code: string } {
    return isTrivial(code) ? { setup: [], code } : this.hoist(code, zero);
  }

  private hoist(code: string, zero: string): { setup: string[]; code: string } {
    const t = this.temp(zero);
    return { setup: [`${t} = ${code}`], code: t };
  }

  /** Whether evaluating `e` has no effect (no atomic below it). */
  private isPure(e: Expr): boolean {
    let known = this.pure.get(e);
    if (known === undefined) {
      known = true;
      walkExpr(e, (x) => {
        if (x.op === 'atomic' || x.op === 'wgAtomic') known = false;
      });
      this.pure.set(e, known);
    }
    return known;
  }

  private privateLength(id: number): number {
    const n = privateArrayLength(this.ir, id);
    if (n === undefined) throw new KernelBuildError(this.ir.name, `internal: unknown private array ${id}`);
    return n;
  }

  private workgroupLength(id: number): number {
    const a = this.ir.workgroupArrays.find((x) => x.id === id);
    if (a === undefined) throw new KernelBuildError(this.ir.name, `internal: unknown workgroup array ${id}`);
    return a.length;
  }

  /** The bits held for `e` (a bits variable, or one component of one), if it is one. */
  private heldBits(e: Expr): string | undefined {
    if (e.op === 'var' && this.bitsVars.has(e.id)) return this.varRef(e.id);
    if (e.op === 'extract' && e.a.op === 'var' && this.bitsVars.has(e.a.id)) return this.varComponent(e.a.id, e.component);
    return undefined;
  }

  /** For a scalar store into f32 buffer `buffer`: the bits to write through its view, when `value` only moves bits. */
  private movedBits(buffer: string, value: Expr): string | undefined {
    if (this.dtypeOf.get(buffer) !== 'f32' || (this.vectorWidth.get(buffer) ?? 1) !== 1) return undefined;
    if (value.op === 'var' && this.bitsVars.has(value.id)) return this.varRef(value.id);
    if (value.op === 'bitcast' && typeInfo(value.a.type).scalar !== 'f32') return this.expr(value.a);
    return undefined;
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
}

/** Storage for `length` values of `type`: a typed array (vectors flat, `width` elements each), or an Array of bools. */
function arrayOf(type: ValueType, length: number): string {
  const { scalar, width } = typeInfo(type);
  const ctor = SCALAR_ARRAY[scalar];
  return ctor ? `new ${ctor}(${length * width})` : `new Array(${length}).fill(false)`;
}

/** The local (or locals, `name$0` … for a vector) that hold a variable. */
function componentNames(name: string, width: number): string[] {
  return width === 1 ? [name] : Array.from({ length: width }, (_, c) => `${name}$${c}`);
}

/**
 * How integer values are held and read, for V8's sake. A long loop in a function's first
 * call is compiled while it runs (on-stack replacement), and there every local live at the
 * loop's entry is typed as any value. A loop-carried local whose every use truncates to 32
 * bits still becomes a 32-bit register; one that code without type feedback also uses (a
 * remainder loop that has not run yet) stays a tagged value, and a tagged u32 of 2^31 or
 * more is a heap number: every update of such an accumulator allocates. The chunked
 * formulations run one long loop per worker and call, so a first call runs all of its loop
 * that way, and later calls may too (code optimized for the whole function without the
 * feedback of what ran before the loop deoptimizes on entry, and the loop goes back to the
 * code compiled on the stack).
 *
 * So a u32 local holds its value's int32 bits (`toHeld`: a small integer, never allocated;
 * a scalar load as the typed array gives it) and every read gives the u32 back (`pinned`:
 * `(x >>> 0)`, the same for either); i32 reads are pinned with `| 0`, and u32 and i32
 * uniforms and builtins are pinned too, so that arithmetic on them is 32-bit from the start.
 * Code compiled for a later call loses nothing: V8 drops a truncation of a value known to
 * fit. A typed array's store converts its value itself, so a local stored as it is needs
 * neither; f32 and bool values are held as they are.
 */
function pinned(code: string, type: ValueType): string {
  const { scalar } = typeInfo(type);
  return scalar === 'u32' ? `(${code} >>> 0)` : scalar === 'i32' ? `(${code} | 0)` : code;
}

/** Components of a u32 vector builtin, pinned (see `pinned`). */
function pinnedU32(comps: readonly string[]): string[] {
  return comps.map((c) => `(${c} >>> 0)`);
}

/** A value of `type` as a local holds it (see `pinned`): a u32's int32 bits, anything else itself. */
function toHeld(code: string, type: ValueType): string {
  return typeInfo(type).scalar === 'u32' ? `(${code} | 0)` : code;
}

/** Code that reads nothing but a local or a literal (pinned or not): free to repeat. */
function isTrivial(code: string): boolean {
  return /^(?:[A-Za-z_$][\w$]*|[\d.]+(?:e[+-]?\d+)?|\(-[\w.+-]+\)|\([A-Za-z_$][\w$]* (?:>>> 0|\| 0)\))$/.test(code);
}

/** `setup` pieces then `value`, as one expression. */
function sequence(setup: readonly string[], value: string): string {
  return setup.length === 0 ? value : `(${[...setup, value].join(', ')})`;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
