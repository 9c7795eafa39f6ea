/** Order statistics of repeated timings. */
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
