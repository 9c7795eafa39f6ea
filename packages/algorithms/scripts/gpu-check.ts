/**
 * A real-GPU check of the algorithm suite's WebGPU formulations at the sizes
 * (n = 2^28, N-body n = 262144): correctness against the sequential references (or,
 * for 2^28-key sorts, sortedness plus a multiset checksum) and GPU-timestamp
 * throughput, median of several runs. Not the project's benchmark (that is the bench
 * harness); bundled with esbuild and run on the GPU machine beside the CUB / CUDA
 * anchors (bench/results/README.md has the command):  node .gpu/alg-check.mjs
 *
 * Prints one JSON row per measurement and, last, `RESULTS [...]`.
 */
import {
  histogram,
  histogramReference,
  nbody,
  radixSort,
  reduceInto,
  reduceReference,
  scan,
  scanReference,
  zcopy,
  zfill,
} from '@trident/algorithms';
import { type Buffer, createDevice, type Device } from 'trident';
import { randomU32 } from '../src/reference/random.ts';

async function median(device: Device, label: string, body: () => void, reps = 7): Promise<number> {
  await device.time(label, body); // warm-up (compiles, allocates temporaries)
  const ms: number[] = [];
  for (let r = 0; r < reps; r++) ms.push((await device.time(label, body)).ms);
  ms.sort((a, b) => a - b);
  return ms[Math.floor(reps / 2)] as number;
}

const device = await createDevice({ backend: 'webgpu' });
console.log(`device: ${device.info.adapter}; timer ${device.caps.timerSource}; features ${[...device.caps.features].join(',')}`);
const results: Record<string, unknown>[] = [];
const report = (name: string, n: number, ms: number, bytes: number, ok: boolean, extra: Record<string, unknown> = {}) => {
  const row = { name, n, ms: +ms.toFixed(4), GBps: bytes ? +(bytes / ms / 1e6).toFixed(1) : undefined, ok, ...extra };
  results.push(row);
  console.log(JSON.stringify(row));
};

/** Every 4099th element and the last agree. */
function sampledEqual(got: ArrayLike<number>, want: ArrayLike<number>, close = (a: number, b: number) => a === b): boolean {
  if (got.length !== want.length) return false;
  for (let i = 0; i < got.length; i += 4099) if (!close(got[i] as number, want[i] as number)) return false;
  return got.length === 0 || close(got[got.length - 1] as number, want[want.length - 1] as number);
}

const N = 2 ** 28;
const data = randomU32(N, 7);
const input = device.createBuffer('u32', data);
const out = device.createBuffer('u32', N);

// ---- zcopy / zfill / reduce ----
report(
  'zcopy u32',
  N,
  await median(device, 'zcopy', () => void zcopy(device, input, { output: out })),
  8 * N,
  sampledEqual(await out.read(), data),
);
report(
  'zfill u32',
  N,
  await median(device, 'zfill', () => zfill(device, out, 3)),
  4 * N,
  (await out.read({ offset: N - 1, length: 1 }))[0] === 3,
);
const one = device.createBuffer('u32', 1);
const reduceU32 = async (op: 'sum' | 'max', label: string) => {
  const ms = await median(device, label, () => void reduceInto(device, input, { op, output: one }));
  report(label, N, ms, 4 * N, (await one.read())[0] === reduceReference(data, op));
};
await reduceU32('max', 'reduce max u32');
await reduceU32('sum', 'reduce sum u32');
const fData = new Float32Array(N);
for (let i = 0; i < N; i++) fData[i] = (data[i] as number) / 2 ** 32;
const f = device.createBuffer('f32', fData);
const fOne = device.createBuffer('f32', 1);
const tF = await median(device, 'reduce f32', () => void reduceInto(device, f, { op: 'sum', output: fOne }));
const fRef = reduceReference(fData, 'sum');
report('reduce sum f32', N, tF, 4 * N, Math.abs(((await fOne.read())[0] as number) - fRef) <= 1e-4 * fRef);
await reduceU32('max', 'reduce max u32 (again, after f32)');

