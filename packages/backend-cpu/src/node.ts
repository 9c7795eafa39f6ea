import { availableParallelism, cpus } from 'node:os';
import type { BackendAdapter, BackendDevice } from '@trident/core';
import { Piscina } from 'piscina';
import { type CpuBackendOptions, CpuDevice } from './cpu-device.ts';
import type { SlicePool, SliceTask } from './slice-pool.ts';

/** The slice pool in Node: piscina worker threads running node-worker.mjs. */
class PiscinaPool implements SlicePool {
  private readonly piscina: Piscina;
  constructor(workers: number) {
    this.piscina = new Piscina({
      filename: new URL('./node-worker.mjs', import.meta.url).href,
      minThreads: workers,
      maxThreads: workers,
      idleTimeout: Number.POSITIVE_INFINITY,
      // One task per worker at a time: the device sizes slices to the pool.
      concurrentTasksPerWorker: 1,
    });
  }
  async run(task: SliceTask): Promise<void> {
    await this.piscina.run(task);
  }
  destroy(): Promise<void> {
    return this.piscina.destroy();
  }
}

/** The CPU backend in Node: worker threads, up to 2^29-element buffers. */
export const cpuAdapter: BackendAdapter<'cpu'> = {
  kind: 'cpu',
  async create(options?: CpuBackendOptions): Promise<BackendDevice> {
    const workers = options?.workers ?? availableParallelism();
    CpuDevice.checkRuntime(workers);
    return new CpuDevice({
      pool: new PiscinaPool(workers),
      workers,
      adapter: cpus()[0]?.model?.trim() || 'unknown CPU',
      runtime: `node ${process.version}`,
      maxBufferElements: 2 ** 29,
    });
  },
};
