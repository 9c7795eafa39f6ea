/**
 * Runs a generated case on a device and compares it with the reference
 * (interpret.ts); shrinks a failing case to a small kernel; prints kernels.
 */
import {
  analyzeKernel,
  type Buffer,
  childExprs,
  type Device,
  type Expr,
  type Kernel,
  type KernelIR,
  type ParamDecl,
  type Stmt,
  UnsupportedFeatureError,
} from 'trident';
import type { FuzzCase } from './generate.ts';
import { agrees, describeExpected, interpret, Undecidable } from './interpret.ts';

export type Outcome =
  | { status: 'pass'; compared: number }
  | { status: 'refused'; feature: string; expected: boolean }
  | { status: 'undecidable'; why: string }
  | { status: 'mismatch'; detail: string }
  | { status: 'error'; detail: string };

export function kernelOf(ir: KernelIR): Kernel {
  return {
    name: ir.name,
    ir,
    info: analyzeKernel(ir),
    key: JSON.stringify(ir),
    params: Object.fromEntries(ir.params) as Record<string, ParamDecl>,
  };
}

/**
 * The device's subgroup size, and whether lanes are consecutive local indices
 * (what the reference assumes); 1 without subgroups.
 */
export async function probeSubgroups(device: Device): Promise<{ size: number; consecutive: boolean }> {
  if (!device.caps.features.has('subgroup')) return { size: 1, consecutive: true };
  const ir: KernelIR = {
    name: 'fuzz_subgroup_probe',
    workgroupSize: 32,
    workgroupShape: [32, 1, 1],
    privateArrays: [],
    params: [['o', { kind: 'buffer', dtype: 'u32', access: 'write', vector: 1 }]],
    workgroupArrays: [],
    vars: [],
    body: [
      {
        op: 'store',
        buffer: 'o',
        index: { op: 'builtin', type: 'u32', name: 'globalIndex' },
        value: {
          op: 'binary',
          type: 'u32',
          fn: 'or',
          a: {
            op: 'binary',
            type: 'u32',
            fn: 'shl',
            a: { op: 'builtin', type: 'u32', name: 'subgroupSize' },
            b: { op: 'const', type: 'u32', value: 16 },
          },
          b: { op: 'builtin', type: 'u32', name: 'subgroupInvocation' },
        },
      },
    ],
  };
  const o = device.createBuffer('u32', 64);
  device.dispatch(kernelOf(ir), { workgroups: 2 }, { o } as never);
  const got = await o.read();
  o.destroy();
  const size = (got[0] as number) >>> 16;
  const consecutive = [...got].every((x, i) => x >>> 16 === size && (x & 0xffff) === (i % 32) % size);
  return { size, consecutive };
}

/** Runs `c` on `device` and compares every output element with the reference. */
export async function runCase(device: Device, c: FuzzCase, subgroupSize: number): Promise<Outcome> {
  let expected: ReturnType<typeof interpret>;
  try {
    expected = interpret(c, subgroupSize);
  } catch (err) {
    if (err instanceof Undecidable) return { status: 'undecidable', why: err.message };
    throw err;
  }
  const kernel = kernelOf(c.ir);
  const missing = [...kernel.info.classes].filter((cl) => !device.caps.features.has(cl));
  const buffers: Buffer[] = [];
  try {
    const args: Record<string, Buffer | number> = { ...c.uniforms };
    for (const i of c.inputs) {
      const b = device.createBuffer(i.dtype, i.data);
      buffers.push(b);
      args[i.name] = b;
    }
    const outs = new Map<string, Buffer>();
    for (const o of c.outputs) {
      const b = device.createBuffer(o.dtype, o.length);
      b.fill(0);
      buffers.push(b);
      outs.set(o.name, b);
      args[o.name] = b;
    }
    try {
      device.dispatch(kernel, { workgroups: c.workgroups }, args as never);
    } catch (err) {
      if (err instanceof UnsupportedFeatureError) return { status: 'refused', feature: err.feature, expected: missing.length > 0 };
      return { status: 'error', detail: `dispatch threw ${(err as Error).name}: ${(err as Error).message}` };
    }
    if (missing.length > 0)
      return { status: 'mismatch', detail: `ran a kernel of class ${missing.join(', ')}, which the device does not list` };
    let compared = 0;
    const problems: string[] = [];
    for (const o of c.outputs) {
      const got = await (outs.get(o.name) as Buffer).read();
      const want = expected[o.name] ?? [];
      for (let i = 0; i < o.length; i++) {
        const w = want[i];
        if (!w?.k) continue;
        compared++;
        if (!agrees(o.dtype, w, got[i] as number)) problems.push(`${o.name}[${i}] = ${got[i]}, expected ${describeExpected(w)}`);
      }
    }
    if (problems.length > 0)
      return { status: 'mismatch', detail: `${problems.length} elements differ: ${problems.slice(0, 4).join('; ')}` };
    return { status: 'pass', compared };
  } catch (err) {
    return { status: 'error', detail: `${(err as Error).name}: ${(err as Error).message}` };
  } finally {
    for (const b of buffers) b.destroy();
  }
}

