import type { BufferDType } from '../dtype.ts';
import { KernelBuildError } from '../errors.ts';
import { childExprs } from './analyze.ts';
import type { BinaryFn, Expr, MathFn } from './nodes.ts';
import { COMPARISONS } from './nodes.ts';
import { type ElementOf, isFloat, isInteger, typeInfo, type ValueType, type VecWidth, vecType } from './types.ts';

/**
 * The kernel being built (building is synchronous): its name, for error messages,
 * and its identity, so that values built in one kernel's body are refused in another's.
 */
export interface BuildScope {
  readonly kernel: string;
}
let currentScope: BuildScope | undefined;
/** Enters a kernel's build; returns the scope to restore with `restoreBuildScope`. */
export function enterBuildScope(kernel: string): { scope: BuildScope; previous: BuildScope | undefined } {
  const previous = currentScope;
  currentScope = { kernel };
  return { scope: currentScope, previous };
}
export function restoreBuildScope(previous: BuildScope | undefined): void {
  currentScope = previous;
}
export function buildError(problem: string): KernelBuildError {
  return new KernelBuildError(currentScope?.kernel ?? '<no kernel>', problem);
}

/**
 * Which build made each variable and parameter node: a value holding one belongs
 * to that kernel. Keyed by node identity, so the IR itself stays plain data.
 */
const nodeScope = new WeakMap<Expr, BuildScope>();
export function ownNode(node: Expr): void {
  if (currentScope) nodeScope.set(node, currentScope);
}
/** Throws if `e` holds a variable or parameter of a kernel other than the one being built. */
export function checkOwnership(e: Expr): void {
  const seen = new Set<Expr>();
  walkExprOnce(e, seen, (x) => {
    const owner = nodeScope.get(x);
    if (owner !== undefined && owner !== currentScope) {
      const what = x.op === 'var' ? 'a variable' : x.op === 'uniform' ? `parameter '${x.name}'` : 'a value';
      throw buildError(
        `uses ${what} built in the body of kernel '${owner.kernel}'. A kernel value belongs to the kernel whose body built it; ` +
          'build it again in this body (share a function that takes the builder `k` and returns the value)',
      );
    }
  });
}
function walkExprOnce(e: Expr, seen: Set<Expr>, fn: (e: Expr) => void): void {
  if (seen.has(e)) return;
  seen.add(e);
  fn(e);
  for (const c of childExprs(e)) walkExprOnce(c, seen, fn);
}

/** Why JavaScript operators cannot work on kernel values, and what to use instead. */
const OPERATOR_MISUSE =
  'a kernel value was used with a JavaScript operator (<, +, ==, template strings, Number(), ...). The kernel body runs once in ' +
  'JavaScript to build the kernel, so the value has no number yet. Use the builder methods: .lt/.le/.gt/.ge/.eq/.ne to ' +
  'compare, .add/.sub/.mul/.div/.rem/.and/.or/.shl/.shr for arithmetic, k.if(cond, ...) to branch, select(cond, a, b) to choose';

/**
 * A number literal, or a value of the same type, where an operand of type T is
 * expected; for a vector T also a scalar of its element type (used in every component).
 */
export type Operand<T extends ValueType> = Val<T> | Val<ElementOf<T>> | number;
type IntegerType = 'u32' | 'i32' | `vec${VecWidth}<u32>` | `vec${VecWidth}<i32>`;
type NumericType = Exclude<ValueType, 'bool'>;
type ShiftAmount<T extends ValueType> = T extends `vec${infer W}<${string}>`
  ? Val<`vec${W & `${VecWidth}`}<u32>`> | number
  : Val<'u32'> | number;

const U32_MAX = 0xffffffff;

/** Validates a JS number as a constant of scalar type `scalar`; throws on values that do not fit. */
export function checkConstant(scalar: BufferDType | 'bool', value: number | boolean): number | boolean {
  if (scalar === 'bool') {
    if (typeof value !== 'boolean') throw buildError(`bool constant must be true or false, got ${describe(value)}`);
    return value;
  }
  if (typeof value !== 'number') throw buildError(`${scalar} constant must be a number, got ${describe(value)}`);
  if (scalar === 'f32') return Math.fround(value);
  if (!Number.isInteger(value)) throw buildError(`${scalar} constant must be an integer, got ${value}`);
  if (scalar === 'u32' && (value < 0 || value > U32_MAX)) throw buildError(`u32 constant out of range: ${value}`);
  if (scalar === 'i32' && (value < -0x80000000 || value > 0x7fffffff)) throw buildError(`i32 constant out of range: ${value}`);
  return value;
}

