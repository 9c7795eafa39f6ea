import { availableParallelism, cpus, totalmem } from 'node:os';
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

/**
 * The largest buffer in Node, in elements: kernels index buffers with u32 values, and the
 * algorithms form sums such as a chunk's start plus its length, which stay below 2^32
 * for buffers of up to 2^31 elements (8 GiB); V8's typed arrays reach 2^32 elements.
 */
const NODE_MAX_BUFFER_ELEMENTS = 2 ** 31;

/**
 * The default budget for all of a device's buffers: half the memory the process may
 * use (the cgroup's limit where there is one, else the physical memory), as the CLI
 * charges its inputs: what a kernel computes is read back or written from the host too.
 */
export function defaultMaxTotalBufferBytes(): number {
  // 0, or a huge number, where no cgroup limit is set.
  const limit = process.constrainedMemory?.() ?? 0;
  const total = totalmem();
  return Math.floor((limit > 0 && limit < total ? limit : total) / 2);
}

/** The CPU backend in Node: persistent worker threads, buffers up to 2^31 elements within half the host's memory. */
export const cpuAdapter: BackendAdapter<'cpu'> = {
  kind: 'cpu',
  async create(options?: CpuBackendOptions): Promise<BackendDevice> {
    const workers = options?.workers ?? availableParallelism();
    CpuDevice.checkRuntime(workers, options?.timeLimitMs);
    CpuDevice.checkMemoryOptions(options);
    const heap = createHeap(options?.heapMaxBytes);
    return new CpuDevice({
      heap,
      wasm: options?.wasm,
      pool: await startedPool(new WorkerPool(workers, spawnNodeWorker, heap.memory, availableParallelism())),
      workers,
      inline: options?.inline,
      timeLimitMs: options?.timeLimitMs,
      adapter: cpus()[0]?.model?.trim() || 'unknown CPU',
      runtime: `node ${process.version}`,
      maxBufferElements: NODE_MAX_BUFFER_ELEMENTS,
      maxTotalBufferBytes: options?.maxTotalBufferBytes ?? defaultMaxTotalBufferBytes(),
    });
  },
};
