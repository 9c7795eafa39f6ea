import type { SlicePool, SliceTask } from './slice-pool.ts';

type Reply = { job: number; ok: true } | { job: number; ok: false; error: string };

interface Slot {
  readonly worker: Worker;
  busy: boolean;
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
      // The literal `new URL(..., import.meta.url)` form lets bundlers (Vite) emit the worker.
      const worker = new Worker(new URL('./browser-worker.mjs', import.meta.url), { type: 'module', name: `trident-cpu-${i}` });
      worker.onmessage = (e: MessageEvent<Reply>) => this.settle(e.data);
      worker.onerror = (e: ErrorEvent) => {
        // A worker that fails to load or throws outside a task fails every job it holds.
        for (const [job, j] of this.jobs) {
          this.jobs.delete(job);
          j.reject(new Error(`CPU worker error: ${e.message}`));
        }
      };
      this.slots.push({ worker, busy: false });
    }
  }

  async run(task: SliceTask): Promise<void> {
    let slot = this.slots.find((s) => !s.busy);
    while (!slot) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      slot = this.slots.find((s) => !s.busy);
    }
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
