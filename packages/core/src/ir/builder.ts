import type { BufferDType } from '../dtype.ts';
import { analyzeKernel, childBlocks, forEachExprOfStmt, type KernelInfo, walkExpr } from './analyze.ts';
import {
  type AtomicFn,
  type BufferAccess,
  type BufferParamDecl,
  type BuiltinName,
  type Expr,
  F32_ATOMICS,
  type KernelIR,
  type ParamDecl,
  type PrivateArrayDecl,
  type Stmt,
  type SubgroupFn,
  type UniformParamDecl,
  type VarDecl,
  type WorkgroupArrayDecl,
} from './nodes.ts';
import { typeInfo, type ValueType, type VecWidth, vecType } from './types.ts';
import { checkBarrierUniformity } from './uniformity.ts';
import {
  buildError,
  checkOwnership,
  coerce,
  constant,
  enterBuildScope,
  type Operand,
  ownNode,
  restoreBuildScope,
  Val,
  Var,
} from './values.ts';

// ---------- parameter declarations ----------

export interface BufferParam<D extends BufferDType, A extends BufferAccess, W extends 1 | VecWidth> extends BufferParamDecl {
  readonly dtype: D;
  readonly access: A;
  readonly vector: W;
}
export interface UniformParam<D extends BufferDType> extends UniformParamDecl {
  readonly dtype: D;
}

/** A buffer parameter. `vector: 4` views the elements as vec4 (length in vec4 units). */
export function buffer<D extends BufferDType, A extends BufferAccess>(dtype: D, access: A): BufferParam<D, A, 1>;
export function buffer<D extends BufferDType, A extends BufferAccess, W extends 1 | VecWidth>(
  dtype: D,
  access: A,
  options: { vector: W },
): BufferParam<D, A, W>;
export function buffer(dtype: BufferDType, access: BufferAccess, options?: { vector: 1 | VecWidth }): BufferParamDecl {
  return { kind: 'buffer', dtype, access, vector: options?.vector ?? 1 };
}

/** A scalar uniform parameter, passed as a number at dispatch. */
export function uniform<D extends BufferDType>(dtype: D): UniformParam<D> {
  return { kind: 'uniform', dtype };
}

type ElementType<D extends BufferDType, W extends 1 | VecWidth> = W extends VecWidth ? `vec${W}<${D}>` : D;

export type ParamHandles<P extends Record<string, ParamDecl>> = {
  [K in keyof P]: P[K] extends BufferParam<infer D, infer A, infer W>
    ? BufferHandle<ElementType<D, W>, A>
    : P[K] extends UniformParam<infer D>
      ? Val<D>
      : never;
};

/** What a dispatch passes for each parameter: a device buffer or a number. */
export type DispatchArgs<P extends Record<string, ParamDecl>, B> = {
  [K in keyof P]: P[K] extends BufferParamDecl ? B : number;
};

type Index = Val<'u32'> | Val<'i32'> | number;

/**
 * The atomic operations shared by atomic buffers and atomic workgroup arrays.
 * Read-modify-write operations return the old value (0 for an out-of-range index,
 * where the operation is dropped).
 */
abstract class AtomicOps<T extends ValueType> {
  abstract readonly type: T;
  protected abstract atomic(fn: AtomicFn, index: Index, value: Operand<T>, useResult?: boolean, compare?: Val<T>): Val<T>;

  atomicAdd(index: Index, value: Operand<T>): Val<T> {
    return this.atomic('add', index, value);
  }
  atomicSub(index: Index, value: Operand<T>): Val<T> {
    return this.atomic('sub', index, value);
  }
  atomicMin(index: Index, value: Operand<T>): Val<T> {
    return this.atomic('min', index, value);
  }
  atomicMax(index: Index, value: Operand<T>): Val<T> {
    return this.atomic('max', index, value);
  }
  atomicAnd(index: Index, value: Operand<T>): Val<T> {
    return this.atomic('and', index, value);
  }
  atomicOr(index: Index, value: Operand<T>): Val<T> {
    return this.atomic('or', index, value);
  }
  atomicXor(index: Index, value: Operand<T>): Val<T> {
    return this.atomic('xor', index, value);
  }
  atomicExchange(index: Index, value: Operand<T>): Val<T> {
    return this.atomic('exchange', index, value);
  }
  /** Stores `value` if the element equals `expected`; returns the old element either way. */
  atomicCompareExchange(index: Index, expected: Operand<T>, value: Operand<T>): Val<T> {
    const cmp = coerce(this.type, expected, 'atomicCompareExchange');
    return this.atomic('compareExchange', index, value, true, cmp);
  }
}

