/// <reference types="@webgpu/types" preserve="true" />
import type { BackendBuffer, BufferDType } from '@trident/core';

/** One GPUBuffer of a WebGPU-backend buffer, with its id for bind-group cache keys. */
export interface GpuSegment {
  readonly gpu: GPUBuffer;
  readonly id: number;
}

/** A run of a buffer's elements that lies in one of its GPUBuffers. */
export interface Piece extends GpuSegment {
  /** The run's first element within `gpu`. */
  readonly at: number;
  /** The run's first element counted from the start of the requested range. */
  readonly start: number;
  readonly count: number;
}

/**
 * A WebGPU-backend buffer: one storage buffer, or, past one storage binding, several
 * ("segments"). Its allocation holds one spare element past the logical length and is
 * padded to a multiple of 16 bytes, so an empty buffer still binds, a vec4 view of it
 * has whole elements, and an atomic write out of range has somewhere harmless to land
 * (wgsl.ts, `atomicHelper`); kernels see the logical length only.
 *
 * A segmented buffer's GPUBuffers each fit one binding: all but the last hold exactly
 * `segmentElements` elements (a multiple of 12, so no vec2, vec3 or vec4 element
 * straddles two), the last holds the rest; each has a spare element and padding too, so
 * that one bound alone (a segment view, `Device.segments`) is a buffer like any other
 * and a kernel run on it needs no variant of its own. Separate GPUBuffers
 * rather than windows of one, because a GPUBuffer is itself limited (`maxBufferSize`,
 * 4 GiB in Chromium's WebGPU on the H100) and a binding's offset would have to be
 * aligned. Kernels bind each segment as its own binding (wgsl.ts).
 */
export class WebGpuBuffer implements BackendBuffer {
  readonly dtype: BufferDType;
  readonly length: number;
  /** The storage buffer (the first segment of a segmented buffer). */
  readonly gpu: GPUBuffer;
  /** Unique per allocation, for bind-group cache keys (the first segment's). */
  readonly id: number;
  /** The GPUBuffers, in order: this one alone unless the buffer is past one binding. */
  readonly segments: readonly GpuSegment[];
  /** Elements in every segment but the last (the length, for one segment). */
  readonly segmentElements: number;

  constructor(
    dtype: BufferDType,
    length: number,
    gpu: GPUBuffer,
    id: number,
    segmented?: { readonly segments: readonly GpuSegment[]; readonly segmentElements: number },
  ) {
    this.dtype = dtype;
    this.length = length;
    this.gpu = gpu;
    this.id = id;
    this.segments = segmented?.segments ?? [{ gpu, id }];
    this.segmentElements = segmented?.segmentElements ?? length;
  }

  /** Elements [offset, offset + length) as runs within one GPUBuffer each, in order. */
  pieces(offset: number, length: number): Piece[] {
    if (this.segments.length === 1) return [{ gpu: this.gpu, id: this.id, at: offset, start: 0, count: length }];
    const out: Piece[] = [];
    const per = this.segmentElements;
    for (let done = 0; done < length; ) {
      const first = offset + done;
      const k = Math.min(Math.floor(first / per), this.segments.length - 1);
      const at = first - k * per;
      // The last segment runs to the end of the buffer.
      const room = k === this.segments.length - 1 ? length - done : per - at;
      const count = Math.min(length - done, room);
      out.push({ ...(this.segments[k] as GpuSegment), at, start: done, count });
      done += count;
    }
    return out;
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
