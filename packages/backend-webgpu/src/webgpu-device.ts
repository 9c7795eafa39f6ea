/// <reference types="@webgpu/types" preserve="true" />
import {
  type BackendBuffer,
  type BackendDevice,
  type BufferDType,
  buffer,
  type CompiledKernel,
  type DeviceCaps,
  type DeviceInfo,
  defineKernel,
  type Feature,
  type Grid,
  type HostArray,
  type Kernel,
  KernelBuildError,
  KernelExecutionError,
  LimitExceededError,
  type TimerSource,
  typedArrayConstructor,
  UnsupportedFeatureError,
  uniform,
  workgroupShapeOf,
} from '@trident/core';
import { allocationBytes, BufferPool, type GpuSegment, SPARE_ELEMENTS, StagingPool, WebGpuBuffer } from './webgpu-buffer.ts';
import {
  type BufferSegments,
  generateWgsl,
  type RangeHints,
  type SegmentLoads,
  type SegmentStores,
  type UniformSlot,
  type WgslKernel,
} from './wgsl.ts';

/** A compiled kernel: its WGSL, pipeline and the layout of its per-dispatch uniforms. */
export interface WebGpuCompiled extends CompiledKernel {
  readonly id: number;
  readonly wgsl: WgslKernel;
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
  /** Bytes of uniform data per dispatch, a multiple of the dynamic-offset alignment. */
  readonly slotBytes: number;
}

/** A buffer as bound to one parameter: a byte window of a storage buffer. */
interface Binding {
  readonly gpu: GPUBuffer;
  readonly id: number;
  readonly offset: number;
  readonly size: number;
  /** Elements of 32 bits the kernel may touch through this binding. */
  readonly elements: number;
}

/** What `measure` collects while its body runs (timestamp-query). */
interface TimingState {
  querySet: GPUQuerySet | undefined;
  used: number;
  readonly readbacks: Array<{ buffer: GPUBuffer; count: number }>;
}

/** An error a batch (or a pipeline) produced, waiting to be reported. */
interface PendingCheck {
  readonly what: string;
  readonly error: Promise<GPUError | null>;
  readonly compile?: string;
  /** The kernel key of a compile check: a rejected pipeline leaves the cache with it. */
  readonly key?: string;
  /** The size of a buffer allocation, for an out-of-memory check. */
  readonly bytes?: number;
}

/** GPUOutOfMemoryError, by name: Dawn in Node and browsers expose the class on different globals. */
function isOutOfMemory(error: GPUError): boolean {
  return error.constructor?.name === 'GPUOutOfMemoryError';
}

export interface WebGpuDeviceSetup {
  readonly device: GPUDevice;
  readonly adapterInfo: GPUAdapterInfo | undefined;
  readonly isFallbackAdapter: boolean;
  readonly runtime: string;
  /** Held for the device's life (Dawn's instance in Node). */
  readonly keepAlive: unknown;
  /** A lower binding limit to behave under (tests). */
  readonly maxStorageBufferBindingSize?: number;
  /** How kernels load from buffers split over bindings (WgslOptions.segmentLoads). */
  readonly segmentLoads?: SegmentLoads;
  /** How kernels store to buffers split over bindings (WgslOptions.segmentStores). */
  readonly segmentStores?: SegmentStores;
  /** Whether `expectRange` hints shape the WGSL (WgslOptions.rangeHints). */
  readonly rangeHints?: RangeHints;
}

/**
 * The largest buffer, in elements, where buffers may span several bindings. Kernels index
 * with u32 and step grid-stride loops by at most the elements they cover: with at most
 * 2^31 elements, an index below the length plus such a step stays below 2^32 and cannot
 * wrap around to an index the loop has already visited.
 */
const MAX_SEGMENTED_ELEMENTS = 2 ** 31;

/** Elements a write from shared memory copies into ordinary memory at a time (see writeGpu). */
const SHARED_WRITE_CHUNK = 2 ** 22;

/** Whether `data` views a SharedArrayBuffer (absent where the page is not cross-origin isolated). */
function isShared(data: HostArray): boolean {
  return typeof SharedArrayBuffer !== 'undefined' && data.buffer instanceof SharedArrayBuffer;
}

const UNIFORM_ALIGN = 256;
/** Uniform bytes per batch; a batch that fills it is submitted. */
const ARENA_BYTES = 256 * 1024;
/** Timestamp pairs (one per compute pass) per command buffer while measuring. */
const TIMESTAMP_PAIRS = 128;
const BIND_GROUP_CACHE = 512;
const FILL_WORKGROUP = 256;
/**
 * Zero fills at least this large go to clearBuffer; smaller ones inside an open compute
 * pass run the fill kernel instead, because clearBuffer must end the pass. H100
 * (session 9, bench/h100/scan-check.ts): a scan of 2^28 u32 whose 175 KB of look-back
 * states were cleared by clearBuffer before its dispatch took 14 µs longer than with
 * no clear at all, and a 4-byte clearBuffer cost as much (it is the pass break).
 */
const CLEAR_BUFFER_BYTES = 1 << 20;

