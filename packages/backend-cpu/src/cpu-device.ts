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
import { type BatchDispatch, BatchFailure, type WorkerPool } from './worker-pool.ts';

export interface CpuBackendOptions {
  /** Workers in the pool: threads in Node, Web Workers in browsers (default: the machine's parallelism). */
  readonly workers?: number;
  /**
   * Run dispatches too small to repay waking the workers on the calling thread
   * (default true). False sends every dispatch to the workers (to measure them).
   */
  readonly inline?: boolean;
  /**
   * Stops a batch of dispatches that runs longer than this many milliseconds (a
   * kernel that never ends): its workers are terminated and replaced, and the
   * flush rejects with KernelExecutionError naming the limit; the device stays
   * usable. While set, no dispatch runs inline (the calling thread could not be
   * stopped). Default: no limit.
   */
  readonly timeLimitMs?: number;
}

declare module '@trident/core' {
  interface BackendOptionsMap {
    cpu: CpuBackendOptions;
  }
}

interface CpuCompiled extends CompiledKernel {
  readonly id: number;
  /** The kernel compiled on the calling thread, for dispatches run inline. */
  inline?: JsRun;
  /** Measured cost of one workgroup on one thread, in ns (an average that follows recent runs). */
  nsPerWorkgroup?: number;
}

type JsRun = (
  b: Record<string, HostArray>,
  u: Record<string, number>,
  wgStart: number,
  wgEnd: number,
  nwg: number,
  grid: readonly [number, number, number],
) => void;

interface DispatchCommand extends BatchDispatch {
  readonly compiled: CpuCompiled;
}

type Command = { readonly host: () => void } | DispatchCommand;

/**
 * The wake-up of the workers plus their join, in µs, as measured on a 2-core VM in
 * Node 20 (issue 10: bench/cpu-dispatch.ts); a dispatch predicted to take less on
 * one thread than this plus its share on all runs inline on the calling thread.
 */
const WORKER_ROUND_TRIP_MICROS = 25;

const FEATURES: ReadonlySet<Feature> = new Set<Feature>([
  'gather',
  'scatter',
  'atomic',
  'atomic-other',
  'workgroup',
  'subgroup',
  'host-memory',
  'serial-workgroups',
]);

