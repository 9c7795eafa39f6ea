/**
 * The machine's own plain-JavaScript ceiling for the cpu backend: the copy ceiling (zcopy
 * copy: `TypedArray.prototype.set`, the platform's fastest copy, per thread), and reduce
 * sum, inclusive scan, 256-bin histogram and compaction written as plain loops, one
 * per thread over a contiguous chunk of SharedArrayBuffer-backed data, on as many
 * threads as the cpu backend has workers — worker_threads in Node, Web Workers in
 * the benchmark page. Same data as Trident's case, same warm-up and repeats, checked
 * against the same references.
 *
 * It is a ceiling, not a peer: rows carry `role: 'ceiling'`, and the report shows
 * Trident cpu's time as a share of it instead of a speedup to win.
 *
 * Each operation is what a hand-written threaded version would do:
 * - copy: each thread copies its chunk with `dst.set(src.subarray(lo, hi), lo)` (a memcpy
 *   inside V8): the machine's copy bandwidth on that many threads, the cpu platform's zcopy
 *   ceiling in the report (Trident's own cpu zcopy kernel is no ceiling);
 * - reduce: each thread sums its chunk; the calling thread adds the partials;
 * - scan: each thread scans its chunk in place; every chunk after the first then
 *   adds the total of the chunks before it (two passes);
 * - histogram: private counts per thread, summed by the calling thread;
 * - compact: each thread counts its kept elements, the calling thread turns the
 *   counts into offsets, each thread copies its kept elements there.
 * The output buffers are allocated once (Trident's compact allocates its output per
 * call): the ceiling is the cheap side of the comparison on purpose.
 *
 * Browser-safe (no Node imports): the thread is spawned by the caller
 * (ceiling-node.ts in Node, the page with a Blob URL).
 */
import { compactReference, histogramReference, randomU32, reduceReference, scanReference } from '@trident/algorithms';
import { sameArray } from './cases.ts';
import { type Measurement, throughputOf } from './schema.ts';
import { summarize } from './stats.ts';
import { timeRepeats, type WarmupSettings, warmUp, warmupRule } from './timing.ts';

/** The cases (`algorithm:variant`, as in cases.ts) that have a plain-JS ceiling. */
export const CEILING_CASES = ['zcopy:copy', 'reduce:sum', 'scan:inclusive', 'histogram:256 bins', 'compact:half kept'] as const;
export type CeilingCase = (typeof CEILING_CASES)[number];

export const isCeilingCase = (key: string): key is CeilingCase => (CEILING_CASES as readonly string[]).includes(key);

/** Operation codes in the control block, and its ints per thread: seq, op, lo, hi, arg, arg2, result, ack. */
const OPS = { yield: 0, sum: 1, scan: 2, add: 3, histogram: 4, count: 5, copy: 6, set: 7 } as const;
const SLOT = 8;

/** The implementation name of ceiling rows. */
export const CEILING_IMPLEMENTATION = 'plain JS threads';

/**
 * The threads' source: classic-script JavaScript that runs as a Node worker
 * (`eval: true`, CommonJS) or a Web Worker (from a Blob URL). One function per
 * operation so that V8 optimizes each loop on its own; counting and copying the
 * kept elements without a branch on the flag (a random flag mispredicts half the
 * time: 5x slower at 2^20 on this machine).
 *
 * Signalling, as a tuned threaded loop would do it (and as the cpu backend does):
 * a 'init' message hands over the buffers once per size; then each call writes the
 * operation into the thread's slot of a shared control block, bumps the slot's
 * sequence number and notifies; the thread, blocked in Atomics.wait, runs it, stores
 * the result and acknowledges the sequence number; the caller awaits the
 * acknowledgement with Atomics.waitAsync. A message per call measured 0.3 ms per
 * reduce at 2^16 here, more than the loop.
 */