/** A buffer parameter inside a kernel body. */
export class BufferHandle<T extends ValueType, A extends BufferAccess> extends AtomicOps<T> {
  readonly name: string;
  readonly type: T;
  readonly access: A;
  private readonly k: KernelBuilder;
  constructor(k: KernelBuilder, name: string, type: T, access: A) {
    super();
    this.k = k;
    this.name = name;
    this.type = type;
    this.access = access;
  }

  /** Number of elements (of this view's element type). */
  get length(): Val<'u32'> {
    return new Val('u32', { op: 'length', type: 'u32', buffer: this.name });
  }

  /** Reads element `index`; 0 when out of range. Taken at this point of the program. */
  load(index: Index): Val<T> {
    if (this.access === 'write') throw buildError(`buffer '${this.name}' is write-only`);
    if (this.access === 'atomic') return this.atomic('load', index, 0) as unknown as Val<T>;
    return this.k.materialize({ op: 'load', type: this.type, buffer: this.name, index: this.k.index(index) }, this.type);
  }

  /** Writes element `index`; dropped when out of range. */
  store(index: Index, value: Operand<T>): void {
    if (this.access === 'read') throw buildError(`buffer '${this.name}' is read-only`);
    const v = coerce(this.type, value, `store to '${this.name}'`);
    if (v.type !== this.type) throw buildError(`store to '${this.name}': value is ${v.type}, buffer holds ${this.type}`);
    if (this.access === 'atomic') {
      this.atomic('store', index, v, false);
      return;
    }
    this.k.emit({ op: 'store', buffer: this.name, index: this.k.index(index), value: v.node });
  }

  protected atomic(fn: AtomicFn, index: Index, value: Operand<T>, useResult = true, compare?: Val<T>): Val<T> {
    if (this.access !== 'atomic') throw buildError(`atomic ${fn} on '${this.name}' needs access 'atomic'`);
    if (this.type === 'f32') {
      if (!F32_ATOMICS.has(fn))
        throw buildError(`atomic ${fn} on f32 buffer '${this.name}': f32 atomic buffers have atomicAdd, load and store only`);
    } else if (this.type !== 'u32' && this.type !== 'i32') {
      throw buildError(`atomics need a u32, i32 (or f32, for atomicAdd) buffer, '${this.name}' is ${this.type}`);
    }
    const v = coerce(this.type, value, `atomic ${fn} on '${this.name}'`);
    if (v.type !== this.type) throw buildError(`atomic ${fn} on '${this.name}': value is ${v.type}`);
    const node: Expr = {
      op: 'atomic',
      type: this.type as 'u32' | 'i32' | 'f32',
      fn,
      buffer: this.name,
      index: this.k.index(index),
      value: v.node,
      ...(compare ? { compare: compare.node } : {}),
    };
    if (!useResult) {
      this.k.emit({ op: 'eval', expr: node });
      return constant(this.type, 0);
    }
    return this.k.materialize(node, this.type);
  }
}

/** An array in workgroup memory, shared by the invocations of one workgroup, zeroed at its start. */
export class WorkgroupArray<T extends ValueType> {
  readonly id: number;
  readonly type: T;
  readonly length: number;
  private readonly k: KernelBuilder;
  constructor(k: KernelBuilder, id: number, type: T, length: number) {
    this.k = k;
    this.id = id;
    this.type = type;
    this.length = length;
  }
  load(index: Index): Val<T> {
    return this.k.materialize({ op: 'wgLoad', type: this.type, array: this.id, index: this.k.index(index) }, this.type);
  }
  store(index: Index, value: Operand<T>): void {
    const v = coerce(this.type, value, 'workgroup store');
    if (v.type !== this.type) throw buildError(`workgroup store: value is ${v.type}, array holds ${this.type}`);
    this.k.emit({ op: 'wgStore', array: this.id, index: this.k.index(index), value: v.node });
  }
}

