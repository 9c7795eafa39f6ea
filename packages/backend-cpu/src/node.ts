import { availableParallelism, cpus } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { BackendAdapter, BackendDevice } from '@trident/core';
import { type CpuBackendOptions, CpuDevice, createHeap, startedPool } from './cpu-device.ts';
import { type SpawnWorker, WorkerPool } from './worker-pool.ts';

/** A worker thread running node-worker.mjs; it keeps the process alive only while it runs a batch. */
const spawnNodeWorker: SpawnWorker = (index, events) => {
  const worker = new Worker(new URL('./node-worker.mjs', import.meta.url), { name: `trident-cpu-${index}` });
  worker.on('message', events.message);
  worker.on('error', (e: Error) => events.failure(e));
  worker.on('exit', (code) => events.failure(new Error(`worker trident-cpu-${index} exited (code ${code})`)));
  worker.unref();
  return {
    post: (m) => worker.postMessage(m),
    terminate: () => {
      worker.removeAllListeners('exit');
      worker.removeAllListeners('error');
      void worker.terminate();
    },
    keepAlive: (alive) => (alive ? worker.ref() : worker.unref()),
  };
};

/** The CPU backend in Node: persistent worker threads, up to 2^29-element buffers. */
export const cpuAdapter: BackendAdapter<'cpu'> = {
  kind: 'cpu',
  async create(options?: CpuBackendOptions): Promise<BackendDevice> {
    const workers = options?.workers ?? availableParallelism();
    CpuDevice.checkRuntime(workers, options?.timeLimitMs);
    const heap = createHeap();
    return new CpuDevice({
      heap,
      wasm: options?.wasm,
      pool: await startedPool(new WorkerPool(workers, spawnNodeWorker, heap.memory, availableParallelism())),
      workers,
      inline: options?.inline,
      timeLimitMs: options?.timeLimitMs,
      adapter: cpus()[0]?.model?.trim() || 'unknown CPU',
      runtime: `node ${process.version}`,
      maxBufferElements: 2 ** 29,
    });
  },
};
