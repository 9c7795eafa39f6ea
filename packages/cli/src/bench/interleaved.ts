/**
 * Wall-clock protocols for what a caller waits for (a call awaited with its read), used
 * by the GPU machine's latency and read checks (bench/h100/latency-check.ts,
 * read-probe.ts). Browser-safe (no Node imports).
 */
import type { Stats } from './schema.ts';
import { summarize } from './stats.ts';

/** Awaited calls of `run`, at least 5 and at least 200 ms of them: JIT, caches and clocks settle. */
async function warm(run: () => Promise<unknown>): Promise<void> {
  const start = performance.now();
  for (let i = 0; i < 5 || performance.now() - start < 200; i++) await run();
}

/** Wall-clock statistics of `reps` awaited calls of `run`, after the warm-up: host work included. */
export async function wallMedian(run: () => Promise<unknown>, reps = 21): Promise<Stats> {
  await warm(run);
  const ms: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
  }
  return summarize(ms);
}

/**
 * Wall-clock statistics of several awaited calls measured in interleaved rounds: each run
 * is warmed up, then `rounds` times every run takes 3 untimed and `perRound` timed calls
 * in turn; each run's statistics over its rounds · perRound calls. A transient slow spell
 * of the machine (a clock ramp, a collection, a neighbour) then falls on every run alike
 * instead of on whichever was measured during it.
 */
export async function interleavedMedians(runs: ReadonlyArray<() => Promise<unknown>>, rounds = 3, perRound = 7): Promise<Stats[]> {
  for (const run of runs) await warm(run);
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
  return samples.map((ms) => summarize(ms));
}
