/**
 * Workgroup against gather formulations on a software GPU (SwiftShader WebGPU in
 * Node): the measurement behind the 'software-gpu' device class's family order
 * (@trident/algorithms' plan.ts and device-class.ts) and `sortFormulation`. Each algorithm runs through its
 * public function on the device as the algorithms see it by default, on its
 * many-invocations view (the workgroup formulations a hardware GPU would run) and
 * on its gather-only view; GPU timer, medians of 5 after one warm-up, compact by
 * wall clock (it reads its count back). Every result is checked against the
 * default's.
 *
 *   VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json \
 *     npx tsx --conditions=trident-source bench/software-gpu-families.ts [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { compact, histogram, nbodyAccelerations, reduce, scan, sort } from '@trident/algorithms';
import { type Buffer, createDevice, type Device } from 'trident';
import { median } from '../packages/cli/src/bench/stats.ts';
import { gatherOnlyView, manyInvocationsView } from '../test/alg-helpers.ts';

const { values: args } = parseArgs({ options: { out: { type: 'string' } } });
const device = await createDevice({ backend: 'webgpu' });
const views: Array<[string, Device]> = [
  ['default', device],
  ['many-invocations (workgroup formulations)', manyInvocationsView(device)],
  ['gather-only', gatherOnlyView(device)],
];
const gpuMs = async (d: Device, body: () => void) => {
  await d.time('warm-up', body);
  const ms: number[] = [];
  for (let r = 0; r < 5; r++) ms.push((await d.time('run', body)).ms);
  return median(ms);
};
const wallMs = async (body: () => Promise<unknown>) => {
  await body();
  const ms: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t = performance.now();
    await body();
    ms.push(performance.now() - t);
  }
  return median(ms);
};
const same = (a: ArrayLike<number>, b: ArrayLike<number>) => a.length === b.length && Array.from(a).every((x, i) => x === b[i]);

const rows: Record<string, unknown>[] = [];
const record = (row: Record<string, unknown>) => {
  rows.push(row);
  console.log(JSON.stringify(row));
};
console.log(`${device.info.adapter}; software ${device.info.software}; concurrency ${device.caps.concurrency}`);
for (const n of [65536, 1048576]) {
  const host = Float32Array.from({ length: n }, (_, i) => i % 7);
  const bins = Uint32Array.from({ length: n }, (_, i) => Math.imul(i, 2654435761) >>> 24);
  const flagsHost = Uint32Array.from({ length: n }, (_, i) => i & 1);
  const baseline: Record<string, ArrayLike<number>> = {};
  for (const [view, d] of views) {
    const f = d.createBuffer('f32', host);
    const u = d.createBuffer('u32', bins);
    const flags = d.createBuffer('u32', flagsHost);
    const check = async (what: string, out: Buffer) => {
      const got = await out.read();
      baseline[what] ??= got;
      return same(got, baseline[what] as ArrayLike<number>);
    };
    const out = {
      reduce: await gpuMs(d, () => void reduce(d, f, { op: 'sum' })),
      scan: await gpuMs(d, () => void scan(d, f)),
      histogram: await gpuMs(d, () => void histogram(d, u, { bins: 256 })),
      sort: await gpuMs(d, () => void sort(d, u)),
      compactWall: await wallMs(async () => (await compact(d, u, flags)).output.destroy()),
    };
    const ok = {
      scan: await check('scan', scan(d, f)),
      histogram: await check('histogram', histogram(d, u, { bins: 256 })),
      sort: await check('sort', sort(d, u).keys),
      compact: await check('compact', (await compact(d, u, flags)).output),
    };
    record({ n, view, ms: out, sameAsDefault: ok });
    for (const b of [f, u, flags]) b.destroy();
  }
}
const bodies = Float32Array.from({ length: 4 * 2048 }, (_, i) => (i % 4 === 3 ? 1 / 2048 : ((i * 7919) % 1000) / 1000));
for (const [view, d] of views) {
  const b = d.createBuffer('f32', bodies);
  record({ n: 2048, view, ms: { nbodyAccelerations: await gpuMs(d, () => void nbodyAccelerations(d, b)) } });
  b.destroy();
}
if (args.out) writeFileSync(args.out, JSON.stringify({ machine: device.info, date: new Date().toISOString(), rows }, null, 1));
await device.destroy();