// ---------- shrinking ----------

type Block = readonly Stmt[];

/** Every variable is read only where a `let` of it is in scope. */
function wellScoped(ir: KernelIR): boolean {
  const check = (stmts: Block, scope: Set<number>, inLoop: boolean): boolean => {
    const local = new Set(scope);
    const exprOk = (e: Expr): boolean => {
      if (e.op === 'var' && !local.has(e.id)) return false;
      return childExprs(e).every(exprOk);
    };
    for (const s of stmts) {
      if ((s.op === 'break' || s.op === 'continue') && !inLoop) return false;
      const exprs = stmtExprs(s);
      if (!exprs.every(exprOk)) return false;
      if (s.op === 'assign' && !local.has(s.id)) return false;
      if (s.op === 'if' && !(check(s.thenBlock, local, inLoop) && check(s.elseBlock, local, inLoop))) return false;
      if (s.op === 'loop') {
        if (!check(s.condPrelude, local, inLoop)) return false;
        // The condition sees the prelude's variables; the body and update see the outer scope.
        if (!check(s.body, local, true) || !check(s.update, local, true)) return false;
      }
      if (s.op === 'let') local.add(s.id);
    }
    return true;
  };
  return check(ir.body, new Set(), false);
}

function stmtExprs(s: Stmt): Expr[] {
  switch (s.op) {
    case 'let':
      return [s.init];
    case 'assign':
      return [s.value];
    case 'store':
    case 'wgStore':
      return [s.index, s.value];
    case 'eval':
      return [s.expr];
    case 'if':
    case 'loop':
      return [s.cond];
    default:
      return [];
  }
}

/** Candidate smaller bodies: statements removed or unwrapped, one at a time. */
function* smallerBodies(body: Block): Generator<Stmt[]> {
  for (let i = 0; i < body.length; i++) {
    const s = body[i] as Stmt;
    const before = body.slice(0, i);
    const after = body.slice(i + 1);
    yield [...before, ...after];
    if (s.op === 'if') {
      yield [...before, ...s.thenBlock, ...after];
      if (s.elseBlock.length > 0) yield [...before, ...s.elseBlock, ...after];
      for (const t of smallerBodies(s.thenBlock)) yield [...before, { ...s, thenBlock: t }, ...after];
      for (const t of smallerBodies(s.elseBlock)) yield [...before, { ...s, elseBlock: t }, ...after];
    }
    if (s.op === 'loop') for (const t of smallerBodies(s.body)) yield [...before, { ...s, body: t }, ...after];
  }
}

/** Candidate simpler expressions: a child of the same type, or a zero/one constant. */
function* simplerExprs(e: Expr): Generator<Expr> {
  if (e.op === 'const' || e.op === 'var' || e.op === 'builtin' || e.op === 'uniform') return;
  for (const c of childExprs(e)) if (c.type === e.type) yield c;
  const width = e.type.startsWith('vec') ? Number(e.type[3]) : 1;
  const scalar = e.type.startsWith('vec') ? e.type.slice(5, -1) : e.type;
  if (scalar === 'bool') {
    yield { op: 'const', type: e.type, value: false };
    yield { op: 'const', type: e.type, value: true };
  } else if (e.op !== 'load' && e.op !== 'atomic' && e.op !== 'wgAtomic' && e.op !== 'wgLoad' && e.op !== 'subgroup') {
    for (const v of [0, 1]) yield { op: 'const', type: e.type, value: width === 1 ? v : new Array<number>(width).fill(v) };
  }
  // Recurse: simplify one child.
  const kids = childExprs(e);
  for (let k = 0; k < kids.length; k++) {
    for (const simpler of simplerExprs(kids[k] as Expr)) yield replaceChild(e, k, simpler);
  }
}