function describe(value: unknown): string {
  return value instanceof Val ? `a ${value.type} kernel value` : typeof value === 'object' ? typeof value : String(value);
}

export function constant<T extends ValueType>(type: T, value: number | boolean): Val<T> {
  const { scalar, width } = typeInfo(type);
  const v = checkConstant(scalar, value);
  if (width === 1) return new Val(type, { op: 'const', type, value: v });
  return new Val(type, { op: 'const', type, value: new Array<number>(width).fill(v as number) });
}

/**
 * A typed value inside a kernel: an IR expression plus its type. Methods build new
 * expressions; nothing is evaluated in JavaScript. Operands must have the same type
 * (no implicit conversion); a plain number is taken as a constant of this value's type.
 */
export class Val<T extends ValueType> {
  readonly type: T;
  readonly node: Expr;
  constructor(type: T, node: Expr) {
    this.type = type;
    this.node = node;
  }

  /** JavaScript operators would see an object, not a number: refuse them loudly (`if (v)` cannot be caught). */
  [Symbol.toPrimitive](): never {
    throw buildError(OPERATOR_MISUSE);
  }
  valueOf(): never {
    throw buildError(OPERATOR_MISUSE);
  }

  add(b: Operand<T>): Val<T> {
    return this.arith('add', b);
  }
  sub(b: Operand<T>): Val<T> {
    return this.arith('sub', b);
  }
  mul(b: Operand<T>): Val<T> {
    return this.arith('mul', b);
  }
  /** Integer division truncates; x / 0 == x for integers (WGSL). */
  div(b: Operand<T>): Val<T> {
    return this.arith('div', b);
  }
  /** Remainder with the sign of the dividend; x % 0 == 0 for integers. */
  rem(b: Operand<T>): Val<T> {
    return this.arith('rem', b);
  }
  /** Bitwise AND on integers, logical AND (both sides evaluated) on bools. */
  and(this: Val<IntegerType | 'bool'>, b: Operand<T>): Val<T> {
    return (this as Val<ValueType>).bitwise('and', b as Operand<ValueType>) as Val<T>;
  }
  or(this: Val<IntegerType | 'bool'>, b: Operand<T>): Val<T> {
    return (this as Val<ValueType>).bitwise('or', b as Operand<ValueType>) as Val<T>;
  }
  xor(this: Val<IntegerType | 'bool'>, b: Operand<T>): Val<T> {
    return (this as Val<ValueType>).bitwise('xor', b as Operand<ValueType>) as Val<T>;
  }
  /** Shift left by `b` modulo 32. */
  shl(this: Val<IntegerType>, b: ShiftAmount<T>): Val<T> {
    return (this as Val<ValueType>).shift('shl', b) as Val<T>;
  }
  /** Shift right by `b` modulo 32: logical on u32, arithmetic on i32. */
  shr(this: Val<IntegerType>, b: ShiftAmount<T>): Val<T> {
    return (this as Val<ValueType>).shift('shr', b) as Val<T>;
  }
  eq(b: Operand<T>): Val<'bool'> {
    return this.compare('eq', b);
  }
  ne(b: Operand<T>): Val<'bool'> {
    return this.compare('ne', b);
  }
  lt(b: Operand<T>): Val<'bool'> {
    return this.compare('lt', b);
  }
  le(b: Operand<T>): Val<'bool'> {
    return this.compare('le', b);
  }
  gt(b: Operand<T>): Val<'bool'> {
    return this.compare('gt', b);
  }
  ge(b: Operand<T>): Val<'bool'> {
    return this.compare('ge', b);
  }
  neg(this: Val<NumericType>): Val<T> {
    if (typeInfo(this.type).scalar === 'u32') throw buildError('neg is not defined on u32 (use 0 - x for wrapping negation)');
    return new Val(this.type, { op: 'unary', type: this.type, fn: 'neg', a: this.node }) as unknown as Val<T>;
  }
  not(this: Val<'bool'>): Val<'bool'> {
    return new Val('bool', { op: 'unary', type: 'bool', fn: 'not', a: this.node });
  }
  bitnot(this: Val<IntegerType>): Val<T> {
    return new Val(this.type, { op: 'unary', type: this.type, fn: 'bitnot', a: this.node }) as unknown as Val<T>;
  }
  /**
   * Numeric conversion (see nodes.ts for the exact rules): f32 -> integer truncates and
   * saturates, integer -> f32 rounds, u32 <-> i32 reinterprets bits, bool -> 0/1.
   */
  cast<U extends ValueType>(to: U): Val<U> {
    const from = typeInfo(this.type);
    const target = typeInfo(to);
    if (from.width !== target.width) throw buildError(`cannot cast ${this.type} to ${to}: widths differ`);
    if (this.type === (to as ValueType)) return this as unknown as Val<U>;
    return new Val(to, { op: 'convert', type: to, a: this.node });
  }
  /** Reinterprets the 32 bits as another 32-bit type. */
  bitcast<U extends Exclude<ValueType, 'bool'>>(to: U): Val<U> {
    const from = typeInfo(this.type);
    const target = typeInfo(to);
    if (from.scalar === 'bool' || from.width !== target.width) throw buildError(`cannot bitcast ${this.type} to ${to}`);
    if (this.type === (to as ValueType)) return this as unknown as Val<U>;
    return new Val(to, { op: 'bitcast', type: to, a: this.node });
  }
  get x(): Val<ElementOf<T>> {
    return this.component(0);
  }
  get y(): Val<ElementOf<T>> {
    return this.component(1);
  }
  get z(): Val<ElementOf<T>> {
    return this.component(2);
  }
  get w(): Val<ElementOf<T>> {
    return this.component(3);
  }

