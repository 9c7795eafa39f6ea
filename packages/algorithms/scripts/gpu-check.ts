/**
 * A quick real-GPU check of the algorithm suite's WebGPU formulations: correctness
 * at large n against the sequential references, and GPU-timestamp throughput.
 * Not the project's benchmark (that is the bench harness); bundled with esbuild
 * and run on the GPU machine:  node .gpu/alg-check.mjs
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
import { createDevice, type Device } from 'trident';
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
  const row = { name, n, ms: +ms.toFixed(4), GBps: +(bytes / ms / 1e6).toFixed(1), ok, ...extra };
  results.push(row);
  console.log(JSON.stringify(row));
};

const N = 2 ** 28;
const data = randomU32(N, 7);
const input = device.createBuffer('u32', data);
const out = device.createBuffer('u32', N);
report('zcopy u32', N, await median(device, 'zcopy', () => void zcopy(device, input, { output: out })), 8 * N, true);
report('zfill u32', N, await median(device, 'zfill', () => zfill(device, out, 3)), 4 * N, true);
const sumOut = device.createBuffer('u32', 1);
const tSum = await median(device, 'reduce', () => void reduceInto(device, input, { op: 'sum', output: sumOut }));
report('reduce sum u32', N, tSum, 4 * N, (await sumOut.read())[0] === reduceReference(data, 'sum'));
const maxOut = device.createBuffer('u32', 1);
const tMax = await median(device, 'reduce max', () => void reduceInto(device, input, { op: 'max', output: maxOut }));
report('reduce max u32', N, tMax, 4 * N, (await maxOut.read())[0] === reduceReference(data, 'max'));
const fData = new Float32Array(N);
for (let i = 0; i < N; i++) fData[i] = (data[i] as number) / 2 ** 32;
const f = device.createBuffer('f32', fData);
const fOut = device.createBuffer('f32', 1);
report('reduce sum f32', N, await median(device, 'reduce f32', () => void reduceInto(device, f, { op: 'sum', output: fOut })), 4 * N, true);
f.destroy();
const scanned = device.createBuffer('u32', N);
const tScan = await median(device, 'scan', () => void scan(device, input, { output: scanned }));
const s = await scanned.read();
const sref = scanReference(data, false) as Uint32Array;
let scanOk = s.length === sref.length;
for (let i = 0; i < N && scanOk; i += 4099) scanOk = s[i] === sref[i];
scanOk = scanOk && s[N - 1] === sref[N - 1];
report('scan inclusive u32', N, tScan, 8 * N, scanOk);
scanned.destroy();
const hist = device.createBuffer('u32', 256);
const bytesIn = device.createBuffer(
  'u32',
  data.map((x) => x & 255),
);
const tHist = await median(device, 'histogram', () => void histogram(device, bytesIn, { bins: 256, output: hist }));
const h = await hist.read();
const href = histogramReference(
  data.map((x) => x & 255),
  256,
);
report(
  'histogram 256 bins',
  N,
  tHist,
  4 * N,
  h.every((c, i) => c === href[i]),
);
bytesIn.destroy();
out.destroy();
const M = 2 ** 26;
const keys = device.createBuffer('u32', data.subarray(0, M));
let sorted: ReturnType<typeof radixSort<'u32'>> | undefined;
const tSort = await median(
  device,
  'radix',
  () => {
    sorted?.keys.destroy();
    sorted = radixSort(device, keys);
  },
  3,
);
const got = await (sorted as ReturnType<typeof radixSort<'u32'>>).keys.read();
// Sorted, and the same multiset (sum and xor), without a host sort of 2^26 keys.
let sortOk = got.length === M;
let sum = 0;
let xor = 0;
let sumIn = 0;
let xorIn = 0;
for (let i = 0; i < M; i++) {
  if (i > 0 && (got[i - 1] as number) > (got[i] as number)) sortOk = false;
  sum = (sum + (got[i] as number)) >>> 0;
  xor ^= got[i] as number;
  sumIn = (sumIn + (data[i] as number)) >>> 0;
  xorIn ^= data[i] as number;
}
sortOk = sortOk && sum === sumIn && xor === xorIn;
report('radix sort u32 keys', M, tSort, 0, sortOk, { Gkeys: +(M / tSort / 1e6).toFixed(2) });
keys.destroy();
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
