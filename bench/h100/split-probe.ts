/**
 * What radix sort's passes cost where every array spans bindings the way 2^30 keys do at the
 * H100's default binding (two whole segments and a short third): n = 2^28 (argument: log2 n)
 * keys, and key-value pairs, sorted on a device whose binding limit is lowered to
 * SPLIT_PROBE_BINDING bytes (default 2^29), beside the same sort on one binding an array.
 * Rows: range hints ignored or used (device option webgpu.rangeHints), the write-out's row
 * hints off or on (shape option storeRanges). GPU medians under sustained load; each sort checked.
 *
 *   node .gpu/split-probe.mjs [log2 n]   (after bash bench/h100/run.sh pack)
 */
import { randomU32 } from '@trident/algorithms';
import { recordMultisplitPasses, sortShape } from '@trident/algorithms/internal';
import { createDevice } from 'trident';
import { isSortedPermutation } from '../../packages/cli/src/bench/checks.ts';
import { sustainedMedian } from '../../packages/cli/src/bench/sustained.ts';

const binding = Number(process.env.SPLIT_PROBE_BINDING ?? 2 ** 29);
const n = 2 ** Number(process.argv[2] ?? 28);
const host = randomU32(n, 7);
const iota = Uint32Array.from({ length: n }, (_, i) => i);
const rows: Record<string, unknown>[] = [];
const configs = [
  { label: 'one binding an array', binding: undefined, rangeHints: 'use' },
  { label: 'split, hints ignored', binding, rangeHints: 'ignore' },
  { label: 'split, hints used', binding, rangeHints: 'use' },
] as const;
for (const config of configs) {
  const device = await createDevice({
    backend: 'webgpu',
    options: { webgpu: { rangeHints: config.rangeHints, ...(config.binding ? { maxStorageBufferBindingSize: config.binding } : {}) } },
  });
  const keys = device.createBuffer('u32', host);
  const out = device.createBuffer('u32', n);
  for (const pairs of [false, true]) {
    const vals = pairs ? device.createBuffer('u32', iota) : undefined;
    const vout = pairs ? device.createBuffer('u32', n) : undefined;
    const base = sortShape(device.caps, pairs);
    if (!base) throw new Error('no multisplit shape on this device');
    for (const storeRanges of config.binding ? [false, true] : [false]) {
      const shape = { ...base, storeRanges };
      const sort = () => recordMultisplitPasses(device, shape, keys, vals, out, vout, n);
      sort();
      const ok = isSortedPermutation(host, await out.read(), vout ? await vout.read() : undefined);
      const ms = await sustainedMedian(device, config.label, sort, { reps: 5 });
      const row = { label: config.label, pairs, storeRanges, n, binding: config.binding ?? 'default', ms: +ms.toFixed(3), ok };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
    vals?.destroy();
    vout?.destroy();
  }
  await device.destroy();
}
console.log(`RESULTS ${JSON.stringify(rows)}`);
process.exit(0);
