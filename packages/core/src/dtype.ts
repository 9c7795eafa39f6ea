/**
 * Element types of buffers and scalar types of the kernel IR.
 *
 * Buffers hold 32-bit elements only (`u32`, `i32`, `f32`): that is what all three
 * backends store natively (WebGPU storage buffers, WebGL2 R32* textures, JS typed
 * arrays). `bool` exists only inside kernels.
 */
export type BufferDType = 'u32' | 'i32' | 'f32';
export type ScalarType = BufferDType | 'bool';

export const BUFFER_DTYPES: readonly BufferDType[] = ['u32', 'i32', 'f32'];

/** The typed array that holds a buffer of each dtype on the host. */
export interface TypedArrayFor {
  u32: Uint32Array;
  i32: Int32Array;
  f32: Float32Array;
}
export type HostArray = TypedArrayFor[BufferDType];

export function isBufferDType(value: unknown): value is BufferDType {
  return value === 'u32' || value === 'i32' || value === 'f32';
}

export function typedArrayConstructor<T extends BufferDType>(
  dtype: T,
): { new (length: number): TypedArrayFor[T]; new (buffer: ArrayBufferLike, byteOffset?: number, length?: number): TypedArrayFor[T] } {
  const table = { u32: Uint32Array, i32: Int32Array, f32: Float32Array } as const;
  return table[dtype] as never;
}

/** The dtype a typed array stores, or undefined for any other array. */
export function dtypeOfArray(data: unknown): BufferDType | undefined {
  if (data instanceof Uint32Array) return 'u32';
  if (data instanceof Int32Array) return 'i32';
  if (data instanceof Float32Array) return 'f32';
  return undefined;
}

export const BYTES_PER_ELEMENT = 4;
