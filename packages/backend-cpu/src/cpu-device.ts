import {
  type BackendBuffer,
  type BackendDevice,
  BackendUnavailableError,
  type CompiledKernel,
  type DeviceCaps,
  type DeviceInfo,
  type Feature,
  type Grid,
  generateJs,
  type HostArray,
  type Kernel,
  KernelExecutionError,
  LimitExceededError,
} from '@trident/core';
import { CpuBuffer } from './cpu-buffer.ts';
import type { SlicePool, SliceTask } from './slice-pool.ts';

export interface CpuBackendOptions {
  /** Workers in the pool: threads in Node, Web Workers in browsers (default: the machine's parallelism). */
  readonly workers?: number;
}

declare module '@trident/core' {
  interface BackendOptionsMap {
    cpu: CpuBackendOptions;
  }
}

interface CpuCompiled extends CompiledKernel {
  readonly id: string;
}

type Command = () => void | Promise<void>;

const FEATURES: ReadonlySet<Feature> = new Set<Feature>([
  'gather',
  'scatter',
  'atomic',
  'atomic-other',
  'workgroup',
  'subgroup',
  'host-memory',
]);

/** What differs between the Node and browser CPU backends. */
export interface CpuEnvironment {
  /** Runs slices of dispatches: piscina in Node, a Web Worker pool in browsers. */
  readonly pool: SlicePool;
  readonly workers: number;
  /** The processor as the platform names it. */
  readonly adapter: string;
  readonly runtime: string;
  readonly maxBufferElements: number;
}

/**
 * The CPU backend: generated JavaScript run by a worker pool over
 * SharedArrayBuffers. Commands queue in stream order; a dispatch splits its
 * workgroups into one contiguous range per worker and completes when every worker
 * has finished (the join is the barrier between dispatches).
 */
export class CpuDevice implements BackendDevice {
  readonly kind = 'cpu' as const;
  readonly info: DeviceInfo;
  readonly caps: DeviceCaps;
  private readonly pool: SlicePool;
  private readonly workers: number;
  private readonly kernels = new Map<string, CpuCompiled>();
  private pending: Command[] = [];
  private running: Promise<void> = Promise.resolve();
  private nextKernelId = 0;
  /** Flushed batches that have not finished. */
  private outstanding = 0;
  private destroyed = false;

  constructor(env: CpuEnvironment) {
    this.workers = env.workers;
    this.pool = env.pool;
    this.info = { backend: 'cpu', adapter: env.adapter, software: false, details: { workers: env.workers, runtime: env.runtime } };
    this.caps = {
      limits: {
        maxBufferElements: env.maxBufferElements,
        maxStorageBufferBindingSize: env.maxBufferElements * 4,
        maxBuffersPerKernel: 64,
        maxComputeInvocationsPerWorkgroup: 1024,
        maxComputeWorkgroupStorageSize: 65536,
        maxComputeWorkgroupsPerDimension: 2 ** 24,
        minSubgroupSize: 1,
        maxSubgroupSize: 1,
        maxExactAtomicCount: 2 ** 32 - 1,
      },
      features: FEATURES,
      timerSource: 'wall',
      preferredWorkgroupSize: 64,
      concurrency: env.workers,
      // A message to each worker, its wake-up and the join (issue 10 measured ~90 µs).
      dispatchCostMicros: 90,
    };
  }

  createBuffer(dtype: BackendBuffer['dtype'], length: number): CpuBuffer {
    try {
      return new CpuBuffer(dtype, length);
    } catch (err) {
      // V8 throws RangeError("Array buffer allocation failed") when the host has no memory for it.
      if (err instanceof RangeError) {
        throw new LimitExceededError('cpu', 'hostMemory', length * 4, Number.NaN, `a buffer of ${length * 4} bytes`);
      }
      throw err;
    }
  }

  destroyBuffer(): void {
    // Garbage collection frees the SharedArrayBuffer once no command holds it.
  }

  write(buffer: BackendBuffer, offset: number, data: HostArray): void {
    const target = buffer as CpuBuffer;
    if (this.idle()) {
      target.write(offset, data);
      return;
    }
    const copy = data.slice();
    this.pending.push(() => target.write(offset, copy));
  }

