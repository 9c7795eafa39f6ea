/**
 * A seeded generator of random, well-typed kernels for differential fuzzing
 * It writes the kernel IR (packages/core/src/ir/nodes.ts) directly,
 * keeping the builder's invariants (loads, atomics and subgroup operations are
 * taken into a fresh `let` at the point of use), so that a case can be shrunk
 * by editing plain data.
 *
 * Every case is deterministic by construction, so one reference
 * (interpret.ts) holds for every backend:
 * - inputs are read-only, outputs write-only; a scatter store goes through an
 *   index function that is injective over the grid (or out of range);
 * - buffer atomics are one commutative operation per buffer and their results
 *   are unused;
 * - workgroup arrays alternate write phases (invocation l writes its own slot
 *   only) and read phases (any slot) separated by top-level barriers;
 * - subgroup operations and barriers stand at the top level, with no `return`
 *   anywhere in such kernels (every invocation takes part).
 */
import type {
  BinaryFn,
  BufferParamDecl,
  Expr,
  KernelIR,
  MathFn,
  ParamDecl,
  Stmt,
  SubgroupFn,
  ValueType,
  VarDecl,
  WorkgroupArrayDecl,
} from 'trident';

/** mulberry32: small, fast, good enough to pick program shapes. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 0x9e3779b9;
  }
  u32(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  int(n: number): number {
    return this.u32() % n;
  }
  chance(p: number): boolean {
    return this.u32() / 2 ** 32 < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

export type StoreMode = 'gather' | 'scatter';

export interface FuzzOptions {
  storeMode: StoreMode;
  /** Buffer atomics add/min/max (class 'atomic'). */
  atomics: boolean;
  /** Buffer atomics and/or/xor (class 'atomic-other'). */
  atomicsOther: boolean;
  /** Workgroup arrays and barriers (class 'workgroup'). */
  workgroup: boolean;
  /** Subgroup operations (class 'subgroup'). */
  subgroup: boolean;
}

export interface FuzzInput {
  readonly name: string;
  readonly dtype: 'u32' | 'i32' | 'f32';
  readonly data: Uint32Array | Int32Array | Float32Array;
}

export interface FuzzOutput {
  readonly name: string;
  readonly dtype: 'u32' | 'i32' | 'f32';
  /** Elements of the buffer (scalars; a vector view holds length / vector vectors). */
  readonly length: number;
  /** The kernel's view of it: 1, or vectors of this width. */
  readonly vector?: 2 | 3 | 4;
}

/** One generated case: the kernel, its buffers and its grid. */
export interface FuzzCase {
  readonly seed: number;
  readonly options: FuzzOptions;
  readonly ir: KernelIR;
  readonly inputs: readonly FuzzInput[];
  readonly outputs: readonly FuzzOutput[];
  readonly uniforms: Readonly<Record<string, number>>;
  readonly workgroups: number;
}

const INT_TYPES = ['u32', 'i32'] as const;
const SCALARS = ['u32', 'i32', 'f32'] as const;
type Scalar = (typeof SCALARS)[number];
type NumericType = Exclude<ValueType, 'bool'>;

const U32_EDGES = [0, 1, 2, 3, 7, 31, 32, 33, 255, 256, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff];
const I32_EDGES = [0, 1, -1, 2, -2, 31, 32, 0x7fffffff, -0x80000000, -0x7fffffff, 1000, -1000];
// f32 constants and inputs stay normal and moderate, so exact chains stay exact (no subnormals or overflow).
const F32_EDGES = [0, -0, 1, -1, 0.5, -0.25, 2, 3, 1.5, 10, -7, 100, 0.1, 1e5, -3.75, 16777216, 0.3];

function scalarOf(t: ValueType): Scalar | 'bool' {
  return (t.startsWith('vec') ? t.slice(5, -1) : t) as Scalar | 'bool';
}
function widthOf(t: ValueType): number {
  return t.startsWith('vec') ? Number(t[3]) : 1;
}
function vecOf(s: Scalar, w: number): ValueType {
  return (w === 1 ? s : `vec${w}<${s}>`) as ValueType;
}

interface Scope {
  /** Variables visible here, by type. */
  vars: Array<{ id: number; type: ValueType; assignable: boolean }>;
}

