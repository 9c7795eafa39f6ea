/**
 * Why were back-to-back radix sorts 2.3x slower per run than isolated ones on the
 * H100 (the suite, 2026-11-22: 33.6 vs 14.3 ms at 2^28 keys)? One probe call times
 * the same u32 key sort under each suspect, GPU timestamps and wall clock:
 *
 *   singles/fresh    one sort per measurement, a new output each run, the previous destroyed
 *   singles/reused   one sort per measurement, into one output allocated once
 *   batch/fresh      B sorts per measurement, each a new output, the previous destroyed in the batch
 *   batch/fresh-keep B sorts per measurement, each a new output, all destroyed after the batch
 *   batch/precleared B sorts into B new outputs that were cleared and flushed before the batch
 *   batch/reused     B sorts per measurement into one output allocated once
 *
 * and, at 2^28, each step of one pass timed alone (count, scan, rank + scatter).
 * Bundle (bash bench/h100/run.sh pack) and run: node .gpu/sort-probe.mjs [log2n...]
 */
import { radixSort, randomU32 } from '@trident/algorithms';
import {
  countKernel,
  dispatchGroups,
  MULTISPLIT_ITEMS,
  multisplitShape,
  recordRadixSort,
  recordScan,
  scatterKernel,
} from '@trident/algorithms/internal';
import { type Buffer, createDevice, type Device } from 'trident';
import { median } from '../../packages/cli/src/bench/stats.ts';

const device: Device = await createDevice({ backend: 'webgpu' });
console.log(`device ${device.info.adapter}`);
const logs = process.argv.slice(2).map(Number);
const B = 4;
const rows: Record<string, unknown>[] = [];
const report = (r: Record<string, unknown>) => {
  rows.push(r);
  console.log(JSON.stringify(r));
};

/** GPU-timestamp and wall ms per sort: median over `reps` measurements of `perMeasure` sorts, after ~150 ms of warm-up. */
async function time(label: string, perMeasure: number, body: () => void, after?: () => void, before?: () => Promise<void>, reps = 7) {
  for (let warm = 0, i = 0; warm < 150 && i < 40; i++) {
    await before?.();
    warm += (await device.time(label, body)).ms;
    after?.();
  }
  const gpu: number[] = [];
  const wall: number[] = [];
  for (let r = 0; r < reps; r++) {
    await before?.();
    const t0 = performance.now();
    gpu.push((await device.time(label, body)).ms / perMeasure);
    wall.push((performance.now() - t0) / perMeasure);
    after?.();
  }
  return { gpu_ms: +median(gpu).toFixed(3), wall_ms: +median(wall).toFixed(3) };
}

for (const log2n of logs.length ? logs : [24, 28]) {
  const n = 2 ** log2n;
  const data = randomU32(n, 11);
  const keys = device.createBuffer('u32', data);
  const sortInto = (out: Buffer) => recordRadixSort(device, keys, undefined, out, undefined);

  // singles/fresh (the suite's protocol from 2026-11-22 until sorts went into reused outputs)
  const held: { last?: Buffer } = {};
  report({
    n,
    variant: 'singles/fresh',
    ...(await time('singles/fresh', 1, () => {
      held.last?.destroy();
      held.last = radixSort(device, keys).keys;
    })),
  });
  (held.last as Buffer | undefined)?.destroy();
  held.last = undefined;

  const reused = device.createBuffer('u32', n);
  report({ n, variant: 'singles/reused', ...(await time('singles/reused', 1, () => sortInto(reused))) });

  report({
    n,
    variant: 'batch/fresh',
    ...(await time('batch/fresh', B, () => {
      for (let b = 0; b < B; b++) {
        held.last?.destroy();
        held.last = radixSort(device, keys).keys;
      }
    })),
  });
  (held.last as Buffer | undefined)?.destroy();
  held.last = undefined;

  let kept: Buffer[] = [];
  report({
    n,
    variant: 'batch/fresh-keep',
    ...(await time(
      'batch/fresh-keep',
      B,
      () => {
        for (let b = 0; b < B; b++) kept.push(radixSort(device, keys).keys);
      },
      () => {
        for (const k of kept) k.destroy();
        kept = [];
      },
    )),
  });

  let outs: Buffer[] = [];
  report({
    n,
    variant: 'batch/precleared',
    ...(await time(
      'batch/precleared',
      B,
      () => {
        for (const o of outs) sortInto(o);
      },
      () => {
        for (const o of outs) o.destroy();
        outs = [];
      },
      async () => {
        for (let b = 0; b < B; b++) {
          const o = device.createBuffer('u32', n);
          o.fill(0);
          outs.push(o);
        }
        await device.flush();
      },
    )),
  });

  report({
    n,
    variant: 'batch/reused',
    ...(await time('batch/reused', B, () => {
      for (let b = 0; b < B; b++) sortInto(reused);
    })),
  });

  // Correctness of the reused output (sorted and the same multiset, sampled sum / xor over all).
  const got = await reused.read();
  let ok = true;
  let s = 0;
  let s0 = 0;
  for (let i = 0; i < n; i++) {
    if (i > 0 && (got[i - 1] as number) > (got[i] as number)) ok = false;
    s = (s + (got[i] as number)) >>> 0;
    s0 = (s0 + (data[i] as number)) >>> 0;
  }
  report({ n, check: 'reused output sorted, same sum', ok: ok && s === s0 });

  // Steps of one pass (shift 0), each timed alone in batches of 8.
  const shape = multisplitShape(device.caps, MULTISPLIT_ITEMS);
  if (shape) {
    const tiles = Math.ceil(n / (shape.wg * shape.items));
    const counts = device.createBuffer('u32', 256 * tiles);
    const offsets = device.createBuffer('u32', 256 * tiles);
    const dummy = device.createBuffer('u32', 1);
    const dummyOut = device.createBuffer('u32', 1);
    const steps: Record<string, () => void> = {
      count: () => dispatchGroups(device, countKernel(shape), tiles, { keys, counts, n, shift: 0, tiles, firstTile: 0, endTile: tiles }),
      scan: () => recordScan(device, counts, offsets, 256 * tiles, true),
      'rank+scatter': () =>
        dispatchGroups(device, scatterKernel(shape, undefined), tiles, {
          keys,
          keysOut: reused,
          vals: dummy,
          valsOut: dummyOut,
          offsets,
          n,
          shift: 0,
          tiles,
          firstTile: 0,
          endTile: tiles,
        }),
    };
    steps.count?.();
    steps.scan?.();
    for (const [name, step] of Object.entries(steps)) {
      report({
        n,
        step: name,
        ...(await time(`step ${name}`, 8, () => {
          for (let i = 0; i < 8; i++) step();
        })),
      });
    }
    counts.destroy();
    offsets.destroy();
    dummy.destroy();
    dummyOut.destroy();
  }
  reused.destroy();
  keys.destroy();
}
console.log(`PROBE ${JSON.stringify(rows)}`);
await device.destroy();
process.exit(0);
