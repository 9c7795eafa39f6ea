/**
 * Timing one case at one size on one device: warm-up runs (compile, allocate,
 * JIT), one checked run, then repeated timed runs through `device.time`, which
 * gives GPU timestamps where the device has them and wall clock otherwise.
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
    for (let i = 0; i < settings.repeats; i++) {
      const t = await device.time(`${c.algorithm}:${c.variant}:${n}`, () => p.run());
      if (timer !== undefined && t.source !== timer) {
        // Never mix clocks within one measurement: report it instead of averaging across sources.
        return { ...base, timer, repeats: samples.length, error: `timer source changed from ${timer} to ${t.source} between repeats` };
      }
      timer = t.source;
      samples.push(t.ms);
      spent += t.ms;
      if (samples.length >= 3 && spent > settings.budgetMs) break;
    }
    const ms = summarize(samples);
    const throughput = throughputOf(base.bytes, base.flops, ms.median, base.edges);
    return {
      ...base,
      timer: timer ?? device.caps.timerSource,
      repeats: samples.length,
      ms,
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