class Generator {
  readonly r: Rng;
  readonly o: FuzzOptions;
  readonly wg: number;
  readonly vars: VarDecl[] = [];
  readonly arrays: WorkgroupArrayDecl[] = [];
  readonly params: Array<readonly [string, ParamDecl]> = [];
  private nextId = 0;
  private blocks: Stmt[][] = [];
  private scopes: Scope[] = [];
  private loopDepth = 0;
  private budget = 0;
  /** Per output, the index function of its stores (scatter) or globalIndex (gather). */
  readonly storeIndex = new Map<string, () => Expr>();
  wgArray: WorkgroupArrayDecl | undefined;
  wgAtomicArray: WorkgroupArrayDecl | undefined;
  /** True while generating a workgroup write phase (own slot only) rather than a read phase. */
  writePhase = true;

  constructor(r: Rng, o: FuzzOptions, wg: number) {
    this.r = r;
    this.o = o;
    this.wg = wg;
  }

  // ---------- statements ----------

  emit(s: Stmt): void {
    (this.blocks[this.blocks.length - 1] as Stmt[]).push(s);
  }

  block(fn: () => void): Stmt[] {
    const b: Stmt[] = [];
    this.blocks.push(b);
    const outer = this.scopes[this.scopes.length - 1];
    this.scopes.push({ vars: [...(outer?.vars ?? [])] });
    try {
      fn();
    } finally {
      this.blocks.pop();
      this.scopes.pop();
    }
    return b;
  }

  declare(type: ValueType, init: Expr, assignable = true): Expr {
    const id = this.nextId++;
    this.vars.push({ id, type, name: `v_${id}` });
    this.emit({ op: 'let', id, type, init });
    this.scopes[this.scopes.length - 1]?.vars.push({ id, type, assignable });
    return { op: 'var', type, id };
  }

  /** A value of `type` taken into a fresh variable (for loads, atomics, subgroup ops). */
  materialize(e: Expr): Expr {
    return this.declare(e.type, e, false);
  }

  newArrayId(): number {
    return this.nextId++;
  }

  statements(count: number, depth: number, topLevel: boolean): void {
    for (let i = 0; i < count && this.budget > 0; i++) {
      this.budget--;
      this.statement(depth, topLevel);
    }
  }

  statement(depth: number, topLevel: boolean): void {
    const r = this.r;
    const choice = r.int(100);
    if (choice < 30) {
      const t = this.randomType();
      this.declare(t, this.expr(t, 4));
    } else if (choice < 45) {
      const targets = (this.scopes[this.scopes.length - 1]?.vars ?? []).filter((v) => v.assignable);
      if (targets.length === 0) {
        this.statement(depth, topLevel);
        return;
      }
      const v = r.pick(targets);
      this.emit({ op: 'assign', id: v.id, value: this.expr(v.type, 3) });
    } else if (choice < 60 && depth < 3) {
      const cond = this.expr('bool', 2);
      const thenBlock = this.block(() => this.statements(1 + r.int(3), depth + 1, false));
      const elseBlock = r.chance(0.5) ? this.block(() => this.statements(1 + r.int(2), depth + 1, false)) : [];
      this.emit({ op: 'if', cond, thenBlock, elseBlock });
    } else if (choice < 70 && depth < 3) {
      this.loop(depth);
    } else if (choice < 80 && this.loopDepth > 0) {
      // break / continue under a condition, so the loop still does something.
      const cond = this.expr('bool', 2);
      this.emit({ op: 'if', cond, thenBlock: [{ op: r.chance(0.5) ? 'break' : 'continue' }], elseBlock: [] });
    } else if (choice < 84 && !this.o.workgroup && !this.o.subgroup && depth > 0) {
      // An early return, under a condition; never in kernels with barriers or subgroup ops.
      this.emit({ op: 'if', cond: this.expr('bool', 2), thenBlock: [{ op: 'return' }], elseBlock: [] });
    } else if (choice < 92) {
      this.store();
    } else if (choice < 96 && (this.o.atomics || this.o.atomicsOther)) {
      this.atomic();
    } else if (this.wgArray && this.writePhase) {
      this.wgWrite();
    } else {
      this.store();
    }
  }