/**
 * An array private to each invocation (`k.privateArray`), zeroed when the invocation
 * starts. Loads outside [0, length) give 0 and stores there are dropped.
 */
export class PrivateArray<T extends ValueType> {
  readonly id: number;
  readonly type: T;
  readonly length: number;
  private readonly k: KernelBuilder;
  constructor(k: KernelBuilder, id: number, type: T, length: number) {
    this.k = k;
    this.id = id;
    this.type = type;
    this.length = length;
  }
  load(index: Index): Val<T> {
    return this.k.materialize({ op: 'privLoad', type: this.type, array: this.id, index: this.k.index(index) }, this.type);
  }
  store(index: Index, value: Operand<T>): void {
    const v = coerce(this.type, value, 'private array store');
    this.k.emit({ op: 'privStore', array: this.id, index: this.k.index(index), value: v.node });
  }
}

/**
 * An array of u32 or i32 atomics in workgroup memory, zeroed at the workgroup's
 * start. Every access is atomic: `load` and `store` are atomic loads and stores.
 * An out-of-range index drops the operation, which then returns 0.
 */
export class AtomicWorkgroupArray<T extends 'u32' | 'i32'> extends AtomicOps<T> {
  readonly id: number;
  readonly type: T;
  readonly length: number;
  private readonly k: KernelBuilder;
  constructor(k: KernelBuilder, id: number, type: T, length: number) {
    super();
    this.k = k;
    this.id = id;
    this.type = type;
    this.length = length;
  }
  load(index: Index): Val<T> {
    return this.atomic('load', index, 0);
  }
  store(index: Index, value: Operand<T>): void {
    this.atomic('store', index, value, false);
  }

  protected atomic(fn: AtomicFn, index: Index, value: Operand<T>, useResult = true, compare?: Val<T>): Val<T> {
    const v = coerce(this.type, value, `workgroup atomic ${fn}`);
    if (v.type !== this.type) throw buildError(`workgroup atomic ${fn}: value is ${v.type}, array holds ${this.type}`);
    const node: Expr = {
      op: 'wgAtomic',
      type: this.type,
      fn,
      array: this.id,
      index: this.k.index(index),
      value: v.node,
      ...(compare ? { compare: compare.node } : {}),
    };
    if (!useResult) {
      this.k.emit({ op: 'eval', expr: node });
      return constant(this.type, 0);
    }
    return this.k.materialize(node, this.type);
  }
}

/**
 * Builds a kernel body. Statements are appended to the current block; `if`, loops
 * and the like open nested blocks through callbacks. Loads, atomics, workgroup
 * loads and subgroup operations are taken into a fresh variable at the point of the
 * call, so they read what the program order says.
 */
export class KernelBuilder {
  private blocks: Stmt[][] = [[]];
  private loopDepth = 0;
  private readonly vars: VarDecl[] = [];
  private readonly arrays: WorkgroupArrayDecl[] = [];
  private readonly privates: PrivateArrayDecl[] = [];
  private nextId = 0;
  readonly workgroupSize: number;
  readonly workgroupShape: readonly [number, number, number];

  constructor(workgroupShape: readonly [number, number, number]) {
    this.workgroupShape = workgroupShape;
    this.workgroupSize = workgroupShape[0] * workgroupShape[1] * workgroupShape[2];
  }

