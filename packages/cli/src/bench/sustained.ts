/**
 * GPU timing under sustained load: the protocol of the GPU machine's suite
 * (`trident bench --suite h100`) and of the tuning checks under bench/h100/.
 *
 * Why: run one at a time, with a host round trip between runs, the H100 drops its SM
 * clock (throttle reason "GPU idle") and memory-bound kernels run slower, whereas CUB's
 * timing loop keeps the clocks up (bench/results/tuning/h100-clock-diagnosis-2026-11-22.json).
 * So runs go back to back in batches of `batchMs` each (one GPU-timestamp measurement per
 * batch), after `warmupMs` of the same load, and the figure is the median over the batches
 * of each batch's mean — the way CUB's benchmark calls a primitive back to back into
 * outputs allocated once.
 *
 * Browser-safe (no Node imports).
 */
import type { Device, TimerSource } from 'trident';
import { median } from './stats.ts';

export interface SustainedSettings {
  /** Timed batches; the measurement's samples are their per-run means. */
  readonly batches: number;
  /** GPU milliseconds of back-to-back batches before the timed ones (the clock ramp). */
  readonly warmupMs: number;
  /** A batch runs the body back to back for about this many milliseconds… */
  readonly batchMs: number;
  /** …but never more than this many times. */
  readonly maxBatchRuns: number;
}

/** The suite's settings (`--repeats` and `--warmup-ms` override the first two). */
export const SUSTAINED: SustainedSettings = { batches: 5, warmupMs: 500, batchMs: 50, maxBatchRuns: 64 };

export interface SustainedTiming {
  /** Milliseconds per run: each timed batch's mean. */
  readonly samples: number[];
  /** Wall-clock milliseconds per run of the same batches, from the call until the timestamps were read back. */
  readonly walls: number[];
  readonly source: TimerSource;
  /** Untimed runs: the first (which sizes the batches) and the warm-up batches'. */
  readonly warmupRuns: number;
  /** Runs per batch. */
  readonly perBatch: number;
}

/** A timer source that changed between batches: the measurement cannot be one figure. */
export class TimerSourceChangedError extends Error {
  override readonly name = 'TimerSourceChangedError';
}

/** Runs `body` back to back `times` times, awaiting it only where it returns a promise (a sync body records in one go). */
async function repeat(body: () => void | Promise<void>, times: number): Promise<void> {
  for (let r = 0; r < times; r++) {
    const pending = body();
    if (pending) await pending;
  }
}

/** Times `body` by the sustained protocol (see the file's header). */
export async function timeSustained(
  device: Device,
  label: string,
  body: () => void | Promise<void>,
  settings: SustainedSettings = SUSTAINED,
): Promise<SustainedTiming> {
  const first = await device.time(`${label} (first run)`, body);
  const perBatch = Math.max(1, Math.min(settings.maxBatchRuns, Math.ceil(settings.batchMs / Math.max(first.ms, 1e-3))));
  const batch = async (): Promise<{ ms: number; wall: number }> => {
    const w0 = performance.now();
    const t = await device.time(label, () => repeat(body, perBatch));
    if (t.source !== first.source)
      throw new TimerSourceChangedError(`timer source changed from ${first.source} to ${t.source} between batches`);
    return { ms: t.ms / perBatch, wall: (performance.now() - w0) / perBatch };
  };
  let warmupRuns = 1;
  // A body whose timed span reads ~0 (nothing recorded) would never fill the warm-up: the wall clock bounds it too.
  const wallLimit = performance.now() + 10 * settings.warmupMs + 1000;
  for (let warm = 0; warm < settings.warmupMs && performance.now() < wallLimit; ) {
    warm += (await batch()).ms * perBatch;
    warmupRuns += perBatch;
  }
  const samples: number[] = [];
  const walls: number[] = [];
  for (let b = 0; b < settings.batches; b++) {
    const t = await batch();
    samples.push(t.ms);
    walls.push(t.wall);
  }
  return { samples, walls, source: first.source, warmupRuns, perBatch };
}

/** The median per-run time of `body` under sustained load (the tuning checks' figure). */
export async function sustainedMedian(
  device: Device,
  label: string,
  body: () => void | Promise<void>,
  options: { readonly reps?: number; readonly warmupMs?: number } = {},
): Promise<number> {
  const t = await timeSustained(device, label, body, {
    ...SUSTAINED,
    ...(options.reps !== undefined ? { batches: options.reps } : {}),
    ...(options.warmupMs !== undefined ? { warmupMs: options.warmupMs } : {}),
  });
  return median(t.samples);
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
 * compiles, allocates temporaries and raises the clocks. The tuning sweeps' protocol,
 * lighter than the sustained one, for comparing many shapes of one kernel in one call.
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
  return median(ms);
}
