/** @trident/backend-cpu in Node: generated JavaScript in a piscina worker pool over SharedArrayBuffer. */
export { type CpuBackendOptions, CpuDevice, type CpuEnvironment } from './cpu-device.ts';
export { cpuAdapter } from './node.ts';
export type { SlicePool, SliceTask } from './slice-pool.ts';
