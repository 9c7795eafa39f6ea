import type { BinaryFn, ValueType } from '@trident/core';
import { typeInfo } from '@trident/core';

/**
 * The IR's scalar operations as JavaScript expression text, one rule each (ir/nodes.ts
 * defines them; js-runtime.ts holds the helpers called by name): u32 kept in
 * [0, 2^32) with `>>> 0`, i32 with `| 0`, f32 rounded by Math.fround after every
 * operation. The generator (js.ts) applies them to scalars and, component by
 * component, to vectors.
 */

/** The zero of a type's element (false for bool). */
export function zeroOf(type: ValueType): string {
  return typeInfo(type).scalar === 'bool' ? 'false' : '0';
}

export function num(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Number.POSITIVE_INFINITY) return 'Infinity';
  if (x === Number.NEGATIVE_INFINITY) return '(-Infinity)';
  if (Object.is(x, -0)) return '(-0)';
  return x < 0 ? `(${x})` : `${x}`;
}

export function constant(value: number | boolean): string {
  return typeof value === 'boolean' ? String(value) : num(value);
}

export function unary(fn: string, scalar: string, a: string): string {
  if (fn === 'not') return `(!${a})`;
  if (fn === 'bitnot') return scalar === 'u32' ? `(~${a} >>> 0)` : `(~${a})`;
  return scalar === 'i32' ? `(-${a} | 0)` : `(-${a})`;
}

export function binary(fn: BinaryFn, scalar: string, a: string, b: string): string {
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

export function mathCall(fn: string, scalar: string, args: string[]): string {
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

export function convert(from: string, to: string, a: string): string {
  if (from === to) return a;
  if (from === 'bool') return to === 'f32' ? `(${a} ? 1 : 0)` : `(${a} ? 1 : 0)`;
  if (to === 'bool') return `(${a} !== 0)`;
  if (to === 'f32') return `Math.fround(${a})`;
  if (to === 'u32') return from === 'i32' ? `(${a} >>> 0)` : `$f2u(${a})`;
  return from === 'u32' ? `(${a} | 0)` : `$f2i(${a})`;
}

export function bitcast(from: string, to: string, a: string): string {
  if (from === to) return a;
  if (from === 'f32') return to === 'u32' ? `$f2ubits(${a})` : `$f2ibits(${a})`;
  if (to === 'f32') return from === 'u32' ? `$u2fbits(${a})` : `$i2fbits(${a})`;
  return to === 'u32' ? `(${a} >>> 0)` : `(${a} | 0)`;
}
