/**
 * Large radix sorts one after another on one device, as the suite runs its sizes (pairs of 2^31
 * failed on the H100 with a bind group "invalid due to a previous error" after 2^24 … 2^30 had run,
 * and sorted when run alone): for each size, n keys (random) and values (their positions) written
 * in slices, radixSort called as the suite calls it, the result checked on a sample of slices,
 * the time of a second sort (GPU, one run), then every buffer destroyed. Any error is printed
 * whole, with its class and cause, so the first error is named. SLICE (env) sets the slice
 * length (default 2^26; smaller ones test the check on small n); SETTLE=0 skips the flush between
 * sizes, SETTLE_MS adds a wait and a second flush there.
 *
 *   node .gpu/big-sort-probe.mjs keys|pairs log2n...   (after bash bench/h100/run.sh pack)
 */
import { radixSort, randomU32 } from '@trident/algorithms';
import { type Buffer, createDevice, type Device } from 'trident';

const pairs = (process.argv[2] ?? 'pairs') === 'pairs';
const sizes = process.argv.slice(3).map((l) => 2 ** Number(l));
const device = await createDevice({ backend: 'webgpu' });
console.log(JSON.stringify({ adapter: device.info.adapter, pairs, sizes, limits: device.caps.limits }));

function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause === undefined ? '' : `\n  cause: ${describe(e.cause)}`;
  return `${e.constructor.name}: ${e.message}${cause}`;
}

/** n keys from slices of `slice` elements, slice s = randomU32(length, s + 1); values = positions. */
function sortInputs(device: Device, n: number, slice: number): { keys: Buffer<'u32'>; values?: Buffer<'u32'> } {
  const keys = device.createBuffer('u32', n);
  const values = pairs ? device.createBuffer('u32', n) : undefined;
  for (let offset = 0; offset < n; offset += slice) {
    const length = Math.min(slice, n - offset);
    keys.write(randomU32(length, offset / slice + 1), offset);
    if (values) {
      const positions = new Uint32Array(length);
      for (let i = 0; i < length; i++) positions[i] = offset + i;
      values.write(positions, offset);
    }
  }
  return values ? { keys, values } : { keys };
}

/** Sorted within and across the first, a middle and the last slice; sampled values index their keys. */
async function sampleCheck(n: number, slice: number, output: Buffer<'u32'>, valuesOutput: Buffer<'u32'> | undefined): Promise<boolean> {
  const slices = new Map<number, Uint32Array>();
  const keysOf = (s: number) => {
    let keys = slices.get(s);
    if (!keys) {
      keys = randomU32(Math.min(slice, n - s * slice), s + 1);
      slices.set(s, keys);
    }
    return keys;
  };
  let ok = true;
  let previous = 0;
  // Each slice once and in order (the check across slices compares with the one before).
  for (const offset of new Set([0, Math.floor(n / 2 / slice) * slice, n - slice])) {
    const got = await output.read({ offset, length: slice });
    if (offset > 0 && (got[0] as number) < previous) ok = false;
    for (let i = 1; i < got.length; i++) if ((got[i] as number) < (got[i - 1] as number)) ok = false;
    previous = got[got.length - 1] as number;
    if (valuesOutput) {
      const idx = await valuesOutput.read({ offset, length: 1024 });
      for (let i = 0; i < idx.length; i += 97) {
        const at = idx[i] as number;
        if (keysOf(Math.floor(at / slice))[at % slice] !== got[i]) ok = false;
      }
    }
  }
  return ok;
}

for (const n of sizes) {
  const slice = Math.min(Number(process.env.SLICE ?? 2 ** 26), n);
  const started = performance.now();
  const { keys, values } = sortInputs(device, n, slice);
  const output = device.createBuffer('u32', n);
  const valuesOutput = pairs ? device.createBuffer('u32', n) : undefined;
  const sort = () => void radixSort(device, keys, values && valuesOutput ? { values, output, valuesOutput } : { output });
  const row: Record<string, unknown> = { n, pairs, writtenS: +((performance.now() - started) / 1000).toFixed(1) };
  try {
    const t0 = performance.now();
    sort();
    await device.flush();
    row.firstSortWallMs = Math.round(performance.now() - t0);
    row.sampleCheck = (await sampleCheck(n, slice, output, valuesOutput)) ? 'ok' : 'WRONG';
    row.secondSortGpuMs = +(await device.time('second sort', sort)).ms.toFixed(3);
  } catch (e) {
    row.failed = describe(e);
    process.exitCode = 1;
  }
  console.log(JSON.stringify(row));
  for (const b of [keys, values, output, valuesOutput]) b?.destroy();
  if (row.failed) break;
  // Diagnosis of the memory a destroyed size leaves held (2^31 pairs twice ran out of memory on the
  // H100): SETTLE=0 skips this flush, SETTLE_MS waits that long and settles again.
  if (process.env.SETTLE !== '0') await device.flush();
  const wait = Number(process.env.SETTLE_MS ?? 0);
  if (wait > 0) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    await device.flush();
  }
}
await device.destroy();
process.exit(process.exitCode ?? 0);