  async read(buffer: BackendBuffer, offset: number, length: number): Promise<HostArray> {
    // The copy is a command in the stream: it sees every earlier command and none issued later.
    let result: HostArray | undefined;
    this.enqueue(() => {
      result = (buffer as CpuBuffer).view.slice(offset, offset + length);
    });
    await this.flush();
    if (!result) throw new Error('internal: read did not run');
    return result;
  }

  copy(src: BackendBuffer, srcOffset: number, dst: BackendBuffer, dstOffset: number, length: number): void {
    const s = src as CpuBuffer;
    const d = dst as CpuBuffer;
    this.enqueue(() => (d.view as HostArray).set(s.view.subarray(srcOffset, srcOffset + length) as never, dstOffset));
  }

  fill(buffer: BackendBuffer, value: number, offset: number, length: number): void {
    const b = buffer as CpuBuffer;
    this.enqueue(() => void b.view.fill(value, offset, offset + length));
  }

  compile(kernel: Kernel): CpuCompiled {
    let compiled = this.kernels.get(kernel.key);
    if (!compiled) {
      const { source } = generateJs(kernel, 'cpu');
      compiled = { kernel, source, id: `${kernel.name}#${this.nextKernelId++}` };
      this.kernels.set(kernel.key, compiled);
    }
    return compiled;
  }

  dispatch(compiled: CompiledKernel, grid: Grid, args: ReadonlyMap<string, BackendBuffer | number>): void {
    const k = compiled as CpuCompiled;
    const buffers: SliceTask['buffers'] = {};
    const uniforms: Record<string, number> = {};
    for (const [name, value] of args) {
      if (typeof value === 'number') uniforms[name] = value;
      else {
        const b = value as CpuBuffer;
        buffers[name] = { data: b.data, dtype: b.dtype, length: b.length };
      }
    }
    const total = grid[0] * grid[1] * grid[2];
    if (total === 0) return;
    this.enqueue(async () => {
      const slices = Math.min(this.workers, total);
      const tasks: Promise<void>[] = [];
      for (let s = 0; s < slices; s++) {
        const wgStart = Math.floor((total * s) / slices);
        const wgEnd = Math.floor((total * (s + 1)) / slices);
        tasks.push(this.pool.run({ id: k.id, source: k.source, buffers, uniforms, wgStart, wgEnd, numWorkgroups: total, grid: [...grid] }));
      }
      const results = await Promise.allSettled(tasks);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) {
        const detail = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
        throw new KernelExecutionError('cpu', k.kernel.name, detail, { cause: failed.reason });
      }
    });
  }

  flush(): Promise<void> {
    if (this.pending.length === 0) return this.running;
    const commands = this.pending;
    this.pending = [];
    this.outstanding++;
    const run = this.running.then(async () => {
      try {
        for (const command of commands) await command();
      } finally {
        this.outstanding--;
      }
    });
    // A failed command fails this flush (the rest of its batch is dropped); later flushes start afresh.
    this.running = run.catch(() => undefined);
    return run;
  }

  async measure(body: () => void | Promise<void>): Promise<{ ms: number; source: 'wall' }> {
    const start = performance.now();
    await body();
    await this.flush();
    return { ms: performance.now() - start, source: 'wall' };
  }

  lostReason(): string | undefined {
    return this.destroyed ? 'the device was destroyed' : undefined;
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.running;
    await this.pool.destroy();
  }

  /** Fails when this runtime cannot share memory with workers. */
  static checkRuntime(workers: number): void {
    if (typeof SharedArrayBuffer === 'undefined' || (typeof crossOriginIsolated !== 'undefined' && !crossOriginIsolated)) {
      throw new BackendUnavailableError(
        'cpu',
        'SharedArrayBuffer is not available: serve the page with COOP same-origin and COEP require-corp headers',
      );
    }
    if (!Number.isInteger(workers) || workers < 1) {
      throw new BackendUnavailableError('cpu', `option 'workers' must be a positive integer, got ${String(workers)}`);
    }
  }

  /** No command is waiting or running: a write may then apply at once, in stream order. */
  private idle(): boolean {
    return this.pending.length === 0 && this.outstanding === 0;
  }

  private enqueue(command: Command): void {
    this.pending.push(command);
  }
}
