import type { BufferDType, ScalarType } from '../dtype.ts';

/**
 * Value types of the kernel IR, written as strings: scalars and 2/3/4-vectors of
 * 32-bit numbers. `bool` vectors do not exist (use one bool per comparison).
 */
export type VecWidth = 2 | 3 | 4;
export type VecType = `vec${VecWidth}<${BufferDType}>`;
export type ValueType = ScalarType | VecType;

/** The element type of a value type (itself for scalars). */
export type ElementOf<T extends ValueType> = T extends `vec${VecWidth}<${infer E extends BufferDType}>` ? E : T;

export interface TypeInfo {
  readonly scalar: ScalarType;
  /** 1 for scalars. */
  readonly width: 1 | VecWidth;
}

export function typeInfo(t: ValueType): TypeInfo {
  if (t.startsWith('vec')) {
    return { scalar: t.slice(5, -1) as BufferDType, width: Number(t[3]) as VecWidth };
  }
  return { scalar: t as ScalarType, width: 1 };
}

export function vecType(scalar: BufferDType, width: 1 | VecWidth): ValueType {
  return width === 1 ? scalar : (`vec${width}<${scalar}>` as VecType);
}

export function isInteger(t: ValueType): boolean {
  const s = typeInfo(t).scalar;
  return s === 'u32' || s === 'i32';
}

export function isFloat(t: ValueType): boolean {
  return typeInfo(t).scalar === 'f32';
}

export function isNumeric(t: ValueType): boolean {
  return typeInfo(t).scalar !== 'bool';
}
