/**
 * Where a CPU dispatch runs: inline on the calling thread, or split over the
 * persistent workers; and which code runs it, WebAssembly or JavaScript. Pure rules,
 * kept apart from the device so that they can be tested without timing anything.
 */

/**
 * Which code runs a dispatch: the kernel's WebAssembly only while every buffer it is
 * given lies in the device's heap. A wasm32 module addresses one memory of at most
 * 4 GiB by byte offset; a buffer in a host block (host-blocks.ts) is outside it, so a
 * dispatch with one runs the kernel's generated JavaScript, which takes any typed array.
 * A rule, not a measurement: the WebAssembly could not reach the bytes.
 */
export function kernelPath(compiled: 'wasm' | 'js', anyHostBlock: boolean): 'wasm' | 'js' {
  return compiled === 'wasm' && !anyHostBlock ? 'wasm' : 'js';
}

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
  return d.oneThreadNs < workersNs(d, d.oneThreadNs);
}

/** The workers' predicted time for a dispatch of `oneThreadNs` on one thread: their round trip plus its share per worker. */
function workersNs(d: DispatchCost, oneThreadNs: number): number {
  return d.roundTripNs + oneThreadNs / Math.min(d.workers, d.workgroups);
}

/**
 * A dispatch predicted to take at least this many of the workers' round trips on one thread
 * runs alone in its batch: one more wake-up costs it at most a thousandth, and its wall time
 * and cost are then its own. In a batch of several kernels (a scan's chunk sums, then its
 * chunk scans) neither can be told apart, so a kernel's choice kept the workers' way
 * unmeasured and its cost as first learned, when it ran alone the first time, compiling and
 * faulting its pages in: a later inline run, measured warm, then beat that cold figure, and
 * dispatches of seconds ran on one thread.
 */
export const ALONE_ROUND_TRIPS = 1000;

/** Whether a dispatch runs alone in its batch on the workers (see ALONE_ROUND_TRIPS); never measured: alone too. */
export function runsAlone(oneThreadNs: number | undefined, roundTripNs: number): boolean {
  return oneThreadNs === undefined || oneThreadNs >= ALONE_ROUND_TRIPS * roundTripNs;
}

/** Decisions between two tries of the way not taken, per unit of the ratio of its estimate to the taken way's. */
export const RETRY_EVERY = 32;
/**
 * The same while a way has fewer than SETTLED_SAMPLES measurements: soon, since only
 * measurements can overrule the model, and a first one can be far off (on a loaded
 * 2-vCPU VM the model put a 2^24 reduce on the workers at 7-8 ms where inline ran it
 * in 5.5; the first run of a new size on the workers took 15.5 ms where the next
 * took 3.5-4; a bench's ~20 warm-up runs at that size never retried either).
 */
export const FIRST_TRY_EVERY = 4;
export const SETTLED_SAMPLES = 3;
/** Measurements a way's estimate is taken from: the last few, their lower quartile. */
export const CHOICE_WINDOW = 8;

/**
 * The measured wall time of one kernel's dispatches of one size (elements and
 * workgroups, to a power of two), per way of running them: inline, or on the
 * workers (their whole round trip, from waking them to the join). The model
 * (`inlineIsFaster`'s costs) decides until both ways were measured, then the
 * measurements do: a model of the round trip cannot see what the machine's other
 * load does to the workers (a 2-vCPU VM where another process holds a core: the
 * two halves of a dispatch run one after the other) nor what one thread's memory
 * bandwidth is worth against two, and a wrong choice of the model stayed
 * (bench/results/tuning/LEDGER.md, cpu.dispatchChoice). The way not taken is tried again
 * now and then — the sooner, the closer it was — so that an estimate made under
 * other conditions does not stay: after RETRY_EVERY decisions per unit of the
 * ratio of the two estimates, so that retries cost at most 1 / RETRY_EVERY of the time.
 * Each way's estimate is the lower quartile of its last CHOICE_WINDOW measurements:
 * noise only ever adds time (the first run after the thread did other work runs
 * 2-4x slower), so one slow run moves nothing, a lasting change does.
 */
export class MeasuredChoice {
  private readonly inline = new Window();
  private readonly workers = new Window();
  private sinceRetry = 0;

  /** ns per dispatch run inline (undefined: never measured). */
  get inlineNs(): number | undefined {
    return this.inline.estimate;
  }

  /** ns per dispatch on the workers, from waking them to the join (undefined: never measured). */
  get workersNs(): number | undefined {
    return this.workers.estimate;
  }

  /** Whether to run this dispatch inline; `model` stands in for a way never measured. */
  chooseInline(model: DispatchCost): boolean {
    if (model.workgroups === 1) return true;
    const oneThread = model.oneThreadNs;
    const inline = this.inlineNs ?? oneThread;
    // A kernel never measured: on the workers (its loops may be long; only a worker run can be stopped).
    if (inline === undefined) return false;
    const workers = this.workersNs ?? workersNs(model, oneThread ?? inline);
    const inlineBetter = inline < workers;
    const ratio = Math.max(inline, workers) / Math.max(1, Math.min(inline, workers));
    const settled = Math.min(this.inline.count, this.workers.count) >= SETTLED_SAMPLES;
    const every = settled ? RETRY_EVERY : FIRST_TRY_EVERY;
    if (++this.sinceRetry >= every * ratio) {
      this.sinceRetry = 0;
      return !inlineBetter;
    }
    return inlineBetter;
  }

  /** One dispatch's measured wall time, in ns, run inline (true) or on the workers. */
  record(inline: boolean, ns: number): void {
    if (!(ns >= 0) || !Number.isFinite(ns)) return;
    (inline ? this.inline : this.workers).record(ns);
  }
}

/** The last CHOICE_WINDOW measurements of one way and their lower quartile (no allocation per measurement). */
class Window {
  private readonly samples: number[] = [];
  private next = 0;
  estimate: number | undefined;

  /** Measurements held (at most CHOICE_WINDOW). */
  get count(): number {
    return this.samples.length;
  }

  record(ns: number): void {
    const s = this.samples;
    if (s.length < CHOICE_WINDOW) s.push(ns);
    else s[this.next] = ns;
    this.next = (this.next + 1) % CHOICE_WINDOW;
    // The lower quartile of at most 8 values: the smallest of up to 4, else the second smallest.
    let first = Number.POSITIVE_INFINITY;
    let second = Number.POSITIVE_INFINITY;
    for (let i = 0; i < s.length; i++) {
      const x = s[i] as number;
      if (x < first) {
        second = first;
        first = x;
      } else if (x < second) second = x;
    }
    this.estimate = s.length <= 4 ? first : second;
  }
}

/** The key of a dispatch's size for MeasuredChoice: its elements and workgroups, each to a power of two. */
export function sizeClass(elements: number, workgroups: number): number {
  return log2Floor(elements) * 64 + log2Floor(workgroups);
}

/** floor(log2(n)) for n ≥ 1, 0 below (counts past 2^32 - 1 share the top class). */
function log2Floor(n: number): number {
  return 31 - Math.clz32(Math.max(1, Math.min(n, 0xffffffff)));
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
