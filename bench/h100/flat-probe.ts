/**
 * Why zcopy and scan lose throughput past 2^29 elements (0.90x and 0.88x of their 2^28 figure
 * at 2^31, flat at 2^29): the array's size, or how many bindings it spans? n = 2^28 (argument:
 * log2 n) elements copied, scanned and summed through the public functions on devices whose
 * binding limit puts the arrays in 1, 2, 3 and 5 bindings (the H100's default binding at 2^28,
 * 2^29, 2^30 and 2^31 elements: the same data, the same traffic), each split device under the
 * forms a split access may take (device options webgpu.segmentLoads and webgpu.segmentStores).
 * GPU medians under sustained load; every result checked once.
 *
 *   node .gpu/flat-probe.mjs [log2 n]   (after bash bench/h100/run.sh pack)
 */
import { randomU32, reduceInto, reduceReference, scan, scanReference, zcopy } from '@trident/algorithms';
import { createDevice, type Device } from 'trident';
import { sustainedMedian } from '../../packages/cli/src/bench/sustained.ts';

type Loads = 'switch' | 'branches' | 'select';
type Stores = 'switch' | 'branches';
interface Config {
  readonly binding?: number;
  readonly segmentLoads?: Loads;
  readonly segmentStores?: Stores;
}

const n = 2 ** Number(process.argv[2] ?? 28);
const bytes = 4 * n;
// Binding limits (multiples of 256) that split an n-element array into about 2, 3 and 5 bindings.
const split = (parts: number) => Math.floor(bytes / (parts - 1) / 256) * 256;
const forms: Array<[Loads, Stores]> = [
  ['switch', 'switch'],
  ['branches', 'switch'],
  ['switch', 'branches'],
  ['branches', 'branches'],
  ['select', 'branches'],
];
const configs: Config[] = [
  {},
  { binding: split(2) },
  ...[3, 5].flatMap((parts) => forms.map(([segmentLoads, segmentStores]) => ({ binding: split(parts), segmentLoads, segmentStores }))),
];

const host = randomU32(n, 11);
// Small values, so the scan's u32 sums stay exact and the check is cheap.
for (let i = 0; i < n; i++) host[i] = (host[i] as number) & 0xff;
const wantScan = scanReference(host, false) as Uint32Array;
const wantSum = reduceReference(host, 'sum');
const rows: Record<string, unknown>[] = [];

async function ops(device: Device, config: Config): Promise<void> {
  const src = device.createBuffer('u32', host);
  const dst = device.createBuffer('u32', n);
  const sum = device.createBuffer('u32', 1);
  const cases: Array<[string, () => void, () => Promise<boolean>]> = [
    ['zcopy', () => void zcopy(device, src, { output: dst }), async () => equal(await dst.read(), host)],
    ['scan inclusive', () => void scan(device, src, { output: dst }), async () => equal(await dst.read(), wantScan)],
    ['reduce sum', () => void reduceInto(device, src, { op: 'sum', output: sum }), async () => (await sum.read())[0] === wantSum >>> 0],
  ];
  for (const [op, run, check] of cases) {
    run();
    const ok = await check();
    const ms = await sustainedMedian(device, op, run, { reps: 5 });
    const row = {
      op,
      n,
      bindings: bindingsOf(config.binding ?? device.caps.limits.maxStorageBufferBindingSize),
      binding: config.binding ?? 'default',
      loads: config.segmentLoads ?? 'default',
      stores: config.segmentStores ?? 'default',
      ms: +ms.toFixed(4),
      ok,
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
  src.destroy();
  dst.destroy();
  sum.destroy();
}

/** The bindings an n-element array takes: segments of the WebGPU device's size, the spare element in the last. */
function bindingsOf(binding: number): number {
  const per = Math.floor((binding - 16) / 48) * 12;
  return Math.ceil((n + 1) / per);
}

function equal(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

for (const config of configs) {
  const webgpu = {
    ...(config.binding ? { maxStorageBufferBindingSize: config.binding } : {}),
    ...(config.segmentLoads ? { segmentLoads: config.segmentLoads } : {}),
    ...(config.segmentStores ? { segmentStores: config.segmentStores } : {}),
  };
  const device = await createDevice({ backend: 'webgpu', options: { webgpu } });
  await ops(device, config);
  await device.destroy();
}
console.log(`RESULTS ${JSON.stringify(rows)}`);
process.exit(0);
