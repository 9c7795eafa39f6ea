/**
 * The CPU backend past one WebAssembly memory: reduce (sum), inclusive scan, a 256-bin
 * histogram and radix sort (keys) of 2^log2n u32 in Node with the default workers,
 * each result checked, written as one JSON file. Not a unit test: at 2^30 the inputs
 * alone are 4 GiB, and each case runs for seconds to minutes.
 *
 *   npx tsx --conditions=trident-source bench/cpu-large.ts --log2n 30 \
 *     [--runs 3] [--cases reduce,scan,histogram,sort] [--baseline-log2n 28] [--max-total-bytes N]
 *     [--out bench/results/cpu/cpu-large-<date>.json] [--resume]
 *
 * The file is rewritten after each row; --resume keeps the rows of an earlier run of the
 * same file (those with figures or a refusal) and runs only the others: on a machine
 * shared with other work a case may have to wait for its memory.
 *
 * --baseline-log2n adds the same cases at a size whose buffers fit the WebAssembly memory
 * (their kernels then run as WebAssembly), for comparison.
 *
 * Each case runs in a child process of its own, so that its memory goes back to the
 * system before the next starts (a SharedArrayBuffer's memory returns only when every
 * thread that saw it has collected it) and its peak RSS is its own. A case whose buffers
 * pass the device's budget (`maxTotalBufferBytes`: half the host's memory unless
 * --max-total-bytes says otherwise) is refused by the device with
 * LimitExceededError('hostMemory') before its buffers are allocated: the row says so,
 * and the case runs again at half the size, down to the largest that fits. A case
 * that would not fit the memory free on the machine right now is not started (the
 * process then exits with code 3; --resume runs it later).
 *
 * Inputs come from a hash of the index, generated in chunks (never one host copy of
 * the whole array) and written at offsets. Checks, all without BigInt:
 * - reduce: the sum modulo 2^32 (u32 sums wrap), summed while generating;
 * - scan: spot checks (prefixes from per-chunk sums and the hash), a window of 4096
 *   consecutive outputs, and the last output against the total;
 * - histogram: every bin against counts made while generating, and the bins' total = n;
 * - sort: non-decreasing across the whole output (read in chunks) and the same
 *   multiset as the input by three checksums (sum, xor, sum of a mixed hash, mod 2^32).
 * Timings: `device.time` (wall clock around recording and flush), warm-up runs (see
 * `timed`), the median of `--runs`; GB/s from the bytes the CLI's bench counts for each case
 * (reduce 4n, scan 8n, histogram 4n + 1 KiB, sort 8n).
 */
