import type { BufferDType } from '@trident/core';
import type { CpuBuffer } from './cpu-buffer.ts';
import type { HostBlock } from './host-blocks.ts';
import { CONTROL_SLOTS, DONE, EPOCH, ERROR, NOTIFY_BY_MESSAGE, REG, STOP } from './protocol.mjs';
import type { WasmCode } from './wasm-kernel.mjs';

/**
 * Persistent CPU workers driven through a shared control block (protocol.mjs says
 * why: a message per dispatch cost ~90 µs; an `Atomics.notify` + shared-memory join
 * costs a few). Used by Node (worker_threads) and browsers (Web Workers) alike; only
 * how a worker is started differs (`SpawnWorker`).
 */

/** What a worker posts back. */
export type WorkerReply =
  | { readonly type: 'ready' }
  | { readonly type: 'done' }
  | { readonly type: 'error'; readonly epoch: number; readonly dispatch: number; readonly message: string };

export interface WorkerHandle {
  post(message: unknown): void;
  terminate(): void;
  /** Node: keep the process alive only while a batch is in flight. */
  keepAlive?(alive: boolean): void;
}

export interface WorkerEvents {
  message(reply: WorkerReply): void;
  /** The worker died or could not start (`loading`: it never became ready). */
  failure(error: Error): void;
}

export type SpawnWorker = (index: number, events: WorkerEvents) => WorkerHandle;

/** What a worker compiles: the generated JavaScript, and the WebAssembly module where the kernel has one. */
export interface KernelCode {
  readonly source: string;
  readonly wasm?: WasmCode | undefined;
}

/** One dispatch of a batch: a registered kernel, its argument layout and values. */
export interface BatchDispatch {
  readonly kernelId: number;
  readonly code: KernelCode;
  readonly buffers: ReadonlyArray<readonly [string, CpuBuffer]>;
  readonly uniforms: ReadonlyArray<readonly [string, number]>;
  readonly numWorkgroups: number;
  /** The grid's workgroups along x, y, z (their product is numWorkgroups): 2-D/3-D ids. */
  readonly grid: readonly [number, number, number];
}

