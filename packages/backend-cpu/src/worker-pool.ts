import { spawnCpuWorker } from '#spawn-worker';
import type { SlicePool, SliceTask } from './slice-pool.ts';

type Reply = { job: number; ok: true } | { job: number; ok: false; error: string };

interface Slot {
  readonly worker: Worker;
  busy: boolean;
  /** Set once the worker failed to load or died: its jobs, and every later one, fail with this. */
  failed?: Error;
}

/**
 * A small Web Worker pool for the CPU backend in browsers (piscina's role in Node).
 * Each worker runs one slice at a time; the device sizes slices to the pool.
 */
export class WorkerPool implements SlicePool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Array<() => void> = [];
  private readonly jobs = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private nextJob = 0;

  constructor(size: number) {
    for (let i = 0; i < size; i++) {
      // Where the worker's script comes from depends on the build: see spawn-worker.ts.
      const name = `trident-cpu-${i}`;
      const { worker, source } = spawnCpuWorker(name);
      const slot: Slot = { worker, busy: false };
      worker.onmessage = (e: MessageEvent<Reply>) => this.settle(e.data);
      worker.onerror = (e: Event) => {
        // A script that fails to load gives a bare Event, with no message: say which script it
        // was, and fail this worker's later jobs too (they would never be answered).
        const loaded = e instanceof ErrorEvent && e.message;
        const error = loaded
          ? new Error(`CPU worker error in ${name} (${source}): ${loaded}`)
          : new Error(`CPU worker ${name} could not load its script from ${source}: is it served, as JavaScript?`);
        if (!loaded) slot.failed = error;
        // A worker that fails to load or throws outside a task fails every job it holds.
        for (const [job, j] of this.jobs) {
          this.jobs.delete(job);
          j.reject(error);
        }
      };
      this.slots.push(slot);
    }
  }

  async run(task: SliceTask): Promise<void> {
    let slot = this.slots.find((s) => !s.busy);
    while (!slot) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      slot = this.slots.find((s) => !s.busy);
    }
    if (slot.failed) throw slot.failed;
    slot.busy = true;
    const job = this.nextJob++;
    try {
      await new Promise<void>((resolve, reject) => {
        this.jobs.set(job, { resolve, reject });
        slot.worker.postMessage({ job, task });
      });
    } finally {
      slot.busy = false;
      this.waiting.shift()?.();
    }
  }

  async destroy(): Promise<void> {
    for (const s of this.slots) s.worker.terminate();
    for (const j of this.jobs.values()) j.reject(new Error('the worker pool was destroyed'));
    this.jobs.clear();
  }

  private settle(reply: Reply): void {
    const j = this.jobs.get(reply.job);
    if (!j) return;
    this.jobs.delete(reply.job);
    if (reply.ok) j.resolve();
    else j.reject(new Error(reply.error));
  }
}
