/**
 * Issue 2's CPU-backend benchmark: sum-reduction of n = 2^26 u32 (default) with
 * 1 worker, 2 workers and a plain single-threaded JS loop, all in one run.
 *
 *   npm run bench:cpu-reduce [-- --log2n 26 --repeats 7 --out bench/results/cpu-reduce.json]
 *
 * Each kernel invocation sums a contiguous chunk (cache-friendly on CPUs) and adds
 * its partial with one atomicAdd. Times are wall clock around dispatch + join
 * (device.time), medians of `repeats` runs after two warm-ups.
 */
import { writeFileSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { cpuAdapter } from '@trident/backend-cpu';
import { buffer, Device, defineKernel, uniform } from '@trident/core';

const { values } = parseArgs({
  options: { log2n: { type: 'string', default: '26' }, repeats: { type: 'string', default: '7' }, out: { type: 'string' } },
});
const n = 2 ** Number(values.log2n);
const repeats = Number(values.repeats);
const INVOCATIONS = 256;

const sumChunks = defineKernel({
  name: 'bench_sum_chunks',
  workgroupSize: 1,
  params: { x: buffer('u32', 'read'), out: buffer('u32', 'atomic'), chunk: uniform('u32') },
  body: ({ x, out, chunk }, k) => {
    const acc = k.var('u32', 0, 'acc');
    const start = k.let(k.globalIndex.mul(chunk), 'start');
    k.for({ from: start, to: start.add(chunk) }, (i) => acc.set(acc.add(x.load(i))));
    out.atomicAdd(0, acc);
  },
});

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

const data = new Uint32Array(n);
for (let i = 0; i < n; i++) data[i] = Math.imul(i, 2654435761) >>> 0;

function plainLoop(a: Uint32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s = (s + (a[i] as number)) >>> 0;
  return s;
}

const expected = plainLoop(data);
const plain: number[] = [];
for (let r = 0; r < repeats + 2; r++) {
  const t0 = performance.now();
  const s = plainLoop(data);
  const ms = performance.now() - t0;
  if (s !== expected) throw new Error('plain loop is not deterministic');
  if (r >= 2) plain.push(ms);
}

async function backend(workers: number): Promise<number[]> {
  const device = new Device(await cpuAdapter.create({ workers }));
  const x = device.createBuffer('u32', data);
  const out = device.createBuffer('u32', 1);
  const times: number[] = [];
  for (let r = 0; r < repeats + 2; r++) {
    out.fill(0);
    const t = await device.time('sum', () => device.dispatch(sumChunks, { workgroups: INVOCATIONS }, { x, out, chunk: n / INVOCATIONS }));
    const got = (await out.read())[0];
    if (got !== expected) throw new Error(`wrong sum with ${workers} workers: ${got} != ${expected}`);
    if (r >= 2) times.push(t.ms);
  }
  await device.destroy();
  return times;
}

const one = await backend(1);
const two = await backend(2);
const gbps = (ms: number) => (n * 4) / (ms * 1e6);
const result = {
  benchmark: 'cpu-reduce-sum-u32',
  n,
  repeats,
  timer: 'wall',
  machine: { host: hostname(), cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
  medianMs: { plainLoop: median(plain), worker1: median(one), workers2: median(two) },
  runsMs: { plainLoop: plain, worker1: one, workers2: two },
  ratios: {
    workers2OverWorker1Speedup: median(one) / median(two),
    worker1OverPlainLoopTime: median(one) / median(plain),
  },
  gbps: { plainLoop: gbps(median(plain)), worker1: gbps(median(one)), workers2: gbps(median(two)) },
};
console.log(
  `n = 2^${values.log2n} u32, median of ${repeats}: plain loop ${result.medianMs.plainLoop.toFixed(1)} ms, ` +
    `1 worker ${result.medianMs.worker1.toFixed(1)} ms, 2 workers ${result.medianMs.workers2.toFixed(1)} ms`,
);
console.log(
  `2 workers / 1 worker speed-up ${result.ratios.workers2OverWorker1Speedup.toFixed(2)}x (target >= 1.7); ` +
    `1 worker time / plain loop ${result.ratios.worker1OverPlainLoopTime.toFixed(2)} (target <= 1.2)`,
);
if (values.out) writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