  /** Linear index of this invocation over the whole grid. */
  get globalIndex(): Val<'u32'> {
    return builtin('globalIndex');
  }
  /** Index of this invocation in its workgroup. */
  get localIndex(): Val<'u32'> {
    return builtin('localIndex');
  }
  /** Linear index of this workgroup over the grid. */
  get workgroupIndex(): Val<'u32'> {
    return builtin('workgroupIndex');
  }
  /** Total number of workgroups in the dispatch. */
  get numWorkgroups(): Val<'u32'> {
    return builtin('numWorkgroups');
  }
  /** Total number of invocations in the dispatch (numWorkgroups * workgroupSize). */
  get numInvocations(): Val<'u32'> {
    return this.numWorkgroups.mul(this.workgroupSize);
  }
  /**
   * This invocation's position in the grid along x, y and z:
   * `workgroupId * workgroupShape + localId`. With `{ workgroups: [gx, gy] }` or
   * `{ invocations: [w, h] }` and `workgroupSize: [sx, sy]` it is the 2-D position
   * (guard `x < w && y < h`: the grid rounds up to whole workgroups). A 1-D
   * `{ invocations: n }` grid past 65535 workgroups is folded into y and z: use
   * `globalIndex` there.
   */
  get globalId(): Val<'vec3<u32>'> {
    return builtin3('globalId');
  }
  /** Position in the workgroup along x, y and z (`localIndex = x + y * sx + z * sx * sy`). */
  get localId(): Val<'vec3<u32>'> {
    return builtin3('localId');
  }
  /** Position of this workgroup in the grid (`workgroupIndex = x + y * gx + z * gx * gy`). */
  get workgroupId(): Val<'vec3<u32>'> {
    return builtin3('workgroupId');
  }
  /** The grid's workgroups along x, y and z (`numWorkgroups` is their product). */
  get workgroupCount(): Val<'vec3<u32>'> {
    return builtin3('workgroupCount');
  }
  get subgroupSize(): Val<'u32'> {
    return builtin('subgroupSize');
  }
  get subgroupInvocation(): Val<'u32'> {
    return builtin('subgroupInvocation');
  }

  /** Declares a mutable variable initialised to `init`. */
  let<T extends ValueType>(init: Val<T>, name?: string): Var<T> {
    const id = this.declare(init.type, name);
    this.emit({ op: 'let', id, type: init.type, init: init.node });
    return this.makeVar(init.type, id);
  }

  /** Declares a mutable variable of `type`, initialised to `init` (default 0 / false). */
  var<T extends ValueType>(type: T, init?: Operand<T> | boolean, name?: string): Var<T> {
    const zero = typeInfo(type).scalar === 'bool' ? false : 0;
    const v = init instanceof Val ? init : constant(type, init ?? zero);
    return this.let(v as Val<T>, name);
  }

  if(cond: Val<'bool'>, then: () => void, otherwise?: () => void): void {
    if (!(cond instanceof Val)) throw buildError(`if: the condition must be a bool kernel value (e.g. i.lt(n)), got ${typeof cond}`);
    if (cond.type !== 'bool') throw buildError(`if: condition must be bool, got ${cond.type}`);
    const thenBlock = this.block(then);
    const elseBlock = otherwise ? this.block(otherwise) : [];
    this.emit({ op: 'if', cond: cond.node, thenBlock, elseBlock });
  }

  /** `while (cond()) body()`; `cond` is re-evaluated (loads included) before each iteration. */
  while(cond: () => Val<'bool'>, body: () => void): void {
    this.loop(cond, body, () => undefined);
  }

  /**
   * `for (i = from; i < to; i += step) body(i)`, with `to` and `step` evaluated once
   * before the loop. Counts up; `step` must be positive.
   */
  for<T extends 'u32' | 'i32' = 'u32'>(
    range: { from: Val<T> | number; to: Val<T> | number; step?: Val<T> | number; type?: T },
    body: (i: Val<T>) => void,
  ): void {
    const type = (range.type ?? (range.from instanceof Val ? range.from.type : range.to instanceof Val ? range.to.type : 'u32')) as T;
    const to = this.let(typeof range.to === 'number' ? constant(type, range.to) : range.to, 'end');
    const step = this.let(constant(type, 1) as Val<T>, 'step');
    if (range.step !== undefined) step.set(range.step);
    const i = this.let(typeof range.from === 'number' ? constant(type, range.from) : range.from, 'i');
    this.loop(
      () => i.lt(to),
      () => body(i),
      () => i.set(i.add(step)),
    );
  }

  /** The general loop: `while (cond()) { body(); update(); }` where `continue` runs `update`. */
  loop(cond: () => Val<'bool'>, body: () => void, update: () => void): void {
    let condition: Val<'bool'> | undefined;
    const condPrelude = this.block(() => {
      condition = cond();
    });
    if (!(condition instanceof Val) || condition.type !== 'bool') {
      throw buildError('the loop condition must return a bool kernel value (e.g. () => i.lt(n))');
    }
    this.loopDepth++;
    const bodyBlock = this.block(body);
    this.loopDepth--;
    const updateBlock = this.block(update);
    this.emit({ op: 'loop', condPrelude, cond: condition.node, body: bodyBlock, update: updateBlock });
  }