export const CEILING_THREAD_SOURCE = `
'use strict';
let src = new Uint32Array(0), flags = new Uint32Array(0), dst = new Uint32Array(0), counts = new Uint32Array(0);
let ctrl = new Int32Array(8), base = 0;
function copyChunk(lo, hi) { dst.set(src.subarray(lo, hi), lo); return 0; }
function sum(lo, hi) { let s = 0; for (let i = lo; i < hi; i++) s = (s + src[i]) >>> 0; return s; }
function scan(lo, hi) { let s = 0; for (let i = lo; i < hi; i++) { s = (s + src[i]) >>> 0; dst[i] = s; } return s; }
function add(lo, hi, offset) { for (let i = lo; i < hi; i++) dst[i] = dst[i] + offset; return 0; }
function histogram(lo, hi, slot) {
  const c = new Uint32Array(256);
  for (let i = lo; i < hi; i++) c[src[i] & 255]++;
  counts.set(c, slot * 256);
  return 0;
}
function count(lo, hi) { let k = 0; for (let i = lo; i < hi; i++) { const f = flags[i] | 0; k += (f | -f) >>> 31; } return k; }
function copy(lo, hi, offset, end) {
  let o = offset;
  for (let i = lo; i < hi; i++) { const f = flags[i] | 0; if (o < end) dst[o] = src[i]; o += (f | -f) >>> 31; }
  return 0;
}
function serve(seen) {
  for (;;) {
    Atomics.wait(ctrl, base, seen);
    seen = Atomics.load(ctrl, base);
    const op = ctrl[base + 1], lo = ctrl[base + 2], hi = ctrl[base + 3], arg = ctrl[base + 4] >>> 0, arg2 = ctrl[base + 5] >>> 0;
    let r = 0;
    if (op === ${OPS.sum}) r = sum(lo, hi);
    else if (op === ${OPS.scan}) r = scan(lo, hi);
    else if (op === ${OPS.add}) r = add(lo, hi, arg);
    else if (op === ${OPS.histogram}) r = histogram(lo, hi, arg);
    else if (op === ${OPS.count}) r = count(lo, hi);
    else if (op === ${OPS.copy}) r = copy(lo, hi, arg, arg2);
    else if (op === ${OPS.set}) r = copyChunk(lo, hi);
    ctrl[base + 6] = r | 0;
    Atomics.store(ctrl, base + 7, seen);
    Atomics.notify(ctrl, base + 7);
    if (op === ${OPS.yield}) return;
  }
}
function init(m) {
  src = new Uint32Array(m.src); flags = new Uint32Array(m.flags); dst = new Uint32Array(m.dst); counts = new Uint32Array(m.counts);
  ctrl = new Int32Array(m.ctrl); base = m.slot * ${SLOT};
}
const port = typeof require === 'function' ? require('node:worker_threads').parentPort : null;
if (port) port.on('message', (m) => { init(m); port.postMessage(0); serve(m.seq); });
else self.onmessage = (e) => { init(e.data); self.postMessage(0); serve(e.data.seq); };
`;

/** 'yield' sends a thread back to its event loop (to take the next size's buffers). */
export type CeilingOp = keyof typeof OPS;

/** One thread of the pool as its environment spawned it: post a message, get each reply, end it. */
export interface CeilingThread {
  post(message: unknown): void;
  onReply(listener: (reply: number) => void): void;
  onError(listener: (error: Error) => void): void;
  terminate(): Promise<unknown> | undefined;
}

/** `Atomics.waitAsync` (ES2024; Node 16+, Chromium 87+): not in this project's lib yet. */
type WaitAsync = (
  view: Int32Array,
  index: number,
  value: number,
) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;

/** A call's message to one thread: the operation on [lo, hi), with up to two arguments. */
export interface CeilingMessage {
  readonly op: CeilingOp;
  readonly lo: number;
  readonly hi: number;
  readonly arg?: number;
  readonly arg2?: number;
}

/** The buffers one size's runs use (SharedArrayBuffers; empty ones where the operation needs none). */
export interface CeilingBuffers {
  readonly src: SharedArrayBuffer;
  readonly flags: SharedArrayBuffer;
  readonly dst: SharedArrayBuffer;
  readonly counts: SharedArrayBuffer;
}

/** The threads and their control block: `init` once per size, then `call`s. */
export class CeilingThreads {
  private readonly ctrl: Int32Array;
  private seq = 0;
  private serving = false;
  private replies: Array<{ resolve: () => void; reject: (e: Error) => void } | undefined>;

  constructor(private readonly threads: readonly CeilingThread[]) {
    this.ctrl = new Int32Array(new SharedArrayBuffer(SLOT * 4 * threads.length));
    this.replies = threads.map(() => undefined);
    threads.forEach((t, i) => {
      t.onReply(() => this.settle(i));
      t.onError((e) => this.settle(i, e));
    });
  }

