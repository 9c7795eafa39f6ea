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
const variants: Array<[string, SharedHistogramPlan]> = [['default', base]];
const add = (label: string, change: Partial<SharedHistogramPlan>) => variants.push([label, { ...base, ...change }]);
// First call (07:42 UTC): copies=32 of 256 bins per 256 invocations ran at ~500 GB/s, copies 1-8 at
// 1100-1550; 2048 workgroups beat 1024. Around the best of it here.
for (const workgroups of [528, 792, 1056, 1320, 1584, 2048, 2112, 3168, 4096, 8192]) add(`groups=${workgroups}`, { workgroups });
for (const workgroups of [528, 1024, 1056, 2048, 2112, 4096]) add(`tiled groups=${workgroups}`, { workgroups, tiled: true });
for (const unroll of [2, 8]) {
  add(`groups=2048 unroll=${unroll}`, { workgroups: 2048, unroll });
  add(`tiled groups=2048 unroll=${unroll}`, { workgroups: 2048, unroll, tiled: true });
}
for (const copies of [1, 2, 4, 16]) add(`groups=2048 copies=${copies}`, { workgroups: 2048, copies });
add('wg=512 groups=1024', { workgroupSize: 512, workgroups: 1024 });
add('wg=512 groups=1056', { workgroupSize: 512, workgroups: 1056 });
add('wg=1024 groups=512', { workgroupSize: 1024, workgroups: 512 });
add('wg=1024 groups=528', { workgroupSize: 1024, workgroups: 528 });
add('wg=1024 copies=32 groups=512', { workgroupSize: 1024, copies: 32, workgroups: 512 });
add('wg=1024 copies=16 groups=512 tiled', { workgroupSize: 1024, copies: 16, workgroups: 512, tiled: true });

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
