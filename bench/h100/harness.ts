/**
 * Timing and checking helpers shared by the H100 checks (radix-check, onesweep-check,
 * scan-check, hist-check, graph-check). One protocol everywhere: an idle H100 drops
 * its clock and figures taken right after a host-side pause varied up to 4x for one
 * kernel, so a measurement follows ~100 ms of back-to-back warm-up, and host-side
 * checks come after all timing.
 */
import type { Device } from 'trident';
import { median as medianOf } from '../../packages/cli/src/bench/stats.ts';

export { medianOf };

/**
 * Wall-clock median (and extremes) of `reps` awaited calls of `run`, after warm-up calls
 * for at least 200 ms (and at least 5): what a caller waits for, host work included.
 */
export async function wallMedian(run: () => Promise<unknown>, reps = 21): Promise<{ median: number; min: number; max: number }> {
  const start = performance.now();
  for (let i = 0; i < 5 || performance.now() - start < 200; i++) await run();
  const ms: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(reps / 2)] as number, min: ms[0] as number, max: ms[reps - 1] as number };
}

/**
 * Wall-clock medians of several awaited calls measured in interleaved rounds: each run
 * is warmed up (>= 200 ms and >= 5 calls), then `rounds` times every run takes 3
 * untimed and `perRound` timed calls in turn; each run's median, min and max over its
 * rounds · perRound calls. A transient slow spell of the machine (a clock ramp, a
 * collection, a neighbour) then falls on every run alike instead of on whichever was
 * measured during it.
 */
export async function interleavedMedians(
  runs: ReadonlyArray<() => Promise<unknown>>,
  rounds = 3,
  perRound = 7,
): Promise<Array<{ median: number; min: number; max: number }>> {
  for (const run of runs) {
    const start = performance.now();
    for (let i = 0; i < 5 || performance.now() - start < 200; i++) await run();
  }
  const samples: number[][] = runs.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (const [k, run] of runs.entries()) {
      for (let i = 0; i < 3; i++) await run();
      for (let i = 0; i < perRound; i++) {
        const t0 = performance.now();
        await run();
        samples[k]?.push(performance.now() - t0);
      }
    }
  }
  return samples.map((ms) => {
    ms.sort((a, b) => a - b);
    return { median: ms[Math.floor(ms.length / 2)] as number, min: ms[0] as number, max: ms[ms.length - 1] as number };
  });
}

export interface WarmedMedianOptions {
  /** Timed regions (default 5). */
  readonly reps?: number;
  /** Runs of `body` back to back in one timed region, the figure being their mean (default 1). */
  readonly batch?: number;
  /** GPU milliseconds of back-to-back warm-up first (default 100; 0: a single warm-up run). */
  readonly warmupMs?: number;
}

/**
 * Median GPU time of one `body` (timestamps through `device.time`), after warm-up
 * batches of four runs until `warmupMs` of GPU time (at most ten batches): that
 * compiles, allocates temporaries and raises the clocks.
 */
export async function warmedMedian(device: Device, label: string, body: () => void, options: WarmedMedianOptions = {}): Promise<number> {
  const { reps = 5, batch = 1, warmupMs = 100 } = options;
  let warm = 0;
  for (let round = 0; round < 10 && (round === 0 || warm < warmupMs); round++) {
    warm += (
      await device.time(`${label} warm-up`, () => {
        for (let w = 0; w < (warmupMs > 0 ? 4 : 1); w++) body();
      })
    ).ms;
  }
  const ms: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t = await device.time(label, () => {
      for (let b = 0; b < batch; b++) body();
    });
    ms.push(t.ms / batch);
  }
  return medianOf(ms);
}

/**
 * True when `keys` is `data` sorted ascending (ordered, the same multiset by sum
 * and xor), and for pairs, where the values were the input indices, `values` is a
 * stable permutation that carries each key's index.
 */
export function verifySort(data: Uint32Array, keys: Uint32Array, values?: Uint32Array): boolean {
  let sum = 0;
  let xor = 0;
  let sumIn = 0;
  let xorIn = 0;
  for (let i = 0; i < data.length; i++) {
    const k = keys[i] as number;
    if (i > 0 && (keys[i - 1] as number) > k) return false;
    sum = (sum + k) >>> 0;
    xor ^= k;
    sumIn = (sumIn + (data[i] as number)) >>> 0;
    xorIn ^= data[i] as number;
  }
  if (sum !== sumIn || xor !== xorIn) return false;
  if (!values) return true;
  const seen = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const v = values[i] as number;
    if (v >= data.length || seen[v] || data[v] !== keys[i]) return false;
    seen[v] = 1;
    if (i > 0 && keys[i - 1] === keys[i] && (values[i - 1] as number) > v) return false;
  }
  return true;
}

/**
 * Median GPU time of one `body` under sustained load, the suite's protocol (gpu-check.ts
 * times every row by it): batches of back-to-back runs filling about 50 ms each (at most
 * 64 runs, one GPU-timestamp measurement per batch), after at least `warmupMs` (default
 * 500) of such batches; the median over `reps` batches of each batch's mean. Run one at a
 * time (a host round trip between runs) the H100's SM clock stayed at 345-465 MHz
 * (throttle reason "GPU idle") and memory-bound kernels took up to 1.75x longer, whereas
 * CUB's timing loop keeps the clocks up.
 */
export async function sustainedMedian(
  device: Device,
  label: string,
  body: () => void,
  options: { reps?: number; warmupMs?: number } = {},
): Promise<number> {
  const { reps = 5, warmupMs = 500 } = options;
  const once = (await device.time(`${label} (first run)`, body)).ms;
  const perBatch = Math.max(1, Math.min(64, Math.ceil(50 / Math.max(once, 1e-3))));
  const batch = async () =>
    (
      await device.time(label, () => {
        for (let r = 0; r < perBatch; r++) body();
      })
    ).ms / perBatch;
  for (let warm = 0; warm < warmupMs; ) warm += (await batch()) * perBatch;
  const ms: number[] = [];
  for (let r = 0; r < reps; r++) ms.push(await batch());
  return medianOf(ms);
}