/**
 * Sets elements [offset, offset + count) of `dst` to `value` (the bits of any
 * 32-bit dtype), grid-stride so any count fits the grid limit.
 */
const FILL_KERNEL = defineKernel({
  name: 'trident_fill',
  workgroupSize: FILL_WORKGROUP,
  params: { dst: buffer('u32', 'write'), value: uniform('u32'), offset: uniform('u32'), count: uniform('u32') },
  body: ({ dst, value, offset, count }, k) => {
    k.for({ from: k.globalIndex, to: count, step: k.numInvocations }, (i) => dst.store(i.add(offset), value));
  },
});

/**
 * The WebGPU backend device (browser or Dawn).
 *
 * Stream order: dispatches, copies, clears and staged writes are recorded into one
 * command encoder (consecutive dispatches share one compute pass; WebGPU orders
 * each dispatch after the writes of earlier ones) and submitted as one command
 * buffer by `flush`, `read`, `measure` or when the batch's uniform arena fills.
 * `queue.writeBuffer` runs before command buffers not yet submitted, so a write
 * goes straight to the queue only when nothing is recorded; otherwise it is staged
 * and recorded as a copy, in order.
 *
 * Errors: every batch and every pipeline runs inside a validation error scope;
 * their errors, and uncaptured ones, become typed errors on the next call.
 */
export class WebGpuDevice implements BackendDevice {
  readonly kind = 'webgpu' as const;
  /**
   * Host-side operations so far: command-buffer submits, map round trips (reads and
   * timestamp read-backs), GPU buffers created (storage, staging, query resolve) and
   * queue waits. Benchmarks count them per call; tests hold what one call costs.
   */
  readonly counters = { submits: 0, maps: 0, buffersCreated: 0, waits: 0 };
  readonly info: DeviceInfo;
  readonly caps: DeviceCaps;
  readonly gpu: GPUDevice;
  /** Dawn's instance (Node) must outlive the device: held here, never read. */
  readonly keepAlive: unknown;
  private readonly hasTimestamps: boolean;
  private readonly hasSubgroups: boolean;
  private readonly maxBindingBytes: number;
  private readonly segmentLoads: SegmentLoads;
  private readonly segmentStores: SegmentStores;
  private readonly rangeHints: RangeHints;
  /** Elements in every segment but the last of a buffer past one binding (webgpu-buffer.ts). */
  private readonly segmentElements: number;

  private readonly kernels = new Map<string, WebGpuCompiled>();
  /** Kernels whose pipeline the device rejected, by key, with the error to throw again. */
  private readonly rejected = new Map<string, KernelBuildError>();
  private nextKernelId = 0;
  private nextBufferId = 0;
  private readonly pool = new BufferPool();
  /** Mappable read-back buffers, reused: creating one per read cost an allocation per call. */
  private readonly staging = new StagingPool();
  private readonly bindGroups = new Map<string, GPUBindGroup>();

  private encoder: GPUCommandEncoder | undefined;
  private pass: GPUComputePassEncoder | undefined;
  private batchKernels = new Set<string>();
  /** Run once the current batch is submitted (destroying its temporaries). */
  private afterSubmit: Array<() => void> = [];
  private arena: GPUBuffer;
  private arenaId: number;
  private readonly arenaHost = new ArrayBuffer(ARENA_BYTES);
  private arenaUsed = 0;
  private timing: TimingState | undefined;

  private checks: PendingCheck[] = [];
  private uncaptured: string | undefined;
  private lost: string | undefined;
  private destroyed = false;