/** What differs between the Node and browser CPU backends. */
export interface CpuEnvironment {
  /** Persistent workers: worker_threads in Node, Web Workers in browsers. */
  readonly pool: WorkerPool;
  readonly inline?: boolean;
  readonly timeLimitMs?: number | undefined;
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
  private readonly pool: WorkerPool;
  private readonly workers: number;
  private readonly allowInline: boolean;
  private readonly timeLimitMs: number | undefined;
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
    this.timeLimitMs = env.timeLimitMs;
    this.allowInline = (env.inline ?? true) && env.timeLimitMs === undefined;
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
      // Waking the persistent workers through shared memory and joining them (issue 10).
      dispatchCostMicros: WORKER_ROUND_TRIP_MICROS,
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
    this.pending.push({ host: () => target.write(offset, copy) });
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
      compiled = { kernel, source, id: this.nextKernelId++ };
      this.kernels.set(kernel.key, compiled);
    }
    return compiled;
  }

  dispatch(compiled: CompiledKernel, grid: Grid, args: ReadonlyMap<string, BackendBuffer | number>): void {
    const k = compiled as CpuCompiled;
    const buffers: Array<readonly [string, CpuBuffer]> = [];
    const uniforms: Array<readonly [string, number]> = [];
    for (const [name, value] of args) {
      if (typeof value === 'number') uniforms.push([name, value]);
      else buffers.push([name, value as CpuBuffer]);
    }
    const total = grid[0] * grid[1] * grid[2];
    if (total === 0) return;
    this.pending.push({
      compiled: k,
      kernelId: k.id,
      source: k.source,
      buffers,
      uniforms,
      numWorkgroups: total,
      grid: [grid[0], grid[1], grid[2]],
    });
  }

  flush(): Promise<void> {
    if (this.pending.length === 0) return this.running;
    const commands = this.pending;
    this.pending = [];
    this.outstanding++;
    const run = this.running.then(async () => {
      try {
        await this.execute(commands);
      } finally {
        this.outstanding--;
      }
    });
    // A failed command fails this flush (the rest of its batch is dropped); later flushes start afresh.
    this.running = run.catch(() => undefined);
    return run;
  }

  /**
   * Runs a flushed batch in order: host commands on this thread; consecutive worker
   * dispatches as one batch for the workers (one wake-up, joins done among the
   * workers); dispatches too small to repay a wake-up inline on this thread.
   */
  private async execute(commands: readonly Command[]): Promise<void> {
    let batch: DispatchCommand[] = [];
    const runBatch = async () => {
      if (batch.length === 0) return;
      const sent = batch;
      batch = [];
      const start = performance.now();
      try {
        await this.pool.run(sent, this.timeLimitMs);
      } catch (err) {
        const failed = err instanceof BatchFailure ? sent[err.dispatch] : sent[0];
        const detail = err instanceof Error ? err.message : String(err);
        throw new KernelExecutionError('cpu', failed?.compiled.kernel.name ?? '?', detail, { cause: err });
      }
      const only = sent.length === 1 ? sent[0] : undefined;
      if (only) {
        // Per workgroup on one thread: what the workers spent beyond their round trip, times their number.
        const us = performance.now() - start;
        const perWorkgroup =
          (Math.max(0, us * 1000 - WORKER_ROUND_TRIP_MICROS * 1000) * Math.min(this.workers, only.numWorkgroups)) / only.numWorkgroups;
        learn(only.compiled, perWorkgroup);
      }
    };
    for (const command of commands) {
      if ('host' in command) {
        await runBatch();
        command.host();
      } else if (this.inlineIsFaster(command)) {
        await runBatch();
        this.runInline(command);
      } else batch.push(command);
    }
    await runBatch();
  }

  /** One thread for `t` vs the workers' round trip plus t split over them. */
  private inlineIsFaster(d: DispatchCommand): boolean {
    if (!this.allowInline) return false;
    // One workgroup runs on one thread either way; an unknown kernel runs on the workers once (its loops may be long).
    if (d.numWorkgroups === 1) return true;
    if (d.compiled.nsPerWorkgroup === undefined) return false;
    const oneThreadNs = d.compiled.nsPerWorkgroup * d.numWorkgroups;
    const share = Math.min(this.workers, d.numWorkgroups);
    return oneThreadNs < WORKER_ROUND_TRIP_MICROS * 1000 + oneThreadNs / share;
  }

  private runInline(d: DispatchCommand): void {
    const k = d.compiled;
    const b: Record<string, HostArray> = {};
    for (const [name, buffer] of d.buffers) b[name] = buffer.view;
    const u: Record<string, number> = {};
    for (const [name, value] of d.uniforms) u[name] = value;
    const start = performance.now();
    try {
      // The source is generated by @trident/core's JS code generator, never user text.
      k.inline ??= new Function(`"use strict"; return ${k.source};`)() as JsRun;
      k.inline(b, u, 0, d.numWorkgroups, d.numWorkgroups, d.grid);
    } catch (err) {
      const detail = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      throw new KernelExecutionError('cpu', k.kernel.name, detail, { cause: err });
    }
    learn(k, ((performance.now() - start) * 1e6) / d.numWorkgroups);
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
    this.pool.destroy();
  }

  /** Fails when this runtime cannot share memory with workers. */
  static checkRuntime(workers: number, timeLimitMs?: number): void {
    if (typeof SharedArrayBuffer === 'undefined' || (typeof crossOriginIsolated !== 'undefined' && !crossOriginIsolated)) {
      throw new BackendUnavailableError(
        'cpu',
        'SharedArrayBuffer is not available: serve the page with COOP same-origin and COEP require-corp headers',
      );
    }
    if (timeLimitMs !== undefined && !(typeof timeLimitMs === 'number' && timeLimitMs > 0 && Number.isFinite(timeLimitMs))) {
      throw new BackendUnavailableError(
        'cpu',
        `option 'timeLimitMs' must be a positive number of milliseconds, got ${String(timeLimitMs)}`,
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

  private enqueue(host: () => void): void {
    this.pending.push({ host });
  }
}

/** Follows a kernel's cost per workgroup (uniforms change it, so recent runs weigh most). */
function learn(k: CpuCompiled, nsPerWorkgroup: number): void {
  k.nsPerWorkgroup = k.nsPerWorkgroup === undefined ? nsPerWorkgroup : 0.5 * k.nsPerWorkgroup + 0.5 * nsPerWorkgroup;
}
