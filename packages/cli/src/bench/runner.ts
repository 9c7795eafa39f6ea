/**
 * Timing one case at one size on one device: one run checked against the sequential
 * reference, warm-up runs (compile, allocate, JIT; adaptive, as timing.ts says) through
 * `device.time` as the timed runs go, then repeated timed runs through `device.time`, which
 * gives GPU timestamps where the device has them and wall clock otherwise. The check comes
 * first (for peers and ceilings too, and as the page's peers always did): it reads the result
 * back and computes the reference on the host, tens of ms at 2^24, a pause after which the
 * first one or two timed runs measured 2-5x slower (workers asleep, caches cold, a GPU's clock
 * down); the warm-up after it brings the device back to its steady state.
 *
 * Where the timer is gpu-timestamp, the same runs are also timed on the wall
 * clock, from the call until `device.time` resolved — it resolves once the GPU
 * timestamps are read back, so after the work completed — and kept as `wallMs`.
 * No extra runs; the result stays on the device.
 *
 * With `settings.sustained` (the GPU machine's suite, the GPU backends of its browser
 * bench) the checked run is followed by the sustained protocol instead (bench/sustained.ts:
 * back-to-back runs in batches under sustained load, the median of the batch means); its
 * warm-up also brings the device back after the check's host-side pause. Each row says
 * which protocol timed it (`protocol`).
 *
 * Cases whose result a peer reads back (BenchCase `read`: the peers' wall clock includes
 * `await t.data()`) get runs of their own after those, each timed on the wall clock from
 * the call until the result was in host memory, by the adaptive protocol as the peers are
 * (`wallWithReadMs`): the report's wall-vs-wall comparisons use that figure. Settings with
 * no repeats (the suite's) take none.
 */
import { zcopy } from '@trident/algorithms';
import type { Device } from 'trident';
import type { BenchCase, PreparedRun } from './cases.ts';
import { type Measurement, type Stats, type TimerSourceName, throughputOf } from './schema.ts';
import { summarize } from './stats.ts';
import { type SustainedSettings, timeSustained } from './sustained.ts';
import { timeRepeats, warmUp, warmupRule } from './timing.ts';

export interface RunSettings {
  /** Untimed runs at least (--warmup). */
  readonly warmup: number;
  /** Then more untimed runs while the warm-up took less than this (--warmup-ms; timing.ts). */
  readonly warmupMs: number;
  readonly repeats: number;
  /**
   * Stop repeating (after at least 3 timed runs) once the timed runs of one
   * measurement took this long: keeps slow cases (software GPUs) from dominating.
   */
  readonly budgetMs: number;
  /**
   * Time by the sustained protocol instead of warm-up + repeats (`--suite`, the browser bench's
   * GPU backends); the fields above then serve only the runs that include the result's read.
   */
  readonly sustained?: SustainedSettings;
}

/**
 * Wall-clock ms per run of `run` + `read` (the result into host memory), in runs of their own
 * timed as the peers are: adaptive warm-up, then repeats (bench/timing.ts). Undefined where the
 * settings ask for no repeats.
 */
async function timeWithRead(p: PreparedRun, read: () => Promise<unknown>, settings: RunSettings): Promise<Stats | undefined> {
  if (settings.repeats === 0) return undefined;
  const once = async (): Promise<void> => {
    await p.run();
    await read();
  };
  await warmUp(once, warmupRule(settings));
  return summarize(await timeRepeats(once, settings));
}

/**
 * Back-to-back copies for `ms` (GPU time where the device has timestamps): the clock of a GPU
 * that sat idle comes up before the first measurement. Browser-safe.
 */
