/**
 * `trident bench --worker-sweep LIST`: the cpu backend in Node at each worker count of LIST
 * (those above the logical CPUs left out): the selected cases (reduce sum and inclusive scan
 * unless --algorithms says otherwise) on a device of that many workers, and beside them the
 * machine's plain-JS copy ceiling (bench/ceiling.ts: `TypedArray.prototype.set`, one chunk
 * per thread) on as many threads, at each size. How the throughput of the backend and of the
 * platform's fastest copy grow with the threads that run them: report/cpu-scaling.ts draws it.
 *
 * The results are ordinary trident-bench/1 measurements. A Trident row's adapter ends in
 * "(N workers)" (`workersAdapter`), as does its device's in the devices block, and a ceiling
 * row's in "(N threads)" (ceiling.ts), so each row says its worker count. Counts run in
 * ascending order and the devices are listed in descending order: where the rest of the
 * report keeps one row per case and size of a machine (the last in the file) or one device
 * description per platform (the first), it keeps the largest count's, which is the default
 * configuration (all cores).
 */
import { availableParallelism, cpus } from 'node:os';
import { createDevice } from 'trident';
import { describeMachine } from '../describe.ts';
import { describeDevice } from '../device-description.ts';
import { deviceOptions } from '../device-options.ts';
import { environmentNotes } from '../environment.ts';
import type { BenchCase } from './cases.ts';
import { type CeilingCase, measureCeiling } from './ceiling.ts';
import { nodeCeilingThreads } from './ceiling-node.ts';
import { Progress } from './progress.ts';
import { measureCase, type RunSettings } from './runner.ts';
import { type BenchDevice, type BenchResults, type Measurement, SCHEMA_ID } from './schema.ts';
import { installedVersions } from './versions.ts';

/** The cases a sweep runs when --algorithms names none. */
export const SWEEP_DEFAULT_CASES = ['reduce:sum', 'scan:inclusive'] as const;

/** The copy ceiling's case (ceiling.ts): the platform's fastest copy, per thread count. */
const COPY_CEILING: CeilingCase = 'zcopy:copy';

export interface WorkerSweepOptions {
  /** Worker counts as asked (--worker-sweep); `sweepCounts` keeps those this machine can run. */
  readonly counts: readonly number[];
  readonly cases: readonly BenchCase[];
  readonly sizes: (c: BenchCase) => readonly number[];
  readonly settings: RunSettings;
  /** false: every kernel as generated JavaScript (--no-wasm). */
  readonly wasm?: boolean;
  readonly label: string;
  readonly command: string;
  readonly quiet?: boolean;
}

/** The counts to run, ascending and without repeats, and those above `cpus` (left out: such workers cannot run at once). */
export function sweepCounts(asked: readonly number[], cpus: number): { counts: number[]; dropped: number[] } {
  const unique = [...new Set(asked)].sort((a, b) => a - b);
  return { counts: unique.filter((w) => w <= cpus), dropped: unique.filter((w) => w > cpus) };
}

/** A cpu device's adapter with its worker count: 'AMD EPYC (4 workers)'. */
export function workersAdapter(adapter: string, workers: number): string {
  return `${adapter} (${workers} worker${workers === 1 ? '' : 's'})`;
}

export async function runWorkerSweep(options: WorkerSweepOptions): Promise<BenchResults> {
  const createdAt = new Date().toISOString();
  const logical = availableParallelism();
  const { counts, dropped } = sweepCounts(options.counts, logical);
  const sizesOf = (c: BenchCase) => options.sizes(c);
  const ceilingSizes = [...new Set(options.cases.flatMap(sizesOf))].sort((a, b) => a - b);
  const perCount = options.cases.reduce((s, c) => s + sizesOf(c).length, 0) + ceilingSizes.length;
  const progress = new Progress(counts.length * perCount, { quiet: options.quiet === true });
  const measurements: Measurement[] = [];
  const devices: BenchDevice[] = [];
  const adapters: Record<string, string> = {};
  const unavailable: Array<{ backend: string; runtime: string; reason: string }> = [];
  const cpuModel = cpus()[0]?.model?.trim() || 'cpu';
  for (const workers of counts) {
    let device: Awaited<ReturnType<typeof createDevice>>;
    try {
      device = await createDevice({ backend: 'cpu', options: deviceOptions(workers, options.wasm) });
    } catch (err) {
      const reason = err instanceof Error ? (err.message.split('\n')[0] ?? String(err)) : String(err);
      unavailable.push({ backend: 'cpu', runtime: 'node', reason: `${workers} workers: ${reason}` });
      continue;
    }
    try {
      adapters['node/cpu'] = device.info.adapter;
      const described = describeDevice(device);
      devices.unshift({ ...described, adapter: workersAdapter(described.adapter, workers), runtime: 'node' });
      for (const c of options.cases) {
        for (const n of sizesOf(c)) {
          progress.start(`cpu ${workers} workers ${c.algorithm}:${c.variant} n=${n}`);
          const m = await measureCase(device, c, n, options.settings);
          measurements.push({ ...m, adapter: workersAdapter(m.adapter, workers) });
          if (m.error) progress.note(`  cpu ${workers} workers ${c.algorithm}:${c.variant} n=${n}: ${m.error}`);
          else if (m.verified === false) progress.note(`  cpu ${workers} workers ${c.algorithm}:${c.variant} n=${n}: result differs`);
          progress.step();
        }
      }
    } finally {
      // Before the ceiling: idle workers must not share the cores with its threads.
      await device.destroy();
    }
    const pool = nodeCeilingThreads(workers);
    try {
      for (const n of ceilingSizes) {
        progress.start(`plain-JS copy ceiling on ${workers} threads n=${n}`);
        const m = await measureCeiling(COPY_CEILING, n, pool, options.settings, 'node', cpuModel);
        measurements.push(m);
        if (m.error) progress.note(`  plain-JS copy ceiling on ${workers} threads n=${n}: ${m.error}`);
        progress.step();
      }
    } finally {
      await pool.terminate();
    }
  }
  progress.finish();
  const sizes: Record<string, number[]> = {};
  for (const c of options.cases) sizes[`${c.algorithm}:${c.variant}`] = [...sizesOf(c)];
  const notes = [
    ...environmentNotes,
    `Worker sweep: the cpu backend at ${counts.join(', ')} workers, each beside the plain-JS copy ceiling on as many threads ` +
      `(${logical} logical CPUs here).`,
    ...(dropped.length > 0 ? [`Worker counts above the ${logical} logical CPUs left out: ${dropped.join(', ')}.`] : []),
  ];
  return {
    schema: SCHEMA_ID,
    createdAt,
    label: options.label,
    machine: describeMachine(),
    adapters,
    versions: { node: process.version, ...installedVersions() },
    settings: {
      command: options.command,
      warmup: options.settings.warmup,
      warmupMs: options.settings.warmupMs,
      repeats: options.settings.repeats,
      sizes,
    },
    measurements,
    devices,
    unavailable,
    notes,
  };
}
