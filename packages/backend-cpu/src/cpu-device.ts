import {
  type BackendBuffer,
  type BackendDevice,
  BackendUnavailableError,
  buffer,
  type CompiledKernel,
  type DeviceCaps,
  type DeviceInfo,
  defineKernel,
  type Feature,
  type Grid,
  type HostArray,
  type Kernel,
  KernelExecutionError,
  LimitExceededError,
} from '@trident/core';
import { generateJs } from './codegen/js.ts';
import { generateWasm } from './codegen/wasm-generator.ts';
import { CpuBuffer } from './cpu-buffer.ts';
import {
  type KernelCost,
  kernelPath,
  learnCost,
  MeasuredChoice,
  predictOneThreadNs,
  ROUND_TRIP_DEFAULT_NS,
  RoundTripEstimate,
  runsAlone,
  sizeClass,
} from './dispatch-choice.ts';
import { HeapFull, SharedHeap } from './heap.ts';
import { DeviceMemory, OutOfHostMemory, type Placement } from './host-blocks.ts';
import { instantiateWasmKernel, type WasmCode } from './wasm-kernel.mjs';
import { type BatchDispatch, BatchFailure, type KernelCode, type WorkerPool } from './worker-pool.ts';

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
  /**
   * Compile kernels to WebAssembly where they fit its subset (default true): no
   * barriers or workgroup arrays (codegen/wasm-generator.ts); the rest run as
   * generated JavaScript. False runs every kernel as JavaScript (to compare the two).
   */
  readonly wasm?: boolean;
  /**
   * Bytes all of the device's buffers may hold together (`caps.limits.maxTotalBufferBytes`);
   * a buffer past it is refused with LimitExceededError('hostMemory') before anything is
   * allocated. Default in Node: half the memory the process may use (the cgroup's limit
   * where there is one, else the physical memory); in browsers: the device's
   * WebAssembly.Memory maximum.
   */
  readonly maxTotalBufferBytes?: number;
  /**
   * The most bytes the device's WebAssembly.Memory (the heap WebAssembly kernels
   * address) may hold; buffers it has no room for get host blocks of their own and the
   * kernels given them run as JavaScript (host-blocks.ts). Default: the largest the
   * runtime reserves, up to 4 GiB. Lowered by tests to send small buffers past it.
   */
  readonly heapMaxBytes?: number;
}

declare module '@trident/core' {
  interface BackendOptionsMap {
    cpu: CpuBackendOptions;
  }
}

interface CpuCompiled extends CompiledKernel {
  readonly id: number;
  /** Which code runs the kernel: its WebAssembly module, or its generated JavaScript. */
  readonly path: 'wasm' | 'js';
  /** Why a kernel runs as JavaScript while the device compiles to WebAssembly. */
  readonly fallback?: string;
  readonly code: KernelCode;
  /** The same kernel as its generated JavaScript: for dispatches given a buffer in a host block. */
  jsTwin?: CpuCompiled;
  /** The kernel compiled on the calling thread, for dispatches run inline. */
  inline?: JsRun;
  inlineArgs?: { readonly b: Record<string, HostArray>; readonly u: Record<string, number> };
  /** Names of its f32 uniforms (rounded to f32 when dispatched). */
  f32Uniforms?: ReadonlySet<string>;
  /** Measured one-thread cost: timed inline, or by the workers themselves (their kernel time summed). */
  cost?: KernelCost;
  /** Measured wall time inline vs on the workers, per size of dispatch (`sizeClass`). */
  choices?: Map<number, MeasuredChoice>;
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
  /** Elements of its buffers together (what a kernel looping over its data costs in proportion to). */
  readonly elements: number;
  /** Its kernel's measured ways of running at its size. */
  readonly choice: MeasuredChoice;
  /** Where it runs, decided once when it is reached (undefined before). */
  inline: boolean | undefined;
}

type Command = { readonly host: () => void } | DispatchCommand;

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
  /** The largest buffer the platform's typed arrays and the kernels' u32 indices allow, in elements. */
  readonly maxBufferElements: number;
  /** Bytes all buffers may hold together (CpuBackendOptions.maxTotalBufferBytes). */
  readonly maxTotalBufferBytes: number;
  /** The shared WebAssembly.Memory buffers live in where it has room (its pool's workers got the same). */
  readonly heap: SharedHeap;
  readonly wasm?: boolean | undefined;
}

