/** @trident/backend-cpu in Node: WebAssembly (or generated JavaScript) in persistent worker threads over one shared WebAssembly.Memory. */
export { type CpuBackendOptions, CpuDevice, type CpuEnvironment } from './cpu-device.ts';
export { cpuAdapter, defaultMaxTotalBufferBytes } from './node.ts';
export { type BatchDispatch, type SpawnWorker, WorkerPool } from './worker-pool.ts';
