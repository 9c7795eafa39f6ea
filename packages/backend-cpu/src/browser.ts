/**
 * @trident/backend-cpu for browsers (the "browser" export condition): the same
 * device, generated JavaScript and worker loop as in Node, run by Web Workers.
 * Never imports node: modules. Needs a cross-origin isolated page (COOP same-origin
 * + COEP require-corp) for its shared memory (SharedArrayBuffer, a shared WebAssembly.Memory).
 */

import { type BackendAdapter, type BackendDevice, BackendUnavailableError } from '@trident/core';
import { spawnCpuWorker } from '#spawn-worker';
import { type CpuBackendOptions, CpuDevice, createHeap, startedPool } from './cpu-device.ts';
import { type SpawnWorker, WorkerPool, type WorkerReply } from './worker-pool.ts';

export { type CpuBackendOptions, CpuDevice } from './cpu-device.ts';

/** A Web Worker; where its script comes from depends on the build (see spawn-worker.ts). */
const spawnWebWorker: SpawnWorker = (index, events) => {
  const name = `trident-cpu-${index}`;
  const { worker, source } = spawnCpuWorker(name);
  worker.onmessage = (e: MessageEvent<WorkerReply>) => events.message(e.data);
  worker.onerror = (e: Event) => {
    // A script that fails to load gives a bare Event, with no message: say which script it was.
    const thrown = e instanceof ErrorEvent && e.message;
    events.failure(
      thrown
        ? new Error(`CPU worker error in ${name} (${source}): ${thrown}`)
        : new Error(`CPU worker ${name} could not load its script from ${source}: is it served, as JavaScript?`),
    );
  };
  return { post: (m) => worker.postMessage(m), terminate: () => worker.terminate() };
};

export const cpuAdapter: BackendAdapter<'cpu'> = {
  kind: 'cpu',
  async create(options?: CpuBackendOptions): Promise<BackendDevice> {
    if (typeof Worker === 'undefined') throw new BackendUnavailableError('cpu', 'this runtime has no Web Workers');
    const workers = options?.workers ?? (typeof navigator !== 'undefined' ? navigator.hardwareConcurrency : 0) ?? 2;
    CpuDevice.checkRuntime(workers, options?.timeLimitMs);
    CpuDevice.checkMemoryOptions(options);
    const heap = createHeap(options?.heapMaxBytes);
    return new CpuDevice({
      heap,
      wasm: options?.wasm,
      pool: await startedPool(
        new WorkerPool(workers, spawnWebWorker, heap.memory, typeof navigator !== 'undefined' ? navigator.hardwareConcurrency : undefined),
      ),
      workers,
      inline: options?.inline,
      timeLimitMs: options?.timeLimitMs,
      adapter: `${workers} Web Workers`,
      runtime: typeof navigator !== 'undefined' ? navigator.userAgent : 'unknown browser',
      // Browsers cap ArrayBuffers lower than Node does.
      maxBufferElements: 2 ** 28,
      // A page learns little of the machine's memory (navigator.deviceMemory is rounded and
      // capped at 8 GiB): by default its buffers hold what the device's WebAssembly.Memory does.
      maxTotalBufferBytes: options?.maxTotalBufferBytes ?? heap.maxBytes,
    });
  },
};
