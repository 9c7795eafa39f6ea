/**
 * Per-call latency of the public API against TensorFlow.js's webgpu backend, in one
 * process on one Dawn instance (navigator.gpu is the same Dawn `GPU`), the two
 * libraries interleaved size by size: what a user waits for when calling an
 * operation once and awaiting its result, read back to the host included.
 *
 *   reduce:  Trident `await reduce(device, x, { op: 'sum' })`          TF.js `await tf.sum(x).data()`
 *   scan:    Trident `scan(device, x, { output })` + `await output.read()`  TF.js `await tf.cumsum(x).data()`
 *   sort:    Trident `sort(device, x, { output })` + `await output.read()`  TF.js `await tf.topk(x, n).values.data()`
 *
 * All f32. Trident's scan and sort rows write into an output buffer allocated once
 * (the API's `output` option), as a caller that sorts repeatedly would; the
 * `into` rows also read into a host array allocated once (`read({ into })`); the
 * `fresh` rows let the call allocate its output and destroy it after the read.
 * Protocol, the same for both libraries: per operation and size, every run (Trident's
 * variants and the peer) warms up for at least 200 ms (and at least 5 calls), then
 * three interleaved rounds each take 3 untimed and reps / 3 timed calls of every run
 * in turn (packages/cli/src/bench/interleaved.ts): the wall-clock median of each run's timed
 * calls, each from the call to the resolved read. (Until session 8 each run's calls
 * were timed in one block, Trident's first: the first size's first row then caught
 * whatever slow spell the process started in, e.g. reduce 2^16 0.281 ms one call,
 * 0.129-0.145 in the others.) Also the GPU-timestamp time of one op where the library
 * offers it (Trident `device.time`, TF.js `tf.time().kernelMs`), for the large sizes.
 *
 *   node .gpu/latency-check.mjs [--log2 16,18,20,22,24] [--reps 21] [--out FILE]
 *
 * Prints one JSON row per measurement; with --out writes them as a JSON file that
 * `trident bench --suite h100 --latency FILE` folds into the suite's results (each row's
 * `wall` statistics become a measurement: Trident's and the TF.js peer's).
 */
import './tfjs-setup.mjs';
import '@tensorflow/tfjs-backend-webgpu';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs-core';
import { randomU32, reduce, scan, sort } from '@trident/algorithms';
import { createDevice, type Device } from 'trident';
import { interleavedMedians } from '../../packages/cli/src/bench/interleaved.ts';
import type { Stats } from '../../packages/cli/src/bench/schema.ts';
import { median } from '../../packages/cli/src/bench/stats.ts';
import { webGpuCounters } from './webgpu-counters.ts';

const { values: args } = parseArgs({
  options: {
    log2: { type: 'string', default: '16,18,20,22,24' },
    reps: { type: 'string', default: '21' },
    out: { type: 'string' },
    ops: { type: 'string', default: 'reduce,scan,sort' },
    tfjs: { type: 'boolean', default: true },
  },
});
const sizes = (args.log2 as string).split(',').map((s) => 2 ** Number(s));
const reps = Number(args.reps);
const ops = new Set((args.ops as string).split(','));

/** Rounds of the interleaved measurement: each takes reps / ROUNDS calls of every run. */
const ROUNDS = 3;

const rows: Record<string, unknown>[] = [];
function row(r: Record<string, unknown>): void {
  rows.push(r);
  console.log(JSON.stringify(r));
}
const round = (x: number) => +x.toFixed(4);

const device: Device = await createDevice({ backend: 'webgpu' });
console.log(`trident: ${device.info.adapter}`);
let tfReady = false;
if (args.tfjs) {
  try {
    tfReady = await tf.setBackend('webgpu');
    await tf.ready();
    console.log(`tfjs ${tf.version_core} backend ${tf.getBackend()}`);
  } catch (err) {
    console.log(`tfjs webgpu unavailable: ${String(err)}`);
  }
}

