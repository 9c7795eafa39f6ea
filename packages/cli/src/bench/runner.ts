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
 * timestamps are read back, so after the work completed — and kept as `wallMs`:
 * the report compares Trident with peers that have only a wall clock (which
 * includes their result read) like for like. No extra runs.
 *
 * With `settings.sustained` (the GPU machine's suite) the checked run is followed by the
 * sustained protocol instead (bench/sustained.ts: back-to-back runs in batches under
 * sustained load, the median of the batch means); its warm-up also brings the device back
 * after the check's host-side pause.
 */
import type { Device } from 'trident';
import type { BenchCase } from './cases.ts';
import { type Measurement, type TimerSourceName, throughputOf } from './schema.ts';
import { summarize } from './stats.ts';
import { type SustainedSettings, timeSustained } from './sustained.ts';
import { warmUp, warmupRule } from './timing.ts';

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
  /** Time by the sustained protocol instead of warm-up + repeats (`--suite`); the fields above are then unused. */
  readonly sustained?: SustainedSettings;
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
    // device.time's own path (Node cpu reduce 2^16: 130 µs against 20 for the next).
    await device.time(label, () => p.run());
    const verified = await p.verify();
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
        ms,
        ...(t.source === 'gpu-timestamp' ? { wallMs: summarize(t.walls) } : {}),
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
      ms,
      ...(wallMs ? { wallMs } : {}),
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
