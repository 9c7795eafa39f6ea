/** @trident/backend-cpu: generated JavaScript in a worker pool over SharedArrayBuffer. */
export { type CpuBackendOptions, CpuDevice, cpuAdapter } from './cpu-device.ts';
