/**
 * Where radix sort's passes pay for arrays split over bindings, one side at a time: on a device
 * whose binding limit is lowered to SEGMENT_PROBE_BINDING bytes (default 2^29), the default
 * keys-only passes (recordMultisplitPasses, radixSort's shape) sort n keys that fit one binding,
 * read from and written to buffers of n elements (one binding each) or of 2n (two bindings, the
 * keys in the first): the same data, the same traffic, only the kernels' variants differ. The
 * first pass reads the input and the last writes the output (the two between use temporaries
 * of n), so "input split" costs its pass and "output split" its own. GPU medians under
 * sustained load; each sort checked. SEGMENT_LOADS=switch|branches|select picks how the kernels
 * load from a split buffer (the device option webgpu.segmentLoads; default: the device's);
 * RANGE_HINTS=use|ignore whether the kernels' range hints pick a binding once per subgroup's keys
 * (the device option webgpu.rangeHints; default 'use').
 *
 *   node .gpu/segment-probe.mjs [log2 n]   (after bash bench/h100/run.sh pack; default n: 99 % of one binding)
 */
import { randomU32 } from '@trident/algorithms';
import { recordMultisplitPasses, sortShape } from '@trident/algorithms/internal';
import { type Buffer, createDevice } from 'trident';
import { isSortedPermutation } from '../../packages/cli/src/bench/checks.ts';
import { sustainedMedian } from '../../packages/cli/src/bench/sustained.ts';

const binding = Number(process.env.SEGMENT_PROBE_BINDING ?? 2 ** 29);
const segmentLoads = process.env.SEGMENT_LOADS as 'switch' | 'branches' | 'select' | undefined;
const rangeHints = process.env.RANGE_HINTS as 'use' | 'ignore' | undefined;
const device = await createDevice({
  backend: 'webgpu',
  options: {
    webgpu: { maxStorageBufferBindingSize: binding, ...(segmentLoads ? { segmentLoads } : {}), ...(rangeHints ? { rangeHints } : {}) },
  },
});
// Within one binding, with room for the backend's rounding of segments and temporaries.
const fits = Math.floor((device.caps.limits.maxStorageBufferBindingSize / 4) * 0.99);
const n = process.argv[2] ? Math.min(2 ** Number(process.argv[2]), fits) : fits;
const shape = sortShape(device.caps, false);
if (!shape) throw new Error('no multisplit shape on this device');
const host = randomU32(n, 5);
const rows: Record<string, unknown>[] = [];
const bindings = (b: Buffer) => Math.ceil((4 * b.length) / device.caps.limits.maxStorageBufferBindingSize);
for (const [label, inputLength, outputLength] of [
  ['one binding each', n, n],
  ['input split', 2 * n, n],
  ['output split', n, 2 * n],
  ['both split', 2 * n, 2 * n],
  ['input in three', 3 * n, n],
  ['one binding each (again)', n, n],
] as const) {
  const keys = device.createBuffer('u32', inputLength);
  keys.write(host);
  const out = device.createBuffer('u32', outputLength);
  const sort = () => recordMultisplitPasses(device, shape, keys, undefined, out, undefined, n);
  sort();
  const ok = isSortedPermutation(host, await out.read({ offset: 0, length: n }));
  const ms = await sustainedMedian(device, label, sort, { reps: 5 });
  const row = {
    label,
    segmentLoads: segmentLoads ?? 'default',
    rangeHints: rangeHints ?? 'default',
    n,
    inputBindings: bindings(keys),
    outputBindings: bindings(out),
    ms: +ms.toFixed(4),
    ok,
  };
  rows.push(row);
  console.log(JSON.stringify(row));
  keys.destroy();
  out.destroy();
}
console.log(`RESULTS ${JSON.stringify(rows)}`);
await device.destroy();
process.exit(0);
