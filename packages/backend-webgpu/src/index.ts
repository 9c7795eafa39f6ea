/** @trident/backend-webgpu: WGSL code generation over WebGPU (browsers' navigator.gpu, Dawn in Node). */
export { DAWN_TOGGLES, type GpuEnvironment, gpuEnvironment, noAdapterReason, nodeEnvironment } from './gpu-environment.ts';
export { type WebGpuBackendOptions, webgpuAdapter } from './webgpu-adapter.ts';
export { BufferPool, WebGpuBuffer } from './webgpu-buffer.ts';
export { type WebGpuCompiled, WebGpuDevice } from './webgpu-device.ts';
export {
  generateWgsl,
  type RangeHints,
  type SegmentLoads,
  type SegmentStores,
  type UniformSlot,
  type WgslKernel,
  type WgslOptions,
  workgroupElementBytes,
} from './wgsl.ts';