  private component(c: 0 | 1 | 2 | 3): Val<ElementOf<T>> {
    const { scalar, width } = typeInfo(this.type);
    if (width === 1 || c >= width) throw buildError(`component ${'xyzw'[c]} does not exist on ${this.type}`);
    return new Val(scalar as ElementOf<T>, { op: 'extract', type: scalar, a: this.node, component: c });
  }

  private operand(b: Operand<T>, fn: string): Val<T> {
    return coerce(this.type, b, fn);
  }

  private arith(fn: BinaryFn, b: Operand<T>): Val<T> {
    if (typeInfo(this.type).scalar === 'bool') throw buildError(`${fn} is not defined on bool`);
    const rhs = this.operand(b, fn);
    return new Val(this.type, { op: 'binary', type: this.type, fn, a: this.node, b: rhs.node });
  }

  private bitwise(fn: BinaryFn, b: Operand<T>): Val<T> {
    if (isFloat(this.type)) throw buildError(`${fn} is not defined on f32 (bitcast to u32 first)`);
    const rhs = this.operand(b, fn);
    return new Val(this.type, { op: 'binary', type: this.type, fn, a: this.node, b: rhs.node });
  }

  private shift(fn: BinaryFn, b: Operand<ValueType>): Val<T> {
    if (!isInteger(this.type)) throw buildError(`${fn} needs an integer value, got ${this.type}`);
    const amountType = vecType('u32', typeInfo(this.type).width);
    const amount = typeof b === 'number' ? constant(amountType, b) : b;
    if (amount.type !== amountType) throw buildError(`${fn}: shift amount must be ${amountType}, got ${amount.type}`);
    return new Val(this.type, { op: 'binary', type: this.type, fn, a: this.node, b: amount.node });
  }

  private compare(fn: BinaryFn, b: Operand<T>): Val<'bool'> {
    if (typeInfo(this.type).width !== 1) throw buildError(`${fn}: comparisons take scalars, got ${this.type}`);
    if (this.type === 'bool' && fn !== 'eq' && fn !== 'ne') throw buildError(`${fn} is not defined on bool`);
    if (!COMPARISONS.has(fn)) throw buildError(`unknown comparison ${fn}`);
    const rhs = this.operand(b, fn);
    return new Val('bool', { op: 'binary', type: 'bool', fn, a: this.node, b: rhs.node });
  }
}

