import type { BackendBuffer, BufferDType, HostArray, TypedArrayFor } from '@trident/core';
import { typedArrayConstructor } from '@trident/core';
import type { SharedHeap } from './heap.ts';

let nextBufferId = 1;

/**
 * A CPU-backend buffer: a block of the device's shared WebAssembly.Memory
 * (heap.ts), seen here as a typed-array view; workers view the same bytes without
 * copying, and WebAssembly kernels address them by `offset`.
 */
export class CpuBuffer<D extends BufferDType = BufferDType> implements BackendBuffer {
  readonly dtype: D;
  readonly length: number;
  /** Byte offset of element 0 in the device's memory (16-byte aligned). */
  readonly offset: number;
  /** Bytes reserved for it in the heap. */
  readonly bytes: number;
  readonly view: TypedArrayFor[D];
  /** How workers name this buffer once it is registered with them (worker-pool.ts). */
  readonly id = nextBufferId++;

  constructor(dtype: D, length: number, heap: SharedHeap) {
    this.dtype = dtype;
    this.length = length;
    this.bytes = length * 4;
    this.offset = heap.alloc(this.bytes);
    // memory.buffer after the allocation's growth: a view made earlier could not reach these bytes.
    this.view = new (typedArrayConstructor(dtype))(heap.memory.buffer, this.offset, length);
  }

  write(offset: number, data: HostArray): void {
    (this.view as HostArray).set(data as never, offset);
  }
}
