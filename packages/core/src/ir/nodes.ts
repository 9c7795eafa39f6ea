import type { BufferDType } from '../dtype.ts';
import type { ValueType, VecWidth } from './types.ts';

/**
 * The kernel IR: plain, serialisable data. The builder (builder.ts) produces it;
 * analysis (analyze.ts) classifies it; the code generators lower it.
 *
 * Semantics every generator must honour (the conformance suite checks them):
 * - u32 and i32 arithmetic wraps modulo 2^32.
 * - Integer division by zero yields the dividend; remainder by zero yields 0;
 *   i32 MIN / -1 yields MIN and MIN % -1 yields 0 (WGSL's definition).
 * - Shift amounts are taken modulo 32. `shr` is logical on u32, arithmetic on i32.
 * - f32 add, sub and mul round to f32 after every operation (IEEE 754 binary32,
 *   round-to-nearest-even on the CPU backend, in the written order). GPU shader
 *   compilers may regroup a chain of them (WGSL "Reassociation and Fusion"; GLSL ES
 *   "Evaluation of Expressions"), so a chain of more than one operation is held to
 *   the bound docs/kernels.md states, not to bits. Division and the math
 *   built-ins (sqrt included) are held only to WGSL's accuracy bounds on GPUs
 *   (division 2.5 ulp); GPUs may flush subnormal results to zero, and may ignore
 *   the sign of a zero (WGSL allows both). The conformance suite and the fuzzer (test/fuzz) use those tolerances.
 * - Conversions f32 -> u32/i32 truncate toward zero and saturate to the target
 *   range; NaN converts to 0. u32 <-> i32 conversions reinterpret the bits.
 *   Integer -> f32 rounds to nearest.
 * - Loads outside [0, length) return 0; stores and atomics there do nothing
 *   (atomics then return 0). Negative i32 indices are out of range. This holds
 *   for buffers and workgroup arrays alike, atomic workgroup arrays included.
 * - Workgroup arrays are zeroed when their workgroup starts. An atomic workgroup
 *   array (u32 or i32) is accessed only through `wgAtomic` (its plain loads and
 *   stores are atomic loads and stores), so its operations are indivisible among
 *   the invocations of the workgroup, as buffer atomics are among all invocations.
 *   Atomics order nothing else: results meant for other invocations need a barrier.
 * - `and`/`or` on bools evaluate both operands (no short-circuit).
 */

export type BuiltinName =
  | 'globalIndex' // linear invocation index over the whole grid
  | 'localIndex' // index of the invocation in its workgroup (workgroups are 1-D)
  | 'workgroupIndex' // linear workgroup index over the grid
  | 'workgroupSize'
  | 'numWorkgroups' // total workgroups in the grid (product of its dimensions)
  | 'subgroupSize'
  | 'subgroupInvocation'
  // vec3<u32> ids over the dispatched grid (see `workgroupShape`):
  | 'globalId' // workgroupId * workgroupShape + localId
  | 'localId' // position in the workgroup; localIndex = x + y * X + z * X * Y
  | 'workgroupId' // position of the workgroup in the grid; workgroupIndex = x + y * GX + z * GX * GY
  | 'workgroupCount'; // the grid's workgroups along x, y and z

/** The built-ins of type vec3<u32>; every other built-in is a u32. */
export const VEC3_BUILTINS: ReadonlySet<BuiltinName> = new Set(['globalId', 'localId', 'workgroupId', 'workgroupCount']);

export type UnaryFn = 'neg' | 'not' | 'bitnot';

export type BinaryFn =
  | 'add'
  | 'sub'
  | 'mul'
  | 'div'
  | 'rem'
  | 'and'
  | 'or'
  | 'xor'
  | 'shl'
  | 'shr'
  | 'eq'
  | 'ne'
  | 'lt'
  | 'le'
  | 'gt'
  | 'ge';

export const COMPARISONS: ReadonlySet<BinaryFn> = new Set(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);

export type MathFn =
  | 'abs'
  | 'min'
  | 'max'
  | 'clamp'
  | 'sqrt'
  | 'inverseSqrt'
  | 'exp'
  | 'exp2'
  | 'log'
  | 'log2'
  | 'pow'
  | 'sin'
  | 'cos'
  | 'floor'
  | 'ceil'
  | 'trunc'
  | 'fma'
  | 'countOneBits';

/**
 * Atomics on u32/i32 buffers and atomic workgroup arrays. On buffers add/min/max
 * form the 'atomic' class and the rest 'atomic-other'; on workgroup arrays every
 * operation belongs to the 'workgroup' class (see analyze.ts).
 */