/**
 * `b` as an operand of type `type`: a number becomes a constant, a scalar of a
 * vector's element type is splatted into every component; other types are refused.
 */
export function coerce<T extends ValueType>(type: T, b: Operand<T> | unknown, fn: string): Val<T> {
  if (typeof b === 'number') return constant(type, b);
  if (!(b instanceof Val)) throw buildError(`${fn}: operand is not a kernel value or a number (got ${describe(b)})`);
  if (b.type === type) return b as Val<T>;
  const { scalar, width } = typeInfo(type);
  if (width > 1 && b.type === scalar) {
    return new Val(type, { op: 'construct', type, args: new Array<Expr>(width).fill(b.node) });
  }
  throw buildError(`${fn}: operand types differ (${type} vs ${b.type}); cast explicitly`);
}

/** A mutable private variable. Reading it is using it as a value. */
export class Var<T extends ValueType> extends Val<T> {
  readonly id: number;
  private readonly assign: (id: number, value: Expr) => void;
  constructor(type: T, id: number, assign: (id: number, value: Expr) => void) {
    super(type, { op: 'var', type, id });
    ownNode(this.node);
    this.id = id;
    this.assign = assign;
  }
  /** Assigns a value of the same type (a scalar splats into a vector), or a number / boolean literal of it. */
  set(value: Operand<T> | boolean): void {
    checkOwnership(this.node);
    const v = typeof value === 'boolean' ? constant(this.type, value) : coerce(this.type, value, 'set');
    this.assign(this.id, v.node);
  }
}

export const u32 = (value: number): Val<'u32'> => constant('u32', value);
export const i32 = (value: number): Val<'i32'> => constant('i32', value);
export const f32 = (value: number): Val<'f32'> => constant('f32', value);
export const bool = (value: boolean): Val<'bool'> => constant('bool', value);

/** Builds a vector from scalars of one type, e.g. `vec('f32', a, b, c, d)`. */
export function vec<S extends BufferDType, W extends VecWidth>(
  scalar: S,
  ...parts: Array<Operand<S>> & { length: W }
): Val<`vec${W}<${S}>`> {
  const width = parts.length as W;
  if (width < 2 || width > 4) throw buildError(`vectors have 2 to 4 components, got ${width}`);
  const type = `vec${width}<${scalar}>` as `vec${W}<${S}>`;
  const args = parts.map((p) => {
    const v = typeof p === 'number' ? constant(scalar, p) : p;
    if (v.type !== scalar) throw buildError(`vec(${scalar}, …): component of type ${v.type}`);
    return v.node;
  });
  return new Val(type, { op: 'construct', type, args });
}

/**
 * `cond ? ifTrue : ifFalse`, both sides evaluated. The branches have one type; a
 * number takes the other branch's type. With two numbers the type is `type`
 * (default u32): `select(c, 10, 20)`, `select(c, -1, 1, 'i32')`, `select(c, 0.5, 1, 'f32')`.
 */
export function select<T extends ValueType>(cond: Val<'bool'>, ifTrue: Val<T>, ifFalse: Val<T> | number): Val<T>;
export function select<T extends ValueType>(cond: Val<'bool'>, ifTrue: number, ifFalse: Val<T>): Val<T>;
export function select<T extends BufferDType = 'u32'>(cond: Val<'bool'>, ifTrue: number, ifFalse: number, type?: T): Val<T>;
export function select(
  cond: Val<'bool'>,
  ifTrue: Val<ValueType> | number,
  ifFalse: Val<ValueType> | number,
  type?: BufferDType,
): Val<ValueType> {
  if (!(cond instanceof Val) || cond.type !== 'bool')
    throw buildError(`select: condition must be a bool kernel value, got ${describe(cond)}`);
  const t = ifTrue instanceof Val ? ifTrue.type : ifFalse instanceof Val ? ifFalse.type : (type ?? 'u32');
  const a = typeof ifTrue === 'number' ? constant(t, ifTrue) : ifTrue;
  const b = typeof ifFalse === 'number' ? constant(t, ifFalse) : ifFalse;
  if (a.type !== b.type) throw buildError(`select: branch types differ (${a.type} vs ${b.type})`);
  return new Val(a.type, { op: 'select', type: a.type, cond: cond.node, ifTrue: a.node, ifFalse: b.node });
}

