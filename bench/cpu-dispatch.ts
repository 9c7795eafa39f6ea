/**
 * Issue 10's dispatch-cost probe for the CPU backend:
 *   npx tsx --conditions=trident-source bench/cpu-dispatch.ts [--workers 2] [--inline false] [--rounds 5]
 * (--inline false sends every dispatch to the workers, to time their round trip.)
 * - empty dispatch, back to back: 10^4 dispatches of a kernel that does nothing, one flush (µs each);
 * - empty dispatch, awaited: dispatch + flush, 10^3 times (µs each);
 * - reduce sum of 2^10 u32 awaited end to end (reduce + read), median of 2000 (µs).
 */
import { parseArgs } from 'node:util';
import { reduce } from '@trident/algorithms';
import { cpuAdapter } from '@trident/backend-cpu';
import { buffer, Device, defineKernel } from '@trident/core';
import { median } from '../packages/cli/src/bench/stats.ts';

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '5' },
    inline: { type: 'string', default: 'true' },
  },
});
const device = new Device(await cpuAdapter.create({ workers: Number(values.workers), inline: values.inline !== 'false' }));
const empty = defineKernel({
  name: 'bench_empty',
  workgroupSize: 64,
  params: { y: buffer('u32', 'read_write') },
  body: () => {},
});
const y = device.createBuffer('u32', 64 * 4);

const backToBack: number[] = [];
const awaited: number[] = [];
const reduceUs: number[] = [];
const x = device.createBuffer(
  'u32',
  Uint32Array.from({ length: 1024 }, (_, i) => i),
);
for (let round = 0; round < Number(values.rounds); round++) {
  let t = performance.now();
  for (let i = 0; i < 10_000; i++) device.dispatch(empty, { workgroups: 4 }, { y });
  await device.flush();
  backToBack.push(((performance.now() - t) * 1000) / 10_000);
  t = performance.now();
  for (let i = 0; i < 1000; i++) {
    device.dispatch(empty, { workgroups: 4 }, { y });
    await device.flush();
  }
  awaited.push(((performance.now() - t) * 1000) / 1000);
  const one: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const s = performance.now();
    const v = await reduce(device, x, { op: 'sum' });
    one.push((performance.now() - s) * 1000);
    if (v !== 523776) throw new Error(`reduce gave ${v}`);
  }
  reduceUs.push(median(one));
}
console.log(
  JSON.stringify({
    workers: Number(values.workers),
    inline: values.inline !== 'false',
    emptyBackToBackUs: median(backToBack),
    emptyAwaitedUs: median(awaited),
    reduce2p10AwaitedUs: median(reduceUs),
    rounds: { backToBack, awaited, reduceUs },
  }),
);
await device.destroy();
