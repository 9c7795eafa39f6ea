import type { BackendBuffer, BufferDType, HostArray, TypedArrayFor } from '@trident/core';
import { typedArrayConstructor } from '@trident/core';

let nextBufferId = 1;

/** A CPU-backend buffer: a SharedArrayBuffer that workers view without copying. */
export class CpuBuffer<D extends BufferDType = BufferDType> implements BackendBuffer {
  readonly dtype: D;
  readonly length: number;
  readonly data: SharedArrayBuffer;
  readonly view: TypedArrayFor[D];
  /** How workers name this buffer once it is registered with them (worker-pool.ts). */
  readonly id = nextBufferId++;

  constructor(dtype: D, length: number) {
    this.dtype = dtype;
    this.length = length;
    this.data = new SharedArrayBuffer(Math.max(4, length * 4));
    this.view = new (typedArrayConstructor(dtype))(this.data, 0, length);
  }

  write(offset: number, data: HostArray): void {
    (this.view as HostArray).set(data as never, offset);
  }
}
