/**
 * Timing one case at one size on one device: warm-up runs (compile, allocate,
 * JIT), one checked run, then repeated timed runs through `device.time`, which
 * gives GPU timestamps where the device has them and wall clock otherwise.
 *
 * Where the timer is gpu-timestamp, the same runs are also timed on the wall
 * clock, from the call until `device.time` resolved — it resolves once the GPU
 * timestamps are read back, so after the work completed — and kept as `wallMs`:
 * the report compares Trident with peers that have only a wall clock (which
 * includes their result read) like for like. No extra runs.
 */
import type { Device } from 'trident';
import type { BenchCase } from './cases.ts';
import { type Measurement, type TimerSourceName, throughputOf } from './schema.ts';
import { summarize } from './stats.ts';

export interface RunSettings {
  readonly warmup: number;
  readonly repeats: number;
  /**
   * Stop repeating (after at least 3 timed runs) once the timed runs of one
   * measurement took this long: keeps slow cases (software GPUs) from dominating.
   */
  readonly budgetMs: number;
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
    warmup: settings.warmup,
    ...(c.bytes ? { bytes: c.bytes(n) } : {}),
    ...(c.flops ? { flops: c.flops(n) } : {}),
    ...(c.edges ? { edges: c.edges(n) } : {}),
  } as const;
  let prepared: ReturnType<BenchCase['setup']> | undefined;
  try {
    prepared = c.setup(device, n);
    const p = prepared;
    for (let i = 0; i < settings.warmup; i++) {
      const t0 = performance.now();
      await p.run();
      await device.flush();
      // One warm-up is enough for a slow case (compiles are done; a software GPU gains nothing from more).
      if (performance.now() - t0 > settings.budgetMs / 4) break;
    }
    const verified = await p.verify();
    const samples: number[] = [];
    let timer: TimerSourceName | undefined;
    let spent = 0;
    const walls: number[] = [];
    for (let i = 0; i < settings.repeats; i++) {
      const w0 = performance.now();
      const t = await device.time(`${c.algorithm}:${c.variant}:${n}`, () => p.run());
      walls.push(performance.now() - w0);
      if (timer !== undefined && t.source !== timer) {
        // Never mix clocks within one measurement: report it instead of averaging across sources.
        return { ...base, timer, repeats: samples.length, error: `timer source changed from ${timer} to ${t.source} between repeats` };
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
      timer: timer ?? device.caps.timerSource,
      repeats: samples.length,
      ms,
      ...(wallMs ? { wallMs } : {}),
      ...(throughput ? { throughput } : {}),
      verified,
    };
  } catch (err) {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return { ...base, timer: device.caps.timerSource, repeats: 0, error: message.replace(/\s*\n\s*/g, ' ') };
  } finally {
    prepared?.dispose();
  }
}
