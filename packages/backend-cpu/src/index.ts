/** @trident/backend-cpu in Node: generated JavaScript in persistent worker threads over SharedArrayBuffer. */
export { type CpuBackendOptions, CpuDevice, type CpuEnvironment } from './cpu-device.ts';
export { cpuAdapter } from './node.ts';
export { type BatchDispatch, type SpawnWorker, WorkerPool } from './worker-pool.ts';
