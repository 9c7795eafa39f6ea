/**
 * reduce sum / max u32 at 2^28 on a real GPU, timed as the suite times it (`reduceInto` back
 * to back under sustained load, packages/cli/src/bench/sustained.ts),
 * for repeated runs beside the CUB anchor when one suite call's ratio is a tie (three runs' medians). Run: node .gpu/reduce-check.mjs [log2 n] (after pack).
 */
import { randomU32, reduceInto, reduceReference } from '@trident/algorithms';
import { createDevice } from 'trident';
import { sustainedMedian } from '../../packages/cli/src/bench/sustained.ts';

const log = Number(process.argv[2] ?? 28);
const n = 2 ** log;
const data = randomU32(n, 7);
const device = await createDevice({ backend: 'webgpu' });
const input = device.createBuffer('u32', data);
const one = device.createBuffer('u32', 1);
for (const op of ['sum', 'max'] as const) {
  const ms = await sustainedMedian(device, `reduce ${op}`, () => void reduceInto(device, input, { op, output: one }), { reps: 5 });
  const ok = (await one.read())[0] === reduceReference(data, op);
  console.log(JSON.stringify({ name: `reduce ${op} u32`, n, ms: +ms.toFixed(4), GBps: +((4 * n) / ms / 1e6).toFixed(1), ok }));
}
await device.destroy();
process.exit(0);