  get count(): number {
    return this.threads.length;
  }

  private settle(i: number, error?: Error): void {
    const r = this.replies[i];
    this.replies[i] = undefined;
    if (r && error) r.reject(error);
    else r?.resolve();
  }

  /** Hands every thread the buffers of the next size (after leaving its wait loop, if it is in one). */
  async init(buffers: CeilingBuffers): Promise<void> {
    if (!waitAsync) throw new Error('Atomics.waitAsync is missing: the plain-JS ceiling needs it');
    if (this.serving) await this.call(this.threads.map((): CeilingMessage => ({ op: 'yield', lo: 0, hi: 0 })));
    await Promise.all(
      this.threads.map(
        (t, slot) =>
          new Promise<void>((resolve, reject) => {
            this.replies[slot] = { resolve, reject };
            // The sequence number already used: the thread runs what comes after it (even if posted before it waits).
            t.post({ ...buffers, ctrl: this.ctrl.buffer, slot, seq: this.seq });
          }),
      ),
    );
    this.serving = true;
  }

  /** Runs thread i's message (none where undefined) on every thread at once; resolves with the results (0 where none ran). */
  async call(messages: ReadonlyArray<CeilingMessage | undefined>): Promise<number[]> {
    const wait = waitAsync as WaitAsync;
    const seq = ++this.seq;
    const c = this.ctrl;
    const acks: Array<Promise<unknown>> = [];
    messages.forEach((m, t) => {
      if (m === undefined || t >= this.threads.length) return;
      const base = t * SLOT;
      c[base + 1] = OPS[m.op];
      c[base + 2] = m.lo;
      c[base + 3] = m.hi;
      c[base + 4] = (m.arg ?? 0) | 0;
      c[base + 5] = (m.arg2 ?? 0) | 0;
      Atomics.store(c, base, seq);
      Atomics.notify(c, base);
    });
    messages.forEach((m, t) => {
      if (m === undefined || t >= this.threads.length) return;
      // The thread acknowledges with the sequence number it ran (before: an older one).
      const ack = t * SLOT + 7;
      const acknowledged = async (): Promise<void> => {
        for (;;) {
          const now = Atomics.load(c, ack);
          if (now === seq) return;
          const w = wait(c, ack, now);
          if (w.async) await w.value;
        }
      };
      acks.push(acknowledged());
    });
    await Promise.all(acks);
    return messages.map((m, t) => (m === undefined ? 0 : (c[t * SLOT + 6] as number) >>> 0));
  }

  async terminate(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.terminate()));
  }
}

/** Contiguous chunks [lo, hi) of [0, n), one per thread (the last ones empty where n < threads). */
export function chunks(n: number, threads: number): Array<[number, number]> {
  const size = Math.ceil(n / threads);
  return Array.from({ length: threads }, (_, t) => [Math.min(n, t * size), Math.min(n, (t + 1) * size)]);
}

/** Exclusive prefix sums of `counts` (offsets of each thread's part), and the total. */
function offsets(counts: readonly number[]): { offsets: number[]; total: number } {
  const out: number[] = [];
  let total = 0;
  for (const c of counts) {
    out.push(total);
    total = (total + c) >>> 0;
  }
  return { offsets: out, total };
}

const shared = (n: number): Uint32Array<SharedArrayBuffer> => new Uint32Array(new SharedArrayBuffer(Math.max(4, 4 * n)));

export interface CeilingRun {
  run(): Promise<void>;
  verify(): boolean;
}