  loop(depth: number): void {
    const r = this.r;
    // A counted loop: the counter is not assignable, the bound small, so every loop ends.
    const bound: Expr = r.chance(0.5)
      ? { op: 'const', type: 'u32', value: r.int(5) }
      : { op: 'binary', type: 'u32', fn: 'rem', a: this.expr('u32', 1), b: { op: 'const', type: 'u32', value: 5 } };
    const end = this.declare('u32', bound, false);
    const counter = this.declare('u32', { op: 'const', type: 'u32', value: 0 }, false);
    const id = (counter as { id: number }).id;
    this.loopDepth++;
    const body = this.block(() => this.statements(1 + r.int(4), depth + 1, false));
    this.loopDepth--;
    const update: Stmt[] = [
      { op: 'assign', id, value: { op: 'binary', type: 'u32', fn: 'add', a: counter, b: { op: 'const', type: 'u32', value: 1 } } },
    ];
    this.emit({ op: 'loop', condPrelude: [], cond: { op: 'binary', type: 'bool', fn: 'lt', a: counter, b: end }, body, update });
  }

  store(): void {
    const outputs = this.params.filter(([, d]) => d.kind === 'buffer' && d.access === 'write');
    const [name, decl] = this.r.pick(outputs);
    const { dtype, vector } = decl as BufferParamDecl;
    const index = (this.storeIndex.get(name) as () => Expr)();
    this.emit({ op: 'store', buffer: name, index, value: this.expr(vecOf(dtype, vector), 3) });
  }

  atomic(): void {
    const r = this.r;
    const usable = this.params.filter(
      ([n, d]) => d.kind === 'buffer' && d.access === 'atomic' && (n === 'aBits' ? this.o.atomicsOther : this.o.atomics),
    );
    if (usable.length === 0) {
      this.store();
      return;
    }
    const [name, decl] = r.pick(usable);
    const type = (decl as BufferParamDecl).dtype as 'u32' | 'i32';
    const fn = name === 'aSum' ? 'add' : name === 'aMax' ? 'max' : name === 'aMin' ? 'min' : 'or';
    // Small operands keep blended atomics (WebGL2: f32 targets) exact.
    let value = this.expr(type, 2);
    if (fn === 'add' || fn === 'min' || fn === 'max') {
      value = { op: 'binary', type, fn: 'and', a: value, b: { op: 'const', type, value: 0x3ff } };
    }
    const index = this.expr(r.pick(INT_TYPES), 1);
    this.emit({ op: 'eval', expr: { op: 'atomic', type, fn, buffer: name, index, value } });
  }

  wgWrite(): void {
    const arr = this.wgArray as WorkgroupArrayDecl;
    const local: Expr = { op: 'builtin', type: 'u32', name: 'localIndex' };
    if (this.wgAtomicArray && this.r.chance(0.4)) {
      const a = this.wgAtomicArray;
      const index = {
        op: 'binary',
        type: 'u32',
        fn: 'rem',
        a: this.expr('u32', 1),
        b: { op: 'const', type: 'u32', value: a.length + 2 },
      } as Expr;
      const value = {
        op: 'binary',
        type: a.type,
        fn: 'and',
        a: this.expr(a.type, 2),
        b: { op: 'const', type: a.type, value: 0xffff },
      } as Expr;
      this.emit({ op: 'eval', expr: { op: 'wgAtomic', type: a.type as 'u32' | 'i32', fn: 'add', array: a.id, index, value } });
      return;
    }
    this.emit({ op: 'wgStore', array: arr.id, index: local, value: this.expr(arr.type, 3) });
  }

  randomType(): ValueType {
    const r = this.r;
    const s = r.pick(SCALARS);
    if (r.chance(0.12)) return 'bool';
    return r.chance(0.2) ? vecOf(s, 2 + r.int(3)) : s;
  }

  // ---------- expressions ----------

  expr(type: ValueType, depth: number): Expr {
    const r = this.r;
    if (depth <= 0 || r.chance(0.15)) return this.leaf(type);
    if (type === 'bool') return this.boolExpr(depth);
    const s = scalarOf(type) as Scalar;
    const w = widthOf(type);
    if (w > 1) return this.vecExpr(type as NumericType, s, w, depth);
    return s === 'f32' ? this.floatExpr(depth) : this.intExpr(s, depth);
  }

