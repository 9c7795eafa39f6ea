/**
 * Warm-up and timed repeats, the same for every measurement — Trident, peers and
 * ceilings, in Node and in the benchmark page.
 *
 * The warm-up: untimed runs until the code under test has settled.
 *
 * A fixed count is not enough: the cpu backend JIT-compiles its kernels inside
 * worker threads, and plain loops and TF.js's cpu kernels are JIT-compiled too;
 * each needs some 10–20 calls before V8 runs optimized code (reduce sum 2^20 in
 * Node: median 2.76 ms after 2 warm-ups, 0.85 ms after 20). So the warm-up runs at
 * least `min` times, then keeps going while its elapsed time (plus the last run's,
 * so it does not overshoot) stays within `budgetMs`, up to `max` runs. A run longer
 * than `slowMs` ends it at once: a slow case has compiled by then, and a software
 * GPU gains nothing from more.
 *
 * Browser-safe (no Node imports): the page bundles it.
 */

export interface WarmupRule {
  /** Runs at least this many times (--warmup), unless one run is slow. */
  readonly min: number;
  /** Then warms on while elapsed + the last run's time stays within this (--warmup-ms). */
  readonly budgetMs: number;
  /** One run longer than this ends the warm-up. */
  readonly slowMs: number;
  /** Never more runs than this. */
  readonly max: number;
}

/** Enough calls for V8's optimizing tiers (TurboFan after some tens of calls or loop iterations), with room. */
export const WARMUP_MAX_RUNS = 50;

/** The warm-up part of the bench settings (bench/runner.ts RunSettings). */
export interface WarmupSettings {
  readonly warmup: number;
  readonly warmupMs: number;
  readonly budgetMs: number;
}

/** The rule `trident bench` applies: a run over a quarter of the measurement's budget counts as slow (as before adaptive warm-up). */
export function warmupRule(settings: WarmupSettings): WarmupRule {
  return {
    min: settings.warmup,
    budgetMs: settings.warmupMs,
    slowMs: settings.budgetMs / 4,
    max: Math.max(settings.warmup, WARMUP_MAX_RUNS),
  };
}

/** Runs `run` untimed as `rule` says; returns how many times it ran (the measurement's `warmup`). */
export async function warmUp(run: () => unknown, rule: WarmupRule, now: () => number = () => performance.now()): Promise<number> {
  const start = now();
  let count = 0;
  let last = 0;
  while (count < rule.max) {
    if (count >= rule.min && now() - start + last >= rule.budgetMs) break;
    const t0 = now();
    await run();
    last = now() - t0;
    count++;
    if (last > rule.slowMs) break;
  }
  return count;
}

/** The timed part of the bench settings. */
export interface RepeatSettings {
  readonly repeats: number;
  readonly budgetMs: number;
}

/**
 * Times `run` on the wall clock `repeats` times, or fewer once the timed runs took
 * `budgetMs` in all (never fewer than 3): keeps slow cases from dominating a run.
 */
export async function timeRepeats(
  run: () => unknown,
  settings: RepeatSettings,
  now: () => number = () => performance.now(),
): Promise<number[]> {
  const samples: number[] = [];
  let spent = 0;
  for (let i = 0; i < settings.repeats; i++) {
    const t0 = now();
    await run();
    const ms = now() - t0;
    samples.push(ms);
    spent += ms;
    if (samples.length >= 3 && spent > settings.budgetMs) break;
  }
  return samples;
}
