/**
 * Issue 10's profile of one `reduceInto` sum on the CPU backend: where a call's time
 * goes at a size, split into recording (validation, compile lookup, argument
 * binding), the flush (inline kernel runs or the workers' round trip), the kernel
 * itself, and what `device.time` adds (the bench harness's per-call cost).
 *
 *   npx tsx --conditions=trident-source bench/cpu-reduce-profile.ts [--sizes 65536,1048576] [--calls 2000] [--inline false | --force-inline | --force-workers]
 *
 * (--inline false sends every dispatch to the workers.)
 * Prints medians in µs per call, and how many chunk passes ran inline vs on the workers.
 */
import { parseArgs } from 'node:util';
import { reduceInto } from '@trident/algorithms';
import { cpuAdapter } from '@trident/backend-cpu';
import { Device } from '@trident/core';
import { median } from '../packages/cli/src/bench/stats.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '65536,1048576' },
    calls: { type: 'string', default: '2000' },
    workers: { type: 'string', default: '2' },
    inline: { type: 'string', default: 'true' },
    'force-inline': { type: 'boolean', default: false },
    'force-workers': { type: 'boolean', default: false },
  },
});
const calls = Number(values.calls);
const device = new Device(await cpuAdapter.create({ workers: Number(values.workers), inline: values.inline !== 'false' }));

/** The backend's private counters, read by patching its methods (a profile only). */
interface Probe {
  runInline(d: { numWorkgroups: number }): void;
  runsInline(d: { numWorkgroups: number }): boolean;
  pool: { run(batch: unknown[], limit?: number): Promise<void>; lastTimings(): { maxBusyMs: number; sumBusyMs: number } };
  roundTrip: { ns: number };
}
const impl = device.impl as unknown as Probe;
let inlineRuns = 0;
let workerBatches = 0;
let inlineNs = 0;
const proto = Object.getPrototypeOf(impl) as Probe;
// Every dispatch on the calling thread (to compare with the workers).
if (values['force-inline']) proto.runsInline = () => true;
// Every dispatch of more than one workgroup on the workers (one workgroup stays inline, as the rule has it).
if (values['force-workers']) proto.runsInline = (d: { numWorkgroups: number }) => d.numWorkgroups === 1;
const runInline = proto.runInline;
proto.runInline = function (this: Probe, d) {
  const t = performance.now();
  runInline.call(this, d);
  inlineNs += (performance.now() - t) * 1e6;
  inlineRuns++;
};
const poolRun = impl.pool.run.bind(impl.pool);
let poolNs = 0;
/** Per worker batch: wall µs, the longest worker's kernel µs, all workers' kernel µs. */
let batches: Array<[number, number, number]> = [];
impl.pool.run = async (batch, limit) => {
  workerBatches++;
  const t = performance.now();
  await poolRun(batch, limit);
  const wall = (performance.now() - t) * 1000;
  const { maxBusyMs, sumBusyMs } = impl.pool.lastTimings();
  batches.push([wall, maxBusyMs * 1000, sumBusyMs * 1000]);
  poolNs += wall * 1000;
};

const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] as number;

for (const n of values.sizes.split(',').map(Number)) {
  const host = Uint32Array.from({ length: n }, (_, i) => (i * 2654435761) >>> 0);
  const src = device.createBuffer('u32', host);
  const out = device.createBuffer('u32', 1);
  for (let i = 0; i < Math.min(300, calls); i++) {
    reduceInto(device, src, { op: 'sum', output: out });
    await device.flush();
  }
  const reset = () => {
    inlineRuns = 0;
    workerBatches = 0;
    inlineNs = 0;
    poolNs = 0;
    batches = [];
  };
  const record: number[] = [];
  const flush: number[] = [];
  const timed: number[] = [];
  const timedInner: number[] = [];
  reset();
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    reduceInto(device, src, { op: 'sum', output: out });
    const t1 = performance.now();
    await device.flush();
    const t2 = performance.now();
    record.push((t1 - t0) * 1000);
    flush.push((t2 - t1) * 1000);
  }
  const col = (j: number) => +median(batches.map((b) => b[j] as number)).toFixed(2);
  const workerSplit = batches.length ? { batchWallUs: col(0), maxBusyUs: col(1), sumBusyUs: col(2) } : {};
  const split = {
    ...workerSplit,
    inlineRuns,
    workerBatches,
    inlineUsPerCall: inlineNs / 1000 / calls,
    poolUsPerCall: poolNs / 1000 / calls,
  };
  reset();
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    const t = await device.time('reduce', () => {
      reduceInto(device, src, { op: 'sum', output: out });
    });
    timed.push((performance.now() - t0) * 1000);
    timedInner.push(t.ms * 1000);
  }
  const timedSplit = { inlineRuns, workerBatches };
  const reads: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    await out.read({ offset: 0, length: 1 });
    reads.push((performance.now() - t0) * 1000);
  }
  const check = (await out.read())[0];
  let expect = 0;
  for (const v of host) expect = (expect + v) >>> 0;
  console.log(
    JSON.stringify({
      n,
      ok: check === expect,
      recordUs: +median(record).toFixed(2),
      flushUs: +median(flush).toFixed(2),
      flushQ1Us: +q(flush, 0.25).toFixed(2),
      flushQ3Us: +q(flush, 0.75).toFixed(2),
      timeWallUs: +median(timed).toFixed(2),
      timeReportedUs: +median(timedInner).toFixed(2),
      readOneUs: +median(reads).toFixed(2),
      roundTripEstimateUs: impl.roundTrip.ns / 1000,
      ...split,
      timedSplit,
    }),
  );
  src.destroy();
  out.destroy();
}
await device.destroy();