  leaf(type: ValueType): Expr {
    const r = this.r;
    const vars = (this.scopes[this.scopes.length - 1]?.vars ?? []).filter((v) => v.type === type);
    if (vars.length > 0 && r.chance(0.5)) {
      const v = r.pick(vars);
      return { op: 'var', type, id: v.id };
    }
    if (type === 'bool') return { op: 'const', type, value: r.chance(0.5) };
    const s = scalarOf(type) as Scalar;
    const w = widthOf(type);
    if (w > 1) {
      return { op: 'construct', type, args: Array.from({ length: w }, () => this.leaf(s)) };
    }
    const c = r.int(10);
    if (s === 'u32' && c < 2) return this.builtin();
    if (s === 'u32' && c === 2) return { op: 'uniform', type: 'u32', name: 'n' };
    if (s === 'f32' && c === 2) return { op: 'uniform', type: 'f32', name: 's' };
    if (c < 5) return this.load(s);
    return this.constant(s);
  }

  constant(s: Scalar): Extract<Expr, { op: 'const' }> {
    const r = this.r;
    if (s === 'u32') return { op: 'const', type: s, value: r.chance(0.6) ? r.pick(U32_EDGES) : r.u32() };
    if (s === 'i32') return { op: 'const', type: s, value: r.chance(0.6) ? r.pick(I32_EDGES) : r.u32() | 0 };
    return { op: 'const', type: s, value: Math.fround(r.pick(F32_EDGES)) };
  }

  builtin(): Expr {
    const names = ['globalIndex', 'localIndex', 'workgroupIndex', 'workgroupSize', 'numWorkgroups'] as const;
    const all = this.o.subgroup ? [...names, 'subgroupSize' as const, 'subgroupInvocation' as const] : names;
    return { op: 'builtin', type: 'u32', name: this.r.pick(all) };
  }

  /** A load from an input, at an index that is mostly in range and sometimes not. */
  load(s: Scalar): Expr {
    const r = this.r;
    const name = s === 'u32' ? 'inU' : s === 'i32' ? 'inI' : 'inF';
    if (this.wgArray && !this.writePhase && this.wgArray.type === s && r.chance(0.35)) {
      // A read phase may read any slot of the workgroup array, out of range included.
      const index = this.indexExpr(this.wg + 2);
      return this.materialize({ op: 'wgLoad', type: s, array: this.wgArray.id, index });
    }
    if (this.wgAtomicArray && !this.writePhase && this.wgAtomicArray.type === s && r.chance(0.3)) {
      const index = this.indexExpr(this.wgAtomicArray.length + 2);
      return this.materialize({
        op: 'wgAtomic',
        type: s as 'u32' | 'i32',
        fn: 'load',
        array: this.wgAtomicArray.id,
        index,
        value: { op: 'const', type: s, value: 0 },
      });
    }
    return this.materialize({ op: 'load', type: s, buffer: name, index: this.indexExpr(INPUT_LENGTH + 3) });
  }

  /** A u32 or i32 index: in [0, span) mostly; sometimes anything (out of range, negative). */
  indexExpr(span: number): Expr {
    const r = this.r;
    if (r.chance(0.15)) return this.leafInt(r.pick(INT_TYPES));
    const base = this.leafInt('u32');
    return { op: 'binary', type: 'u32', fn: 'rem', a: base, b: { op: 'const', type: 'u32', value: span } };
  }

  leafInt(s: 'u32' | 'i32'): Expr {
    const r = this.r;
    const vars = (this.scopes[this.scopes.length - 1]?.vars ?? []).filter((v) => v.type === s);
    if (vars.length > 0 && r.chance(0.5)) return { op: 'var', type: s, id: r.pick(vars).id };
    if (s === 'u32' && r.chance(0.6)) return this.builtin();
    return this.constant(s);
  }