function replaceChild(e: Expr, k: number, child: Expr): Expr {
  const kids = [...childExprs(e)];
  kids[k] = child;
  switch (e.op) {
    case 'unary':
    case 'convert':
    case 'bitcast':
    case 'extract':
      return { ...e, a: kids[0] as Expr } as Expr;
    case 'binary':
      return { ...e, a: kids[0] as Expr, b: kids[1] as Expr };
    case 'call':
    case 'construct':
      return { ...e, args: kids } as Expr;
    case 'select':
      return { ...e, cond: kids[0] as Expr, ifTrue: kids[1] as Expr, ifFalse: kids[2] as Expr };
    case 'load':
    case 'wgLoad':
      return { ...e, index: kids[0] as Expr } as Expr;
    case 'atomic':
    case 'wgAtomic':
      return { ...e, index: kids[0] as Expr, value: kids[1] as Expr, ...(kids[2] ? { compare: kids[2] } : {}) } as Expr;
    case 'subgroup':
      return { ...e, a: kids[0] as Expr, ...(kids[1] ? { lane: kids[1] } : {}) } as Expr;
    default:
      return e;
  }
}

function* exprEdits(body: Block): Generator<Stmt[]> {
  for (let i = 0; i < body.length; i++) {
    const s = body[i] as Stmt;
    const put = (x: Stmt): Stmt[] => [...body.slice(0, i), x, ...body.slice(i + 1)];
    switch (s.op) {
      case 'let':
        for (const e of simplerExprs(s.init)) yield put({ ...s, init: e });
        break;
      case 'assign':
        for (const e of simplerExprs(s.value)) yield put({ ...s, value: e });
        break;
      case 'store':
        for (const e of simplerExprs(s.value)) yield put({ ...s, value: e });
        break;
      case 'wgStore':
        for (const e of simplerExprs(s.value)) yield put({ ...s, value: e });
        break;
      case 'if':
        for (const e of simplerExprs(s.cond)) yield put({ ...s, cond: e });
        for (const t of exprEdits(s.thenBlock)) yield put({ ...s, thenBlock: t });
        for (const t of exprEdits(s.elseBlock)) yield put({ ...s, elseBlock: t });
        break;
      case 'loop':
        for (const t of exprEdits(s.body)) yield put({ ...s, body: t });
        break;
      default:
        break;
    }
  }
}

/** Drops variables no statement declares any more (the IR lists them separately). */
function withBody(ir: KernelIR, body: Stmt[]): KernelIR {
  const declared = new Set<number>();
  const visit = (b: Block) => {
    for (const s of b) {
      if (s.op === 'let') declared.add(s.id);
      if (s.op === 'if') {
        visit(s.thenBlock);
        visit(s.elseBlock);
      }
      if (s.op === 'loop') {
        visit(s.condPrelude);
        visit(s.body);
        visit(s.update);
      }
    }
  };
  visit(body);
  return { ...ir, body, vars: ir.vars.filter((v) => declared.has(v.id)) };
}

/**
 * Greedy shrinking: keeps any smaller kernel for which `fails` still holds,
 * until no single edit keeps it failing (or `budget` attempts are spent).
 */
export async function shrink(c: FuzzCase, fails: (c: FuzzCase) => Promise<boolean>, budget = 400): Promise<FuzzCase> {
  let best = c;
  let attempts = 0;
  let improved = true;
  while (improved && attempts < budget) {
    improved = false;
    for (const gen of [smallerBodies, exprEdits]) {
      for (const body of gen(best.ir.body)) {
        if (attempts++ >= budget) break;
        const ir = withBody(best.ir, body);
        if (!wellScoped(ir)) continue;
        const candidate = { ...best, ir };
        if (await fails(candidate)) {
          best = candidate;
          improved = true;
          break;
        }
      }
      if (improved) break;
    }
  }
  return best;
}

// ---------- printing ----------

