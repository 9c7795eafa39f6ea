/**
 * @trident/backend-cpu for browsers (the "browser" export condition): the same
 * generated JavaScript and slice runner as in Node, run by a Web Worker pool.
 * Never imports piscina or node: modules.
 */
export { BrowserCpuDevice as CpuDevice, type CpuBackendOptions, cpuAdapter } from './browser-device.ts';