/** A dispatch of a batch threw, or a worker died while running it. */
export class BatchFailure extends Error {
  constructor(
    /** Index in the batch of the dispatch that failed (the first one when a worker died). */
    readonly dispatch: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A buffer as workers know it: a block of the device's memory, or the start of a host block (`block`: its id; 0: the heap). */
interface Registered {
  readonly offset: number;
  readonly dtype: BufferDType;
  readonly length: number;
  readonly block: number;
}

const INITIAL_COMMAND_SLOTS = 4096;

/**
 * Loads of a control slot a worker makes before sleeping in Atomics.wait, where
 * every thread has a core: a wake-up from the wait costs tens of µs, a spin this
 * long a few. Where the workers and the calling thread outnumber the cores, a
 * spinning worker takes the core of the thread it waits for: measured on
 * a loaded 2-core VM with 2 workers an awaited 2^10 reduce on the workers of 74 µs
 * spinning 2000 loads, 39 µs not spinning; the barrier between dispatches 20 vs 10 µs.
 */
const SPIN_LOADS = 2000;

/** A kernel's argument layout: which buffers and uniforms, in the order the commands list them. */
interface Layout {
  readonly id: number;
  readonly kernel: number;
  readonly buffers: readonly string[];
  readonly uniforms: readonly string[];
}

/** How the workers spent the last batch: ms in kernels, the longest of any worker and all together. */
export interface BatchTimings {
  readonly maxBusyMs: number;
  readonly sumBusyMs: number;
  /** The batch brought the workers kernels to compile first: its wall time includes their compiler's. */
  readonly compiled: boolean;
}

/** `Atomics.waitAsync` (ES2024; Node 16+, Chromium 87+, not yet in every browser): absent, the last worker posts 'done'. */
type WaitAsync = (
  view: Int32Array,
  index: number,
  value: number,
) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;

export class WorkerPool {
  readonly size: number;
  private readonly spawn: SpawnWorker;
  /** The device's memory (heap.ts), sent to each worker once. */
  private readonly memory: WebAssembly.Memory;
  private control = new Int32Array(new SharedArrayBuffer(CONTROL_SLOTS * 4));
  /** Per worker, ms spent in kernels during the last batch (worker-loop.mjs writes it before joining). */
  private timings: Float64Array;
  private commandData = new SharedArrayBuffer(INITIAL_COMMAND_SLOTS * 8);
  private commands = new Float64Array(this.commandData);
  private workers: WorkerHandle[] = [];
  private ready!: Promise<void>;
  private reg = 0;
  /** What every (re)started worker must be told, kept so that a replacement can be. */
  private readonly kernelSources = new Map<number, KernelCode>();
  /** Every layout by id, and by kernel (found by comparing names: no key string built per dispatch). */
  private readonly layouts: Layout[] = [];
  private readonly layoutsByKernel = new Map<number, Layout[]>();
  private readonly buffers = new Map<number, Registered>();
  /** Host blocks the workers were sent (each once, as the heap's memory), by id. */
  private readonly blocks = new Map<number, SharedArrayBuffer>();
  /** Registrations not yet sent to the workers. */
  private newKernels: number[] = [];
  private newLayouts: Layout[] = [];
  private newBuffers: number[] = [];
  private newBlocks: number[] = [];
  private released: number[] = [];
  private releasedBlocks: number[] = [];
  private commandsResized = false;
  /** The last batch sent the workers new kernels. */
  private lastCompiled = false;
  private readonly finalizer = new FinalizationRegistry<number>((id) => {
    if (this.buffers.delete(id)) this.released.push(id);
  });
  /** The in-flight batch: its error reports and how to end its wait early. */
  private inFlight?: {
    epoch: number;
    errors: Array<{ dispatch: number; message: string }>;
    wake: () => void;
    death?: Error;
    /** The death is the time limit's, not a worker's. */
    overran?: boolean;
  };
  private failed?: Error;
  private destroyed = false;

  private readonly spin: number;

  /** `cores`: the processors the platform reports (the workers spin only when they and the caller each have one). */
  constructor(size: number, spawn: SpawnWorker, memory: WebAssembly.Memory, cores = Number.POSITIVE_INFINITY) {
    this.size = size;
    this.spin = size + 1 <= cores ? SPIN_LOADS : 0;
    this.spawn = spawn;
    this.memory = memory;
    this.timings = new Float64Array(new SharedArrayBuffer(size * 8));
    this.start();
  }

  /**
   * Runs the dispatches in order, each split over the workers, joined between them;
   * resolves when all are done. A batch still running after `timeLimitMs` fails,
   * and its workers are replaced (a busy worker can only be terminated).
   */
  async run(batch: readonly BatchDispatch[], timeLimitMs?: number): Promise<void> {
    if (this.destroyed) throw new Error('the worker pool was destroyed');
    const workers = this.workers;
    for (const w of workers) w.keepAlive?.(true);
    try {
      await this.ready;
      if (this.failed) throw this.failed;
      await this.runReady(batch, timeLimitMs);
    } finally {
      for (const w of workers) w.keepAlive?.(false);
    }
  }

  private async runReady(batch: readonly BatchDispatch[], timeLimitMs: number | undefined): Promise<void> {
    this.encode(batch);
    this.sendRegistrations();
    const c = this.control;
    const epoch = Atomics.load(c, EPOCH) + 1;
    const flight: NonNullable<WorkerPool['inFlight']> = { epoch, errors: [], wake: () => undefined };
    this.inFlight = flight;
    const overrun =
      timeLimitMs === undefined
        ? undefined
        : setTimeout(() => {
            flight.death = new Error(`the batch ran past its time limit of ${timeLimitMs} ms; its workers were stopped and replaced`);
            flight.overran = true;
            flight.wake();
          }, timeLimitMs);
    try {
      Atomics.store(c, DONE, 0);
      Atomics.store(c, ERROR, 0);
      Atomics.store(c, EPOCH, epoch);
      Atomics.notify(c, EPOCH);
      await this.join(flight);
      if (flight.death) {
        const death = flight.death;
        this.restart();
        throw new BatchFailure(0, flight.overran ? death.message : `a CPU worker died: ${death.message}`, { cause: death });
      }
      const failedAt = Atomics.load(c, ERROR);
      if (failedAt !== 0) {
        // The worker posted its message before joining: it is on its way.
        while (!flight.errors.some((e) => e.dispatch === failedAt - 1) && !flight.death) {
          await new Promise<void>((resolve) => {
            flight.wake = resolve;
          });
        }
        const report = flight.errors.find((e) => e.dispatch === failedAt - 1);
        throw new BatchFailure(failedAt - 1, report?.message ?? 'a CPU worker failed');
      }
    } finally {
      clearTimeout(overrun);
      this.inFlight = undefined;
    }
  }

  /**
   * Resolves once every worker has started (adapters await it, so that a device's
   * first dispatch does not pay for their start-up); rejects with why one could not.
   */
  async started(): Promise<void> {
    // Node: unreferenced workers would let the process end while it waits for them.
    const workers = this.workers;
    for (const w of workers) w.keepAlive?.(true);
    try {
      await this.ready;
    } finally {
      for (const w of workers) w.keepAlive?.(false);
    }
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.stopWorkers();
  }

  private start(): void {
    const control = this.control;
    let readyCount = 0;
    let resolveReady: () => void = () => undefined;
    let rejectReady: (e: Error) => void = () => undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    this.ready.catch(() => undefined);
    const notifyByMessage = waitAsync === undefined;
    Atomics.store(control, NOTIFY_BY_MESSAGE, notifyByMessage ? 1 : 0);
    const workers: WorkerHandle[] = [];
    for (let i = 0; i < this.size; i++) {
      let isReady = false;
      const handle = this.spawn(i, {
        message: (reply) => {
          if (this.control !== control) return;
          if (reply.type === 'ready') {
            isReady = true;
            if (++readyCount === this.size) resolveReady();
          } else if (reply.type === 'done') this.inFlight?.wake();
          else if (this.inFlight && reply.epoch === this.inFlight.epoch) {
            this.inFlight.errors.push(reply);
            this.inFlight.wake();
          }
        },
        failure: (error) => {
          if (this.control !== control || this.destroyed) return;
          if (!isReady) {
            // A worker that cannot even start will not start next time either: fail every later batch with why.
            this.failed = error;
            rejectReady(error);
            return;
          }
          if (this.inFlight) {
            this.inFlight.death = error;
            this.inFlight.wake();
          } else this.restart();
        },
      });
      handle.post({
        type: 'init',
        control: control.buffer,
        timings: this.timings.buffer,
        memory: this.memory,
        index: i,
        workers: this.size,
        spin: this.spin,
      });
      workers.push(handle);
    }
    this.workers = workers;
    // A fresh worker knows nothing: send it everything still registered.
    this.newKernels = [...this.kernelSources.keys()];
    this.newLayouts = [...this.layouts];
    this.newBuffers = [...this.buffers.keys()];
    this.newBlocks = [...this.blocks.keys()];
    this.released = [];
    this.releasedBlocks = [];
    this.commandsResized = true;
  }

  /** Replaces every worker (one died or overran): the barrier state of the survivors is unknowable. */
  private restart(): void {
    this.stopWorkers();
    this.control = new Int32Array(new SharedArrayBuffer(CONTROL_SLOTS * 4));
    this.timings = new Float64Array(new SharedArrayBuffer(this.size * 8));
    this.reg = 0;
    this.start();
  }

  private stopWorkers(): void {
    Atomics.store(this.control, STOP, 1);
    Atomics.add(this.control, EPOCH, 1);
    Atomics.notify(this.control, EPOCH);
    for (const w of this.workers) w.terminate();
    this.workers = [];
  }

  private async join(flight: NonNullable<WorkerPool['inFlight']>): Promise<void> {
    const c = this.control;
    for (;;) {
      const done = Atomics.load(c, DONE);
      if (done === this.size || flight.death) return;
      if (waitAsync) {
        const waited = waitAsync(c, DONE, done);
        if (waited.async) {
          // A dying worker never bumps DONE: its failure event ends the wait instead.
          await Promise.race([waited.value, new Promise<void>((resolve) => (flight.wake = resolve))]);
        }
      } else {
        await new Promise<void>((resolve) => {
          flight.wake = resolve;
        });
      }
    }
  }

  /** Writes the batch into the shared command area (growing it if needed), registering what is new. */
  private encode(batch: readonly BatchDispatch[]): void {
    let slots = 1;
    for (const d of batch) slots += 4 + d.buffers.length + d.uniforms.length;
    if (slots > this.commands.length) {
      this.commandData = new SharedArrayBuffer(2 ** Math.ceil(Math.log2(slots)) * 8);
      this.commands = new Float64Array(this.commandData);
      this.commandsResized = true;
    }
    const cmd = this.commands;
    let p = 0;
    cmd[p++] = batch.length;
    for (const d of batch) {
      if (!this.kernelSources.has(d.kernelId)) {
        this.kernelSources.set(d.kernelId, d.code);
        this.newKernels.push(d.kernelId);
      }
      const layout = this.layoutOf(d);
      cmd[p++] = layout.id;
      cmd[p++] = d.numWorkgroups;
      cmd[p++] = d.grid[0];
      cmd[p++] = d.grid[1];
      for (const [, b] of d.buffers) {
        if (!this.buffers.has(b.id)) {
          const block = b.block;
          if (block && !this.blocks.has(block.id)) {
            this.blocks.set(block.id, block.buffer);
            this.newBlocks.push(block.id);
          }
          this.buffers.set(b.id, { offset: b.offset, dtype: b.dtype, length: b.length, block: block?.id ?? 0 });
          this.finalizer.register(b, b.id);
          this.newBuffers.push(b.id);
        }
        cmd[p++] = b.id;
      }
      for (const [, v] of d.uniforms) cmd[p++] = v;
    }
  }

  /** The dispatch's layout, registered on first use. */
  private layoutOf(d: BatchDispatch): Layout {
    let known = this.layoutsByKernel.get(d.kernelId);
    if (!known) {
      known = [];
      this.layoutsByKernel.set(d.kernelId, known);
    }
    for (const l of known) if (sameNames(l.buffers, d.buffers) && sameNames(l.uniforms, d.uniforms)) return l;
    const layout: Layout = {
      id: this.layouts.length,
      kernel: d.kernelId,
      buffers: d.buffers.map(([name]) => name),
      uniforms: d.uniforms.map(([name]) => name),
    };
    this.layouts.push(layout);
    known.push(layout);
    this.newLayouts.push(layout);
    return layout;
  }

  /** A destroyed buffer: the workers drop their view of it at the next batch (none of its dispatches is left). */
  forgetBuffer(buffer: CpuBuffer): void {
    if (this.buffers.delete(buffer.id)) this.released.push(buffer.id);
  }

  /**
   * The device dropped a host block: the workers drop their reference at the next
   * batch (no buffer registered with them lies in it any more: it was kept unused).
   */
  forgetBlock(block: HostBlock): void {
    if (this.blocks.delete(block.id)) this.releasedBlocks.push(block.id);
  }

  /** What the workers spent in kernels during the batch last run (read after its join). */
  lastTimings(): BatchTimings {
    let maxBusyMs = 0;
    let sumBusyMs = 0;
    for (const ms of this.timings) {
      maxBusyMs = Math.max(maxBusyMs, ms);
      sumBusyMs += ms;
    }
    return { maxBusyMs, sumBusyMs, compiled: this.lastCompiled };
  }

  private sendRegistrations(): void {
    this.lastCompiled = this.newKernels.length > 0;
    if (
      !this.newKernels.length &&
      !this.newLayouts.length &&
      !this.newBuffers.length &&
      !this.released.length &&
      !this.releasedBlocks.length &&
      !this.commandsResized
    )
      return;
    const message = {
      type: 'register',
      reg: ++this.reg,
      commands: this.commandsResized ? this.commandData : undefined,
      kernels: this.newKernels.map((id) => ({ id, ...this.kernelSources.get(id) })),
      // Blocks before the buffers in them; released blocks after the buffers released.
      blocks: this.newBlocks.flatMap((id) => {
        const buffer = this.blocks.get(id);
        return buffer ? [{ id, buffer }] : [];
      }),
      layouts: this.newLayouts,
      buffers: this.newBuffers.flatMap((id) => {
        const b = this.buffers.get(id);
        return b ? [{ id, ...b }] : [];
      }),
      release: this.released,
      releaseBlocks: this.releasedBlocks,
    };
    for (const w of this.workers) w.post(message);
    this.newKernels = [];
    this.newLayouts = [];
    this.newBuffers = [];
    this.newBlocks = [];
    this.released = [];
    this.releasedBlocks = [];
    this.commandsResized = false;
    Atomics.store(this.control, REG, this.reg);
  }
}

function sameNames(names: readonly string[], args: ReadonlyArray<readonly [string, unknown]>): boolean {
  if (names.length !== args.length) return false;
  for (let i = 0; i < names.length; i++) if (names[i] !== args[i]?.[0]) return false;
  return true;
}