  break(): void {
    if (this.loopDepth === 0) throw buildError('break outside a loop');
    this.emit({ op: 'break' });
  }
  continue(): void {
    if (this.loopDepth === 0) throw buildError('continue outside a loop');
    this.emit({ op: 'continue' });
  }
  /** Ends this invocation (it then takes no part in later barriers). */
  return(): void {
    this.emit({ op: 'return' });
  }

  /**
   * Runs `body` with the hint that its accesses to `buffer` lie in elements [first, last]
   * (see the 'expectRange' statement): where a backend splits the buffer over several
   * bindings, it may then pick the binding once for the range rather than at every
   * access. Only a hint: accesses outside the range are still correct, only not faster.
   * The body may hold no barrier, subgroup operation or return, and no break or continue
   * out of it, because it may run under control flow that is not uniform.
   */
  expectRange(buffer: BufferHandle<ValueType, BufferAccess>, first: Index, last: Index, body: () => void): void {
    const firstIndex = this.index(first);
    const lastIndex = this.index(last);
    const block = this.block(body);
    checkRangeBody(block, 0, buffer.name);
    this.emit({ op: 'expectRange', buffer: buffer.name, first: firstIndex, last: lastIndex, body: block });
  }

  /**
   * Workgroup barrier: all invocations of the workgroup must reach it (uniform control
   * flow). It orders workgroup memory and the kernel's storage-buffer accesses between
   * the invocations of one workgroup.
   */
  barrier(): void {
    this.emit({ op: 'barrier' });
  }

  /**
   * A barrier that orders workgroup memory only (storage-buffer accesses of different
   * invocations stay unordered across it): use it where invocations exchange data
   * through workgroup arrays alone. Same rules as `barrier()` otherwise.
   */
  workgroupBarrier(): void {
    this.emit({ op: 'barrier', workgroupOnly: true });
  }

  /**
   * Declares an array in workgroup memory, zeroed at the workgroup's start. With
   * `{ atomic: true }` (u32 or i32) its elements are atomics: it has the atomic
   * methods of an atomic buffer, and its loads and stores are atomic.
   */
  workgroupArray<T extends 'u32' | 'i32'>(type: T, length: number, options: { atomic: true }): AtomicWorkgroupArray<T>;
  workgroupArray<T extends ValueType>(type: T, length: number, options?: { atomic?: false }): WorkgroupArray<T>;
  workgroupArray(
    type: ValueType,
    length: number,
    options?: { atomic?: boolean },
  ): WorkgroupArray<ValueType> | AtomicWorkgroupArray<'u32' | 'i32'> {
    if (!Number.isInteger(length) || length <= 0) throw buildError(`workgroup array length must be a positive integer, got ${length}`);
    const id = this.nextId++;
    if (options?.atomic) {
      if (type !== 'u32' && type !== 'i32') throw buildError(`atomic workgroup arrays hold u32 or i32, got ${type}`);
      this.arrays.push({ id, type, length, atomic: true });
      return new AtomicWorkgroupArray(this, id, type, length);
    }
    this.arrays.push({ id, type, length });
    return new WorkgroupArray(this, id, type, length);
  }

  /**
   * Declares an array private to each invocation (a register/local array on GPUs),
   * zeroed when the invocation starts; `length` is a compile-time constant. Loads
   * outside [0, length) give 0, stores there are dropped. Keep it small: GPUs
   * spill large private arrays to slow memory.
   */
  privateArray<T extends ValueType>(type: T, length: number): PrivateArray<T> {
    if (!Number.isInteger(length) || length <= 0 || length > 65536)
      throw buildError(`private array length must be an integer in [1, 65536], got ${length}`);
    const id = this.nextId++;
    this.privates.push({ id, type, length });
    return new PrivateArray(this, id, type, length);
  }

