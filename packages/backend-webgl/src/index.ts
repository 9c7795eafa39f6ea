/**
 * @trident/backend-webgl: WebGL2 fragment/vertex-shader GPGPU (browsers only).
 * In Node the adapter reports itself unavailable with the reason.
 */
export { bufferUniforms, FULLSCREEN_VS, type GlslProgram, generateGlsl, glslType, type PassSpec } from './glsl.ts';
export { type KernelPlan, type PointTarget, planKernel, type TargetMode } from './glsl-plan.ts';
export { type WebGLBackendOptions, webglAdapter } from './webgl-adapter.ts';
export { WebGLDevice } from './webgl-device.ts';