export type AtomicFn = 'add' | 'sub' | 'min' | 'max' | 'and' | 'or' | 'xor' | 'exchange' | 'compareExchange' | 'load' | 'store';
export const BLENDABLE_ATOMICS: ReadonlySet<AtomicFn> = new Set(['add', 'min', 'max']);
/**
 * The atomics an f32 buffer has: add (the 'atomic' class: a compare-exchange loop on
 * the bits in WGSL, on the CPU; blending on WebGL2) and the atomic load/store that
 * every access to an atomic buffer is. The sum's rounding follows the order the
 * additions happen in, which no backend fixes.
 */
export const F32_ATOMICS: ReadonlySet<AtomicFn> = new Set(['add', 'load', 'store']);

/**
 * 'ballot' takes a bool and gives a vec4<u32> bit mask: bit l (of word l / 32) is set
 * when lane l is active and its predicate is true; lanes at or past the subgroup size are 0.
 */
export type SubgroupFn = 'add' | 'min' | 'max' | 'inclusiveAdd' | 'exclusiveAdd' | 'broadcastFirst' | 'shuffle' | 'ballot';

export type Expr =
  | { readonly op: 'const'; readonly type: ValueType; readonly value: number | boolean | readonly number[] }
  | { readonly op: 'uniform'; readonly type: ValueType; readonly name: string }
  | { readonly op: 'builtin'; readonly type: 'u32' | 'vec3<u32>'; readonly name: BuiltinName }
  | { readonly op: 'var'; readonly type: ValueType; readonly id: number }
  | { readonly op: 'unary'; readonly type: ValueType; readonly fn: UnaryFn; readonly a: Expr }
  | { readonly op: 'binary'; readonly type: ValueType; readonly fn: BinaryFn; readonly a: Expr; readonly b: Expr }
  | { readonly op: 'call'; readonly type: ValueType; readonly fn: MathFn; readonly args: readonly Expr[] }
  | { readonly op: 'select'; readonly type: ValueType; readonly cond: Expr; readonly ifTrue: Expr; readonly ifFalse: Expr }
  | { readonly op: 'convert'; readonly type: ValueType; readonly a: Expr }
  | { readonly op: 'bitcast'; readonly type: ValueType; readonly a: Expr }
  | { readonly op: 'load'; readonly type: ValueType; readonly buffer: string; readonly index: Expr }
  | { readonly op: 'length'; readonly type: 'u32'; readonly buffer: string }
  | {
      readonly op: 'atomic';
      /** f32 only for add, load and store (see `F32_ATOMICS`). */
      readonly type: 'u32' | 'i32' | 'f32';
      readonly fn: AtomicFn;
      readonly buffer: string;
      readonly index: Expr;
      readonly value: Expr;
      /** compareExchange only: the expected value. The result is the old value. */
      readonly compare?: Expr;
    }
  | { readonly op: 'wgLoad'; readonly type: ValueType; readonly array: number; readonly index: Expr }
  /** Element `index` of a private (per-invocation) array; 0 when out of range. */
  | { readonly op: 'privLoad'; readonly type: ValueType; readonly array: number; readonly index: Expr }
  /** An atomic on element `index` of an atomic workgroup array; fields as for 'atomic'. */
  | {
      readonly op: 'wgAtomic';
      readonly type: 'u32' | 'i32';
      readonly fn: AtomicFn;
      readonly array: number;
      readonly index: Expr;
      readonly value: Expr;
      readonly compare?: Expr;
    }
  | { readonly op: 'subgroup'; readonly type: ValueType; readonly fn: SubgroupFn; readonly a: Expr; readonly lane?: Expr }
  | { readonly op: 'construct'; readonly type: ValueType; readonly args: readonly Expr[] }
  | { readonly op: 'extract'; readonly type: ValueType; readonly a: Expr; readonly component: 0 | 1 | 2 | 3 };

