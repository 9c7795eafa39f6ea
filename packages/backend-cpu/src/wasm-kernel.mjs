// @ts-check
/**
 * Instantiates a kernel compiled to WebAssembly (@trident/core's codegen/wasm.ts)
 * over the device's shared memory, behind the same calling convention as a
 * generated JavaScript kernel: `run(B, U, wgStart, wgEnd, nwg, grid)` with B the
 * buffers' typed-array views (views of that memory: their byteOffset is the
 * buffer's address) and U the uniforms. Used by the workers and, for dispatches
 * run inline, by the device. Plain JavaScript so that workers load it without a build step.
 */

/**
 * The math the module imports from JavaScript (f64 in, f64 out): results then equal
 * the generated JavaScript's, which rounds the same double results to f32.
 * @type {Record<string, (...xs: number[]) => number>}
 */
const MATH = {
  exp: Math.exp,
  log: Math.log,
  log2: Math.log2,
  pow: Math.pow,
  sin: Math.sin,
  cos: Math.cos,
  fmod: (a, b) => a % b,
};

/**
 * @typedef {{ name: string, kind: 'buffer' | 'uniform' | 'scratch' }} WasmParam
 * @typedef {{ bytes: Uint8Array, params: readonly WasmParam[], scratch?: readonly number[] }} WasmCode
 *   `scratch`: where the kernel has private arrays, one block of the memory per thread
 *   (index: the worker's; the last: the device's own thread), given as the `scratch` parameter.
 */

/**
 * @param {WebAssembly.Module} module
 * @param {WebAssembly.Memory} memory
 * @param {readonly WasmParam[]} params
 * @param {number} [scratch] byte offset of this thread's private-array block
 * @returns {(B: Record<string, ArrayBufferView & { length: number }>, U: Record<string, number>, wgStart: number, wgEnd: number, nwg: number, grid?: readonly number[]) => void}
 */
export function instantiateWasmKernel(module, memory, params, scratch = 0) {
  const instance = new WebAssembly.Instance(module, { env: { memory }, m: MATH });
  const run = /** @type {(...args: number[]) => void} */ (instance.exports.run);
  const count = params.reduce((n, p) => n + (p.kind === 'buffer' ? 2 : 1), 0);
  return function wasmRun(B, U, wgStart, wgEnd, nwg, grid = [nwg, 1, 1]) {
    const args = new Array(count + 6);
    let a = 0;
    for (const p of params) {
      if (p.kind === 'scratch') args[a++] = scratch;
      else if (p.kind === 'buffer') {
        const view = /** @type {ArrayBufferView & { length: number }} */ (B[p.name]);
        args[a++] = view.byteOffset;
        args[a++] = view.length;
      } else args[a++] = U[p.name] ?? 0;
    }
    args[a++] = wgStart;
    args[a++] = wgEnd;
    args[a++] = nwg;
    args[a++] = grid[0] ?? nwg;
    args[a++] = grid[1] ?? 1;
    args[a++] = grid[2] ?? 1;
    run(...args);
  };
}