  intExpr(s: 'u32' | 'i32', depth: number): Expr {
    const r = this.r;
    const c = r.int(100);
    if (c < 40) {
      const fn = r.pick<BinaryFn>(['add', 'sub', 'mul', 'div', 'rem', 'and', 'or', 'xor', 'shl', 'shr', 'add', 'mul']);
      const b = fn === 'shl' || fn === 'shr' ? this.expr('u32', depth - 1) : this.expr(s, depth - 1);
      return { op: 'binary', type: s, fn, a: this.expr(s, depth - 1), b };
    }
    if (c < 48) {
      const fn = s === 'i32' && r.chance(0.5) ? 'neg' : 'bitnot';
      return { op: 'unary', type: s, fn, a: this.expr(s, depth - 1) };
    }
    if (c < 60) {
      // Conversions: the other integer type reinterprets, f32 truncates and saturates, bool gives 0/1.
      const from = r.pick<Scalar | 'bool'>(['u32', 'i32', 'f32', 'f32', 'bool']);
      if (from === s) return this.expr(s, depth - 1);
      return { op: 'convert', type: s, a: this.expr(from, depth - 1) };
    }
    if (c < 66) {
      const from = r.pick<Scalar>(s === 'u32' ? ['i32', 'f32'] : ['u32', 'f32']);
      return { op: 'bitcast', type: s, a: this.expr(from, depth - 1) };
    }
    if (c < 74)
      return {
        op: 'select',
        type: s,
        cond: this.expr('bool', depth - 1),
        ifTrue: this.expr(s, depth - 1),
        ifFalse: this.expr(s, depth - 1),
      };
    if (c < 84) {
      const fn = r.pick<MathFn>(['abs', 'min', 'max', 'clamp', 'countOneBits']);
      return this.call(fn, s, depth);
    }
    if (c < 90) {
      const w = 2 + r.int(3);
      return { op: 'extract', type: s, a: this.expr(vecOf(s, w), depth - 1), component: r.int(w) as 0 | 1 | 2 | 3 };
    }
    if (c < 93 && s === 'u32') return { op: 'length', type: 'u32', buffer: r.pick(['inU', 'inI', 'inF', 'inV']) };
    return this.leaf(s);
  }

  call(fn: MathFn, s: ValueType, depth: number): Expr {
    const arity = fn === 'clamp' || fn === 'fma' ? 3 : fn === 'min' || fn === 'max' || fn === 'pow' ? 2 : 1;
    if (fn === 'clamp') {
      // clamp(x, lo, hi) with lo <= hi: WGSL leaves lo > hi to the implementation.
      const lo = this.constant(s as Scalar);
      const hi = this.constant(s as Scalar);
      const [a, b] = [lo.value as number, hi.value as number].sort((p, q) => p - q);
      return {
        op: 'call',
        type: s,
        fn,
        args: [this.expr(s, depth - 1), { op: 'const', type: s, value: a as number }, { op: 'const', type: s, value: b as number }],
      };
    }
    return { op: 'call', type: s, fn, args: Array.from({ length: arity }, () => this.expr(s, depth - 1)) };
  }

  floatExpr(depth: number): Expr {
    const r = this.r;
    const c = r.int(100);
    if (c < 40) {
      const fn = r.pick<BinaryFn>(['add', 'sub', 'mul', 'add', 'sub', 'mul', 'div']);
      return { op: 'binary', type: 'f32', fn, a: this.expr('f32', depth - 1), b: this.expr('f32', depth - 1) };
    }
    if (c < 45) return { op: 'unary', type: 'f32', fn: 'neg', a: this.expr('f32', depth - 1) };
    if (c < 57) return { op: 'convert', type: 'f32', a: this.expr(r.pick<Scalar | 'bool'>(['u32', 'i32', 'bool']), depth - 1) };
    if (c < 61) return { op: 'bitcast', type: 'f32', a: this.expr(r.pick(INT_TYPES), depth - 1) };
    if (c < 68)
      return {
        op: 'select',
        type: 'f32',
        cond: this.expr('bool', depth - 1),
        ifTrue: this.expr('f32', depth - 1),
        ifFalse: this.expr('f32', depth - 1),
      };
    if (c < 85) return this.call(r.pick<MathFn>(['abs', 'min', 'max', 'clamp', 'floor', 'ceil', 'trunc', 'sqrt', 'fma']), 'f32', depth);
    if (c < 92) {
      const w = 2 + r.int(3);
      return { op: 'extract', type: 'f32', a: this.expr(vecOf('f32', w), depth - 1), component: r.int(w) as 0 | 1 | 2 | 3 };
    }
    return this.leaf('f32');
  }

  boolExpr(depth: number): Expr {
    const r = this.r;
    const c = r.int(100);
    if (c < 60) {
      const s = r.pick(SCALARS);
      const fn = r.pick<BinaryFn>(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);
      return { op: 'binary', type: 'bool', fn, a: this.expr(s, depth - 1), b: this.expr(s, depth - 1) };
    }
    if (c < 70) return { op: 'unary', type: 'bool', fn: 'not', a: this.expr('bool', depth - 1) };
    if (c < 85) {
      const fn = r.pick<BinaryFn>(['and', 'or', 'eq', 'ne']);
      return { op: 'binary', type: 'bool', fn, a: this.expr('bool', depth - 1), b: this.expr('bool', depth - 1) };
    }
    if (c < 90)
      return {
        op: 'select',
        type: 'bool',
        cond: this.expr('bool', depth - 1),
        ifTrue: this.expr('bool', depth - 1),
        ifFalse: this.expr('bool', depth - 1),
      };
    return this.leaf('bool');
  }

