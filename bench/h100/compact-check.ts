/**
 * compact's tile-scan formulation on a real GPU, element by element: for each log2 n,
 * compactTiles over randomU32(n) with flags randomU32(n, 0x1234567) & 1, the output
 * against compactReference, naming the first output that differs, the input element it
 * should hold and that element's tile (where a rank goes wrong). SHAPE='{"wg":256,"items":16}'
 * tries another tile shape than TILES; SUBGROUPS=0 or 1 forces the workgroup scans' form (subgroup
 * scans or barriers only) in place of compactTiles' choice. TIME=1 also times each exact size (GPU
 * median under sustained load, the count's read between the two submissions not counted).
 *
 *   node .gpu/compact-check.mjs 12 16 20 24   (after bash bench/h100/run.sh pack)
 */
import { compactReference, randomU32 } from '@trident/algorithms';
import { compactTiles, type TileShape, tileShape } from '@trident/algorithms/internal';
import { createDevice } from 'trident';
import { sustainedMedian } from '../../packages/cli/src/bench/sustained.ts';

const device = await createDevice({ backend: 'webgpu' });
const custom = process.env.SHAPE ? (JSON.parse(process.env.SHAPE) as TileShape) : undefined;
const forceSubgroups = process.env.SUBGROUPS === undefined ? undefined : process.env.SUBGROUPS === '1';
for (const log of process.argv.slice(2).map(Number)) {
  const n = 2 ** log;
  const host = randomU32(n);
  const flagsHost = randomU32(n, 0x1234567).map((x) => x & 1);
  const input = device.createBuffer('u32', host);
  const flags = device.createBuffer('u32', flagsHost);
  const shape = custom ?? tileShape(device);
  const { count, output } = await compactTiles(device, input, flags, shape, forceSubgroups);
  const got = await output.read();
  const want = compactReference(host, flagsHost);
  let firstBad = -1;
  let mismatches = 0;
  for (let i = 0; i < Math.min(got.length, want.length); i++) {
    if (got[i] === want[i]) continue;
    if (firstBad < 0) firstBad = i;
    mismatches++;
  }
  // The input element the first bad output should hold, and its tile.
  let source = -1;
  for (let i = 0, k = 0; firstBad >= 0 && i < n; i++) {
    if (!flagsHost[i]) continue;
    if (k === firstBad) {
      source = i;
      break;
    }
    k++;
  }
  const tile = shape.wg * shape.items;
  const timed = process.env.TIME === '1' && mismatches === 0 && count === want.length;
  const ms = timed
    ? await sustainedMedian(
        device,
        'compact',
        async () => (await compactTiles(device, input, flags, shape, forceSubgroups)).output.destroy(),
        {
          reps: 5,
        },
      )
    : undefined;
  console.log(
    JSON.stringify({
      log2n: log,
      shape,
      subgroups: forceSubgroups ?? 'chosen',
      count,
      expected: want.length,
      firstBad,
      mismatches,
      source,
      sourceTile: source >= 0 ? Math.floor(source / tile) : -1,
      inTile: source >= 0 ? source % tile : -1,
      ...(ms !== undefined ? { ms: +ms.toFixed(4) } : {}),
    }),
  );
  input.destroy();
  flags.destroy();
  output.destroy();
}
await device.destroy();
process.exit(0);