  /** Subgroup reductions and scans; on backends without subgroups the kernel is rejected. */
  subgroupAdd<T extends ValueType>(v: Val<T>): Val<T> {
    return this.subgroup('add', v);
  }
  subgroupMin<T extends ValueType>(v: Val<T>): Val<T> {
    return this.subgroup('min', v);
  }
  subgroupMax<T extends ValueType>(v: Val<T>): Val<T> {
    return this.subgroup('max', v);
  }
  subgroupInclusiveAdd<T extends ValueType>(v: Val<T>): Val<T> {
    return this.subgroup('inclusiveAdd', v);
  }
  subgroupExclusiveAdd<T extends ValueType>(v: Val<T>): Val<T> {
    return this.subgroup('exclusiveAdd', v);
  }
  subgroupBroadcastFirst<T extends ValueType>(v: Val<T>): Val<T> {
    return this.subgroup('broadcastFirst', v);
  }
  subgroupShuffle<T extends ValueType>(v: Val<T>, lane: Val<'u32'>): Val<T> {
    return this.subgroup('shuffle', v, lane);
  }
  /**
   * The lanes of this subgroup whose `predicate` is true, as a 128-bit mask (lane l
   * is bit l % 32 of component l / 32). Inactive lanes and lanes past the subgroup
   * size contribute 0.
   */
  subgroupBallot(predicate: Val<'bool'>): Val<'vec4<u32>'> {
    if (predicate.type !== 'bool') throw buildError(`subgroupBallot takes a bool, got ${predicate.type}`);
    return this.materialize({ op: 'subgroup', type: 'vec4<u32>', fn: 'ballot', a: predicate.node }, 'vec4<u32>');
  }

  // ---------- internals used by handles ----------

  emit(stmt: Stmt): void {
    const current = this.blocks[this.blocks.length - 1];
    if (!current) throw buildError('internal: no open block');
    forEachExprOfStmt(stmt, checkOwnership);
    current.push(stmt);
  }

  materialize<T extends ValueType>(node: Expr, type: T): Val<T> {
    const id = this.declare(type, 'tmp');
    this.emit({ op: 'let', id, type, init: node });
    const v = new Val(type, { op: 'var', type, id });
    ownNode(v.node);
    return v;
  }

  index(index: Index): Expr {
    const v = typeof index === 'number' ? constant('u32', index) : index;
    if (v.type !== 'u32' && v.type !== 'i32') throw buildError(`index must be u32 or i32, got ${(v as Val<ValueType>).type}`);
    return v.node;
  }

  finish(): { body: Stmt[]; vars: VarDecl[]; arrays: WorkgroupArrayDecl[]; privates: PrivateArrayDecl[] } {
    const body = this.blocks[0];
    if (this.blocks.length !== 1 || !body) throw buildError('internal: unbalanced blocks');
    return { body, vars: this.vars, arrays: this.arrays, privates: this.privates };
  }

  private subgroup<T extends ValueType>(fn: SubgroupFn, v: Val<T>, lane?: Val<'u32'>): Val<T> {
    if (typeInfo(v.type).scalar === 'bool') throw buildError(`subgroup ${fn} is not defined on bool`);
    if (lane && lane.type !== 'u32') throw buildError('subgroupShuffle lane must be u32');
    const node: Expr = { op: 'subgroup', type: v.type, fn, a: v.node, ...(lane ? { lane: lane.node } : {}) };
    return this.materialize(node, v.type);
  }

  private declare(type: ValueType, name?: string): number {
    const id = this.nextId++;
    const safe = (name ?? 'v').replace(/[^A-Za-z0-9]/g, '') || 'v';
    this.vars.push({ id, type, name: `${safe}_${id}` });
    return id;
  }

  private makeVar<T extends ValueType>(type: T, id: number): Var<T> {
    return new Var(type, id, (varId, value) => this.emit({ op: 'assign', id: varId, value }));
  }

  private block(fn: () => void): Stmt[] {
    const block: Stmt[] = [];
    this.blocks.push(block);
    try {
      fn();
    } finally {
      this.blocks.pop();
    }
    return block;
  }
}

/** Refuses what an `expectRange` body may not hold (see KernelBuilder.expectRange). */
function checkRangeBody(stmts: readonly Stmt[], loops: number, buffer: string): void {
  const refuse = (what: string) => {
    throw buildError(`expectRange('${buffer}'): its body may not hold ${what} (it may run under non-uniform control flow)`);
  };
  for (const s of stmts) {
    if (s.op === 'barrier') refuse('a barrier');
    if (s.op === 'return') refuse('a return');
    if ((s.op === 'break' || s.op === 'continue') && loops === 0) refuse(`a ${s.op} out of it`);
    forEachExprOfStmt(s, (root) =>
      walkExpr(root, (e) => {
        if (e.op === 'subgroup') refuse('a subgroup operation');
      }),
    );
    if (s.op === 'loop') {
      checkRangeBody(s.condPrelude, loops + 1, buffer);
      checkRangeBody(s.body, loops + 1, buffer);
      checkRangeBody(s.update, loops + 1, buffer);
    } else for (const child of childBlocks(s)) checkRangeBody(child, loops, buffer);
  }
}