  vecExpr(type: NumericType, s: Scalar, w: number, depth: number): Expr {
    const r = this.r;
    const c = r.int(100);
    if (c < 35) {
      const fns: BinaryFn[] = s === 'f32' ? ['add', 'sub', 'mul'] : ['add', 'sub', 'mul', 'xor', 'and', 'div', 'rem'];
      return { op: 'binary', type, fn: r.pick(fns), a: this.expr(type, depth - 1), b: this.expr(type, depth - 1) };
    }
    if (c < 45 && s !== 'f32') {
      return {
        op: 'binary',
        type,
        fn: r.pick<BinaryFn>(['shl', 'shr']),
        a: this.expr(type, depth - 1),
        b: this.expr(vecOf('u32', w), depth - 1),
      };
    }
    if (c < 55 && s === 'u32' && w === 4) {
      // A vec4 view of an input buffer.
      return this.materialize({ op: 'load', type, buffer: 'inV', index: this.indexExpr(INPUT_LENGTH / 4 + 2) });
    }
    if (c < 65) {
      const from = r.pick(SCALARS.filter((x) => x !== s));
      return { op: 'convert', type, a: this.expr(vecOf(from, w), depth - 1) };
    }
    if (c < 75)
      return {
        op: 'select',
        type,
        cond: this.expr('bool', depth - 1),
        ifTrue: this.expr(type, depth - 1),
        ifFalse: this.expr(type, depth - 1),
      };
    if (c < 82) return this.call(r.pick<MathFn>(['abs', 'min', 'max']), type, depth);
    return { op: 'construct', type, args: Array.from({ length: w }, () => this.expr(s, depth - 1)) };
  }

  // ---------- whole kernels ----------

  /**
   * A top-level loop with a uniform trip count (a constant, or from the uniform n)
   * whose body writes, syncs, reads and syncs: barriers inside control flow, which
   * the CPU backend runs by phase splitting. Optionally under a uniform `if`.
   */
  uniformBarrierLoop(): void {
    const r = this.r;
    // Whatever phase came before (reads of other slots, or writes), all of it is done before the loop writes.
    this.emit({ op: 'barrier' });
    this.writePhase = false;
    const bound: Expr = r.chance(0.5)
      ? { op: 'const', type: 'u32', value: 1 + r.int(3) }
      : { op: 'binary', type: 'u32', fn: 'rem', a: { op: 'uniform', type: 'u32', name: 'n' }, b: { op: 'const', type: 'u32', value: 4 } };
    const build = () => {
      const end = this.declare('u32', bound, false);
      const counter = this.declare('u32', { op: 'const', type: 'u32', value: 0 }, false);
      const id = (counter as { id: number }).id;
      const body = this.block(() => {
        this.writePhase = true;
        this.statements(1 + r.int(3), 1, false);
        this.wgWrite();
        this.emit({ op: 'barrier', ...(r.chance(0.5) ? { workgroupOnly: true as const } : {}) });
        this.writePhase = false;
        this.statements(1 + r.int(3), 1, false);
        this.emit({ op: 'barrier' });
      });
      const one: Expr = { op: 'const', type: 'u32', value: 1 };
      const update: Stmt[] = [{ op: 'assign', id, value: { op: 'binary', type: 'u32', fn: 'add', a: counter, b: one } }];
      this.emit({ op: 'loop', condPrelude: [], cond: { op: 'binary', type: 'bool', fn: 'lt', a: counter, b: end }, body, update });
    };
    if (r.chance(0.3)) {
      // workgroupIndex is the same for the whole workgroup.
      const cond: Expr = {
        op: 'binary',
        type: 'bool',
        fn: 'eq',
        a: {
          op: 'binary',
          type: 'u32',
          fn: 'rem',
          a: { op: 'builtin', type: 'u32', name: 'workgroupIndex' },
          b: { op: 'const', type: 'u32', value: 2 },
        },
        b: { op: 'const', type: 'u32', value: 0 },
      };
      const thenBlock = this.block(build);
      this.emit({ op: 'if', cond, thenBlock, elseBlock: [] });
    } else {
      build();
    }
  }