export type Stmt =
  | { readonly op: 'let'; readonly id: number; readonly type: ValueType; readonly init: Expr }
  | { readonly op: 'assign'; readonly id: number; readonly value: Expr }
  | { readonly op: 'store'; readonly buffer: string; readonly index: Expr; readonly value: Expr }
  | { readonly op: 'wgStore'; readonly array: number; readonly index: Expr; readonly value: Expr }
  /** Stores into a private (per-invocation) array; dropped when out of range. */
  | { readonly op: 'privStore'; readonly array: number; readonly index: Expr; readonly value: Expr }
  /** Evaluates an expression for its effect (an atomic or wgAtomic whose result is unused). */
  | { readonly op: 'eval'; readonly expr: Expr }
  | { readonly op: 'if'; readonly cond: Expr; readonly thenBlock: readonly Stmt[]; readonly elseBlock: readonly Stmt[] }
  /**
   * `loop { condPrelude; if (!cond) break; body; update }` where `continue` jumps
   * to `update`. `for` and `while` both lower to this.
   */
  | {
      readonly op: 'loop';
      readonly condPrelude: readonly Stmt[];
      readonly cond: Expr;
      readonly body: readonly Stmt[];
      readonly update: readonly Stmt[];
    }
  /**
   * `body`, whose accesses to buffer `buffer` are expected to lie in elements [first, last]
   * (of the buffer's view). A hint, never a contract: the body runs exactly as it would
   * alone, wherever its accesses fall. A backend that splits a buffer over several
   * bindings may pick the segment once for the whole range (WGSL: one branch, then the
   * body's loads straight from that segment) instead of at every access. The body holds
   * no barrier, subgroup operation, return, or break / continue out of it (the builder's
   * `expectRange` checks), so a backend may run it under non-uniform control flow.
   */
  | {
      readonly op: 'expectRange';
      readonly buffer: string;
      readonly first: Expr;
      readonly last: Expr;
      readonly body: readonly Stmt[];
    }
  | { readonly op: 'break' }
  | { readonly op: 'continue' }
  /** Ends this invocation. */
  | { readonly op: 'return' }
  /**
   * Workgroup barrier: every invocation of the workgroup reaches it before any passes.
   * Workgroup memory written before it is then visible to every invocation, and so
   * are writes to storage buffers, unless `workgroupOnly` is set: then only
   * workgroup memory is ordered (WGSL's plain `workgroupBarrier()`), which is
   * cheaper on GPUs where the kernel also writes storage buffers.
   */
  | { readonly op: 'barrier'; readonly workgroupOnly?: true };

export type BufferAccess = 'read' | 'write' | 'read_write' | 'atomic';

export interface BufferParamDecl {
  readonly kind: 'buffer';
  readonly dtype: BufferDType;
  readonly access: BufferAccess;
  /** Elements are viewed as vectors of this width (the buffer's length must divide by it). */
  readonly vector: 1 | VecWidth;
}

export interface UniformParamDecl {
  readonly kind: 'uniform';
  readonly dtype: BufferDType;
}

export type ParamDecl = BufferParamDecl | UniformParamDecl;

export interface WorkgroupArrayDecl {
  readonly id: number;
  readonly type: ValueType;
  readonly length: number;
  /** Elements are atomics (type u32 or i32), reached only through 'wgAtomic'. Absent: a plain array. */
  readonly atomic?: true;
}

/**
 * An array private to each invocation (WGSL `var<function>`, a GLSL local array, a
 * per-invocation slice on the CPU), zeroed when the invocation starts. It lives
 * across barriers like any variable.
 */
export interface PrivateArrayDecl {
  readonly id: number;
  readonly type: ValueType;
  readonly length: number;
}

export interface VarDecl {
  readonly id: number;
  readonly type: ValueType;
  readonly name: string;
}

/** A complete kernel: the unit every backend compiles. */
export interface KernelIR {
  readonly name: string;
  /** Invocations per workgroup: the product of `workgroupShape`. */
  readonly workgroupSize: number;
  /**
   * The workgroup's extent along x, y and z; absent: `[workgroupSize, 1, 1]` (IR built
   * by hand may leave it out; read it through `workgroupShapeOf`).
   */
  readonly workgroupShape?: readonly [number, number, number];
  /** Parameter order is the binding order. */
  readonly params: ReadonlyArray<readonly [string, ParamDecl]>;
  readonly workgroupArrays: readonly WorkgroupArrayDecl[];
  /** Absent: none. */
  readonly privateArrays?: readonly PrivateArrayDecl[];
  readonly vars: readonly VarDecl[];
  readonly body: readonly Stmt[];
}

/** The workgroup's extent along x, y and z. */
export function workgroupShapeOf(ir: KernelIR): readonly [number, number, number] {
  return ir.workgroupShape ?? [ir.workgroupSize, 1, 1];
}

/** The length of private array `id`, or undefined if the kernel has no such array. */
export function privateArrayLength(ir: KernelIR, id: number): number | undefined {
  return ir.privateArrays?.find((a) => a.id === id)?.length;
}
