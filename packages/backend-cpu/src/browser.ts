/**
 * @trident/backend-cpu for browsers (the "browser" export condition): the same
 * device, generated JavaScript and slice runner as in Node, run by a Web Worker
 * pool. Never imports piscina or node: modules. Needs a cross-origin isolated page
 * (COOP same-origin + COEP require-corp) for SharedArrayBuffer.
 */
import { type BackendAdapter, type BackendDevice, BackendUnavailableError } from '@trident/core';
import { type CpuBackendOptions, CpuDevice } from './cpu-device.ts';
import { WorkerPool } from './worker-pool.ts';

export { type CpuBackendOptions, CpuDevice } from './cpu-device.ts';

export const cpuAdapter: BackendAdapter<'cpu'> = {
  kind: 'cpu',
  async create(options?: CpuBackendOptions): Promise<BackendDevice> {
    if (typeof Worker === 'undefined') throw new BackendUnavailableError('cpu', 'this runtime has no Web Workers');
    const workers = options?.workers ?? (typeof navigator !== 'undefined' ? navigator.hardwareConcurrency : 0) ?? 2;
    CpuDevice.checkRuntime(workers);
    return new CpuDevice({
      pool: new WorkerPool(workers),
      workers,
      adapter: `${workers} Web Workers`,
      runtime: typeof navigator !== 'undefined' ? navigator.userAgent : 'unknown browser',
      // Browsers cap ArrayBuffers lower than Node does.
      maxBufferElements: 2 ** 28,
    });
  },
};