function builtin(name: BuiltinName): Val<'u32'> {
  return new Val('u32', { op: 'builtin', type: 'u32', name });
}
function builtin3(name: BuiltinName): Val<'vec3<u32>'> {
  return new Val('vec3<u32>', { op: 'builtin', type: 'vec3<u32>', name });
}

export interface KernelSpec<P extends Record<string, ParamDecl>> {
  /** Used in errors, caches, profiles and generated code: letters, digits, '_'. */
  readonly name: string;
  /**
   * Invocations per workgroup: a number (1-D) or its extent `[x, y]` / `[x, y, z]`
   * (for `k.localId` / `k.globalId` in 2-D and 3-D). The product is bounded by
   * `device.caps.limits.maxComputeInvocationsPerWorkgroup`.
   */
  readonly workgroupSize: number | readonly [number, number?, number?];
  readonly params: P;
  readonly body: (params: ParamHandles<P>, k: KernelBuilder) => void;
}

/** A built kernel: its IR, what it needs of a backend, and a cache key. */
export interface Kernel<P extends Record<string, ParamDecl> = Record<string, ParamDecl>> {
  readonly name: string;
  readonly ir: KernelIR;
  readonly info: KernelInfo;
  /** Structural identity: kernels with equal keys compile to the same code. */
  readonly key: string;
  /** Phantom, for typing dispatch arguments. */
  readonly params: P;
}

function workgroupShapeOf(size: KernelSpec<Record<string, ParamDecl>>['workgroupSize']): [number, number, number] {
  const dims = typeof size === 'number' ? [size] : Array.isArray(size) ? [...size] : [];
  const [x = 1, y = 1, z = 1] = dims;
  if (dims.length < 1 || dims.length > 3 || ![x, y, z].every((d) => Number.isInteger(d) && d >= 1)) {
    throw buildError(`workgroupSize must be a positive integer or [x, y?, z?] of positive integers, got ${JSON.stringify(size)}`);
  }
  return [x, y, z];
}

const NAME_RE = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Builds a kernel from its spec; malformed kernels throw a KernelBuildError naming the kernel. */
export function defineKernel<P extends Record<string, ParamDecl>>(spec: KernelSpec<P>): Kernel<P> {
  const { previous } = enterBuildScope(spec.name);
  try {
    if (!NAME_RE.test(spec.name)) throw buildError('name must match /^[A-Za-z][A-Za-z0-9_]*$/');
    const shape = workgroupShapeOf(spec.workgroupSize);
    const k = new KernelBuilder(shape);
    const handles: Record<string, unknown> = {};
    const params: Array<readonly [string, ParamDecl]> = [];
    for (const [name, decl] of Object.entries(spec.params)) {
      if (!NAME_RE.test(name)) throw buildError(`parameter name '${name}' must match /^[A-Za-z][A-Za-z0-9_]*$/`);
      params.push([name, decl]);
      if (decl.kind === 'buffer') {
        handles[name] = new BufferHandle(k, name, vecType(decl.dtype, decl.vector), decl.access);
      } else {
        const u = new Val(decl.dtype, { op: 'uniform', type: decl.dtype, name });
        ownNode(u.node);
        handles[name] = u;
      }
    }
    spec.body(handles as ParamHandles<P>, k);
    const { body, vars, arrays, privates } = k.finish();
    const ir: KernelIR = {
      name: spec.name,
      workgroupSize: k.workgroupSize,
      workgroupShape: shape,
      params,
      workgroupArrays: arrays,
      privateArrays: privates,
      vars,
      body,
    };
    const info = analyzeKernel(ir);
    checkBarrierUniformity(ir);
    return { name: spec.name, ir, info, key: JSON.stringify(ir), params: spec.params };
  } finally {
    restoreBuildScope(previous);
  }
}