/**
 * The CPU backend: kernels compiled to WebAssembly (or, outside its subset, to
 * JavaScript) run by a worker pool over one shared WebAssembly.Memory and, for buffers
 * it has no room for, host blocks (host-blocks.ts). Commands queue in stream order; a dispatch splits its
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
  private readonly heap: SharedHeap;
  private readonly memory: DeviceMemory;
  private readonly wasm: boolean;
  /** Frees the block of a buffer that was dropped without destroy(). */
  private readonly finalizer = new FinalizationRegistry<{ placement: Placement; bytes: number }>((b) => {
    if (!this.destroyed) this.memory.release(b.placement, b.bytes);
  });
  private readonly kernels = new Map<string, CpuCompiled>();
  /** The workers' round trip (wake-up and join) as measured on recent batches. */
  private readonly roundTrip = new RoundTripEstimate();
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
    this.heap = env.heap;
    this.memory = new DeviceMemory(env.heap, env.maxTotalBufferBytes, (block) => this.pool.forgetBlock(block));
    // Off where asked, or where this runtime lacks what the modules use (threads, SIMD, saturating truncation).
    this.wasm = (env.wasm ?? true) && wasmRuns();
    // A buffer may take the whole budget, within what one typed array and u32 indices reach.
    const maxBufferElements = Math.min(env.maxBufferElements, Math.floor(env.maxTotalBufferBytes / 4));
    this.info = {
      backend: 'cpu',
      adapter: env.adapter,
      software: false,
      details: { workers: env.workers, runtime: env.runtime, wasm: this.wasm, memoryMaxBytes: env.heap.maxBytes },
    };
    this.caps = {
      limits: {
        maxBufferElements,
        maxTotalBufferBytes: env.maxTotalBufferBytes,
        maxStorageBufferBindingSize: maxBufferElements * 4,
        maxBuffersPerKernel: 64,
        maxComputeInvocationsPerWorkgroup: 1024,
        maxComputeWorkgroupStorageSize: 65536,
        maxComputeWorkgroupsPerDimension: 2 ** 24,
        minSubgroupSize: 1,
        maxSubgroupSize: 1,
        maxExactAtomicCount: 2 ** 32 - 1,
      },
      // vec4 as v128 needs the WebAssembly path (the JavaScript one builds an array per vector).
      features: this.wasm ? new Set<Feature>([...FEATURES, 'simd']) : FEATURES,
      timerSource: 'wall',
      preferredWorkgroupSize: 64,
      concurrency: env.workers,
      // Waking the persistent workers through shared memory and joining them.
      dispatchCostMicros: ROUND_TRIP_DEFAULT_NS / 1000,
    };
  }

  createBuffer(dtype: BackendBuffer['dtype'], length: number): CpuBuffer {
    try {
      const buffer = new CpuBuffer(dtype, length, this.memory);
      this.finalizer.register(buffer, { placement: buffer.placement, bytes: buffer.bytes }, buffer);
      return buffer;
    } catch (err) {
      if (err instanceof OutOfHostMemory) {
        // Past the budget: what is left of it. The host out of memory: no number to give (NaN).
        throw new LimitExceededError(
          'cpu',
          'hostMemory',
          length * 4,
          err.allowed,
          `a buffer of ${length * 4} bytes (the CPU device's buffers may hold ${this.memory.budget} bytes together, ${this.memory.heldBytes} held now)`,
        );
      }
      throw err;
    }
  }

  destroyBuffer(buffer: BackendBuffer): void {
    const b = buffer as CpuBuffer;
    if (!this.finalizer.unregister(b)) return;
    // Commands already in the stream may still use the block: free it after them.
    const free = () => {
      this.pool.forgetBuffer(b);
      this.memory.release(b.placement, b.bytes);
    };
    if (this.idle()) free();
    else this.enqueue(free);
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

  async read(buffer: BackendBuffer, offset: number, length: number, into?: HostArray): Promise<HostArray> {
    // The copy is a command in the stream: it sees every earlier command and none issued later.
    let result: HostArray | undefined;
    this.enqueue(() => {
      const view = (buffer as CpuBuffer).view;
      if (into) into.set(view.subarray(offset, offset + length) as never);
      result = into ?? view.slice(offset, offset + length);
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
      const id = this.nextKernelId++;
      const wasm = this.wasm ? wasmOf(kernel) : undefined;
      const valid = wasm?.bytes !== undefined && WebAssembly.validate(wasm.bytes as Uint8Array<ArrayBuffer>);
      const scratch = valid && wasm.bytes ? this.scratchBlocks(wasm.scratchBytes) : [];
      if (valid && wasm.bytes && scratch) {
        const module = compileHere(wasm.bytes);
        const code: KernelCode = { source, wasm: { bytes: wasm.bytes, params: wasm.params, scratch, ...(module ? { module } : {}) } };
        compiled = { kernel, source, id, path: 'wasm', code };
      } else {
        const fallback = wasm
          ? wasm.bytes
            ? valid
              ? 'no memory left for its private arrays'
              : 'the runtime rejected the module'
            : wasm.reason
          : undefined;
        compiled = { kernel, source, id, path: 'js', code: { source }, ...(fallback ? { fallback } : {}) };
      }
      this.kernels.set(kernel.key, compiled);
    }
    return compiled;
  }

  /**
   * One block of `bytes` per worker and one for this thread (private arrays of a
   * WebAssembly kernel), kept as long as the device; undefined when the memory is full.
   */
  private scratchBlocks(bytes: number): number[] | undefined {
    if (bytes === 0) return [];
    const blocks: number[] = [];
    try {
      for (let i = 0; i <= this.workers; i++) blocks.push(this.heap.alloc(bytes));
    } catch (err) {
      if (!(err instanceof HeapFull)) throw err;
      for (const b of blocks) this.heap.release(b, bytes);
      return undefined;
    }
    return blocks;
  }

  dispatch(compiled: CompiledKernel, grid: Grid, args: ReadonlyMap<string, BackendBuffer | number>): void {
    let k = compiled as CpuCompiled;
    const buffers: Array<readonly [string, CpuBuffer]> = [];
    const uniforms: Array<readonly [string, number]> = [];
    let elements = 0;
    let hostBlocks = false;
    const f32 = f32Uniforms(k);
    // forEach, not for-of with destructuring: this runs unoptimized for the first thousands of dispatches.
    args.forEach((value, name) => {
      // An f32 uniform is an f32 in the kernel (JavaScript would otherwise compute with the double).
      if (typeof value === 'number') uniforms.push([name, f32.has(name) ? Math.fround(value) : value]);
      else {
        buffers.push([name, value as CpuBuffer]);
        elements += value.length;
        if ((value as CpuBuffer).block !== undefined) hostBlocks = true;
      }
    });
    const total = grid[0] * grid[1] * grid[2];
    if (total === 0) return;
    // A CompiledKernel made outside compile() (tests of failures) has no path: its source is JavaScript.
    if (k.path === 'wasm' && kernelPath(k.path, hostBlocks) === 'js') k = k.jsTwin ?? jsTwin(k, this.nextKernelId++);
    this.pending.push({
      compiled: k,
      kernelId: k.id,
      // A CompiledKernel made outside compile() (tests of failures) carries only its source.
      code: k.code ?? { source: k.source },
      buffers,
      uniforms,
      numWorkgroups: total,
      grid: [grid[0], grid[1], grid[2]],
      elements,
      choice: choiceOf(k, elements, total),
      inline: undefined,
    });
  }

  flush(): Promise<void> {
    if (this.pending.length === 0) return this.running;
    const commands = this.pending;
    this.pending = [];
    // Nothing in flight: what runs on this thread runs now, without a trip through the
    // event loop (a reduce of 2^16 is a few µs of kernels: promise hops were a good part of a call).
    let from = 0;
    if (this.outstanding === 0) {
      try {
        from = this.runHere(commands);
      } catch (err) {
        return Promise.reject(err);
      }
      if (from === commands.length) return this.running;
    }
    this.outstanding++;
    const run = this.running.then(async () => {
      try {
        await this.execute(commands, from);
      } finally {
        this.outstanding--;
      }
    });
    // A failed command fails this flush (the rest of its batch is dropped); later flushes start afresh.
    this.running = run.catch(() => undefined);
    return run;
  }

  /** Runs commands in order on this thread up to the first one for the workers; returns its index (or the count). */
  private runHere(commands: readonly Command[]): number {
    for (let i = 0; i < commands.length; i++) {
      const command = commands[i] as Command;
      if ('host' in command) command.host();
      else if (this.runsHere(command)) this.runInline(command);
      else return i;
    }
    return commands.length;
  }

  /**
   * Runs a flushed batch in order from `from`: host commands on this thread; consecutive worker
   * dispatches as one batch for the workers (one wake-up, joins done among the
   * workers); dispatches too small to repay a wake-up inline on this thread.
   */
  private async execute(commands: readonly Command[], from: number): Promise<void> {
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
      // The workers timed their kernels: the sum is the one-thread cost, the wall time beyond the longest the round trip.
      const wallMs = performance.now() - start;
      const { maxBusyMs, sumBusyMs, compiled } = this.pool.lastTimings();
      const first = sent[0] as DispatchCommand;
      // A batch whose workers first compiled a kernel measured the compiler: no round trip, no wall time to learn from.
      if (sent.length === 1 && !compiled) this.roundTrip.record((wallMs - maxBusyMs) * 1e6);
      // A batch of one kernel at one size: each dispatch's share of the wall time is what the workers cost it.
      if (!compiled && sent.every((d) => d.choice === first.choice)) first.choice.record(false, (wallMs * 1e6) / sent.length);
      // A batch of one kernel (a loop of dispatches) teaches its cost too; a mixed one cannot be apportioned.
      if (sent.every((d) => d.compiled === first.compiled)) {
        let workgroups = 0;
        let elements = 0;
        for (const d of sent) {
          workgroups += d.numWorkgroups;
          elements += d.elements;
        }
        first.compiled.cost = learnCost(first.compiled.cost, sumBusyMs * 1e6, workgroups, elements);
      }
    };
    for (let i = from; i < commands.length; i++) {
      const command = commands[i] as Command;
      if ('host' in command) {
        if (batch.length > 0) await runBatch();
        command.host();
      } else if (this.runsHere(command)) {
        if (batch.length > 0) await runBatch();
        this.runInline(command);
      } else if (runsAlone(predictOneThreadNs(command.compiled.cost, command.numWorkgroups, command.elements), this.roundTrip.ns)) {
        // Never measured, or long: alone in its batch, so that the workers' timings are its own (dispatch-choice.ts).
        await runBatch();
        batch.push(command);
        await runBatch();
      } else batch.push(command);
    }
    if (batch.length > 0) await runBatch();
  }

  /**
   * The faster way as measured for this kernel at this size, once both were; until
   * then one thread for the kernel's learned time vs the workers' learned round trip
   * plus that time split over them (dispatch-choice.ts).
   */
  private runsHere(d: DispatchCommand): boolean {
    d.inline ??= this.allowInline && this.runsInline(d);
    return d.inline;
  }

  private runsInline(d: DispatchCommand): boolean {
    return d.choice.chooseInline({
      oneThreadNs: predictOneThreadNs(d.compiled.cost, d.numWorkgroups, d.elements),
      workgroups: d.numWorkgroups,
      workers: this.workers,
      roundTripNs: this.roundTrip.ns,
    });
  }

  private runInline(d: DispatchCommand): void {
    const k = d.compiled;
    // One pair of argument objects per kernel, filled anew: a kernel run inline is never re-entered.
    k.inlineArgs ??= { b: {}, u: {} };
    const { b, u } = k.inlineArgs;
    // Indexed, not destructured: array destructuring runs the iterator protocol before V8 optimizes.
    for (let i = 0; i < d.buffers.length; i++) {
      const entry = d.buffers[i] as readonly [string, CpuBuffer];
      b[entry[0]] = entry[1].view;
    }
    for (let i = 0; i < d.uniforms.length; i++) {
      const entry = d.uniforms[i] as readonly [string, number];
      u[entry[0]] = entry[1];
    }
    let start = 0;
    try {
      // Compiled before the clock starts: the cost learned is the kernel's.
      k.inline ??= inlineRun(k, this.heap.memory, this.workers);
      start = performance.now();
      k.inline(b, u, 0, d.numWorkgroups, d.numWorkgroups, d.grid);
    } catch (err) {
      const detail = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      throw new KernelExecutionError('cpu', k.kernel.name, detail, { cause: err });
    }
    const ns = (performance.now() - start) * 1e6;
    k.cost = learnCost(k.cost, ns, d.numWorkgroups, d.elements);
    d.choice.record(true, ns);
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
    this.memory.dropAll();
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

  /** Fails on a memory option that is not a positive whole number of bytes. */
  static checkMemoryOptions(options: CpuBackendOptions | undefined): void {
    for (const name of ['maxTotalBufferBytes', 'heapMaxBytes'] as const) {
      const value = options?.[name];
      if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
        throw new BackendUnavailableError('cpu', `option '${name}' must be a positive whole number of bytes, got ${String(value)}`);
      }
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

/**
 * The pool once its workers have started: a device is created ready to dispatch (its
 * first dispatch, and a benchmark's first warm-up runs, no longer wait ~0.1 s for the
 * workers' start-up). A worker that cannot start fails the dispatches that need the
 * workers, naming its script, as before: the wait here only ends.
 */
export async function startedPool(pool: WorkerPool): Promise<WorkerPool> {
  await pool.started().catch(() => undefined);
  return pool;
}

/** The device's memory; a runtime that cannot reserve a shared WebAssembly.Memory has no CPU backend. */
export function createHeap(maxBytes?: number): SharedHeap {
  try {
    return new SharedHeap(maxBytes);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new BackendUnavailableError('cpu', `cannot reserve a shared WebAssembly.Memory for the buffers: ${why}`);
  }
}

/** The kernel's module, or why it has none; a generator failure leaves the kernel on its JavaScript. */
function wasmOf(kernel: Kernel): ReturnType<typeof generateWasm> {
  try {
    return generateWasm(kernel);
  } catch (err) {
    return { reason: `internal: the WebAssembly generator failed (${err instanceof Error ? err.message : String(err)})` };
  }
}

let wasmProbe: boolean | undefined;

/** Whether this runtime validates a module with every proposal the generated modules use. */
function wasmRuns(): boolean {
  if (wasmProbe === undefined) {
    const probe = defineKernel({
      name: 'cpu_wasm_probe',
      workgroupSize: 1,
      params: { v: buffer('f32', 'read', { vector: 4 }), a: buffer('u32', 'atomic') },
      body: ({ v, a }) => {
        a.atomicAdd(0, v.load(0).x.cast('u32'));
      },
    });
    const module = generateWasm(probe);
    try {
      wasmProbe = module.bytes !== undefined && WebAssembly.validate(module.bytes as Uint8Array<ArrayBuffer>);
    } catch {
      wasmProbe = false;
    }
  }
  return wasmProbe;
}

/** `k`'s generated JavaScript as a kernel of its own (its own id for the workers, its own costs), kept on `k`. */
function jsTwin(k: CpuCompiled, id: number): CpuCompiled {
  k.jsTwin = {
    kernel: k.kernel,
    source: k.source,
    id,
    path: 'js',
    code: { source: k.source },
    fallback: 'a buffer lies in a host block, outside the memory its WebAssembly addresses',
  };
  return k.jsTwin;
}

/** The measured ways of running kernel `k` over buffers of `elements` elements together and `workgroups` workgroups. */
function choiceOf(k: CpuCompiled, elements: number, workgroups: number): MeasuredChoice {
  k.choices ??= new Map();
  const size = sizeClass(elements, workgroups);
  let choice = k.choices.get(size);
  if (!choice) {
    choice = new MeasuredChoice();
    k.choices.set(size, choice);
  }
  return choice;
}

/**
 * The kernel's module compiled on this thread, to be shared with the workers (see
 * WasmCode.module); undefined where this thread may not compile it synchronously
 * (a browser's main thread, past 4 KiB): the workers then compile the bytes.
 */
function compileHere(bytes: Uint8Array): WebAssembly.Module | undefined {
  try {
    return new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
  } catch {
    return undefined;
  }
}

function f32Uniforms(k: CpuCompiled): ReadonlySet<string> {
  k.f32Uniforms ??= new Set(k.kernel.ir.params.flatMap(([n, d]) => (d.kind === 'uniform' && d.dtype === 'f32' ? [n] : [])));
  return k.f32Uniforms;
}

/**
 * The kernel for this thread: its WebAssembly where it has one and this thread may
 * instantiate it synchronously (a browser's main thread refuses modules over 4 KiB),
 * its generated JavaScript otherwise; both compute the same results.
 */
function inlineRun(k: CpuCompiled, memory: WebAssembly.Memory, workers: number): JsRun {
  const wasm: WasmCode | undefined = k.code?.wasm;
  if (wasm) {
    try {
      const module = wasm.module ?? new WebAssembly.Module(wasm.bytes as Uint8Array<ArrayBuffer>);
      // This thread's private-array block follows the workers' ones.
      return instantiateWasmKernel(module, memory, wasm.params, wasm.scratch?.[workers] ?? 0) as unknown as JsRun;
    } catch {
      // fall through to the JavaScript
    }
  }
  // The source is generated by @trident/core's JS code generator, never user text.
  return new Function(`"use strict"; return ${k.source};`)() as JsRun;
}
