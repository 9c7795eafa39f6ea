/**
 * H100 check of the histogram's shared formulation: 256 bins, n = 2^28 u32 values
 * (random & 255 as the suite's histogram case, and all equal: maximum contention), the plan
 * `sharedPlan` picks from caps beside variants of it (copies, unroll, workgroup
 * size, grid), every result checked against the sequential reference. GB/s counts
 * the 4 bytes read per element, as the CUB anchor's histogram line does; a
 * read-only reduce gives this run's read-bandwidth ceiling. Bundled with esbuild
 * (see /work/helper-common.md) and run as `node .gpu/hist-check.mjs`.
 */
import { histogram, histogramReference, randomU32, reduceInto } from '@trident/algorithms';
import { recordSharedHistogram, type SharedHistogramPlan, sharedPlan } from '@trident/algorithms/internal';
import { createDevice, type Device } from 'trident';
import { median as medianOf } from '../../packages/cli/src/bench/stats.ts';

/** Mean time of one `body` over a batch of `batch` back-to-back runs in one timed span. */
async function batchMs(device: Device, label: string, body: () => void, batch = 10): Promise<number> {
  const t = await device.time(label, () => {
    for (let b = 0; b < batch; b++) body();
  });
  return t.ms / batch;
}

// HIST_N: a smaller n for a local smoke run (SwiftShader), which also keeps only small grids.
const SMOKE = process.env.HIST_N !== undefined;
const N = SMOKE ? Number(process.env.HIST_N) : 2 ** 28;
const BINS = 256;
const device = await createDevice({ backend: 'webgpu' });
const caps = device.caps;
console.log(
  `device: ${device.info.adapter}; timer ${caps.timerSource}; subgroups ${caps.limits.minSubgroupSize}-${caps.limits.maxSubgroupSize}; ` +
    `workgroup storage ${caps.limits.maxComputeWorkgroupStorageSize} B`,
);

const random = randomU32(N, 7).map((x) => x & 255);
const equal = new Uint32Array(N).fill(77);
const randomBuf = device.createBuffer('u32', random);
const datasets = [
  { name: 'random&255', buf: randomBuf, ref: histogramReference(random, BINS) },
  { name: 'all-equal', buf: device.createBuffer('u32', equal), ref: histogramReference(equal, BINS) },
];
const out = device.createBuffer('u32', BINS);

const sum = device.createBuffer('u32', 1);
const readCeiling = async () => {
  const ms: number[] = [];
  for (let r = 0; r < 5; r++)
    ms.push(await batchMs(device, 'reduce', () => void reduceInto(device, randomBuf, { op: 'sum', output: sum })));
  return medianOf(ms);
};

// In the first two calls (07:42 and 07:56 UTC) each timing was one run after an idle gap:
// a read-only reduce measured ~1730 GB/s there against CUB's ~3030 in the same call, and
// one kernel measured 1090-1540 GB/s depending on where in the script it ran. So: a
// warm-up of sustained work, batches of 10 back-to-back runs per timing, and variants
// interleaved round by round, each reported as its median over the rounds. The third
// call (08:19 UTC, this script) is in bench/h100/hist-check-2026-11-22.json.
const base = sharedPlan(caps, N / 4, BINS) as SharedHistogramPlan;
const warm = Date.now();
while (Date.now() - warm < (SMOKE ? 200 : 4000))
  await batchMs(device, 'warm-up', () => recordSharedHistogram(device, randomBuf, out, BINS, base), 50);
const ceilingBefore = await readCeiling();
console.log(
  `read ceiling (reduce sum u32, after warm-up): ${ceilingBefore.toFixed(4)} ms ${((4 * N) / ceilingBefore / 1e6).toFixed(1)} GB/s`,
);

const variants: Array<[string, SharedHistogramPlan]> = [['default', base]];
const add = (label: string, plan: Omit<SharedHistogramPlan, 'unroll' | 'tiled'> & Partial<SharedHistogramPlan>) =>
  variants.push([label, { unroll: 4, tiled: false, ...plan }]);
