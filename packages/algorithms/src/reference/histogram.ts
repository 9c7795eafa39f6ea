/** Sequential reference of `histogram`: counts of each value < bins; values >= bins are ignored. */
export function histogramReference(values: Uint32Array, bins: number): Uint32Array {
  const out = new Uint32Array(bins);
  for (const v of values) if (v < bins) out[v] = (out[v] as number) + 1;
  return out;
}