/** Prepares `key` at size n on the threads: the same data as Trident's case (cases.ts), then one run per call. */
export async function prepareCeiling(key: CeilingCase, n: number, threads: CeilingThreads): Promise<CeilingRun> {
  const host = key === 'histogram:256 bins' ? randomU32(n).map((x) => x & 255) : randomU32(n);
  const flagsHost = key === 'compact:half kept' ? randomU32(n, 0x1234567).map((x) => x & 1) : new Uint32Array(0);
  const src = shared(n);
  src.set(host);
  const flags = shared(flagsHost.length);
  flags.set(flagsHost);
  const needsDst = key === 'scan:inclusive' || key === 'compact:half kept' || key === 'zcopy:copy';
  const dst = shared(needsDst ? n : 0);
  const counts = shared(key === 'histogram:256 bins' ? 256 * threads.count : 0);
  await threads.init({ src: src.buffer, flags: flags.buffer, dst: dst.buffer, counts: counts.buffer });
  const parts = chunks(n, threads.count);
  /** Thread t's message for `op` over its chunk, with arg(t) (none where arg gives undefined). */
  const each = (op: CeilingOp, arg: (t: number) => number | undefined = () => 0, arg2: (t: number) => number = () => 0) =>
    parts.map(([lo, hi], t): CeilingMessage | undefined => {
      const a = arg(t);
      return a === undefined ? undefined : { op, lo, hi, arg: a, arg2: arg2(t) };
    });
  switch (key) {
    case 'zcopy:copy':
      return {
        run: async () => {
          await threads.call(each('set'));
        },
        verify: () => sameArray(dst, host),
      };
    case 'reduce:sum': {
      let total = 0;
      return {
        run: async () => {
          total = (await threads.call(each('sum'))).reduce((s, v) => (s + v) >>> 0, 0);
        },
        verify: () => total === reduceReference(host, 'sum'),
      };
    }
    case 'scan:inclusive':
      return {
        run: async () => {
          const { offsets: before } = offsets(await threads.call(each('scan')));
          await threads.call(each('add', (t) => (t === 0 ? undefined : before[t])));
        },
        verify: () => sameArray(dst, scanReference(host, false)),
      };
    case 'histogram:256 bins': {
      const result = new Uint32Array(256);
      return {
        run: async () => {
          await threads.call(each('histogram', (t) => t));
          result.fill(0);
          for (let t = 0; t < threads.count; t++)
            for (let b = 0; b < 256; b++) result[b] = (result[b] as number) + (counts[t * 256 + b] as number);
        },
        verify: () => sameArray(result, histogramReference(host, 256)),
      };
    }
    case 'compact:half kept': {
      let length = 0;
      return {
        run: async () => {
          const kept = await threads.call(each('count'));
          const { offsets: at, total } = offsets(kept);
          await threads.call(
            each(
              'copy',
              (t) => at[t],
              (t) => (at[t] as number) + (kept[t] as number),
            ),
          );
          length = total;
        },
        verify: () => sameArray(dst.subarray(0, length), compactReference(host, flagsHost)),
      };
    }
  }
}

/** Bytes of one run, as Trident's case counts them (cases.ts), so GB/s compare. */
const BYTES: Readonly<Record<CeilingCase, (n: number) => number>> = {
  'zcopy:copy': (n) => 8 * n,
  'reduce:sum': (n) => 4 * n + 4,
  'scan:inclusive': (n) => 8 * n,
  'histogram:256 bins': (n) => 4 * n + 4 * 256,
  'compact:half kept': (n) => 4 * n + 4 * n + 2 * n,
};

export interface CeilingSettings extends WarmupSettings {
  readonly repeats: number;
}

/** Times the ceiling of `key` at n: the same warm-up, check and repeats as Trident's runner. */
export async function measureCeiling(
  key: CeilingCase,
  n: number,
  threads: CeilingThreads,
  settings: CeilingSettings,
  runtime: 'node' | 'chromium',
  adapter: string,
): Promise<Measurement> {
  const [algorithm, variant] = key.split(':') as [string, string];
  const bytes = BYTES[key](n);
  const base = {
    algorithm,
    variant,
    implementation: CEILING_IMPLEMENTATION,
    role: 'ceiling',
    backend: 'js',
    runtime,
    adapter: `${adapter} (${threads.count} thread${threads.count === 1 ? '' : 's'})`,
    n,
    dtype: 'u32',
    timer: 'wall',
    bytes,
  } as const;
  let warmup = 0;
  try {
    const c = await prepareCeiling(key, n, threads);
    // One checked run first, then the warm-up (the protocol of bench/runner.ts).
    await c.run();
    const verified = c.verify();
    warmup = await warmUp(c.run, warmupRule(settings));
    const samples = await timeRepeats(c.run, settings);
    const ms = summarize(samples);
    const throughput = throughputOf(bytes, undefined, ms.median);
    return { ...base, warmup, repeats: samples.length, ms, ...(throughput ? { throughput } : {}), verified };
  } catch (err) {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return { ...base, warmup, repeats: 0, error: message.replace(/\s*\n\s*/g, ' ') };
  }
}