  subgroupLet(): void {
    const r = this.r;
    const s = r.pick(SCALARS);
    const fn = r.pick<SubgroupFn>(['add', 'min', 'max', 'inclusiveAdd', 'exclusiveAdd', 'broadcastFirst', 'shuffle', 'ballot']);
    if (fn === 'ballot') {
      this.materialize({ op: 'subgroup', type: 'vec4<u32>', fn, a: this.expr('bool', 2) });
      return;
    }
    const a = this.expr(s, 2);
    if (fn === 'shuffle') {
      // Lanes in range: the subgroup size divides any lane number taken modulo it.
      const lane: Expr = {
        op: 'binary',
        type: 'u32',
        fn: 'rem',
        a: this.expr('u32', 1),
        b: { op: 'builtin', type: 'u32', name: 'subgroupSize' },
      };
      this.materialize({ op: 'subgroup', type: s, fn, a, lane });
      return;
    }
    this.materialize({ op: 'subgroup', type: s, fn, a });
  }

  run(): Stmt[] {
    return this.block(() => {
      const r = this.r;
      this.budget = 14 + r.int(14);
      const phases = this.wgArray ? 2 + r.int(3) : 1;
      for (let p = 0; p < phases; p++) {
        this.writePhase = p % 2 === 0;
        if (p > 0) this.emit({ op: 'barrier', ...(r.chance(0.5) ? { workgroupOnly: true as const } : {}) });
        this.statements(2 + r.int(5), 0, true);
        if (this.o.subgroup && r.chance(0.7)) this.subgroupLet();
        if (this.o.subgroup && r.chance(0.4)) this.subgroupLet();
        if (this.wgArray && this.writePhase) this.wgWrite();
      }
      if (this.wgArray && r.chance(0.5)) this.uniformBarrierLoop();
      // Every output gets at least one store, at the top level, of something computed.
      for (const [name, decl] of this.params) {
        if (decl.kind === 'buffer' && decl.access === 'write') {
          const value = this.expr(vecOf(decl.dtype, decl.vector), 3);
          this.emit({ op: 'store', buffer: name, index: (this.storeIndex.get(name) as () => Expr)(), value });
        }
      }
      if (this.o.atomics || this.o.atomicsOther) this.atomic();
    });
  }
}

export const INPUT_LENGTH = 64;

function inputData(r: Rng): FuzzInput[] {
  const u = new Uint32Array(INPUT_LENGTH);
  const i = new Int32Array(INPUT_LENGTH);
  const f = new Float32Array(INPUT_LENGTH);
  const v = new Uint32Array(INPUT_LENGTH);
  for (let k = 0; k < INPUT_LENGTH; k++) {
    u[k] = r.chance(0.5) ? r.pick(U32_EDGES) : r.u32();
    i[k] = r.chance(0.5) ? r.pick(I32_EDGES) : r.u32() | 0;
    f[k] = r.chance(0.5) ? r.pick(F32_EDGES) : Math.fround(((r.u32() % 20001) - 10000) / 64);
    v[k] = r.chance(0.3) ? r.pick(U32_EDGES) : r.u32() % 1000;
  }
  return [
    { name: 'inU', dtype: 'u32', data: u },
    { name: 'inI', dtype: 'i32', data: i },
    { name: 'inF', dtype: 'f32', data: f },
    { name: 'inV', dtype: 'u32', data: v },
  ];
}

