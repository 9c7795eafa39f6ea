/**
 * Where the CPU histogram's per-chunk shape stops paying: for n values
 * and a sweep of bin counts, the two shapes of histogram-chunked.ts on a CPU device
 * of 2 workers — private per-chunk sub-histograms plus a merge, and one histogram
 * of global atomics — timed in interleaved rounds (wall clock, medians after three
 * warm-up rounds), every result checked against a host count. The crossover sets
 * CHUNKED_HISTOGRAM.maxBinsPerElement.
 *
 *   npx tsx --conditions=trident-source bench/cpu-hist-bins.ts [--log2n 20] [--bins 256,65536,1048576] [--rounds 12]
 */
import { parseArgs } from 'node:util';
import { chunkPlan, recordAtomicChunkHistogram, recordChunkedHistogram } from '@trident/algorithms/internal';
import { cpuAdapter } from '@trident/backend-cpu';
import { type Buffer, Device } from '@trident/core';
import { median } from '../packages/cli/src/bench/stats.ts';

const { values } = parseArgs({
  options: {
    log2n: { type: 'string', default: '20' },
    bins: { type: 'string', default: '256,4096,65536,262144,1048576,4194304' },
    rounds: { type: 'string', default: '12' },
  },
});
const n = 2 ** Number(values.log2n);
const rounds = Number(values.rounds);
const WARM_UP = 3;

const device = new Device(await cpuAdapter.create({ workers: 2 }));
const { chunks } = chunkPlan(device, n);
type Record_ = (d: Device, v: Buffer<'u32'>, o: Buffer<'u32'>, bins: number) => void;
const shapes: Array<[string, Record_]> = [
  ['per-chunk', recordChunkedHistogram],
  ['atomic', recordAtomicChunkHistogram],
];
for (const bins of (values.bins as string).split(',').map(Number)) {
  const host = Uint32Array.from({ length: n }, (_, i) => (Math.imul(i, 2654435761) >>> 0) % bins);
  const expected = new Uint32Array(bins);
  for (const v of host) (expected[v] as number)++;
  const input = device.createBuffer('u32', host);
  const out = device.createBuffer('u32', bins);
  const times = new Map(shapes.map(([name]) => [name, [] as number[]]));
  for (let r = 0; r < WARM_UP + rounds; r++) {
    for (const [name, record] of shapes) {
      const t0 = performance.now();
      record(device, input, out, bins);
      await device.flush();
      const ms = performance.now() - t0;
      if (r >= WARM_UP) times.get(name)?.push(ms);
      const got = await out.read();
      for (let b = 0; b < bins; b++)
        if (got[b] !== expected[b]) throw new Error(`${name} bins=${bins}: bin ${b} is ${got[b]}, expected ${expected[b]}`);
    }
  }
  const cells = [...times].map(([name, ms]) => `${name} ${median(ms).toFixed(2)} ms`).join(', ');
  console.log(`n = 2^${values.log2n}, bins ${bins} (bins x chunks / n = ${((bins * chunks) / n).toFixed(3)}): ${cells}`);
  input.destroy();
  out.destroy();
}
await device.destroy();