// ---- scan ----
const scanned = device.createBuffer('u32', N);
report(
  'scan inclusive u32',
  N,
  await median(device, 'scan', () => void scan(device, input, { output: scanned })),
  8 * N,
  sampledEqual(await scanned.read(), scanReference(data, false)),
);
report(
  'scan exclusive u32',
  N,
  await median(device, 'scan excl', () => void scan(device, input, { output: scanned, exclusive: true })),
  8 * N,
  sampledEqual(await scanned.read(), scanReference(data, true)),
);
scanned.destroy();
const fScanned = device.createBuffer('f32', N);
const fScanRef = scanReference(fData, false);
report(
  'scan inclusive f32',
  N,
  await median(device, 'scan f32', () => void scan(device, f, { output: fScanned })),
  8 * N,
  // Sums of 2^28 values in [0, 1): f32 keeps ~7 digits; the order differs from the reference's.
  sampledEqual(await fScanned.read(), fScanRef, (a, b) => Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(b))),
);
fScanned.destroy();
f.destroy();

// ---- histogram ----
const hist = device.createBuffer('u32', 256);
const histogramRow = async (label: string, values: Uint32Array) => {
  const buf = device.createBuffer('u32', values);
  const ms = await median(device, label, () => void histogram(device, buf, { bins: 256, output: hist }));
  const want = histogramReference(values, 256);
  report(
    label,
    N,
    ms,
    4 * N,
    (await hist.read()).every((c, i) => c === want[i]),
  );
  buf.destroy();
};
await histogramRow(
  'histogram 256 bins (random)',
  data.map((x) => x & 255),
);
await histogramRow('histogram 256 bins (all equal)', new Uint32Array(N).fill(17));
out.destroy();

// ---- radix sort ----
/** Sorted ascending, and the same multiset as `src` (sum and xor), without a host sort. */
function sortedSameMultiset(got: Uint32Array, src: Uint32Array): boolean {
  let ok = got.length === src.length;
  let sum = 0;
  let xor = 0;
  let sumIn = 0;
  let xorIn = 0;
  for (let i = 0; i < got.length && ok; i++) {
    if (i > 0 && (got[i - 1] as number) > (got[i] as number)) ok = false;
    sum = (sum + (got[i] as number)) >>> 0;
    xor ^= got[i] as number;
    sumIn = (sumIn + (src[i] as number)) >>> 0;
    xorIn ^= src[i] as number;
  }
  return ok && sum === sumIn && xor === xorIn;
}
const sortRow = async (m: number, pairs: boolean) => {
  const src = data.subarray(0, m);
  const keys = device.createBuffer('u32', src);
  // Values are the original positions: the check below proves the pairing and stability.
  const values = pairs
    ? device.createBuffer(
        'u32',
        Uint32Array.from({ length: m }, (_, i) => i),
      )
    : undefined;
  let result: { keys: Buffer<'u32'>; values?: Buffer<'u32'> } | undefined;
  const label = `radix sort u32 ${pairs ? 'pairs' : 'keys'}`;
  const ms = await median(
    device,
    label,
    () => {
      result?.keys.destroy();
      result?.values?.destroy();
      result = values ? radixSort(device, keys, { values }) : radixSort(device, keys);
    },
    5,
  );
  const r = result as { keys: Buffer<'u32'>; values?: Buffer<'u32'> };
  const got = await r.keys.read();
  let ok = sortedSameMultiset(got, src);
  if (r.values) {
    const idx = await r.values.read();
    for (let i = 0; i < m && ok; i++) {
      const j = idx[i] as number;
      ok = src[j] === got[i] && (i === 0 || got[i - 1] !== got[i] || (idx[i - 1] as number) < j);
    }
    r.values.destroy();
  }
  r.keys.destroy();
  keys.destroy();
  values?.destroy();
  report(label, m, ms, 0, ok, { Gkeys: +(m / ms / 1e6).toFixed(2) });
};
await sortRow(2 ** 24, false);
await sortRow(N, false);
await sortRow(N, true);
input.destroy();

// ---- N-body ----
const B = 262144;
const bodyData = new Float32Array(4 * B);
randomU32(4 * B, 3).forEach((x, e) => {
  bodyData[e] = e % 4 === 3 ? 1 / B : x / 2 ** 32 - 0.5;
});
const bodies = device.createBuffer('f32', bodyData);
const tBody = await median(device, 'nbody', () => void nbody(device, bodies, { steps: 1, dt: 1e-3 }), 3);
// One step evaluates forces twice (initial + after the drift).
report('nbody 1 step', B, tBody, 0, true, { GFLOPs: +((2 * B * B * 20) / tBody / 1e6).toFixed(0) });
console.log(`RESULTS ${JSON.stringify(results)}`);
await device.destroy();
process.exit(0);