/** Values in [0, 2^16): f32 sums stay checkable. */
const hostInput = (n: number) => Float32Array.from(randomU32(n, n + 17), (x) => x & 0xffff);

for (const n of sizes) {
  const host = hostInput(n);
  const x = device.createBuffer('f32', host);
  const out = device.createBuffer('f32', n);
  const readBack = new Float32Array(n);
  let exact = 0;
  let max = 0;
  for (const v of host) {
    exact += v;
    max = Math.max(max, v);
  }
  const tx = tfReady ? tf.tensor1d(host, 'float32') : undefined;

  const trident: Record<string, () => Promise<number>> = {
    reduce: async () => reduce(device, x, { op: 'sum' }),
    scan: async () => {
      scan(device, x, { output: out });
      const r = await out.read({ offset: n - 1, length: 1 });
      return r[0] as number;
    },
    sort: async () => {
      sort(device, x, { output: out });
      const r = await out.read();
      return r[n - 1] as number;
    },
  };
  // Full reads for scan and sort, as TF.js's data() reads the whole tensor.
  const tridentFull: Record<string, () => Promise<unknown>> = {
    reduce: trident.reduce as () => Promise<number>,
    scan: async () => {
      scan(device, x, { output: out });
      return out.read();
    },
    sort: async () => {
      sort(device, x, { output: out });
      return out.read();
    },
    // Reads into a host array allocated once (`read({ into })`), as a caller that scans or
    // sorts the same size repeatedly would: no new 4n-byte array (and its first touch) per call.
    'scan into': async () => {
      scan(device, x, { output: out });
      return out.read({ into: readBack });
    },
    'sort into': async () => {
      sort(device, x, { output: out });
      return out.read({ into: readBack });
    },
    'scan fresh': async () => {
      const o = scan(device, x);
      const r = await o.read();
      o.destroy();
      return r;
    },
    'sort fresh': async () => {
      const o = sort(device, x).keys;
      const r = await o.read();
      o.destroy();
      return r;
    },
  };
  const peer: Record<string, () => Promise<unknown>> = tx
    ? {
        reduce: async () => {
          const y = tf.sum(tx);
          const d = await y.data();
          y.dispose();
          return d;
        },
        scan: async () => {
          const y = tf.cumsum(tx);
          const d = await y.data();
          y.dispose();
          return d;
        },
        sort: async () => {
          const { values, indices } = tf.topk(tx, n, true);
          const d = await values.data();
          values.dispose();
          indices.dispose();
          return d;
        },
      }
    : {};

  for (const op of ['reduce', 'scan', 'sort']) {
    if (!ops.has(op)) continue;
    // Correctness first (a wrong fast answer is no answer).
    const got = await trident[op]?.();
    // reduce: the sum; scan: the last prefix; sort: the last key is the maximum.
    const ok = op === 'sort' ? got === max : Math.abs((got as number) - exact) <= 1e-5 * exact + 1;
    const variants = op === 'reduce' ? [op] : [op, `${op} into`, `${op} fresh`];
    const perCall: Record<string, Record<string, number> | undefined> = {};
    for (const v of variants) {
      const fn = tridentFull[v] as () => Promise<unknown>;
      await fn();
      const before = webGpuCounters(device);
      await fn();
      const after = webGpuCounters(device);
      perCall[v] = after && before ? Object.fromEntries(Object.entries(after).map(([k, c]) => [k, c - (before[k] ?? 0)])) : undefined;
    }
    const p = peer[op];
    let okPeer = false;
    if (p) {
      const d = (await p()) as Float32Array;
      okPeer =
        op === 'sort'
          ? d.length === n && d[0] === max && (d[0] as number) >= (d[n - 1] as number)
          : Math.abs((d[d.length - 1] as number) - exact) <= 1e-5 * exact + 1;
    }
    // Trident's variants and the peer in interleaved rounds (bench/interleaved.ts).
    const runs = [...variants.map((v) => tridentFull[v] as () => Promise<unknown>), ...(p ? [p] : [])];
    const times = await interleavedMedians(runs, ROUNDS, Math.ceil(reps / ROUNDS));
    variants.forEach((v, i) => {
      const w = times[i] as Stats;
      const counts = perCall[v];
      row({
        library: 'trident',
        op: v,
        n,
        wall_ms: round(w.median),
        min_ms: round(w.min),
        max_ms: round(w.max),
        wall: w,
        ok,
        ...(counts ? { per_call: counts } : {}),
      });
    });
    if (p) {
      const w = times[variants.length] as Stats;
      row({ library: 'tfjs-webgpu', op, n, wall_ms: round(w.median), min_ms: round(w.min), max_ms: round(w.max), wall: w, ok: okPeer });
    }
  }

  // GPU time of one op (no read) for the larger sizes, where the kernels dominate.
  if (n >= 2 ** 20) {
    const gpu = async (label: string, body: () => void) => {
      for (let i = 0; i < 3; i++) await device.time(label, body);
      const ms: number[] = [];
      for (let i = 0; i < 7; i++) ms.push((await device.time(label, body)).ms);
      return median(ms);
    };
    const one = device.createBuffer('f32', 1);
    const { reduceInto } = await import('@trident/algorithms');
    if (ops.has('reduce'))
      row({
        library: 'trident',
        op: 'reduce',
        n,
        gpu_ms: round(await gpu('reduce', () => void reduceInto(device, x, { op: 'sum', output: one }))),
      });
    if (ops.has('scan'))
      row({ library: 'trident', op: 'scan', n, gpu_ms: round(await gpu('scan', () => void scan(device, x, { output: out }))) });
    if (ops.has('sort'))
      row({ library: 'trident', op: 'sort', n, gpu_ms: round(await gpu('sort', () => void sort(device, x, { output: out }))) });
    one.destroy();
    if (tx) {
      const tfGpu = async (f: () => tf.Tensor | tf.Tensor[]) => {
        const ms: number[] = [];
        for (let i = 0; i < 7; i++) {
          const t = await tf.time(() => {
            const y = f();
            for (const z of Array.isArray(y) ? y : [y]) z.dispose();
          });
          ms.push(t.kernelMs as number);
        }
        return median(ms);
      };
      if (ops.has('reduce')) row({ library: 'tfjs-webgpu', op: 'reduce', n, gpu_ms: round(await tfGpu(() => tf.sum(tx))) });
      if (ops.has('scan')) row({ library: 'tfjs-webgpu', op: 'scan', n, gpu_ms: round(await tfGpu(() => tf.cumsum(tx))) });
      if (ops.has('sort') && n <= 2 ** 22) {
        row({
          library: 'tfjs-webgpu',
          op: 'sort',
          n,
          gpu_ms: round(
            await tfGpu(() => {
              const r = tf.topk(tx, n, true);
              return [r.values, r.indices];
            }),
          ),
        });
      }
    }
  }
  tx?.dispose();
  x.destroy();
  out.destroy();
}

if (args.out) {
  writeFileSync(
    args.out,
    `${JSON.stringify(
      {
        what: 'Per-call wall-clock latency of the public API (call to resolved read, f32) against TensorFlow.js webgpu, same process, same Dawn instance, interleaved by size (bench/h100/latency-check.ts)',
        adapter: device.info.adapter,
        tfjs: tfReady ? tf.version_core : null,
        protocol: `per op and size, every run (Trident's variants, the peer) warmed up >= 200 ms and >= 5 calls, then ${ROUNDS} interleaved rounds of 3 untimed and ${Math.ceil(reps / ROUNDS)} timed awaited calls of each run: the median of each run's ${ROUNDS * Math.ceil(reps / ROUNDS)} timed calls; gpu_ms: median of 7 GPU-timestamp runs (Trident device.time, TF.js tf.time kernelMs)`,
        date: new Date().toISOString(),
        rows,
      },
      null,
      2,
    )}\n`,
  );
}
await device.destroy();
process.exit(0);
