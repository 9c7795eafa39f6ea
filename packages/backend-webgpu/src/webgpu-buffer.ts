/// <reference types="@webgpu/types" preserve="true" />
import type { BackendBuffer, BufferDType } from '@trident/core';

/**
 * A WebGPU-backend buffer: one storage buffer. Its allocation holds one spare
 * element past the logical length and is padded to a multiple of 16 bytes, so an
 * empty buffer still binds, a vec4 view of it has whole elements, and an atomic
 * write out of range has somewhere harmless to land (wgsl.ts, `atomicHelper`);
 * kernels see the logical length only.
 */
export class WebGpuBuffer implements BackendBuffer {
  readonly dtype: BufferDType;
  readonly length: number;
  readonly gpu: GPUBuffer;
  /** Unique per allocation, for bind-group cache keys. */
  readonly id: number;

  constructor(dtype: BufferDType, length: number, gpu: GPUBuffer, id: number) {
    this.dtype = dtype;
    this.length = length;
    this.gpu = gpu;
    this.id = id;
  }
}

/** Elements past the logical length in every allocation (and in its binding): see `WebGpuBuffer`. */
export const SPARE_ELEMENTS = 1;

/** Bytes allocated for `length` 32-bit elements: the spare element included, padded to 16. */
export function allocationBytes(length: number): number {
  return Math.ceil(((length + SPARE_ELEMENTS) * 4) / 16) * 16;
}

/**
 * Freed storage buffers kept for reuse, keyed by exact size: algorithms allocate
 * the same temporaries again and again. Bounded, so it never hoards memory;
 * buffers above `maxBufferBytes` are not kept at all.
 */
export class BufferPool {
  private readonly free = new Map<number, Array<{ gpu: GPUBuffer; id: number }>>();
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly maxBufferBytes: number;

  constructor(maxBytes = 64 * 2 ** 20, maxBufferBytes = 16 * 2 ** 20) {
    this.maxBytes = maxBytes;
    this.maxBufferBytes = maxBufferBytes;
  }

  take(size: number): { gpu: GPUBuffer; id: number } | undefined {
    const list = this.free.get(size);
    const entry = list?.pop();
    if (entry) this.bytes -= size;
    return entry;
  }

  /** Keeps the buffer if there is room; returns false if the caller must destroy it. */
  give(gpu: GPUBuffer, id: number): boolean {
    const size = gpu.size;
    if (size > this.maxBufferBytes || this.bytes + size > this.maxBytes) return false;
    let list = this.free.get(size);
    if (!list) {
      list = [];
      this.free.set(size, list);
    }
    list.push({ gpu, id });
    this.bytes += size;
    return true;
  }

  /** Empties the pool, returning what it held (for destruction). */
  drain(): GPUBuffer[] {
    const all = [...this.free.values()].flat().map((e) => e.gpu);
    this.free.clear();
    this.bytes = 0;
    return all;
  }
}

/**
 * Mappable read-back buffers (MAP_READ | COPY_DST), kept for reuse in power-of-two
 * size classes from 256 bytes to 64 MiB: a read of a few bytes or of 2^24 elements
 * then costs no allocation (TF.js's webgpu backend reuses its read-back buffers
 * too). Bounded like BufferPool; a buffer is only given back unmapped.
 */
export class StagingPool {
  private readonly free = new Map<number, GPUBuffer[]>();
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly maxBufferBytes: number;

  constructor(maxBytes = 128 * 2 ** 20, maxBufferBytes = 64 * 2 ** 20) {
    this.maxBytes = maxBytes;
    this.maxBufferBytes = maxBufferBytes;
  }

  /** The buffer size for a read of `bytes`: its size class, or exactly `bytes` past the largest class. */
  sizeFor(bytes: number): number {
    const size = Math.max(256, 2 ** Math.ceil(Math.log2(Math.max(1, bytes))));
    return size <= this.maxBufferBytes ? size : bytes;
  }

  take(bytes: number): GPUBuffer | undefined {
    const size = this.sizeFor(bytes);
    if (size > this.maxBufferBytes) return undefined;
    const b = this.free.get(size)?.pop();
    if (b) this.bytes -= size;
    return b;
  }

  /** Keeps the buffer if there is room; returns false if the caller must destroy it. */
  give(b: GPUBuffer): boolean {
    const size = b.size;
    if (size > this.maxBufferBytes || size !== this.sizeFor(size) || this.bytes + size > this.maxBytes) return false;
    let list = this.free.get(size);
    if (!list) {
      list = [];
      this.free.set(size, list);
    }
    list.push(b);
    this.bytes += size;
    return true;
  }

  drain(): GPUBuffer[] {
    const all = [...this.free.values()].flat();
    this.free.clear();
    this.bytes = 0;
    return all;
  }
}
