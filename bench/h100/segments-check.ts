/**
 * What spanning several storage bindings costs, apart from the array's size: the same cases
 * at the same n on devices whose binding limit is lowered (ONE array split into 2, 4 ...
 * segments), timed as the suite times them (sustained load, bench/sustained.ts), each
 * checked once against its reference. If the time grows with the segment count at one n,
 * the segment lowering costs; if it does not, the drop past 2^28 is the size.
 *
 *   node .gpu/segments-check.mjs [log2 n] [binding bytes,...] [case key,...]
 *   (defaults: 28; the device's own limit, 2^30, 2^29; zcopy:copy,reduce:sum,scan:inclusive,histogram:256 bins)
 */
import { createDevice } from 'trident';
import type { BenchCase } from '../../packages/cli/src/bench/bench-case.ts';
import { CASES } from '../../packages/cli/src/bench/cases.ts';
import { SUITE_CASES } from '../../packages/cli/src/bench/suite-cases.ts';
import { sustainedMedian } from '../../packages/cli/src/bench/sustained.ts';

const log = Number(process.argv[2] ?? 28);
const n = 2 ** log;
const bindings = (process.argv[3] ?? `0,${2 ** 30},${2 ** 29}`).split(',').map(Number);
const keys = (process.argv[4] ?? 'zcopy:copy,reduce:sum,scan:inclusive,histogram:256 bins').split(',');
const byKey = new Map<string, BenchCase>();
for (const c of [...CASES, ...SUITE_CASES]) if (!byKey.has(`${c.algorithm}:${c.variant}`)) byKey.set(`${c.algorithm}:${c.variant}`, c);
const rows: Record<string, unknown>[] = [];
for (const binding of bindings) {
  const device = await createDevice({
    backend: 'webgpu',
    ...(binding > 0 ? { options: { webgpu: { maxStorageBufferBindingSize: binding } } } : {}),
  });
  const limit = device.caps.limits.maxStorageBufferBindingSize;
  for (const key of keys) {
    const c = byKey.get(key);
    if (!c) throw new Error(`no case ${key}`);
    const p = c.setup(device, n);
    try {
      p.run();
      const ok = await p.verify();
      const ms = await sustainedMedian(device, key, () => p.run(), { reps: 5 });
      const row = { key, n: `2^${log}`, bindingBytes: limit, bindingsPerArray: Math.ceil((4 * n) / limit), ms: +ms.toFixed(4), ok };
      rows.push(row);
      console.log(JSON.stringify(row));
    } finally {
      p.dispose();
    }
  }
  await device.destroy();
}
console.log(`RESULTS ${JSON.stringify(rows)}`);
process.exit(0);