add('wg256 c8 g2048', { workgroupSize: 256, copies: 8, workgroups: 2048 });
add('wg256 c8 g1056', { workgroupSize: 256, copies: 8, workgroups: 1056 });
add('wg512 c8 g1056', { workgroupSize: 512, copies: 8, workgroups: 1056 });
add('wg512 c16 g528', { workgroupSize: 512, copies: 16, workgroups: 528 });
add('wg512 c16 g1056 tiled', { workgroupSize: 512, copies: 16, workgroups: 1056, tiled: true });
add('wg1024 c8 g528', { workgroupSize: 1024, copies: 8, workgroups: 528 });
add('wg1024 c16 g264', { workgroupSize: 1024, copies: 16, workgroups: 264 });
add('wg1024 c16 g528', { workgroupSize: 1024, copies: 16, workgroups: 528 });
add('wg1024 c16 g528 tiled', { workgroupSize: 1024, copies: 16, workgroups: 528, tiled: true });
add('wg1024 c16 g512 tiled', { workgroupSize: 1024, copies: 16, workgroups: 512, tiled: true });
add('wg1024 c16 g1056 tiled', { workgroupSize: 1024, copies: 16, workgroups: 1056, tiled: true });
add('wg1024 c16 g264 tiled unroll8', { workgroupSize: 1024, copies: 16, workgroups: 264, tiled: true, unroll: 8 });
add('wg1024 c16 g528 tiled unroll2', { workgroupSize: 1024, copies: 16, workgroups: 528, tiled: true, unroll: 2 });
add('wg1024 c32 g264', { workgroupSize: 1024, copies: 32, workgroups: 264 });
add('wg1024 c32 g528', { workgroupSize: 1024, copies: 32, workgroups: 528 });
add('wg1024 c32 g528 tiled', { workgroupSize: 1024, copies: 32, workgroups: 528, tiled: true });

if (SMOKE) variants.splice(0, variants.length, ...variants.filter(([, p]) => p.workgroups * p.workgroupSize <= 2 ** 18));
const ROUNDS = SMOKE ? 2 : 5;
const times = new Map<string, number[]>();
const wrong = new Set<string>();
for (let round = 0; round < ROUNDS; round++) {
  for (const [label, plan] of variants) {
    for (const d of datasets) {
      const key = `${label}|${d.name}`;
      try {
        const ms = await batchMs(device, key, () => recordSharedHistogram(device, d.buf, out, BINS, plan));
        times.set(key, [...(times.get(key) ?? []), ms]);
        if (round === 0) {
          const got = await out.read();
          if (!got.every((c, i) => c === d.ref[i])) wrong.add(key);
        }
      } catch (e) {
        wrong.add(`${key}: ${(e as Error).message.slice(0, 120)}`);
      }
    }
  }
}
const api: Record<string, number> = {};
for (const d of datasets) {
  const ms: number[] = [];
  for (let r = 0; r < ROUNDS; r++)
    ms.push(await batchMs(device, 'histogram()', () => void histogram(device, d.buf, { bins: BINS, output: out })));
  api[d.name] = medianOf(ms);
  if (!(await out.read()).every((c, i) => c === d.ref[i])) wrong.add(`histogram() ${d.name}`);
}
const ceilingAfter = await readCeiling();

const gbps = (ms: number) => ((4 * N) / ms / 1e6).toFixed(0);
const rows: Array<Record<string, unknown>> = [];
for (const [label, plan] of variants) {
  const row: Record<string, unknown> = { variant: label, ...plan };
  for (const d of datasets) {
    const ts = times.get(`${label}|${d.name}`) ?? [];
    if (ts.length) row[d.name] = `${gbps(medianOf(ts))} GB/s (${medianOf(ts).toFixed(4)} ms; rounds ${ts.map(gbps).join(' ')})`;
  }
  rows.push(row);
  console.log(JSON.stringify(row));
}
for (const d of datasets)
  console.log(`histogram() ${d.name}: ${gbps(api[d.name] as number)} GB/s (${(api[d.name] as number).toFixed(4)} ms)`);
console.log(`read ceiling after: ${ceilingAfter.toFixed(4)} ms ${gbps(ceilingAfter)} GB/s; wrong: ${[...wrong].join('; ') || 'none'}`);
console.log(`RESULTS ${JSON.stringify({ ceilingBefore, ceilingAfter, api, rows, wrong: [...wrong] })}`);
await device.destroy();
process.exit(0);