  constructor(setup: WebGpuDeviceSetup) {
    const device = setup.device;
    this.gpu = device;
    this.keepAlive = setup.keepAlive;
    this.hasTimestamps = device.features.has('timestamp-query');
    this.hasSubgroups = device.features.has('subgroups');
    const l = device.limits;
    this.segmentLoads = setup.segmentLoads ?? 'switch';
    this.segmentStores = setup.segmentStores ?? 'switch';
    this.rangeHints = setup.rangeHints ?? 'use';
    this.maxBindingBytes = Math.min(l.maxStorageBufferBindingSize, setup.maxStorageBufferBindingSize ?? Number.POSITIVE_INFINITY);
    // The largest multiple of 12 elements whose segment, with its spare element and padding
    // to 16 bytes, fits one binding and one GPUBuffer.
    this.segmentElements = Math.floor((Math.min(this.maxBindingBytes, l.maxBufferSize) - 16) / 48) * 12;
    const info = setup.adapterInfo;
    const names = [info?.vendor, info?.architecture, info?.device, info?.description].filter((s): s is string => !!s);
    const software = setup.isFallbackAdapter || names.some((n) => /swiftshader|llvmpipe|lavapipe|warp|software/i.test(n));
    const subgroupInfo = info as (GPUAdapterInfo & { subgroupMinSize?: number; subgroupMaxSize?: number }) | undefined;
    const minSubgroup = this.hasSubgroups ? (subgroupInfo?.subgroupMinSize ?? 4) : 0;
    const maxSubgroup = this.hasSubgroups ? (subgroupInfo?.subgroupMaxSize ?? 128) : 0;
    const features = new Set<Feature>(['gather', 'scatter', 'atomic', 'atomic-other', 'workgroup']);
    if (this.hasSubgroups) features.add('subgroup');
    if (this.hasTimestamps) features.add('timestamp');
    const maxInvocations = Math.min(l.maxComputeInvocationsPerWorkgroup, l.maxComputeWorkgroupSizeX);
    this.info = {
      backend: 'webgpu',
      adapter: info?.description || [info?.vendor, info?.architecture, info?.device].filter(Boolean).join(' ') || 'WebGPU adapter',
      software,
      details: {
        runtime: setup.runtime,
        vendor: info?.vendor ?? '',
        architecture: info?.architecture ?? '',
        device: info?.device ?? '',
        description: info?.description ?? '',
        fallbackAdapter: setup.isFallbackAdapter,
      },
    };
    this.caps = {
      limits: {
        // Buffers past one binding are held as segments of one binding each (webgpu-buffer.ts),
        // up to what u32 indexing allows (MAX_SEGMENTED_ELEMENTS).
        maxBufferElements: this.segmentElements > 0 ? MAX_SEGMENTED_ELEMENTS : Math.floor(l.maxBufferSize / 16) * 4 - SPARE_ELEMENTS,
        maxTotalBufferBytes: 0,
        // The spare element stays within the binding of a buffer that fits one.
        maxStorageBufferBindingSize: this.maxBindingBytes - (this.maxBindingBytes % 4) - 4 * SPARE_ELEMENTS,
        // One binding of every stage's storage-buffer budget; the uniforms take a uniform binding.
        maxBuffersPerKernel: l.maxStorageBuffersPerShaderStage,
        maxComputeInvocationsPerWorkgroup: maxInvocations,
        maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
        maxComputeWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension,
        minSubgroupSize: minSubgroup,
        maxSubgroupSize: maxSubgroup,
        maxExactAtomicCount: 2 ** 32 - 1,
      },
      features,
      timerSource: this.hasTimestamps ? 'gpu-timestamp' : 'wall',
      preferredWorkgroupSize: Math.min(256, maxInvocations),
      // Rough resident invocations: WebGPU does not say. Software adapters run few.
      concurrency: software ? 4096 : 131072,
      // One compute pass in a batched submission; software adapters pay more per pass.
      dispatchCostMicros: software ? 100 : 10,
    };
    this.arena = this.newArena();
    this.arenaId = this.nextBufferId++;
    device.onuncapturederror = (ev: GPUUncapturedErrorEvent) => {
      this.uncaptured ??= ev.error.message;
    };
    void device.lost.then((info) => {
      if (!this.destroyed) this.lost = `${info.reason}: ${info.message}`;
    });
  }

  // ---------- buffers ----------

