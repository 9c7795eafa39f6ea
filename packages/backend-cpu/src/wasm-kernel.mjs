// @ts-check
/**
 * Instantiates a kernel compiled to WebAssembly (codegen/wasm-generator.ts)
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
 * @typedef {{ bytes: Uint8Array, params: readonly WasmParam[], scratch?: readonly number[], module?: WebAssembly.Module }} WasmCode
 *   `scratch`: where the kernel has private arrays, one block of the memory per thread
 *   (index: the worker's; the last: the device's own thread), given as the `scratch` parameter.
 *   `module`: the module compiled once by the device, where its thread may compile
 *   synchronously; every thread instantiates it, so all share one compiled code and
 *   one tier-up (V8 starts a module on its baseline compiler and optimizes it once
 *   used enough: compiled per worker, each worker warmed up its own, and on a loaded
 *   2-core machine the optimizing compiles waited behind the busy threads).
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
  return callerFor(params)(run, scratch);
}

/**
 * A wrapper that passes each parameter by position, made once per parameter list:
 * no argument array and no spread call per run (a dispatch runs it unoptimized for
 * its first thousands of calls). Names are quoted as JSON strings, never
 * spliced as code; they are the kernel's own parameter names.
 * @type {Map<string, (run: (...args: number[]) => void, scratch: number) => ReturnType<typeof instantiateWasmKernel>>}
 */
const callers = new Map();

/** @param {readonly WasmParam[]} params */
function callerFor(params) {
  const key = JSON.stringify(params);
  let make = callers.get(key);
  if (!make) {
    /** @type {string[]} */
    const args = [];
    for (const p of params) {
      const name = JSON.stringify(p.name);
      if (p.kind === 'scratch') args.push('scratch');
      else if (p.kind === 'buffer') args.push(`B[${name}].byteOffset`, `B[${name}].length`);
      else args.push(`U[${name}] ?? 0`);
    }
    args.push('wgStart', 'wgEnd', 'nwg', 'grid?.[0] ?? nwg', 'grid?.[1] ?? 1', 'grid?.[2] ?? 1');
    const source = `return function wasmRun(B, U, wgStart, wgEnd, nwg, grid) { run(${args.join(', ')}); };`;
    try {
      make = /** @type {NonNullable<typeof make>} */ (new Function('run', 'scratch', source));
    } catch {
      // A Content-Security-Policy without 'unsafe-eval' (WebAssembly itself needs only 'wasm-unsafe-eval').
      make = (run, scratch) => genericCaller(params, run, scratch);
    }
    callers.set(key, make);
  }
  return make;
}

/**
 * The same wrapper without generated code: an argument array filled per run.
 * @param {readonly WasmParam[]} params @param {(...args: number[]) => void} run @param {number} scratch
 * @returns {ReturnType<typeof instantiateWasmKernel>}
 */
function genericCaller(params, run, scratch) {
  const count = params.reduce((n, p) => n + (p.kind === 'buffer' ? 2 : 1), 0);
  return function wasmRun(B, U, wgStart, wgEnd, nwg, grid) {
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
    args[a++] = grid?.[0] ?? nwg;
    args[a++] = grid?.[1] ?? 1;
    args[a++] = grid?.[2] ?? 1;
    run(...args);
  };
}
