/**
 * Order statistics of repeated timings: the one statistics module of the project (the CLI's
 * bench and report, and every script under bench/, use it).
 */
import type { Stats } from './schema.ts';

/** Quantile q in [0, 1] of sorted values, interpolating linearly (NumPy's default). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (pos - lo);
}

/** The median of `values` (any order; the mean of the two middle values for even lengths, as NumPy's). */
export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/** Order statistics of repeated timings: median, extremes, quartiles and the samples. */
export function summarize(samples: readonly number[]): Stats {
  if (samples.length === 0) throw new RangeError('no samples to summarize');
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    median: quantile(sorted, 0.5),
    min: sorted[0] as number,
    max: sorted[sorted.length - 1] as number,
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
    samples: [...samples],
  };
}
