// @ts-check
/**
 * The CPU backend's worker: registers kernels and buffers sent by message, then
 * sleeps in `Atomics.wait` until the device starts a batch of dispatches through
 * the shared control block (protocol.mjs), runs its slice of each, and joins the
 * other workers between dispatches. Shared by the Node worker (worker_threads) and
 * the browser Web Worker. Plain JavaScript so that workers load it without a build step.
 */
import { BAR_COUNT, BAR_GEN, DONE, EPOCH, ERROR, NOTIFY_BY_MESSAGE, REG, STOP } from './protocol.mjs';
import { instantiateWasmKernel } from './wasm-kernel.mjs';

const VIEW = { u32: Uint32Array, i32: Int32Array, f32: Float32Array };

/**
 * @typedef {{ run: Function, buffers: string[], uniforms: string[],
 *   b: Record<string, Uint32Array | Int32Array | Float32Array | undefined>, u: Record<string, number> }} Layout
 *   (`b` and `u`: the arguments' objects, filled anew for each dispatch rather than made per dispatch)
 * @typedef {import('./wasm-kernel.mjs').WasmCode} WasmCode
 * @typedef {{ type: 'init', control: SharedArrayBuffer, timings: SharedArrayBuffer, memory: WebAssembly.Memory, index: number, workers: number, spin: number }
 *   | { type: 'register', reg: number, commands?: SharedArrayBuffer, release: number[], releaseBlocks: number[],
 *       kernels: Array<{ id: number, source: string, wasm?: WasmCode }>,
 *       layouts: Array<{ id: number, kernel: number, buffers: string[], uniforms: string[] }>,
 *       blocks: Array<{ id: number, buffer: SharedArrayBuffer }>,
 *       buffers: Array<{ id: number, offset: number, dtype: 'u32' | 'i32' | 'f32', length: number, block: number }> }} Message
 *   (`block`: the host block a buffer lies in, 0 for the device's memory; host-blocks.ts)
 * @typedef {{ post(message: unknown): void }} Port
 */