  createBuffer(dtype: BufferDType, length: number): WebGpuBuffer {
    this.check();
    if (length * 4 > this.caps.limits.maxStorageBufferBindingSize) return this.createSegmented(dtype, length);
    const size = allocationBytes(length);
    const reused = this.pool.take(size);
    if (reused) {
      // New buffers read as zeros, pooled or not (in stream order).
      this.command().clearBuffer(reused.gpu);
      return new WebGpuBuffer(dtype, length, reused.gpu, reused.id);
    }
    const gpu = this.newBuffer({
      size,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    return new WebGpuBuffer(dtype, length, gpu, this.nextBufferId++);
  }

  /** A buffer past one binding: segments of `segmentElements`, the last with the rest; each with a spare element. */
  private createSegmented(dtype: BufferDType, length: number): WebGpuBuffer {
    const per = this.segmentElements;
    if (per <= 0) {
      const limit = this.caps.limits.maxStorageBufferBindingSize;
      throw new LimitExceededError(
        'webgpu',
        'maxStorageBufferBindingSize',
        length * 4,
        limit,
        'buffer length (bindings too small to split it)',
      );
    }
    const count = Math.ceil(length / per);
    const segments: GpuSegment[] = [];
    for (let k = 0; k < count; k++) {
      // Each with its spare element, so that a segment bound alone (`segments`) is a buffer of its own.
      const size = allocationBytes(k < count - 1 ? per : length - k * per);
      // Not from the pool: segments are as large as a binding; new GPUBuffers read as zeros.
      const gpu = this.newBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
      segments.push({ gpu, id: this.nextBufferId++ });
    }
    const first = segments[0] as GpuSegment;
    return new WebGpuBuffer(dtype, length, first.gpu, first.id, { segments, segmentElements: per });
  }

  /** A segmented buffer's GPUBuffers, each as a buffer of its own (Device.segments); never destroyed on their own. */
  segments(buffer: BackendBuffer): readonly BackendBuffer[] {
    const b = buffer as WebGpuBuffer;
    if (b.segments.length === 1) return [b];
    const last = b.segments.length - 1;
    return b.segments.map(
      (s, k) => new WebGpuBuffer(b.dtype, k < last ? b.segmentElements : b.length - last * b.segmentElements, s.gpu, s.id),
    );
  }

  destroyBuffer(buffer: BackendBuffer): void {
    const b = buffer as WebGpuBuffer;
    if (this.destroyed) return;
    if (b.segments.length > 1) {
      for (const s of b.segments) this.release(s.gpu);
      return;
    }
    // Reuse is safe: later commands on the new owner follow earlier ones in stream order.
    if (this.pool.give(b.gpu, b.id)) return;
    this.release(b.gpu);
  }

  write(buffer: BackendBuffer, offset: number, data: HostArray): void {
    this.check();
    const b = buffer as WebGpuBuffer;
    if (data.length === 0) return;
    for (const p of b.pieces(offset, data.length)) {
      this.writeGpu(p.gpu, p.at, p.count === data.length ? data : data.subarray(p.start, p.start + p.count));
    }
  }

  /** Writes `data` to `gpu` from element `at`, in stream order. */
  private writeGpu(gpu: GPUBuffer, at: number, data: HostArray): void {
    if (!this.encoder) {
      // Nothing recorded: the queue orders this after every submitted batch. In a scope of its own, so
      // that a write to a buffer the device could not make is reported after that buffer's own error
      // (report(): out of memory first) rather than as an uncaptured error of its own.
      this.gpu.pushErrorScope('validation');
      if (!isShared(data)) this.gpu.queue.writeBuffer(gpu, at * 4, data as Uint32Array<ArrayBuffer>);
      else {
        // WebGPU allows views of shared memory here, but Dawn in Node crashes the process on them:
        // they go through ordinary memory, a bounded chunk at a time.
        for (let done = 0; done < data.length; done += SHARED_WRITE_CHUNK) {
          const part = data.slice(done, Math.min(data.length, done + SHARED_WRITE_CHUNK));
          this.gpu.queue.writeBuffer(gpu, (at + done) * 4, part as Uint32Array<ArrayBuffer>);
        }
      }
      this.checks.push({ what: '(write)', error: this.gpu.popErrorScope() });
      return;
    }
    // Recorded work must see the old contents: stage the data and record a copy.
    const staging = this.newBuffer({ size: data.byteLength, usage: GPUBufferUsage.COPY_SRC, mappedAtCreation: true });
    new Uint8Array(staging.getMappedRange()).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    staging.unmap();
    this.command().copyBufferToBuffer(staging, 0, gpu, at * 4, data.byteLength);
    this.afterSubmit.push(() => staging.destroy());
  }

  async read(buffer: BackendBuffer, offset: number, length: number, into?: HostArray): Promise<HostArray> {
    this.check();
    const b = buffer as WebGpuBuffer;
    const ctor = typedArrayConstructor(b.dtype);
    if (length === 0) {
      await this.flush();
      return into ?? new ctor(0);
    }
    if (b.segments.length === 1) return this.readGpu(b.gpu, offset, length, ctor, into);
    // One segment at a time: a read-back buffer is itself bounded by maxBufferSize.
    const out = into ?? new ctor(length);
    for (const p of b.pieces(offset, length)) await this.readGpu(p.gpu, p.at, p.count, ctor, out.subarray(p.start, p.start + p.count));
    return out;
  }

  /** Reads `length` elements of `gpu` from element `offset`: into `into`, or a new array. */
  private async readGpu(
    gpu: GPUBuffer,
    offset: number,
    length: number,
    ctor: ReturnType<typeof typedArrayConstructor>,
    into: HostArray | undefined,
  ): Promise<HostArray> {
    const bytes = length * 4;
    const staging =
      this.staging.take(bytes) ??
      this.newBuffer({ size: this.staging.sizeFor(bytes), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    this.command().copyBufferToBuffer(gpu, offset * 4, staging, 0, bytes);
    this.submit();
    try {
      this.counters.maps++;
      await staging.mapAsync(GPUMapMode.READ, 0, bytes);
    } catch (err) {
      staging.destroy();
      await this.settle();
      throw new KernelExecutionError('webgpu', '(read)', `mapping the read-back buffer failed: ${String(err)}`, { cause: err });
    }
    // One copy out of the mapping: into the caller's array, or a slice (rather than a
    // zero-filled array plus a copy).
    const mapped = staging.getMappedRange(0, bytes);
    let out: HostArray;
    if (into) {
      into.set(new ctor(mapped) as never);
      out = into;
    } else out = new ctor(mapped.slice(0));
    staging.unmap();
    if (!this.staging.give(staging)) staging.destroy();
    // The copy ran after every earlier submission (queue order), so everything submitted
    // has finished: only the error scopes are left to report (no extra queue wait).
    await this.report();
    return out;
  }

  copy(src: BackendBuffer, srcOffset: number, dst: BackendBuffer, dstOffset: number, length: number): void {
    this.check();
    const s = (src as WebGpuBuffer).pieces(srcOffset, length);
    const d = (dst as WebGpuBuffer).pieces(dstOffset, length);
    const enc = this.command();
    // Runs that lie in one GPUBuffer on both sides (the whole range where neither buffer is segmented).
    let i = 0;
    let j = 0;
    for (let done = 0; done < length; ) {
      const a = s[i] as (typeof s)[number];
      const b = d[j] as (typeof d)[number];
      const count = Math.min(a.start + a.count, b.start + b.count) - done;
      const from = a.at + (done - a.start);
      const to = b.at + (done - b.start);
      this.copyGpu(enc, a.gpu, from, b.gpu, to, count);
      done += count;
      if (done === a.start + a.count) i++;
      if (done === b.start + b.count) j++;
    }
  }

  private copyGpu(enc: GPUCommandEncoder, src: GPUBuffer, from: number, dst: GPUBuffer, to: number, length: number): void {
    const bytes = length * 4;
    if (src !== dst) {
      enc.copyBufferToBuffer(src, from * 4, dst, to * 4, bytes);
      return;
    }
    // WebGPU refuses a copy within one buffer; go through a temporary.
    const tmp = this.newBuffer({ size: bytes, usage: GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    enc.copyBufferToBuffer(src, from * 4, tmp, 0, bytes);
    enc.copyBufferToBuffer(tmp, 0, dst, to * 4, bytes);
    this.afterSubmit.push(() => tmp.destroy());
  }

  fill(buffer: BackendBuffer, value: number, offset: number, length: number): void {
    this.check();
    const b = buffer as WebGpuBuffer;
    const bits = bitsOf(b.dtype, value);
    if (bits === 0 && (!this.pass || length * 4 >= CLEAR_BUFFER_BYTES)) {
      for (const p of b.pieces(offset, length)) this.command().clearBuffer(p.gpu, p.at * 4, p.count * 4);
      return;
    }
    const compiled = this.compile(FILL_KERNEL);
    // Windows of at most one binding, starting at aligned offsets: buffers may exceed a binding.
    const align = this.gpu.limits.minStorageBufferOffsetAlignment;
    const windowBytes = Math.floor(this.maxBindingBytes / align) * align;
    for (const p of b.pieces(offset, length)) {
      let done = 0;
      while (done < p.count) {
        const first = p.at + done;
        const start = Math.floor((first * 4) / align) * align;
        const size = Math.min(windowBytes, p.gpu.size - start);
        const elements = size / 4;
        const local = first - start / 4;
        const count = Math.min(p.count - done, elements - local);
        const workgroups = Math.min(Math.ceil(count / FILL_WORKGROUP), this.caps.limits.maxComputeWorkgroupsPerDimension);
        this.encodeDispatch(compiled, [workgroups, 1, 1], [{ gpu: p.gpu, id: p.id, offset: start, size, elements }], (slot) => {
          if (slot.kind === 'length') return elements;
          return slot.param === 'value' ? bits : slot.param === 'offset' ? local : count;
        });
        done += count;
      }
    }
  }

  // ---------- kernels ----------

  compile(kernel: Kernel): WebGpuCompiled {
    this.check();
    return this.compileVariant(kernel, kernel.key, undefined);
  }

  /**
   * The kernel as compiled for buffers bound as `segments` (none: the kernel itself), cached
   * under `key` like the plain kernel.
   */
  private compileVariant(kernel: Kernel, key: string, segments: Readonly<Record<string, BufferSegments>> | undefined): WebGpuCompiled {
    const rejected = this.rejected.get(key);
    if (rejected) throw rejected;
    const cached = this.kernels.get(key);
    if (cached) return cached;
    if (kernel.info.classes.has('subgroup') && !this.hasSubgroups) {
      throw new UnsupportedFeatureError('webgpu', 'subgroup', kernel.name, "the adapter lacks the WebGPU 'subgroups' feature");
    }
    const limits = this.caps.limits;
    const wgsl = generateWgsl(kernel, {
      subgroups: this.hasSubgroups,
      backend: 'webgpu',
      ...(segments ? { segments, segmentLoads: this.segmentLoads, segmentStores: this.segmentStores, rangeHints: this.rangeHints } : {}),
    });
    if (wgsl.workgroupStorageBytes > limits.maxComputeWorkgroupStorageSize) {
      throw new LimitExceededError(
        'webgpu',
        'maxComputeWorkgroupStorageSize',
        wgsl.workgroupStorageBytes,
        limits.maxComputeWorkgroupStorageSize,
        `workgroup memory of kernel '${kernel.name}'`,
      );
    }
    if (wgsl.bufferParams.length > limits.maxBuffersPerKernel) {
      throw new LimitExceededError(
        'webgpu',
        'maxBuffersPerKernel',
        wgsl.bufferParams.length,
        limits.maxBuffersPerKernel,
        `buffer parameters of kernel '${kernel.name}'`,
      );
    }
    // A buffer past one binding takes one binding per segment: refused, never truncated.
    if (wgsl.uniformBinding > limits.maxBuffersPerKernel) {
      throw new LimitExceededError(
        'webgpu',
        'maxBuffersPerKernel',
        wgsl.uniformBinding,
        limits.maxBuffersPerKernel,
        `storage bindings of kernel '${kernel.name}' (its buffers span ${wgsl.uniformBinding} bindings: one per segment of each buffer past one binding)`,
      );
    }
    // A 2-D / 3-D workgroup shape is also bounded per axis (x by the caps' invocation limit).
    const [, sy, sz] = workgroupShapeOf(kernel.ir);
    for (const [axis, extent, limit] of [
      ['Y', sy, this.gpu.limits.maxComputeWorkgroupSizeY],
      ['Z', sz, this.gpu.limits.maxComputeWorkgroupSizeZ],
    ] as const) {
      if (extent > limit) {
        throw new LimitExceededError(
          'webgpu',
          `maxComputeWorkgroupSize${axis}`,
          extent,
          limit,
          `workgroup extent of kernel '${kernel.name}'`,
        );
      }
    }
    const slotBytes = Math.max(UNIFORM_ALIGN, Math.ceil((wgsl.uniforms.length * 4) / UNIFORM_ALIGN) * UNIFORM_ALIGN);
    this.gpu.pushErrorScope('validation');
    const module = this.gpu.createShaderModule({ label: kernel.name, code: wgsl.source });
    const entries: GPUBindGroupLayoutEntry[] = wgsl.bufferParams
      .flatMap((p) =>
        Array.from({ length: p.segments ?? 1 }, () => ({
          visibility: GPUShaderStage.COMPUTE,
          buffer: { type: p.readOnly ? ('read-only-storage' as const) : ('storage' as const) },
        })),
      )
      .map((entry, binding) => ({ binding, ...entry }));
    entries.push({
      binding: wgsl.uniformBinding,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: 'uniform', hasDynamicOffset: true, minBindingSize: slotBytes },
    });
    const layout = this.gpu.createBindGroupLayout({ label: kernel.name, entries });
    const pipeline = this.gpu.createComputePipeline({
      label: kernel.name,
      layout: this.gpu.createPipelineLayout({ label: kernel.name, bindGroupLayouts: [layout] }),
      compute: { module, entryPoint: 'main' },
    });
    this.checks.push({ what: kernel.name, compile: kernel.name, key, error: this.gpu.popErrorScope() });
    const compiled: WebGpuCompiled = { kernel, source: wgsl.source, id: this.nextKernelId++, wgsl, pipeline, layout, slotBytes };
    this.kernels.set(key, compiled);
    return compiled;
  }

  dispatch(kernel: CompiledKernel, grid: Grid, args: ReadonlyMap<string, BackendBuffer | number>): void {
    this.check();
    let k = kernel as WebGpuCompiled;
    let segments: Record<string, BufferSegments> | undefined;
    for (const { name } of k.wgsl.bufferParams) {
      const count = (args.get(name) as WebGpuBuffer).segments.length;
      if (count > 1) {
        segments ??= {};
        segments[name] = { count, size: this.segmentElements };
      }
    }
    // Buffers past one binding: the kernel's variant that binds each segment on its own.
    if (segments) k = this.compileVariant(k.kernel, segmentedKey(k.kernel.key, segments), segments);
    const bindings: Binding[] = [];
    for (const { name } of k.wgsl.bufferParams) {
      const b = args.get(name) as WebGpuBuffer;
      if (b.segments.length > 1) {
        for (const s of b.segments) bindings.push({ gpu: s.gpu, id: s.id, offset: 0, size: s.gpu.size, elements: s.gpu.size / 4 });
        continue;
      }
      // The padded allocation may pass the binding limit (NVIDIA's is 2^31 - 4) where the buffer
      // and its spare element do not (the caps' binding limit leaves room for that element).
      bindings.push({
        gpu: b.gpu,
        id: b.id,
        offset: 0,
        size: Math.min(b.gpu.size, this.maxBindingBytes - (this.maxBindingBytes % 4)),
        elements: b.length,
      });
    }
    const lengths = new Map<string, number>();
    for (const { name } of k.wgsl.bufferParams) lengths.set(name, (args.get(name) as WebGpuBuffer).length);
    this.encodeDispatch(k, grid, bindings, (slot) =>
      slot.kind === 'uniform' ? (args.get(slot.param) as number) : (lengths.get(slot.param) ?? 0) / slot.vector,
    );
  }

  async flush(): Promise<void> {
    this.check();
    this.submit();
    await this.settle();
  }

  async measure(body: () => void | Promise<void>): Promise<{ ms: number; source: TimerSource }> {
    this.check();
    if (!this.hasTimestamps) {
      const start = performance.now();
      await body();
      await this.flush();
      return { ms: performance.now() - start, source: 'wall' };
    }
    this.submit();
    const timing: TimingState = { querySet: undefined, used: 0, readbacks: [] };
    this.timing = timing;
    try {
      await body();
      this.submit();
    } finally {
      this.timing = undefined;
    }
    await this.settle();
    // Each command buffer's span: first pass begin to last pass end (barriers and
    // copies between its passes included); spans of several command buffers add up.
    let ns = 0n;
    for (const { buffer, count } of timing.readbacks) {
      this.counters.maps++;
      await buffer.mapAsync(GPUMapMode.READ);
      const stamps = new BigUint64Array(buffer.getMappedRange().slice(0, count * 8));
      buffer.unmap();
      buffer.destroy();
      let first: bigint | undefined;
      let last: bigint | undefined;
      for (let i = 0; i + 1 < count; i += 2) {
        const b = stamps[i] as bigint;
        const e = stamps[i + 1] as bigint;
        if (first === undefined || b < first) first = b;
        if (last === undefined || e > last) last = e;
      }
      if (first !== undefined && last !== undefined && last > first) ns += last - first;
    }
    return { ms: Number(ns) / 1e6, source: 'gpu-timestamp' };
  }

  lostReason(): string | undefined {
    if (this.destroyed) return 'the device was destroyed';
    return this.lost;
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    try {
      this.submit();
      await this.gpu.queue.onSubmittedWorkDone();
    } catch {
      // A lost device has nothing left to finish.
    }
    this.destroyed = true;
    for (const f of this.afterSubmit) f();
    this.afterSubmit = [];
    for (const b of this.pool.drain()) b.destroy();
    for (const b of this.staging.drain()) b.destroy();
    this.arena.destroy();
    this.bindGroups.clear();
    this.kernels.clear();
    this.gpu.onuncapturederror = null;
    this.gpu.destroy();
  }

  // ---------- recording and submission ----------

  private check(): void {
    if (this.destroyed) throw new KernelExecutionError('webgpu', '(device)', 'the device was destroyed');
    if (this.uncaptured !== undefined) {
      const message = this.uncaptured;
      this.uncaptured = undefined;
      throw new KernelExecutionError('webgpu', '(device)', `uncaptured WebGPU error: ${message}`);
    }
  }

  /** The open encoder, with no compute pass open (for copies and clears). */
  private command(): GPUCommandEncoder {
    if (this.pass) {
      this.pass.end();
      this.pass = undefined;
    }
    if (!this.encoder) {
      this.gpu.pushErrorScope('validation');
      this.encoder = this.gpu.createCommandEncoder();
    }
    return this.encoder;
  }

  private computePass(): GPUComputePassEncoder {
    if (this.pass) return this.pass;
    const encoder = this.command();
    const t = this.timing;
    if (!t) {
      this.pass = encoder.beginComputePass();
      return this.pass;
    }
    if (t.used + 2 > 2 * TIMESTAMP_PAIRS) {
      this.submit();
      return this.computePass();
    }
    if (!t.querySet) t.querySet = this.gpu.createQuerySet({ type: 'timestamp', count: 2 * TIMESTAMP_PAIRS });
    this.pass = encoder.beginComputePass({
      timestampWrites: { querySet: t.querySet, beginningOfPassWriteIndex: t.used, endOfPassWriteIndex: t.used + 1 },
    });
    t.used += 2;
    return this.pass;
  }

  private encodeDispatch(k: WebGpuCompiled, grid: Grid, bindings: readonly Binding[], value: (slot: UniformSlot) => number): void {
    const [x, y, z] = grid;
    if (x * y * z === 0) return;
    if (this.arenaUsed + k.slotBytes > ARENA_BYTES) this.submit();
    const slot = this.arenaUsed;
    this.arenaUsed += k.slotBytes;
    const view = new DataView(this.arenaHost, slot, k.slotBytes);
    k.wgsl.uniforms.forEach((u, i) => {
      const v = value(u);
      if (u.kind === 'uniform' && u.dtype === 'f32') view.setFloat32(i * 4, v, true);
      else if (u.kind === 'uniform' && u.dtype === 'i32') view.setInt32(i * 4, v, true);
      else view.setUint32(i * 4, v >>> 0, true);
    });
    const pass = this.computePass();
    pass.setPipeline(k.pipeline);
    pass.setBindGroup(0, this.bindGroup(k, bindings), [slot]);
    pass.dispatchWorkgroups(x, y, z);
    this.batchKernels.add(k.kernel.name);
  }

  private bindGroup(k: WebGpuCompiled, bindings: readonly Binding[]): GPUBindGroup {
    const key = `${k.id}|${this.arenaId}|${bindings.map((b) => `${b.id}:${b.offset}:${b.size}`).join(',')}`;
    const cached = this.bindGroups.get(key);
    if (cached) {
      // Refresh its place in the eviction order.
      this.bindGroups.delete(key);
      this.bindGroups.set(key, cached);
      return cached;
    }
    const entries: GPUBindGroupEntry[] = bindings.map((b, binding) => ({
      binding,
      resource: { buffer: b.gpu, offset: b.offset, size: b.size },
    }));
    entries.push({ binding: k.wgsl.uniformBinding, resource: { buffer: this.arena, offset: 0, size: k.slotBytes } });
    const group = this.gpu.createBindGroup({ label: k.kernel.name, layout: k.layout, entries });
    this.bindGroups.set(key, group);
    if (this.bindGroups.size > BIND_GROUP_CACHE) {
      const oldest = this.bindGroups.keys().next().value;
      if (oldest !== undefined) this.bindGroups.delete(oldest);
    }
    return group;
  }

  /** Submits what is recorded (if anything), without waiting. */
  private submit(): void {
    const encoder = this.encoder;
    if (!encoder) return;
    if (this.pass) {
      this.pass.end();
      this.pass = undefined;
    }
    const t = this.timing;
    if (t?.querySet && t.used > 0) {
      const bytes = t.used * 8;
      const resolve = this.newBuffer({ size: bytes, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
      const readback = this.newBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      encoder.resolveQuerySet(t.querySet, 0, t.used, resolve, 0);
      encoder.copyBufferToBuffer(resolve, 0, readback, 0, bytes);
      t.readbacks.push({ buffer: readback, count: t.used });
      const querySet = t.querySet;
      this.afterSubmit.push(() => {
        resolve.destroy();
        querySet.destroy();
      });
      t.querySet = undefined;
      t.used = 0;
    }
    if (this.arenaUsed > 0) this.gpu.queue.writeBuffer(this.arena, 0, this.arenaHost, 0, this.arenaUsed);
    this.gpu.queue.submit([encoder.finish()]);
    this.counters.submits++;
    const names = [...this.batchKernels];
    this.checks.push({ what: names.length ? names.join(', ') : '(copies)', error: this.gpu.popErrorScope() });
    this.encoder = undefined;
    this.batchKernels = new Set();
    this.arenaUsed = 0;
    for (const f of this.afterSubmit) f();
    this.afterSubmit = [];
  }

  /** Waits for submitted work and reports the first error it (or a pipeline) produced. */
  private async settle(): Promise<void> {
    this.counters.waits++;
    await this.gpu.queue.onSubmittedWorkDone();
    await this.report();
  }

  /** Reports the first error that a submitted batch (or a pipeline) produced. */
  private async report(): Promise<void> {
    const checks = this.checks;
    this.checks = [];
    const results = await Promise.all(checks.map(async (c) => ({ c, error: await c.error })));
    // A pipeline's own error, or a buffer the device could not make (out of memory first), explains
    // the batch errors that follow from it: report it first.
    const failed =
      results.find((r) => r.error && r.c.compile) ??
      results.find((r) => r.error && r.c.bytes !== undefined && isOutOfMemory(r.error)) ??
      results.find((r) => r.error && r.c.bytes !== undefined) ??
      results.find((r) => r.error);
    // Every rejected pipeline is forgotten, so a later dispatch of it fails the same way instead of on an invalid pipeline.
    for (const r of results) {
      if (r.error && r.c.key !== undefined && r.c.compile !== undefined) {
        this.kernels.delete(r.c.key);
        this.rejected.set(r.c.key, new KernelBuildError(r.c.compile, `WebGPU rejected the generated WGSL: ${r.error.message}`));
      }
    }
    if (failed?.error) {
      if (failed.c.key !== undefined) throw this.rejected.get(failed.c.key) as KernelBuildError;
      if (failed.c.bytes !== undefined && isOutOfMemory(failed.error)) {
        throw new LimitExceededError('webgpu', 'deviceMemory', failed.c.bytes, Number.NaN, failed.c.what);
      }
      // An error no scope caught came before this one, which may only be its consequence: say both.
      const earlier = this.uncaptured;
      this.uncaptured = undefined;
      const message = earlier === undefined ? failed.error.message : `${earlier} (first, uncaptured); then: ${failed.error.message}`;
      throw new KernelExecutionError('webgpu', failed.c.what, message);
    }
    this.check();
  }

  private release(gpu: GPUBuffer): void {
    if (this.encoder) this.afterSubmit.push(() => gpu.destroy());
    else gpu.destroy();
  }

  private newBuffer(descriptor: GPUBufferDescriptor): GPUBuffer {
    this.counters.buffersCreated++;
    // Memory runs out asynchronously in WebGPU: the next flush or read reports it as LimitExceededError.
    // A buffer refused for another reason is caught here too, so that its error, not those of the
    // bind groups that later use the invalid buffer, is the one reported.
    const what = `a buffer of ${descriptor.size} bytes`;
    this.gpu.pushErrorScope('out-of-memory');
    this.gpu.pushErrorScope('validation');
    const gpu = this.gpu.createBuffer(descriptor);
    this.checks.push({ what, bytes: descriptor.size, error: this.gpu.popErrorScope() }); // validation
    this.checks.push({ what, bytes: descriptor.size, error: this.gpu.popErrorScope() }); // out-of-memory
    return gpu;
  }

  private newArena(): GPUBuffer {
    return this.newBuffer({ size: ARENA_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  }
}

/** The cache key of a kernel's variant for segmented buffers: the kernel's key and each segment count. */
function segmentedKey(key: string, segments: Readonly<Record<string, BufferSegments>>): string {
  return `${key}|segments:${Object.entries(segments)
    .map(([name, s]) => `${name}=${s.count}`)
    .join(',')}`;
}

/** The 32 bits a fill value stores. */
function bitsOf(dtype: BufferDType, value: number): number {
  if (dtype === 'f32') return new Uint32Array(new Float32Array([value]).buffer)[0] as number;
  return value >>> 0;
}