import { fork } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { freemem, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { histogram, radixSort, reduceInto, scan } from '@trident/algorithms';
import { type CpuBackendOptions, cpuAdapter, defaultMaxTotalBufferBytes } from '@trident/backend-cpu';
import { type Buffer, Device, LimitExceededError } from '@trident/core';
import { median } from '../packages/cli/src/bench/stats.ts';
import { describeMachine } from '../packages/cli/src/describe.ts';

const CASES = ['reduce', 'scan', 'histogram', 'sort'] as const;
type CaseName = (typeof CASES)[number];

/** Elements generated and checked per step: 64 MiB of host memory at a time. */
const CHUNK = 2 ** 24;
const BINS = 256;
const MIN_WARM_UP = 3;
const MAX_WARM_UP = 6;
const GiB = 2 ** 30;

/** Buffer bytes a case needs at n elements (inputs, outputs, the sort's two temporaries). */
const BUFFER_BYTES: Record<CaseName, (n: number) => number> = {
  reduce: (n) => 4 * n,
  scan: (n) => 8 * n,
  histogram: (n) => 4 * n,
  sort: (n) => 16 * n,
};
const BYTES_MOVED: Record<CaseName, (n: number) => number> = {
  reduce: (n) => 4 * n,
  scan: (n) => 8 * n,
  histogram: (n) => 4 * n + 4 * BINS,
  sort: (n) => 8 * n,
};

/** The input's element i: a murmur3-style mix of the index (deterministic, well spread). */
function value(i: number): number {
  let x = Math.imul(i, 0x9e3779b1);
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** A second mix, for the sort's third checksum. */
function mix(v: number): number {
  let x = Math.imul(v ^ 0x5bd1e995, 0x27d4eb2d);
  x ^= x >>> 15;
  return Math.imul(x, 0x165667b1) >>> 0;
}

interface Row {
  readonly case: CaseName;
  readonly n: number;
  readonly log2n: number;
  readonly status: 'ok' | 'refused' | 'skipped' | 'failed';
  /** Why a row has no figures. */
  readonly reason?: string;
  readonly runsMs?: number[];
  /** The warm-up runs before them (see `timed`). */
  readonly warmUpMs?: number[];
  readonly medianMs?: number;
  readonly gbps?: number;
  readonly bytesMovedPerRun?: number;
  /** What was checked, in words, with the figures compared. */
  readonly checks?: string[];
  /** Where the case's buffers lay: `heap` (WebAssembly memory) or `host block`. */
  readonly placements?: Record<string, string>;
  /** The child's peak resident memory, bytes. */
  readonly peakRssBytes?: number;
  /**
   * The machine's 1-minute load average when the case started and ended: on a machine shared
   * with other work, the share of the cores the case had (above the cores: it waited for them).
   */
  readonly loadAverage?: { readonly start: number; readonly end: number };
  readonly device?: {
    readonly workers: number;
    readonly maxTotalBufferBytes: number;
    readonly maxBufferElements: number;
    readonly heapMaxBytes: number;
  };
}

const { values } = parseArgs({
  options: {
    log2n: { type: 'string', default: '30' },
    runs: { type: 'string', default: '3' },
    'baseline-log2n': { type: 'string' },
    'max-total-bytes': { type: 'string' },
    out: { type: 'string' },
    resume: { type: 'boolean', default: false },
    cases: { type: 'string', default: CASES.join(',') },
    case: { type: 'string' },
  },
});
const runs = Number(values.runs);
const maxTotal = values['max-total-bytes'] === undefined ? undefined : Number(values['max-total-bytes']);

async function main(): Promise<void> {
  const log2n = Number(values.log2n);
  const selected = (values.cases ?? '').split(',').map((c) => c.trim()) as CaseName[];
  const unknown = selected.filter((c) => !CASES.includes(c));
  if (unknown.length > 0) throw new Error(`--cases: unknown ${unknown.join(', ')} (cases: ${CASES.join(', ')})`);
  const kept =
    values.resume && values.out && existsSync(values.out) ? (JSON.parse(readFileSync(values.out, 'utf8')) as { rows: Row[] }).rows : [];
  const rows: Row[] = kept.filter((r) => r.status === 'ok' || r.status === 'refused');
  const done = (name: CaseName, s: number) => rows.find((r) => r.case === name && r.log2n === s);
  const sizes = [log2n, ...(values['baseline-log2n'] ? [Number(values['baseline-log2n'])] : [])];
  for (const size of sizes) {
    for (const name of selected) {
      // Refused for the budget: again at half the size, down to the largest that fits.
      for (let s = size; s >= size - 4; s--) {
        const row = done(name, s) ?? (await inChild(name, s));
        if (!done(name, s)) {
          rows.push(row);
          console.log(summary(row));
          write(rows);
        }
        if (row.status !== 'refused') break;
      }
    }
  }
  // A case skipped for want of free memory: a later --resume runs it.
  if (rows.some((r) => r.status !== 'ok' && r.status !== 'refused')) process.exitCode = 3;
}

/** Writes the results file (after every row, so that an interrupted run keeps what it measured). */
function write(rows: readonly Row[]): void {
  if (!values.out) return;
  const order = (r: Row) => -r.log2n * 10 + CASES.indexOf(r.case);
  const result = {
    benchmark: 'cpu-large',
    description:
      'reduce (sum), inclusive scan, 256-bin histogram and radix sort (keys) of u32 on the CPU backend in Node, default workers; buffers past the WebAssembly memory in host blocks',
    command: `npx tsx --conditions=trident-source bench/cpu-large.ts ${process.argv.slice(2).join(' ')}`,
    date: new Date().toISOString(),
    timer: 'wall',
    runsPerRow: runs,
    warmUp: `at least ${MIN_WARM_UP} runs, then until one is within 1.1x of the fastest so far, at most ${MAX_WARM_UP}`,
    machine: describeMachine(),
    rows: [...rows].sort((a, b) => order(a) - order(b)),
  };
  writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
}

/** Runs one case in a fresh process (this file with --case); a case that would not fit the free memory is skipped. */
function inChild(name: CaseName, log2n: number): Promise<Row> {
  const n = 2 ** log2n;
  // The device refuses a case past its budget before touching what would not fit.
  const need = Math.min(BUFFER_BYTES[name](n), maxTotal ?? defaultMaxTotalBufferBytes()) + GiB;
  if (need > freemem()) {
    const reason = `needs about ${(need / GiB).toFixed(1)} GiB, ${(freemem() / GiB).toFixed(1)} GiB free now`;
    return Promise.resolve({ case: name, n, log2n, status: 'skipped', reason });
  }
  const args = ['--case', name, '--log2n', String(log2n), '--runs', String(runs)];
  if (maxTotal !== undefined) args.push('--max-total-bytes', String(maxTotal));
  return new Promise((resolve) => {
    let row: Row | undefined;
    const child = fork(fileURLToPath(import.meta.url), args, { stdio: 'inherit' });
    child.on('message', (m) => {
      row = m as Row;
    });
    child.on('exit', (code, signal) => {
      resolve(row ?? { case: name, n, log2n, status: 'failed', reason: `the case's process exited (code ${code}, signal ${signal})` });
    });
  });
}

function summary(r: Row): string {
  const head = `${r.case.padEnd(9)} 2^${r.log2n}`;
  if (r.status !== 'ok') return `${head} ${r.status}: ${r.reason}`;
  return `${head} median ${r.medianMs?.toFixed(0)} ms, ${r.gbps?.toFixed(2)} GB/s, peak RSS ${((r.peakRssBytes ?? 0) / GiB).toFixed(2)} GiB`;
}

// ---------- one case, in a child ----------

async function runCase(name: CaseName, log2n: number): Promise<Row> {
  const n = 2 ** log2n;
  const loadAtStart = loadavg()[0] as number;
  const load = () => ({ start: loadAtStart, end: loadavg()[0] as number });
  const options: CpuBackendOptions = maxTotal === undefined ? {} : { maxTotalBufferBytes: maxTotal };
  const device = new Device(await cpuAdapter.create(options));
  const limits = device.caps.limits;
  const base = {
    case: name,
    n,
    log2n,
    device: {
      workers: device.caps.concurrency,
      maxTotalBufferBytes: limits.maxTotalBufferBytes,
      maxBufferElements: limits.maxBufferElements,
      heapMaxBytes: Number(device.info.details.memoryMaxBytes),
    },
  };
  try {
    const body = await CASE_BODIES[name](device, n);
    const medianMs = median(body.runsMs);
    const bytes = BYTES_MOVED[name](n);
    return {
      ...base,
      status: 'ok',
      runsMs: body.runsMs,
      warmUpMs: body.warmUpMs,
      medianMs,
      bytesMovedPerRun: bytes,
      gbps: bytes / (medianMs * 1e6),
      checks: body.checks,
      placements: body.placements,
      peakRssBytes: peakRss(),
      loadAverage: load(),
    };
  } catch (err) {
    if (err instanceof LimitExceededError && err.limit === 'hostMemory')
      return { ...base, status: 'refused', reason: `${err.name}: ${err.message}`, peakRssBytes: peakRss() };
    return {
      ...base,
      status: 'failed',
      reason: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      peakRssBytes: peakRss(),
    };
  } finally {
    await device.destroy();
  }
}

function peakRss(): number {
  // maxRSS is in KiB.
  return process.resourceUsage().maxRSS * 1024;
}

interface CaseResult {
  readonly runsMs: number[];
  readonly warmUpMs: number[];
  readonly checks: string[];
  readonly placements: Record<string, string>;
}

function placement(b: Buffer): string {
  return (b.impl as { block?: unknown }).block === undefined ? 'heap' : 'host block';
}

/**
 * Warm-up runs, at least MIN_WARM_UP and then until one is within a tenth of the fastest
 * so far (at most MAX_WARM_UP), then `runs` timed ones (device.time: recording and
 * flush). A kernel run as JavaScript at 2^30 is one long loop per worker and call: its
 * first calls run code V8 compiled mid-loop (on-stack replacement), slower than the code
 * compiled for later calls, and the first call that writes a fresh output buffer also
 * faults its pages in (seconds for 4 GiB on a VM); two slow calls in a row can look alike.
 */
async function timed(device: Device, label: string, body: () => void): Promise<{ runsMs: number[]; warmUpMs: number[] }> {
  const warmUpMs: number[] = [];
  for (let w = 0; w < MAX_WARM_UP; w++) {
    const ms = (await device.time(label, body)).ms;
    warmUpMs.push(ms);
    if (warmUpMs.length >= MIN_WARM_UP && ms <= 1.1 * Math.min(...warmUpMs)) break;
  }
  const runsMs: number[] = [];
  for (let r = 0; r < runs; r++) runsMs.push((await device.time(label, body)).ms);
  return { runsMs, warmUpMs };
}

/** Fills `x` with value(i) (mapped by `f`), chunk by chunk; `visit` sees each chunk and its offset. */
function generate(x: Buffer<'u32'>, f: (v: number) => number, visit: (chunk: Uint32Array, at: number) => void): void {
  const n = x.length;
  const chunk = new Uint32Array(Math.min(CHUNK, n));
  for (let at = 0; at < n; at += CHUNK) {
    const len = Math.min(CHUNK, n - at);
    const part = len === chunk.length ? chunk : chunk.subarray(0, len);
    for (let j = 0; j < len; j++) part[j] = f(value(at + j));
    visit(part, at);
    x.write(part, at);
  }
}

const CASE_BODIES: Record<CaseName, (device: Device, n: number) => Promise<CaseResult>> = {
  async reduce(device, n) {
    const x = device.createBuffer('u32', n);
    let sum = 0;
    generate(
      x,
      (v) => v,
      (part) => {
        for (let j = 0; j < part.length; j++) sum = (sum + (part[j] as number)) >>> 0;
      },
    );
    const out = device.createBuffer('u32', 1);
    const { runsMs, warmUpMs } = await timed(device, 'reduce', () => void reduceInto(device, x, { op: 'sum', output: out }));
    const got = (await out.read())[0];
    if (got !== sum) throw new Error(`reduce: sum ${got}, expected ${sum} (mod 2^32)`);
    return {
      runsMs,
      warmUpMs,
      checks: [`sum mod 2^32 = ${sum}, as summed while generating`],
      placements: { input: placement(x), output: placement(out) },
    };
  },

  async scan(device, n) {
    const x = device.createBuffer('u32', n);
    // prefix[c]: the sum of the elements before chunk c, mod 2^32.
    const prefix: number[] = [];
    let total = 0;
    generate(
      x,
      (v) => v,
      (part) => {
        prefix.push(total);
        for (let j = 0; j < part.length; j++) total = (total + (part[j] as number)) >>> 0;
      },
    );
    const y = device.createBuffer('u32', n);
    const { runsMs, warmUpMs } = await timed(device, 'scan', () => void scan(device, x, { output: y }));
    const inclusive = (i: number): number => {
      const c = Math.floor(i / CHUNK);
      let s = prefix[c] as number;
      for (let j = c * CHUNK; j <= i; j++) s = (s + value(j)) >>> 0;
      return s;
    };
    const spots = [0, 1, CHUNK - 1, CHUNK, Math.floor(n / 2) + 12345, n - 2, n - 1].filter((i) => i >= 0 && i < n);
    for (let k = 0; k < 9; k++) spots.push(value(k + 77) % n);
    for (const i of spots) {
      const got = (await y.read({ offset: i, length: 1 }))[0];
      const want = inclusive(i);
      if (got !== want) throw new Error(`scan: out[${i}] = ${got}, expected ${want}`);
    }
    const from = Math.max(0, Math.floor(n / 3) - 2048);
    const window = await y.read({ offset: from, length: Math.min(4096, n - from) });
    let s = inclusive(from);
    for (let j = 0; j < window.length; j++) {
      if (j > 0) s = (s + value(from + j)) >>> 0;
      if (window[j] !== s) throw new Error(`scan: out[${from + j}] = ${window[j]}, expected ${s}`);
    }
    const last = (await y.read({ offset: n - 1, length: 1 }))[0];
    if (last !== total) throw new Error(`scan: last output ${last}, total ${total}`);
    return {
      runsMs,
      warmUpMs,
      checks: [
        `${spots.length} spot checks (prefix from per-chunk sums)`,
        `${window.length} consecutive outputs from ${from}`,
        `last output = total mod 2^32 = ${total}`,
      ],
      placements: { input: placement(x), output: placement(y) },
    };
  },

  async histogram(device, n) {
    const x = device.createBuffer('u32', n);
    const want = new Uint32Array(BINS);
    // The top 8 bits: every value falls in a bin.
    generate(
      x,
      (v) => v >>> 24,
      (part) => {
        for (let j = 0; j < part.length; j++) (want[part[j] as number] as number)++;
      },
    );
    const out = device.createBuffer('u32', BINS);
    const { runsMs, warmUpMs } = await timed(device, 'histogram', () => void histogram(device, x, { bins: BINS, output: out }));
    const got = await out.read();
    let total = 0;
    for (let b = 0; b < BINS; b++) {
      if (got[b] !== want[b]) throw new Error(`histogram: bin ${b} = ${got[b]}, expected ${want[b]}`);
      total += got[b] as number;
    }
    if (total !== n) throw new Error(`histogram: total ${total}, expected ${n}`);
    return {
      runsMs,
      warmUpMs,
      checks: [`all ${BINS} bins equal counts made while generating`, `total = n = ${n}`],
      placements: { input: placement(x), output: placement(out) },
    };
  },

  async sort(device, n) {
    const keys = device.createBuffer('u32', n);
    const before = { sum: 0, xor: 0, mixed: 0 };
    generate(
      keys,
      (v) => v,
      (part) => {
        for (let j = 0; j < part.length; j++) {
          const v = part[j] as number;
          before.sum = (before.sum + v) >>> 0;
          before.xor = (before.xor ^ v) >>> 0;
          before.mixed = (before.mixed + mix(v)) >>> 0;
        }
      },
    );
    const out = device.createBuffer('u32', n);
    const { runsMs, warmUpMs } = await timed(device, 'sort', () => void radixSort(device, keys, { output: out }));
    const after = { sum: 0, xor: 0, mixed: 0 };
    const chunk = new Uint32Array(Math.min(CHUNK, n));
    let previous = 0;
    for (let at = 0; at < n; at += CHUNK) {
      const len = Math.min(CHUNK, n - at);
      const part = len === chunk.length ? chunk : chunk.subarray(0, len);
      await out.read({ offset: at, length: len, into: part });
      for (let j = 0; j < len; j++) {
        const v = part[j] as number;
        if (v < previous) throw new Error(`sort: out[${at + j}] = ${v} < out[${at + j - 1}] = ${previous}`);
        previous = v;
        after.sum = (after.sum + v) >>> 0;
        after.xor = (after.xor ^ v) >>> 0;
        after.mixed = (after.mixed + mix(v)) >>> 0;
      }
    }
    for (const k of ['sum', 'xor', 'mixed'] as const)
      if (after[k] !== before[k]) throw new Error(`sort: ${k} checksum ${after[k]}, input's ${before[k]}: not a permutation`);
    return {
      runsMs,
      warmUpMs,
      checks: [
        'non-decreasing over all n outputs',
        `same sum, xor and mixed-hash checksums as the input (${before.sum}, ${before.xor}, ${before.mixed})`,
      ],
      placements: { keys: placement(keys), output: placement(out) },
    };
  },
};

if (values.case) {
  // A child: one case at one size, its row sent to the parent.
  const row = await runCase(values.case as CaseName, Number(values.log2n));
  process.send?.(row, () => process.exit(0));
} else {
  await main();
}
