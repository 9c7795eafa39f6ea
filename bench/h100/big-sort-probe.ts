/**
 * One radix sort at a size the suite reaches only after its smaller ones (default: key-value
 * pairs of 2^31, which failed on the H100 with a bind group "invalid due to a previous error"):
 * n keys (random) and values (their positions) written in slices, radixSort called as the suite
 * calls it, the result checked on a sample of slices, and any error printed whole, with its
 * class and cause, so the first error is named. Then the time of a second sort (GPU, one run).
 * SLICE (env) sets the slice length (default 2^26; smaller ones test the check on small n).
 *
 *   node .gpu/big-sort-probe.mjs [log2 n] [keys|pairs]   (after bash bench/h100/run.sh pack)
 */
import { radixSort, randomU32 } from '@trident/algorithms';
import { createDevice } from 'trident';

const n = 2 ** Number(process.argv[2] ?? 31);
const pairs = (process.argv[3] ?? 'pairs') === 'pairs';
// Slices of the host data (generated and checked a slice at a time).
const SLICE = Math.min(Number(process.env.SLICE ?? 2 ** 26), n);
const device = await createDevice({ backend: 'webgpu' });
console.log(JSON.stringify({ adapter: device.info.adapter, n, pairs, limits: device.caps.limits }));
const started = performance.now();
const keys = device.createBuffer('u32', n);
const output = device.createBuffer('u32', n);
const values = pairs ? device.createBuffer('u32', n) : undefined;
const valuesOutput = pairs ? device.createBuffer('u32', n) : undefined;
for (let offset = 0; offset < n; offset += SLICE) {
  const length = Math.min(SLICE, n - offset);
  keys.write(randomU32(length, offset / SLICE + 1), offset);
  if (values) {
    const positions = new Uint32Array(length);
    for (let i = 0; i < length; i++) positions[i] = offset + i;
    values.write(positions, offset);
  }
}
console.log(`written in ${((performance.now() - started) / 1000).toFixed(1)} s`);

function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause === undefined ? '' : `\n  cause: ${describe(e.cause)}`;
  return `${e.constructor.name}: ${e.message}${cause}`;
}

/** Slice s of the keys as written (regenerated, kept for the next sample). */
const slices = new Map<number, Uint32Array>();
function slice(s: number): Uint32Array {
  let keys = slices.get(s);
  if (!keys) {
    keys = randomU32(Math.min(SLICE, n - s * SLICE), s + 1);
    slices.set(s, keys);
  }
  return keys;
}

try {
  const t0 = performance.now();
  radixSort(device, keys, values && valuesOutput ? { values, output, valuesOutput } : { output });
  await device.flush();
  console.log(`sorted in ${(performance.now() - t0).toFixed(0)} ms (wall, first call)`);
  // Sorted within and across a few slices; values still index their keys (a sample).
  let ok = true;
  let previous = 0;
  // The first, a middle and the last slice, each once and in order (the check across slices needs both).
  for (const offset of new Set([0, Math.floor(n / 2 / SLICE) * SLICE, n - SLICE])) {
    const got = await output.read({ offset, length: SLICE });
    if (offset > 0 && (got[0] as number) < previous) ok = false;
    for (let i = 1; i < got.length; i++) if ((got[i] as number) < (got[i - 1] as number)) ok = false;
    previous = got[got.length - 1] as number;
    if (valuesOutput) {
      const idx = await valuesOutput.read({ offset, length: 1024 });
      for (let i = 0; i < idx.length; i += 97) {
        const at = idx[i] as number;
        if (slice(Math.floor(at / SLICE))[at % SLICE] !== got[i]) ok = false;
      }
    }
  }
  console.log(`sample check: ${ok ? 'ok' : 'WRONG'}`);
  const ms = await device.time('second sort', () => {
    radixSort(device, keys, values && valuesOutput ? { values, output, valuesOutput } : { output });
  });
  console.log(`second sort: ${JSON.stringify(ms)}`);
} catch (e) {
  console.log(`FAILED: ${describe(e)}`);
  process.exitCode = 1;
}
await device.destroy();
process.exit(process.exitCode ?? 0);