type MathSpec = { arity: number; floatOnly: boolean; intOnly?: boolean; noUnsigned?: boolean };
const MATH: Record<MathFn, MathSpec> = {
  abs: { arity: 1, floatOnly: false },
  min: { arity: 2, floatOnly: false },
  max: { arity: 2, floatOnly: false },
  clamp: { arity: 3, floatOnly: false },
  sqrt: { arity: 1, floatOnly: true },
  inverseSqrt: { arity: 1, floatOnly: true },
  exp: { arity: 1, floatOnly: true },
  exp2: { arity: 1, floatOnly: true },
  log: { arity: 1, floatOnly: true },
  log2: { arity: 1, floatOnly: true },
  pow: { arity: 2, floatOnly: true },
  sin: { arity: 1, floatOnly: true },
  cos: { arity: 1, floatOnly: true },
  floor: { arity: 1, floatOnly: true },
  ceil: { arity: 1, floatOnly: true },
  trunc: { arity: 1, floatOnly: true },
  fma: { arity: 3, floatOnly: true },
  countOneBits: { arity: 1, floatOnly: false, intOnly: true },
};

function call<T extends ValueType>(fn: MathFn, first: Val<T>, rest: Array<Operand<T>>): Val<T> {
  const spec = MATH[fn];
  if (!(first instanceof Val)) throw buildError(`${fn}: first argument must be a kernel value`);
  const t = first.type;
  if (typeInfo(t).scalar === 'bool') throw buildError(`${fn} is not defined on bool`);
  if (spec.floatOnly && !isFloat(t)) throw buildError(`${fn} needs f32, got ${t}`);
  if (spec.intOnly && !isInteger(t)) throw buildError(`${fn} needs an integer type, got ${t}`);
  if (rest.length + 1 !== spec.arity) throw buildError(`${fn} takes ${spec.arity} arguments`);
  const args = [first, ...rest].map((a) => coerce(t, a, fn).node);
  return new Val(t, { op: 'call', type: t, fn, args });
}

export const abs = <T extends ValueType>(a: Val<T>): Val<T> => call('abs', a, []);
/** For f32, min/max with a NaN operand may return either operand (GPU behaviour varies). */
export const min = <T extends ValueType>(a: Val<T>, b: Operand<T>): Val<T> => call('min', a, [b]);
export const max = <T extends ValueType>(a: Val<T>, b: Operand<T>): Val<T> => call('max', a, [b]);
export const clamp = <T extends ValueType>(a: Val<T>, lo: Operand<T>, hi: Operand<T>): Val<T> => call('clamp', a, [lo, hi]);
export const sqrt = <T extends ValueType>(a: Val<T>): Val<T> => call('sqrt', a, []);
export const inverseSqrt = <T extends ValueType>(a: Val<T>): Val<T> => call('inverseSqrt', a, []);
export const exp = <T extends ValueType>(a: Val<T>): Val<T> => call('exp', a, []);
export const exp2 = <T extends ValueType>(a: Val<T>): Val<T> => call('exp2', a, []);
export const log = <T extends ValueType>(a: Val<T>): Val<T> => call('log', a, []);
export const log2 = <T extends ValueType>(a: Val<T>): Val<T> => call('log2', a, []);
export const pow = <T extends ValueType>(a: Val<T>, b: Operand<T>): Val<T> => call('pow', a, [b]);
export const sin = <T extends ValueType>(a: Val<T>): Val<T> => call('sin', a, []);
export const cos = <T extends ValueType>(a: Val<T>): Val<T> => call('cos', a, []);
export const floor = <T extends ValueType>(a: Val<T>): Val<T> => call('floor', a, []);
export const ceil = <T extends ValueType>(a: Val<T>): Val<T> => call('ceil', a, []);
export const trunc = <T extends ValueType>(a: Val<T>): Val<T> => call('trunc', a, []);
/** a * b + c; may or may not be fused depending on the backend. */
export const fma = <T extends ValueType>(a: Val<T>, b: Operand<T>, c: Operand<T>): Val<T> => call('fma', a, [b, c]);
export const countOneBits = <T extends ValueType>(a: Val<T>): Val<T> => call('countOneBits', a, []);
