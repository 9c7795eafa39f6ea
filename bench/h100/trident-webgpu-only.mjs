/**
 * What 'trident' resolves to in the GPU-machine conformance bundle: core with the
 * WebGPU backend alone registered, on a Dawn instance this module creates (the CPU
 * backend's worker pool cannot run from a bundle). The instance is handed to each
 * device, which keeps it alive (PLATFORM.md).
 */
import { DAWN_TOGGLES, webgpuAdapter } from '@trident/backend-webgpu';
import { registerBackend } from '@trident/core';
import { create, globals } from 'webgpu';

Object.assign(globalThis, globals);
const gpu = create([...DAWN_TOGGLES]);
/** The process's Dawn `GPU` (TF.js peers get it as navigator.gpu: bench/h100/tfjs-setup.mjs). */
export const dawnGpu = gpu;
registerBackend({ kind: 'webgpu', create: (options) => webgpuAdapter.create({ gpu, ...(options ?? {}) }) });

export * from '@trident/core';