export async function warmDevice(device: Device, n: number, ms: number): Promise<void> {
  if (ms <= 0) return;
  const size = Math.min(n, device.caps.limits.maxBufferElements);
  const src = device.createBuffer('u32', size);
  const dst = device.createBuffer('u32', size);
  try {
    const copy = (): void => void zcopy(device, src, { output: dst });
    await timeSustained(device, 'device warm-up', copy, { batches: 0, warmupMs: ms, batchMs: 50, maxBatchRuns: 64 });
  } finally {
    src.destroy();
    dst.destroy();
  }
}

export async function measureCase(
  device: Device,
  c: BenchCase,
  n: number,
  settings: RunSettings,
  runtime: Measurement['runtime'] = 'node',
): Promise<Measurement> {
  const base = {
    algorithm: c.algorithm,
    variant: c.variant,
    implementation: 'trident',
    backend: device.backend,
    runtime,
    adapter: device.info.adapter,
    n,
    dtype: c.dtype,
    ...(c.bytes ? { bytes: c.bytes(n) } : {}),
    ...(c.flops ? { flops: c.flops(n) } : {}),
    ...(c.edges ? { edges: c.edges(n) } : {}),
  } as const;
  let prepared: ReturnType<BenchCase['setup']> | undefined;
  let warmup = 0;
  try {
    prepared = c.setup(device, n);
    const p = prepared;
    const label = `${c.algorithm}:${c.variant}:${n}`;
    // The checked run, then the warm-up, which runs what the repeats time, through device.time
    // as they do: warmed up through run + flush instead, the first timed call compiled
    // device.time's own path and took several times the next one's.
    await device.time(label, () => p.run());
    const verified = await p.verify();
    const withRead = async (): Promise<{ wallWithReadMs?: Stats }> => {
      const stats = p.read ? await timeWithRead(p, p.read, settings) : undefined;
      return stats ? { wallWithReadMs: stats } : {};
    };
    if (settings.sustained) {
      const t = await timeSustained(device, label, () => p.run(), settings.sustained);
      warmup = t.warmupRuns;
      const ms = summarize(t.samples);
      const throughput = throughputOf(base.bytes, base.flops, ms.median, base.edges);
      return {
        ...base,
        warmup,
        timer: t.source,
        repeats: t.samples.length,
        protocol: 'sustained',
        ms,
        ...(t.source === 'gpu-timestamp' ? { wallMs: summarize(t.walls) } : {}),
        ...(await withRead()),
        ...(throughput ? { throughput } : {}),
        verified,
      };
    }
    warmup = await warmUp(() => device.time(label, () => p.run()), warmupRule(settings));
    const samples: number[] = [];
    let timer: TimerSourceName | undefined;
    let spent = 0;
    const walls: number[] = [];
    for (let i = 0; i < settings.repeats; i++) {
      const w0 = performance.now();
      const t = await device.time(label, () => p.run());
      walls.push(performance.now() - w0);
      if (timer !== undefined && t.source !== timer) {
        // Never mix clocks within one measurement: report it instead of averaging across sources.
        return {
          ...base,
          warmup,
          timer,
          repeats: samples.length,
          protocol: 'adaptive',
          error: `timer source changed from ${timer} to ${t.source} between repeats`,
        };
      }
      timer = t.source;
      samples.push(t.ms);
      spent += t.ms;
      if (samples.length >= 3 && spent > settings.budgetMs) break;
    }
    const wallMs = timer === 'gpu-timestamp' ? summarize(walls) : undefined;
    const ms = summarize(samples);
    const throughput = throughputOf(base.bytes, base.flops, ms.median, base.edges);
    return {
      ...base,
      warmup,
      timer: timer ?? device.caps.timerSource,
      repeats: samples.length,
      protocol: 'adaptive',
      ms,
      ...(wallMs ? { wallMs } : {}),
      ...(await withRead()),
      ...(throughput ? { throughput } : {}),
      verified,
    };
  } catch (err) {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return { ...base, warmup, timer: device.caps.timerSource, repeats: 0, error: message.replace(/\s*\n\s*/g, ' ') };
  } finally {
    prepared?.dispose();
  }
}
