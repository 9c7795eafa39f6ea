/**
 * Timing a Node-side peer of a case (graphology, a sequential reference) beside
 * Trident in the same run: the peer's own structure is built untimed, then
 * warm-up runs, one checked run and repeated runs on the wall clock (one thread).
 */
import { cpus } from 'node:os';
import type { BenchCase, PeerRun } from './cases.ts';
import type { RunSettings } from './runner.ts';
import { type Measurement, throughputOf } from './schema.ts';
import { summarize } from './stats.ts';

export async function measurePeer(c: BenchCase, n: number, peer: PeerRun, settings: RunSettings): Promise<Measurement> {
  const base = {
    algorithm: c.algorithm,
    variant: c.variant,
    implementation: peer.implementation,
    backend: 'js',
    runtime: 'node',
    adapter: `${cpus()[0]?.model ?? 'cpu'} (one thread)`,
    n,
    dtype: c.dtype,
    timer: 'wall',
    warmup: 1,
    ...(c.edges ? { edges: c.edges(n) } : {}),
  } as const;
  try {
    await peer.prepare();
    peer.run();
    const verified = peer.verify();
    const samples: number[] = [];
    let spent = 0;
    for (let i = 0; i < settings.repeats; i++) {
      const t0 = performance.now();
      peer.run();
      const ms = performance.now() - t0;
      samples.push(ms);
      spent += ms;
      if (samples.length >= 3 && spent > settings.budgetMs) break;
      // Let the event loop breathe (progress output) between repeats.
      await new Promise((r) => setTimeout(r, 0));
    }
    const ms = summarize(samples);
    const throughput = throughputOf(undefined, undefined, ms.median, base.edges);
    return { ...base, repeats: samples.length, ms, ...(throughput ? { throughput } : {}), verified };
  } catch (err) {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return { ...base, repeats: 0, error: message.replace(/\s*\n\s*/g, ' ') };
  }
}