function exprText(e: Expr): string {
  switch (e.op) {
    case 'const':
      return Array.isArray(e.value) ? `${e.type}(${e.value.join(', ')})` : `${e.type}(${String(e.value)})`;
    case 'uniform':
      return e.name;
    case 'builtin':
      return e.name;
    case 'var':
      return `v${e.id}`;
    case 'length':
      return `${e.buffer}.length`;
    case 'unary':
      return `${e.fn}(${exprText(e.a)})`;
    case 'binary':
      return `${e.fn}(${exprText(e.a)}, ${exprText(e.b)})`;
    case 'call':
      return `${e.fn}(${e.args.map(exprText).join(', ')})`;
    case 'select':
      return `select(${exprText(e.cond)}, ${exprText(e.ifTrue)}, ${exprText(e.ifFalse)})`;
    case 'convert':
      return `${e.type}(${exprText(e.a)})`;
    case 'bitcast':
      return `bitcast<${e.type}>(${exprText(e.a)})`;
    case 'load':
      return `${e.buffer}[${exprText(e.index)}]`;
    case 'wgLoad':
      return `wg${e.array}[${exprText(e.index)}]`;
    case 'atomic':
      return `atomic${e.fn}(${e.buffer}[${exprText(e.index)}], ${exprText(e.value)})`;
    case 'wgAtomic':
      return `atomic${e.fn}(wg${e.array}[${exprText(e.index)}], ${exprText(e.value)})`;
    case 'subgroup':
      return `subgroup${e.fn}(${exprText(e.a)}${e.lane ? `, ${exprText(e.lane)}` : ''})`;
    case 'construct':
      return `${e.type}(${e.args.map(exprText).join(', ')})`;
    case 'extract':
      return `${exprText(e.a)}.${'xyzw'[e.component]}`;
    default:
      return '?';
  }
}

function stmtLines(stmts: Block, indent: string): string[] {
  const lines: string[] = [];
  for (const s of stmts) {
    switch (s.op) {
      case 'let':
        lines.push(`${indent}let v${s.id}: ${s.type} = ${exprText(s.init)};`);
        break;
      case 'assign':
        lines.push(`${indent}v${s.id} = ${exprText(s.value)};`);
        break;
      case 'store':
        lines.push(`${indent}${s.buffer}[${exprText(s.index)}] = ${exprText(s.value)};`);
        break;
      case 'wgStore':
        lines.push(`${indent}wg${s.array}[${exprText(s.index)}] = ${exprText(s.value)};`);
        break;
      case 'eval':
        lines.push(`${indent}${exprText(s.expr)};`);
        break;
      case 'if':
        lines.push(`${indent}if (${exprText(s.cond)}) {`, ...stmtLines(s.thenBlock, `${indent}  `));
        if (s.elseBlock.length > 0) lines.push(`${indent}} else {`, ...stmtLines(s.elseBlock, `${indent}  `));
        lines.push(`${indent}}`);
        break;
      case 'loop':
        lines.push(`${indent}loop {`, ...stmtLines(s.condPrelude, `${indent}  `), `${indent}  if (!${exprText(s.cond)}) break;`);
        lines.push(
          ...stmtLines(s.body, `${indent}  `),
          `${indent}  continuing {`,
          ...stmtLines(s.update, `${indent}    `),
          `${indent}  }`,
          `${indent}}`,
        );
        break;
      case 'barrier':
        lines.push(`${indent}${s.workgroupOnly ? 'workgroupBarrier' : 'barrier'}();`);
        break;
      default:
        lines.push(`${indent}${s.op};`);
    }
  }
  return lines;
}

/** A readable listing of a case: grid, uniforms, workgroup arrays and the body. */
export function caseText(c: FuzzCase): string {
  const arrays = c.ir.workgroupArrays.map((a) => `wg${a.id}: ${a.atomic ? 'atomic ' : ''}${a.type}[${a.length}]`).join(', ');
  return [
    `// seed ${c.seed}, workgroupSize ${c.ir.workgroupSize}, workgroups ${c.workgroups}, uniforms ${JSON.stringify(c.uniforms)}${arrays ? `, ${arrays}` : ''}`,
    ...stmtLines(c.ir.body, ''),
  ].join('\n');
}