/** The kernel for `seed` under `options`: same seed and options, same case. */
export function generateCase(seed: number, options: FuzzOptions): FuzzCase {
  const r = new Rng(seed);
  const wg = options.workgroup || options.subgroup ? r.pick([4, 8, 16, 32]) : r.pick([1, 3, 8, 16, 64]);
  const workgroups = 1 + r.int(3);
  const invocations = wg * workgroups;
  const g = new Generator(r, options, wg);
  g.params.push(
    ['inU', { kind: 'buffer', dtype: 'u32', access: 'read', vector: 1 }],
    ['inI', { kind: 'buffer', dtype: 'i32', access: 'read', vector: 1 }],
    ['inF', { kind: 'buffer', dtype: 'f32', access: 'read', vector: 1 }],
    ['inV', { kind: 'buffer', dtype: 'u32', access: 'read', vector: 4 }],
  );
  // Outputs a little shorter or longer than the grid: stores past the end are dropped.
  const outLength = Math.max(1, invocations + r.pick([-2, -1, 0, 0, 1, 3]));
  const outputs: FuzzOutput[] = [
    { name: 'oU', dtype: 'u32', length: outLength },
    { name: 'oI', dtype: 'i32', length: outLength },
    { name: 'oF', dtype: 'f32', length: outLength },
  ];
  if (r.chance(0.5)) {
    // A vector view of an output: stores write whole vectors.
    const vector = r.pick([2, 3, 4] as const);
    outputs.push({ name: 'oV', dtype: r.pick(SCALARS), length: outLength * vector, vector });
  }
  for (const o of outputs) {
    g.params.push([o.name, { kind: 'buffer', dtype: o.dtype, access: 'write', vector: o.vector ?? 1 }]);
    const gid: Expr = { op: 'builtin', type: 'u32', name: 'globalIndex' };
    if (options.storeMode === 'gather') {
      g.storeIndex.set(o.name, () => gid);
    } else {
      // Injective over the grid: a reversal (negative past the start), an offset, or an xor within a power of two.
      const kind = r.int(3);
      const c = r.int(6);
      const pow2 = 1 << Math.ceil(Math.log2(invocations));
      g.storeIndex.set(o.name, () => {
        if (kind === 0) {
          const last: Expr = { op: 'const', type: 'i32', value: outLength - 1 - c };
          return { op: 'binary', type: 'i32', fn: 'sub', a: last, b: { op: 'convert', type: 'i32', a: gid } };
        }
        if (kind === 1) return { op: 'binary', type: 'u32', fn: 'add', a: gid, b: { op: 'const', type: 'u32', value: c } };
        return { op: 'binary', type: 'u32', fn: 'xor', a: gid, b: { op: 'const', type: 'u32', value: c % pow2 } };
      });
    }
  }
  if (options.atomics) {
    g.params.push(['aSum', { kind: 'buffer', dtype: 'u32', access: 'atomic', vector: 1 }]);
    g.params.push(['aMax', { kind: 'buffer', dtype: 'i32', access: 'atomic', vector: 1 }]);
    outputs.push({ name: 'aSum', dtype: 'u32', length: 8 }, { name: 'aMax', dtype: 'i32', length: 8 });
  }
  if (options.atomicsOther) {
    g.params.push(['aBits', { kind: 'buffer', dtype: 'u32', access: 'atomic', vector: 1 }]);
    outputs.push({ name: 'aBits', dtype: 'u32', length: 8 });
  }
  g.params.push(['n', { kind: 'uniform', dtype: 'u32' }], ['s', { kind: 'uniform', dtype: 'f32' }]);
  if (options.workgroup) {
    const type = r.pick(SCALARS);
    g.wgArray = { id: g.newArrayId(), type, length: wg };
    g.arrays.push(g.wgArray);
    if (r.chance(0.5)) {
      g.wgAtomicArray = { id: g.newArrayId(), type: r.pick(INT_TYPES), length: 1 + r.int(8), atomic: true };
      g.arrays.push(g.wgAtomicArray);
    }
  }
  const body = g.run();
  const ir: KernelIR = {
    name: `fuzz_${seed >>> 0}`,
    workgroupSize: wg,
    workgroupShape: [wg, 1, 1],
    params: g.params,
    workgroupArrays: g.arrays,
    privateArrays: [],
    vars: g.vars,
    body,
  };
  return {
    seed,
    options,
    ir,
    inputs: inputData(r),
    outputs,
    uniforms: { n: r.pick([0, 1, invocations, invocations - 1, 1000]), s: Math.fround(r.pick(F32_EDGES)) },
    workgroups,
  };
}

/** The kernel classes a seed is generated for, in turn: every class gets cases. */
export function optionsForSeed(seed: number): FuzzOptions {
  const variants: FuzzOptions[] = [
    { storeMode: 'gather', atomics: false, atomicsOther: false, workgroup: false, subgroup: false },
    { storeMode: 'scatter', atomics: false, atomicsOther: false, workgroup: false, subgroup: false },
    { storeMode: 'gather', atomics: true, atomicsOther: false, workgroup: false, subgroup: false },
    { storeMode: 'scatter', atomics: false, atomicsOther: true, workgroup: false, subgroup: false },
    { storeMode: 'gather', atomics: false, atomicsOther: false, workgroup: true, subgroup: false },
    { storeMode: 'gather', atomics: false, atomicsOther: false, workgroup: false, subgroup: true },
  ];
  return variants[seed % variants.length] as FuzzOptions;
}
