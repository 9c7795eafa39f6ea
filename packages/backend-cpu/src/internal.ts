/**
 * @trident/backend-cpu/internal: the CPU backend's code generators, for the
 * project's own tests and benchmarks (generated source asserted on, kernels run
 * without a device). Not a stable API. Users import '@trident/backend-cpu' or 'trident'.
 */
export { generateJs, type JsKernelSource } from './codegen/js.ts';
export { generateWasm, generateWasmFromIR, type WasmKernel, type WasmParam } from './codegen/wasm-generator.ts';
