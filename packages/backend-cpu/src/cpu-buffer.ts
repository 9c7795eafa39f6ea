import type { BackendBuffer, BufferDType, HostArray, TypedArrayFor } from '@trident/core';
import { typedArrayConstructor } from '@trident/core';
import type { DeviceMemory, HostBlock, Placement } from './host-blocks.ts';

let nextBufferId = 1;

/**
 * A CPU-backend buffer: a block of the device's shared WebAssembly.Memory (heap.ts),
 * or, where that has no room, a host block of its own (host-blocks.ts); seen here as
 * a typed-array view. Workers view the same bytes without copying, and WebAssembly
 * kernels address heap buffers by `offset`.
 */
export class CpuBuffer<D extends BufferDType = BufferDType> implements BackendBuffer {
  readonly dtype: D;
  readonly length: number;
  /** Bytes asked for it (4 per element). */
  readonly bytes: number;
  readonly placement: Placement;
  readonly view: TypedArrayFor[D];
  /** How workers name this buffer once it is registered with them (worker-pool.ts). */
  readonly id = nextBufferId++;

  constructor(dtype: D, length: number, memory: DeviceMemory) {
    this.dtype = dtype;
    this.length = length;
    this.bytes = length * 4;
    this.placement = memory.place(this.bytes);
    const block = this.placement.block;
    // memory.buffer after the allocation's growth: a view made earlier could not reach these bytes.
    const backing = block ? block.buffer : memory.heap.memory.buffer;
    this.view = new (typedArrayConstructor(dtype))(backing, this.placement.offset, length);
  }

  /** Byte offset of element 0 in the device's memory (16-byte aligned); 0 in a host block. */
  get offset(): number {
    return this.placement.offset;
  }

  /** Its host block, or undefined on the heap (where WebAssembly kernels can address it). */
  get block(): HostBlock | undefined {
    return this.placement.block;
  }

  write(offset: number, data: HostArray): void {
    (this.view as HostArray).set(data as never, offset);
  }
}
