/**
 * Where a CPU dispatch runs: inline on the calling thread, or split over the
 * persistent workers (issue 10). Pure rules, kept apart from the device so that
 * they can be tested without timing anything.
 */

/**
 * Bounds on the workers' round trip (waking them, joining them) as estimated from
 * measured batches, in ns. The floor keeps a burst of lucky samples from sending
 * kernels of a few µs to the workers; the ceiling keeps a loaded machine from ever
 * sending a dispatch of milliseconds inline (a choice it could not revisit: a
 * dispatch run inline measures nothing about the workers).
 */
export const ROUND_TRIP_FLOOR_NS = 5_000;
export const ROUND_TRIP_CEILING_NS = 150_000;
/** The estimate before any batch was measured (a 2-core VM in Node 20, bench/cpu-dispatch.ts). */
export const ROUND_TRIP_DEFAULT_NS = 25_000;

export interface DispatchCost {
  /** The dispatch's predicted time on one thread, in ns (undefined: never measured). */
  readonly oneThreadNs: number | undefined;
  readonly workgroups: number;
  readonly workers: number;
  /** The workers' estimated round trip, in ns. */
  readonly roundTripNs: number;
}

/**
 * Inline when one thread is predicted to finish before the workers would: their
 * round trip plus the dispatch split over as many of them as it has workgroups.
 * A single workgroup runs on one thread either way; a kernel never measured goes to
 * the workers (its loops may be long, and only a worker run can be stopped by the time limit).
 */
export function inlineIsFaster(d: DispatchCost): boolean {
  if (d.workgroups === 1) return true;
  if (d.oneThreadNs === undefined) return false;
  const share = Math.min(d.workers, d.workgroups);
  return d.oneThreadNs < d.roundTripNs + d.oneThreadNs / share;
}

/**
 * A kernel's measured one-thread cost, per workgroup and per element of the buffers
 * it was given (averages that follow recent runs: uniforms change the cost).
 */
export interface KernelCost {
  readonly nsPerWorkgroup: number;
  readonly nsPerElement: number;
}

/**
 * Folds one measured run (ns on one thread, over `workgroups` workgroups and buffers
 * of `elements` elements together) into the kernel's cost.
 */
export function learnCost(cost: KernelCost | undefined, ns: number, workgroups: number, elements: number): KernelCost {
  const perWorkgroup = ns / workgroups;
  const perElement = ns / Math.max(1, elements);
  if (!cost) return { nsPerWorkgroup: perWorkgroup, nsPerElement: perElement };
  return {
    nsPerWorkgroup: 0.5 * cost.nsPerWorkgroup + 0.5 * perWorkgroup,
    nsPerElement: 0.5 * cost.nsPerElement + 0.5 * perElement,
  };
}

/**
 * The dispatch's predicted one-thread time: the larger of its cost scaled by its
 * workgroups and by the elements of its buffers. A kernel whose workgroups loop over
 * their share of the data (a chunked reduce: two workgroups at 2^10 and at 2^24
 * elements) costs in proportion to the data, an elementwise one to both; taking the
 * larger keeps a cost learned on small data from sending large data inline.
 */
export function predictOneThreadNs(cost: KernelCost | undefined, workgroups: number, elements: number): number | undefined {
  if (!cost) return undefined;
  return Math.max(cost.nsPerWorkgroup * workgroups, cost.nsPerElement * Math.max(1, elements));
}

/**
 * The workers' round trip from the last few measured batches (wall time minus the
 * longest worker's kernel time): their lower quartile, so that one slow batch
 * (the machine busy elsewhere, a garbage collection) moves nothing, bounded by
 * ROUND_TRIP_FLOOR_NS and ROUND_TRIP_CEILING_NS.
 */
export class RoundTripEstimate {
  private readonly samples: number[] = [];
  private next = 0;
  private cached = ROUND_TRIP_DEFAULT_NS;

  constructor(private readonly window = 16) {}

  /** One measured round trip, in ns (negative or non-finite values are clock noise: ignored). */
  record(ns: number): void {
    if (!(ns >= 0) || !Number.isFinite(ns)) return;
    if (this.samples.length < this.window) this.samples.push(ns);
    else this.samples[this.next] = ns;
    this.next = (this.next + 1) % this.window;
    const sorted = [...this.samples].sort((a, b) => a - b);
    const quartile = sorted[Math.floor((sorted.length - 1) / 4)] ?? ROUND_TRIP_DEFAULT_NS;
    this.cached = Math.min(ROUND_TRIP_CEILING_NS, Math.max(ROUND_TRIP_FLOOR_NS, quartile));
  }

  /** The estimate in ns (ROUND_TRIP_DEFAULT_NS until a batch was measured). */
  get ns(): number {
    return this.cached;
  }
}
