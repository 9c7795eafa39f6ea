/**
 * H100 check of the histogram's shared formulation: 256 bins, n = 2^28 u32 values
 * (random & 255 as in gpu-check.ts, and all equal: maximum contention), the plan
 * `sharedPlan` picks from caps beside variants of it (copies, unroll, workgroup
 * size, grid), every result checked against the sequential reference. GB/s counts
 * the 4 bytes read per element, as the CUB anchor's histogram line does; a
 * read-only reduce gives this run's read-bandwidth ceiling. Bundled with esbuild
 * (see /work/helper-common.md) and run as `node .gpu/hist-check.mjs`.
 */
import { histogramReference, reduceInto } from '@trident/algorithms';
import { createDevice, type Device } from 'trident';
import { recordSharedHistogram, type SharedHistogramPlan, sharedPlan } from '../../packages/algorithms/src/histogram.ts';
import { randomU32 } from '../../packages/algorithms/src/reference/random.ts';

async function median(device: Device, label: string, body: () => void, reps = 9): Promise<number> {
  await device.time(label, body); // warm-up: compiles the kernel
  const ms: number[] = [];
  for (let r = 0; r < reps; r++) ms.push((await device.time(label, body)).ms);
  ms.sort((a, b) => a - b);
  return ms[Math.floor(reps / 2)] as number;
}

const N = Number(process.env.HIST_N ?? 2 ** 28); // HIST_N: a smaller n for a local smoke run
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
const tRead = await median(device, 'reduce', () => void reduceInto(device, randomBuf, { op: 'sum', output: sum }));
console.log(`read ceiling (reduce sum u32): ${tRead.toFixed(4)} ms ${((4 * N) / tRead / 1e6).toFixed(1)} GB/s`);

const base = sharedPlan(caps, N / 4, BINS) as SharedHistogramPlan;
const grid = (wg: number) => Math.max(1, Math.round((base.workgroups * base.workgroupSize) / wg));
const variants: Array<[string, SharedHistogramPlan]> = [['default', base]];
for (const copies of [1, 2, 4, 8, 16, 32]) if (copies !== base.copies) variants.push([`copies=${copies}`, { ...base, copies }]);
for (const unroll of [1, 2, 8]) if (unroll !== base.unroll) variants.push([`unroll=${unroll}`, { ...base, unroll }]);
for (const wg of [128, 512, 1024]) {
  variants.push([`wg=${wg}`, { ...base, workgroupSize: wg, workgroups: grid(wg) }]);
  variants.push([`wg=${wg} copies=8`, { ...base, workgroupSize: wg, workgroups: grid(wg), copies: 8 }]);
}
for (const workgroups of [132, 264, 528, 2048, 4096]) variants.push([`groups=${workgroups}`, { ...base, workgroups }]);
variants.push(['groups=528 copies=8', { ...base, workgroups: 528, copies: 8 }]);
variants.push(['groups=2048 copies=8', { ...base, workgroups: 2048, copies: 8 }]);

const rows: Array<Record<string, unknown>> = [];
for (const [label, plan] of variants) {
  const row: Record<string, unknown> = { variant: label, ...plan };
  for (const d of datasets) {
    try {
      const ms = await median(device, label, () => recordSharedHistogram(device, d.buf, out, BINS, plan));
      const got = await out.read();
      row[d.name] = `${((4 * N) / ms / 1e6).toFixed(0)} GB/s (${ms.toFixed(4)} ms)${got.every((c, i) => c === d.ref[i]) ? '' : ' WRONG'}`;
    } catch (e) {
      row[d.name] = `error: ${(e as Error).message.slice(0, 120)}`;
    }
  }
  rows.push(row);
  console.log(JSON.stringify(row));
}
console.log(`RESULTS ${JSON.stringify({ readCeilingMs: tRead, base, rows })}`);
await device.destroy();
process.exit(0);
