/**
 * Timing a Node-side peer of a case (graphology, a sequential reference, TF.js,
 * gpu.js) beside Trident in the same run: the peer's own structure is built
 * untimed, then the same adaptive warm-up as Trident's (timing.ts), one checked
 * run and repeated runs on the wall clock.
 */
import { cpus } from 'node:os';
import { type BenchCase, type PeerRun, PeerUnavailableError } from './cases.ts';
import type { RunSettings } from './runner.ts';
import { type Measurement, throughputOf } from './schema.ts';
import { summarize } from './stats.ts';
import { timeRepeats, warmUp, warmupRule } from './timing.ts';

/** A peer's measurement, or why the peer cannot run here at all (its library does not load): the results' `unavailable` list. */
export type PeerOutcome = { readonly measurement: Measurement } | { readonly unavailable: string };

export async function measurePeer(c: BenchCase, n: number, peer: PeerRun, settings: RunSettings): Promise<PeerOutcome> {
  const base = {
    algorithm: c.algorithm,
    variant: peer.variant ?? c.variant,
    implementation: peer.implementation,
    backend: 'js',
    runtime: 'node',
    adapter: `${cpus()[0]?.model ?? 'cpu'} (one thread)`,
    n,
    dtype: c.dtype,
    timer: 'wall',
    ...(c.edges ? { edges: c.edges(n) } : {}),
    ...(peer.bytes !== undefined ? { bytes: peer.bytes } : {}),
    ...(peer.flops !== undefined ? { flops: peer.flops } : {}),
  } as const;
  let warmup = 0;
  try {
    await peer.prepare();
    // One checked run first, then the warm-up (the protocol of bench/runner.ts).
    peer.run();
    const verified = peer.verify();
    warmup = await warmUp(() => peer.run(), warmupRule(settings));
    const samples = await timeRepeats(() => peer.run(), settings);
    const ms = summarize(samples);
    const throughput = throughputOf(peer.bytes, peer.flops, ms.median, base.edges);
    return { measurement: { ...base, warmup, repeats: samples.length, ms, ...(throughput ? { throughput } : {}), verified } };
  } catch (err) {
    const message = (err instanceof Error ? `${err.name}: ${err.message}` : String(err)).replace(/\s*\n\s*/g, ' ');
    if (err instanceof PeerUnavailableError) return { unavailable: err.message.replace(/\s*\n\s*/g, ' ') };
    return { measurement: { ...base, warmup, repeats: 0, error: message } };
  }
}