/** @param {Port} port */
export function createWorker(port) {
  /** @type {Int32Array} */
  let control = new Int32Array(0);
  /** Per worker: ms spent in kernels during the last batch (the device tells its round trip from the rest). */
  /** @type {Float64Array} */
  let timings = new Float64Array(1);
  /** The device's memory: every buffer is a block of it (heap.ts). */
  /** @type {WebAssembly.Memory | undefined} */
  let memory;
  /** @type {Float64Array} */
  let commands = new Float64Array(0);
  let index = 0;
  let workers = 1;
  let seenEpoch = 0;
  /** Loads of a control slot before sleeping in Atomics.wait (the pool's choice: 0 where threads outnumber cores). */
  let spin = 0;
  let reg = 0;
  /** @type {Map<number, Function>} */
  const kernels = new Map();
  /** @type {Map<number, Layout>} */
  const layouts = new Map();
  /** @type {Map<number, Uint32Array | Int32Array | Float32Array>} */
  const buffers = new Map();
  /** Host blocks: buffers the device's memory had no room for, each a SharedArrayBuffer of its own. */
  /** @type {Map<number, SharedArrayBuffer>} */
  const blocks = new Map();

  function barrier() {
    if (workers === 1) return;
    const gen = Atomics.load(control, BAR_GEN);
    if (Atomics.add(control, BAR_COUNT, 1) === workers - 1) {
      Atomics.store(control, BAR_COUNT, 0);
      Atomics.add(control, BAR_GEN, 1);
      Atomics.notify(control, BAR_GEN);
      return;
    }
    for (let i = 0; i < spin; i++) if (Atomics.load(control, BAR_GEN) !== gen) return;
    while (Atomics.load(control, BAR_GEN) === gen) Atomics.wait(control, BAR_GEN, gen);
  }

  function runBatch() {
    let busy = 0;
    let p = 0;
    const count = commands[p++] ?? 0;
    for (let d = 0; d < count; d++) {
      const layout = layouts.get(commands[p++] ?? -1);
      const nwg = commands[p++] ?? 0;
      const gx = commands[p++] ?? nwg;
      const gy = commands[p++] ?? 1;
      const grid = [gx, gy, nwg / (gx * gy)];
      if (!layout) throw new Error('internal: dispatch of an unregistered kernel');
      const { b, u } = layout;
      for (const name of layout.buffers) b[name] = buffers.get(commands[p++] ?? -1);
      for (const name of layout.uniforms) u[name] = commands[p++] ?? 0;
      const start = Math.floor((nwg * index) / workers);
      const end = Math.floor((nwg * (index + 1)) / workers);
      if (start < end) {
        const t = performance.now();
        try {
          layout.run(b, u, start, end, nwg, grid);
        } catch (err) {
          // The first failure wins; later dispatches of the batch are skipped by every worker alike.
          Atomics.compareExchange(control, ERROR, 0, d + 1);
          port.post({
            type: 'error',
            epoch: seenEpoch,
            dispatch: d,
            message: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
          });
        }
        busy += performance.now() - t;
      }
      if (d + 1 < count) {
        barrier();
        // Only failures of dispatches up to d can be seen here (later ones happen after this barrier).
        const failed = Atomics.load(control, ERROR);
        if (failed !== 0 && failed <= d + 1) break;
      }
    }
    timings[index] = busy;
  }

  function finish() {
    if (Atomics.add(control, DONE, 1) === workers - 1) {
      Atomics.notify(control, DONE);
      if (Atomics.load(control, NOTIFY_BY_MESSAGE) === 1) port.post({ type: 'done' });
    }
  }

  /** Runs batches until one needs registrations not yet received: then returns to the event loop. */
  function loop() {
    for (;;) {
      if (Atomics.load(control, STOP) === 1) return;
      const epoch = Atomics.load(control, EPOCH);
      if (epoch === seenEpoch) {
        let changed = false;
        for (let i = 0; i < spin && !changed; i++) changed = Atomics.load(control, EPOCH) !== epoch;
        if (!changed) Atomics.wait(control, EPOCH, epoch);
        continue;
      }
      if (Atomics.load(control, REG) > reg) return;
      seenEpoch = epoch;
      try {
        runBatch();
      } finally {
        finish();
      }
    }
  }

  /** @param {Message} m */
  return function onMessage(m) {
    if (m.type === 'init') {
      control = new Int32Array(m.control);
      timings = new Float64Array(m.timings);
      memory = m.memory;
      index = m.index;
      workers = m.workers;
      spin = m.spin;
      port.post({ type: 'ready' });
    } else {
      for (const id of m.release) buffers.delete(id);
      for (const id of m.releaseBlocks) blocks.delete(id);
      for (const b of m.blocks) blocks.set(b.id, b.buffer);
      if (m.commands) commands = new Float64Array(m.commands);
      for (const k of m.kernels) {
        // The source is generated by @trident/core's JS code generator, never user text.
        try {
          kernels.set(k.id, k.wasm && memory ? wasmOrJs(k.wasm, memory, k.source, index) : jsKernel(k.source));
        } catch (err) {
          // Fail the dispatches of this kernel, not the worker (a replacement would be sent it again).
          kernels.set(k.id, () => {
            throw err;
          });
        }
      }
      for (const l of m.layouts) {
        const run = kernels.get(l.kernel);
        if (!run) throw new Error('internal: layout of an unregistered kernel');
        layouts.set(l.id, { run, buffers: l.buffers, uniforms: l.uniforms, b: {}, u: {} });
      }
      // memory.buffer now: a buffer registered after a growth lies past the end of views made before it.
      const heap = memory?.buffer;
      for (const b of m.buffers) {
        const backing = b.block === 0 ? heap : blocks.get(b.block);
        if (!backing) throw new Error('internal: a buffer in an unregistered host block');
        // (typed as ArrayBuffer: TypeScript resolves a union of typed-array constructors to their ArrayBuffer overload)
        buffers.set(b.id, new VIEW[b.dtype](/** @type {ArrayBuffer} */ (/** @type {unknown} */ (backing)), b.offset, b.length));
      }
      reg = Math.max(reg, m.reg);
    }
    loop();
  };
}

/** @param {string} source */
function jsKernel(source) {
  return /** @type {Function} */ (new Function(`"use strict"; return ${source};`)());
}

/**
 * The kernel's WebAssembly, or its JavaScript should this runtime refuse the module
 * (both compute the same results; the device decided which kernels have a module).
 * @param {WasmCode} wasm @param {WebAssembly.Memory} memory @param {string} source
 * @param {number} index this worker's index: which private-array block is its own
 */
function wasmOrJs(wasm, memory, source, index) {
  try {
    const module = wasm.module ?? new WebAssembly.Module(/** @type {BufferSource} */ (wasm.bytes));
    return instantiateWasmKernel(module, memory, wasm.params, wasm.scratch?.[index] ?? 0);
  } catch {
    return jsKernel(source);
  }
}
