/**
 * Issue 10's plain-JS ceiling for the chunked CPU formulations: reduce (sum),
 * histogram (256 bins) and compact (half kept) of n u32 (default 2^24) through the
 * public API on a CPU device of 2 workers, beside the same work done by plain JS
 * loops in two worker threads of their own over the same SharedArrayBuffers (the
 * machine's own 2-thread ceiling), all in one run.
 *
 *   npm run bench:cpu-hist-compact [-- --log2n 24 --rounds 9 --ops sum,histogram,compact --out FILE.json]
 *
 * The plain loops, per thread over its contiguous half: sum, a loop into a private
 * Uint32Array(256) (the main thread adds the two), and compaction in two rounds
 * (each half counts its kept flags; the main thread takes the offsets and
 * allocates the output, a fresh SharedArrayBuffer as `compact` returns a fresh
 * buffer; each half writes its kept elements in order), both rounds branch-free
 * as in compact-chunked.ts: with random flags that is the fastest plain loop found
 * (1.5-2x an `if (flag)` loop), so the ceiling is not a weak one. Values, bins and
 * flags are hashes of the index (random-looking: no pattern for the branch
 * predictor). Times are wall clock
 * around the call and its result (the backend: the awaited call, or the recorded
 * histogram and a flush). Every measurement runs in each round, interleaved, after
 * two warm-up rounds, so that the machine's drift hits them alike; the report gives
 * medians and the median of the per-round ratios (plain / Trident = the share of
 * the ceiling reached).
 */
import { writeFileSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { compact, histogram, reduce } from '@trident/algorithms';
import { cpuAdapter } from '@trident/backend-cpu';
import { Device } from '@trident/core';
import { median } from '../packages/cli/src/bench/stats.ts';

const { values } = parseArgs({
  options: {
    log2n: { type: 'string', default: '24' },
    rounds: { type: 'string', default: '9' },
    ops: { type: 'string', default: 'sum,histogram,compact' },
    out: { type: 'string' },
  },
});
const n = 2 ** Number(values.log2n);
const rounds = Number(values.rounds);
const WARM_UP = 2;
const BINS = 256;

const shared = (length: number) => new Uint32Array(new SharedArrayBuffer(length * 4));
const data = shared(n);
const bins = shared(n);
const flags = shared(n);
/** A 32-bit hash of i (murmur3's finaliser): flags and bins without patterns a branch predictor could learn. */
function mix(i: number): number {
  let h = Math.imul(i, 0x9e3779b1);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
for (let i = 0; i < n; i++) {
  data[i] = mix(i);
  bins[i] = mix(i + n) & (BINS - 1);
  flags[i] = mix(i + 2 * n) & 1;
}
let expectedSum = 0;
const expectedHist = new Uint32Array(BINS);
const expectedKept: number[] = [];
for (let i = 0; i < n; i++) {
  expectedSum = (expectedSum + (data[i] as number)) >>> 0;
  (expectedHist[bins[i] as number] as number)++;
  if (flags[i] !== 0) expectedKept.push(data[i] as number);
}

/** Plain JavaScript in worker threads (no loader), over the same SharedArrayBuffers. */
const PLAIN = `
const { parentPort, workerData } = require('node:worker_threads');
const [data, bins, flags] = workerData.map((b) => new Uint32Array(b));
function sum(lo, hi) { let s = 0; for (let i = lo; i < hi; i++) s = (s + data[i]) >>> 0; return s; }
function hist(lo, hi) { const h = new Uint32Array(${BINS}); for (let i = lo; i < hi; i++) h[bins[i]]++; return h; }
// Branch-free (random flags mispredict half the time): (f | -f) >>> 31 is 1 exactly when f != 0.
function count(lo, hi) { let c = 0; for (let i = lo; i < hi; i++) { const f = flags[i]; c += (f | -f) >>> 31; } return c; }
function write(lo, hi, out, at, last) {
  const o = new Uint32Array(out);
  for (let i = lo; i < hi && at < last; i++) { o[at] = data[i]; const f = flags[i]; at += (f | -f) >>> 31; }
  return at;
}
parentPort.on('message', ([op, lo, hi, out, at, last]) => {
  if (op === 'sum') parentPort.postMessage(sum(lo, hi));
  else if (op === 'hist') parentPort.postMessage(hist(lo, hi));
  else if (op === 'count') parentPort.postMessage(count(lo, hi));
  else parentPort.postMessage(write(lo, hi, out, at, last));
});
`;
const threads = [0, 1].map(() => new Worker(PLAIN, { eval: true, workerData: [data.buffer, bins.buffer, flags.buffer] }));
function ask<T>(w: Worker, message: unknown[]): Promise<T> {
  return new Promise((resolve) => {
    w.once('message', resolve);
    w.postMessage(message);
  });
}
const halves: Array<[number, number]> = [
  [0, n / 2],
  [n / 2, n],
];
const both = <T>(op: string, extra: (t: number) => unknown[] = () => []) =>
  Promise.all(threads.map((w, t) => ask<T>(w, [op, ...(halves[t] as [number, number]), ...extra(t)])));

function check(what: string, ok: boolean): void {
  if (!ok) throw new Error(`${what} gave a wrong result`);
}
function sameArray(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
async function timed(body: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await body();
  return performance.now() - t;
}

const plain = {
  sum: () =>
    timed(async () => {
      const parts = await both<number>('sum');
      check('plain sum', parts.reduce((s, v) => (s + v) >>> 0, 0) === expectedSum);
    }),
  histogram: () =>
    timed(async () => {
      const [a, b] = (await both<Uint32Array>('hist')) as [Uint32Array, Uint32Array];
      const h = new Uint32Array(BINS);
      for (let i = 0; i < BINS; i++) h[i] = (a[i] as number) + (b[i] as number);
      check('plain histogram', sameArray(h, expectedHist));
    }),
  compact: async () => {
    let out: Uint32Array | undefined;
    const ms = await timed(async () => {
      const [c0, c1] = (await both<number>('count')) as [number, number];
      const sab = new SharedArrayBuffer((c0 + c1) * 4);
      await both<number>('write', (t) => (t === 0 ? [sab, 0, c0] : [sab, c0, c0 + c1]));
      out = new Uint32Array(sab);
    });
    check('plain compact', out !== undefined && sameArray(out, expectedKept));
    return ms;
  },
};

const device = new Device(await cpuAdapter.create({ workers: 2 }));
const dData = device.createBuffer('u32', data);
const dBins = device.createBuffer('u32', bins);
const dFlags = device.createBuffer('u32', flags);
const dHist = device.createBuffer('u32', BINS);
const trident = {
  sum: () => timed(async () => check('reduce', (await reduce(device, dData, { op: 'sum' })) === expectedSum)),
  histogram: async () => {
    const ms = await timed(async () => {
      histogram(device, dBins, { bins: BINS, output: dHist });
      await device.flush();
    });
    check('histogram', sameArray(await dHist.read(), expectedHist));
    return ms;
  },
  compact: async () => {
    let result: Awaited<ReturnType<typeof compact<'u32'>>> | undefined;
    const ms = await timed(async () => {
      result = await compact(device, dData, dFlags);
      await device.flush();
    });
    check('compact', result !== undefined && result.count === expectedKept.length && sameArray(await result.output.read(), expectedKept));
    result?.output.destroy();
    return ms;
  },
};

type Op = keyof typeof plain;
const OPS = (values.ops as string).split(',') as Op[];
for (const op of OPS) if (!(op in plain)) throw new Error(`unknown op ${op}: sum, histogram or compact`);
const times = Object.fromEntries(OPS.map((op) => [op, { plain2Threads: [] as number[], trident2Workers: [] as number[] }])) as Record<
  Op,
  { plain2Threads: number[]; trident2Workers: number[] }
>;
for (let r = 0; r < WARM_UP + rounds; r++) {
  for (const op of OPS) {
    const p = await plain[op]();
    const t = await trident[op]();
    if (r < WARM_UP) continue;
    times[op].plain2Threads.push(p);
    times[op].trident2Workers.push(t);
  }
}
await Promise.all([device.destroy(), ...threads.map((w) => w.terminate())]);

const result = {
  benchmark: 'cpu-hist-compact-ceiling',
  n,
  rounds,
  timer: 'wall',
  machine: { host: hostname(), cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
  medianMs: Object.fromEntries(
    OPS.map((op) => [op, { plain2Threads: median(times[op].plain2Threads), trident2Workers: median(times[op].trident2Workers) }]),
  ),
  /** Median over rounds of plain time / Trident time: the share of the 2-thread plain-JS ceiling reached (target >= 0.7). */
  shareOfCeiling: Object.fromEntries(
    OPS.map((op) => [op, median(times[op].plain2Threads.map((p, i) => p / (times[op].trident2Workers[i] as number)))]),
  ),
  runsMs: times,
};
for (const op of OPS) {
  const m = result.medianMs[op] as { plain2Threads: number; trident2Workers: number };
  console.log(
    `${op} n = 2^${values.log2n}: plain 2 threads ${m.plain2Threads.toFixed(1)} ms, Trident cpu 2 workers ${m.trident2Workers.toFixed(1)} ms, ` +
      `share of ceiling (median of per-round ratios) ${((result.shareOfCeiling[op] as number) * 100).toFixed(0)}%`,
  );
}
if (values.out) writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
