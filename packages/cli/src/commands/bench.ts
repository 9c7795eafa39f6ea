/**
 * `trident bench`: the suite on every backend that gives a device here, with
 * warm-up and repeated runs, written as a results file (bench/schema.ts,
 * docs/bench-schema.md) that `trident report` reads.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname } from 'node:path';
import { BACKEND_KINDS, type BackendKind, createDevice, type Device, registeredBackends } from 'trident';
import { backendKind, list, type Parsed, parse, positiveInt, workerCount } from '../args.ts';
import { type BenchCase, CASES } from '../bench/cases.ts';
import { isCeilingCase, measureCeiling } from '../bench/ceiling.ts';
import { nodeCeilingThreads } from '../bench/ceiling-node.ts';
import { measurePeer } from '../bench/peer-runner.ts';
import { Progress } from '../bench/progress.ts';
import { measureCase, type RunSettings } from '../bench/runner.ts';
import { type BenchDevice, type BenchResults, type Measurement, SCHEMA_ID } from '../bench/schema.ts';
import { runSuite } from '../bench/suite-runner.ts';
import { DEFAULT_MAX_LOG2N, SUITES, selectSteps } from '../bench/suites.ts';
import { SUSTAINED } from '../bench/sustained.ts';
import { WARMUP_MAX_RUNS } from '../bench/timing.ts';
import { installedVersions } from '../bench/versions.ts';
import { runWorkerSweep, SWEEP_DEFAULT_CASES } from '../bench/worker-sweep.ts';
import { CHROMIUM_PATH } from '../browser/chromium.ts';
import { describeMachine } from '../describe.ts';
import { describeDevice } from '../device-description.ts';
import { deviceOptions } from '../device-options.ts';
import { environmentNotes } from '../environment.ts';
import { UsageError } from '../errors.ts';
import { commitOutputs } from '../output.ts';

/** The adaptive warm-up's default budget (bench/timing.ts): JIT-compiled code settles in 10–20 calls. */
const DEFAULT_WARMUP_MS = 150;

/** A suite's device warm-up: an H100 that sat idle ran its first kernels up to 1.5x slower for the first seconds. */
const SUITE_DEVICE_WARMUP_MS = 3000;

const USAGE = `usage: trident bench [options]

  --backends LIST    backends to run (default: every one that gives a device here)
  --algorithms LIST  algorithms, or algorithm:variant (default: all; see below)
  --sizes LIST       sizes in elements (bodies for nbody): N applies to every selected
                     algorithm, algo=N to one (default: each algorithm's own sizes)
  --repeats N        timed runs per measurement (default 7; at least 3 are kept even
                     past --budget-ms)
  --warmup N         untimed runs first, at least (default 2)
  --warmup-ms MS     then more untimed runs while the warm-up took less than this, so that
                     JIT-compiled code (cpu backend workers, TF.js cpu, plain loops) settles
                     (default ${DEFAULT_WARMUP_MS}; at most ${WARMUP_MAX_RUNS} runs; a run over a quarter of
                     --budget-ms ends the warm-up; 0: exactly --warmup runs)
  --budget-ms MS     stop repeating a measurement after this much timed work (default 4000)
  --workers N        cpu backend worker threads (default: all cores)
  --worker-sweep LIST  cpu backend in Node only, at each worker count of LIST (e.g. 1,2,4,8,16;
                     counts above the logical CPUs are left out): the selected cases (default
                     ${SWEEP_DEFAULT_CASES.join(', ')}) and the plain-JS copy ceiling on as many threads;
                     each row's adapter says its count, for the report's CPU scaling section
  --no-wasm          cpu backend (Node and Chromium): every kernel as generated JavaScript,
                     none as WebAssembly (to compare the two paths)
  --label NAME       machine label for the report (default: local)
  --out FILE         results file (default: report/results-<label>.json, which 'trident report' reads)
  --browser LIST     backends to run in headless Chromium too (default: webgl2,webgpu,cpu)
  --no-browser       Node only: no Chromium run (so no peers in Chromium)
  --no-peers         no peers: none in Chromium (TensorFlow.js, gpu.js), none in Node
                     (TensorFlow.js cpu/wasm, typed-array sort, plain loops, graphology, references)
  --quiet            no progress line

A named suite (the GPU machine's runs; Node only, no peers):
  --suite NAME       ${[...SUITES.keys()].join(' | ')}: the suite's cases at its sizes, each timed under
                     sustained load (batches of back-to-back runs, the median of the batch
                     means); --algorithms keeps some of its cases, --repeats sets the batches
                     (default ${SUSTAINED.batches}), --warmup-ms the sustained warm-up (default ${SUSTAINED.warmupMs}; also the
                     device's warm-up, default ${SUITE_DEVICE_WARMUP_MS})
  --max-log2n K      largest element count 2^K (default ${DEFAULT_MAX_LOG2N}): smaller shrinks every size with
                     it (12: the whole suite at toy sizes); larger adds 2^29 … 2^K rows where
                     the device's caps.limits.maxBufferElements allows them
  --cub FILE         output of anchors/cub_anchor.cu or bench/h100/cub-large.cu from the same
                     call (repeatable): parsed into the results file's anchors block
  --nbody FILE       output of anchors/nbody_anchor.cu from the same call
  --conformance FILE the conformance specs' { passed, failed } from the same call
  --latency FILE     bench/h100/latency-check.ts's rows from the same call
  --deadline-s S     run no step after S seconds (the rest become rows saying so; the file
                     is still written)`;

export interface BenchOptions {
  readonly backends?: readonly BackendKind[];
  readonly cases: readonly BenchCase[];
  readonly sizes: (c: BenchCase) => readonly number[];
  readonly settings: RunSettings;
  readonly workers?: number;
  /** false: the cpu device (Node and Chromium) runs every kernel as JavaScript (--no-wasm). */
  readonly wasm?: boolean;
  readonly label: string;
  readonly command: string;
  readonly quiet?: boolean;
  /** Run in headless Chromium too: these backends (empty: none). */
  readonly browserBackends: readonly string[];
  /** Run the peers (TensorFlow.js, gpu.js) in Chromium. */
  readonly peers: boolean;
  /** Run the Node-side peers of the cases (TF.js cpu/wasm, typed-array sort, plain loops, graphology, references). */
  readonly nodePeers: boolean;
  /** The peer operations selected (by --algorithms). */
  readonly peerAlgorithms: readonly string[];
}

/** Operations the peers have (TensorFlow.js: sum, cumsum, top-k; gpu.js: an N-body kernel). */
export const PEER_ALGORITHMS = ['reduce', 'scan', 'sort', 'nbody'] as const;

/** Peer sizes: the sizes of Trident's case for the same operation, so rows pair up. */
function peerSizes(options: BenchOptions): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const algorithm of options.peerAlgorithms) {
    const own = CASES.find((c) => c.algorithm === algorithm);
    out[algorithm] = [...options.sizes(own ?? { ...PEER_ONLY_NBODY, algorithm })];
  }
  return out;
}

const PEER_ONLY_NBODY: BenchCase = {
  algorithm: 'nbody',
  variant: '',
  dtype: 'f32',
  sizes: [256, 512, 1024, 2048],
  setup: () => {
    throw new Error('peer sizes only');
  },
};

export function selectCases(names: readonly string[]): BenchCase[] {
  if (names.length === 0) return [...CASES];
  const picked = new Set<BenchCase>();
  for (const name of names) {
    const [algorithm, variant] = name.split(':');
    const found = CASES.filter((c) => c.algorithm === algorithm && (variant === undefined || c.variant === variant));
    if (found.length === 0 && (PEER_ALGORITHMS as readonly string[]).includes(name)) continue; // peers only (e.g. nbody before Trident's lands)
    if (found.length === 0) {
      const known = [
        ...new Set(
          CASES.map(
            (c) =>
              `${c.algorithm} (${CASES.filter((d) => d.algorithm === c.algorithm)
                .map((d) => d.variant)
                .join(', ')})`,
          ),
        ),
      ];
      throw new UsageError(`--algorithms: unknown '${name}' (known: ${known.join('; ')})`);
    }
    for (const c of found) picked.add(c);
  }
  return CASES.filter((c) => picked.has(c));
}

export function sizePicker(entries: readonly string[]): (c: BenchCase) => readonly number[] {
  const all: number[] = [];
  const per = new Map<string, number[]>();
  for (const e of entries) {
    const m = /^([a-z-]+)=(.+)$/.exec(e);
    if (m) per.set(m[1] as string, [...(per.get(m[1] as string) ?? []), positiveInt(m[2], '--sizes')]);
    else all.push(positiveInt(e, '--sizes'));
  }
  return (c) => per.get(c.algorithm) ?? (all.length > 0 ? all : c.sizes);
}

/** The plain-JS ceiling (bench/ceiling.ts) of each selected case that has one, on `threads` worker threads. */
async function measureNodeCeilings(
  cases: readonly BenchCase[],
  options: BenchOptions,
  threads: number,
  progress: Progress,
): Promise<Measurement[]> {
  const pool = nodeCeilingThreads(threads);
  const out: Measurement[] = [];
  try {
    for (const c of cases) {
      const key = `${c.algorithm}:${c.variant}`;
      if (!isCeilingCase(key)) continue;
      for (const n of options.sizes(c)) {
        progress.start(`plain-JS ceiling ${key} n=${n}`);
        const m = await measureCeiling(key, n, pool, options.settings, 'node', cpus()[0]?.model ?? 'cpu');
        out.push(m);
        if (m.error) progress.note(`  plain-JS ceiling ${key} n=${n}: ${m.error}`);
        else if (m.verified === false) progress.note(`  plain-JS ceiling ${key} n=${n}: result differs from the reference`);
        progress.step();
      }
    }
  } finally {
    await pool.terminate();
  }
  return out;
}

export async function runBench(options: BenchOptions): Promise<BenchResults> {
  const createdAt = new Date().toISOString();
  const kinds = options.backends ?? registeredBackends();
  const devices: Device[] = [];
  const unavailable: Array<{ backend: string; runtime: string; reason: string }> = [];
  const adapters: Record<string, string> = {};
  const described: BenchDevice[] = [];
  for (const kind of kinds) {
    try {
      const d = await createDevice({ backend: kind, options: deviceOptions(options.workers, options.wasm) });
      devices.push(d);
      adapters[`node/${kind}`] = d.info.adapter;
      described.push({ ...describeDevice(d), runtime: 'node' });
    } catch (err) {
      const reason =
        err instanceof Error && 'reasons' in err ? String((err as { reasons: { reason: string }[] }).reasons[0]?.reason) : String(err);
      unavailable.push({ backend: kind, runtime: 'node', reason });
      if (options.backends) process.stderr.write(`bench: ${kind} unavailable: ${reason}\n`);
    }
  }
  for (const kind of BACKEND_KINDS) {
    if (!kinds.includes(kind) && !options.backends)
      unavailable.push({ backend: kind, runtime: 'node', reason: 'not registered in this build' });
  }
  const perDevice = options.cases.reduce((s, c) => s + options.sizes(c).length, 0);
  const peers = options.peers ? peerSizes(options) : {};
  const peerSteps = Object.entries(peers).reduce((s, [a, sizes]) => s + sizes.length * (a === 'nbody' ? 3 : 4), 0);
  // The plain-JS ceiling runs beside the cpu backend, on as many threads as it has workers.
  const cpuWorkers = devices.find((d) => d.backend === 'cpu')?.caps.concurrency;
  const ceilingCases = options.cases.filter((c) => isCeilingCase(`${c.algorithm}:${c.variant}`));
  const ceilingSteps = ceilingCases.reduce((s, c) => s + options.sizes(c).length, 0);
  const browserCpu = options.browserBackends.includes('cpu');
  const steps =
    devices.length * perDevice +
    (cpuWorkers !== undefined ? ceilingSteps : 0) +
    (options.browserBackends.length > 0 ? options.browserBackends.length * perDevice + (browserCpu ? ceilingSteps : 0) : 0) +
    peerSteps;
  const progress = new Progress(steps, { quiet: options.quiet === true });
  const measurements: Measurement[] = [];
  try {
    for (const device of devices) {
      for (const c of options.cases) {
        for (const n of options.sizes(c)) {
          progress.start(`${device.backend} ${c.algorithm}${c.variant ? `:${c.variant}` : ''} n=${n}`);
          const m = await measureCase(device, c, n, options.settings);
          measurements.push(m);
          if (m.error) progress.note(`  ${device.backend} ${c.algorithm}:${c.variant} n=${n}: ${m.error}`);
          else if (m.verified === false)
            progress.note(`  ${device.backend} ${c.algorithm}:${c.variant} n=${n}: result differs from the reference`);
          progress.step();
        }
      }
    }
  } finally {
    // Before the peers and the ceiling: idle backend workers must not share the cores with them.
    for (const d of devices) await d.destroy();
  }
  // Node-side peers of the cases that have them (TF.js, gpu.js, graphology, plain loops, references), in the same run.
  for (const c of options.nodePeers ? options.cases : []) {
    for (const n of c.peers ? options.sizes(c) : []) {
      for (const peer of c.peers?.(n) ?? []) {
        progress.note(`  ${peer.implementation} ${c.algorithm}:${c.variant} n=${n}`);
        const outcome = await measurePeer(c, n, peer, options.settings);
        if ('unavailable' in outcome) {
          if (!unavailable.some((u) => u.backend === peer.implementation && u.runtime === 'node')) {
            unavailable.push({ backend: peer.implementation, runtime: 'node', reason: outcome.unavailable });
            progress.note(`  ${peer.implementation} unavailable: ${outcome.unavailable}`);
          }
          continue;
        }
        const m = outcome.measurement;
        measurements.push(m);
        if (m.error) progress.note(`  ${peer.implementation} ${c.algorithm}:${c.variant} n=${n}: ${m.error}`);
        else if (m.verified === false) progress.note(`  ${peer.implementation} ${c.algorithm}:${c.variant} n=${n}: result differs`);
      }
    }
  }
  if (cpuWorkers !== undefined && ceilingCases.length > 0)
    measurements.push(...(await measureNodeCeilings(ceilingCases, options, cpuWorkers, progress)));
  const versions: Record<string, string> = { node: process.version };
  if (options.browserBackends.length > 0 || options.peers) {
    let started = false;
    try {
      // Loaded only for browser runs, so a Node-only bundle (e.g. for the H100 machine) needs neither esbuild nor playwright.
      const { runInChromium } = await import('../browser/host.ts');
      const run = await runInChromium(
        {
          backends: options.browserBackends,
          cases: options.cases.map((c) => ({ key: `${c.algorithm}:${c.variant}`, sizes: options.sizes(c) })),
          settings: options.settings,
          ...(options.workers !== undefined ? { workers: options.workers } : {}),
          ...(options.wasm === false ? { wasm: false } : {}),
          peers: options.peers,
          peerSizes: peers,
        },
        (label) => {
          if (started) progress.step();
          started = true;
          progress.start(label);
        },
      );
      if (started) progress.step();
      measurements.push(...run.measurements);
      unavailable.push(...run.unavailable);
      Object.assign(adapters, run.adapters);
      described.push(...(run.devices ?? []));
      Object.assign(versions, run.versions);
      versions.chromium = run.chromiumVersion;
      for (const m of run.measurements) {
        if (m.error) progress.note(`  chromium ${m.implementation} ${m.backend} ${m.algorithm} n=${m.n}: ${m.error}`);
        else if (m.verified === false)
          progress.note(`  chromium ${m.implementation} ${m.backend} ${m.algorithm} n=${m.n}: result differs from the reference`);
      }
    } catch (err) {
      const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
      progress.note(`bench: the headless Chromium run failed: ${reason}`);
      for (const b of options.browserBackends)
        unavailable.push({ backend: b, runtime: 'chromium', reason: `Chromium run failed: ${reason}` });
    }
  }
  progress.finish();
  Object.assign(versions, installedVersions());
  const sizes: Record<string, number[]> = {};
  for (const c of options.cases) sizes[`${c.algorithm}:${c.variant}`] = [...options.sizes(c)];
  return {
    schema: SCHEMA_ID,
    createdAt,
    label: options.label,
    machine: describeMachine(),
    adapters,
    versions,
    settings: {
      command: options.command,
      warmup: options.settings.warmup,
      warmupMs: options.settings.warmupMs,
      repeats: options.settings.repeats,
      sizes,
    },
    measurements,
    devices: described,
    unavailable,
    ...(environmentNotes.length > 0 ? { notes: [...environmentNotes] } : {}),
  };
}

const BENCH_FLAGS = {
  backends: { type: 'string', multiple: true },
  algorithms: { type: 'string', multiple: true },
  sizes: { type: 'string', multiple: true },
  repeats: { type: 'string' },
  warmup: { type: 'string' },
  'warmup-ms': { type: 'string' },
  'budget-ms': { type: 'string' },
  workers: { type: 'string' },
  'worker-sweep': { type: 'string', multiple: true },
  label: { type: 'string' },
  out: { type: 'string' },
  quiet: { type: 'boolean' },
  browser: { type: 'string' },
  'no-browser': { type: 'boolean' },
  'no-peers': { type: 'boolean' },
  'no-wasm': { type: 'boolean' },
  suite: { type: 'string' },
  'max-log2n': { type: 'string' },
  cub: { type: 'string', multiple: true },
  nbody: { type: 'string', multiple: true },
  conformance: { type: 'string' },
  latency: { type: 'string' },
  'deadline-s': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function benchCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, BENCH_FLAGS);
  if (values.help) {
    const names = CASES.map((c) => `${c.algorithm}:${c.variant}`).join(', ');
    process.stdout.write(`${USAGE}\n\ncases: ${names}\n`);
    return 0;
  }
  if (values['worker-sweep'] !== undefined) {
    if (values.suite !== undefined) throw new UsageError('--worker-sweep and --suite: pick one');
    return workerSweepCommand(argv, values);
  }
  if (values.suite !== undefined) return suiteCommand(argv, values);
  for (const flag of ['max-log2n', 'cub', 'nbody', 'conformance', 'latency', 'deadline-s'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} needs --suite`);
  }
  const backendNames = list(values.backends);
  const algorithmNames = list(values.algorithms);
  const browser = values['no-browser'] !== true && values.browser !== '';
  const chromiumPath = CHROMIUM_PATH;
  if (browser && !existsSync(chromiumPath))
    throw new UsageError(`no Chromium at ${chromiumPath} (set CHROMIUM_PATH, or pass --no-browser)`);
  const label = values.label ?? 'local';
  if (!/^[A-Za-z0-9_.-]+$/.test(label)) throw new UsageError(`--label: use letters, digits, '-', '_' or '.', got '${label}'`);
  const out = values.out ?? `report/results-${label}.json`;
  const warmup = values.warmup === undefined ? 2 : values.warmup === '0' ? 0 : positiveInt(values.warmup, '--warmup');
  const warmupMs =
    values['warmup-ms'] === undefined
      ? DEFAULT_WARMUP_MS
      : values['warmup-ms'] === '0'
        ? 0
        : positiveInt(values['warmup-ms'], '--warmup-ms');
  const workers = workerCount(values.workers);
  const results = await runBench({
    ...(backendNames.length > 0 ? { backends: backendNames.map((b) => backendKind(b, '--backends')) } : {}),
    cases: selectCases(algorithmNames),
    sizes: sizePicker(list(values.sizes)),
    settings: {
      warmup,
      warmupMs,
      repeats: positiveInt(values.repeats, '--repeats', 7),
      budgetMs: positiveInt(values['budget-ms'], '--budget-ms', 4000),
    },
    ...(workers !== undefined ? { workers } : {}),
    ...(values['no-wasm'] === true ? { wasm: false } : {}),
    label,
    command: `trident bench ${argv.join(' ')}`.trim(),
    quiet: values.quiet === true,
    browserBackends: browser ? (values.browser === undefined ? ['webgl2', 'webgpu', 'cpu'] : list(values.browser)) : [],
    peers: browser && values['no-peers'] !== true,
    nodePeers: values['no-peers'] !== true,
    peerAlgorithms: PEER_ALGORITHMS.filter((a) => algorithmNames.length === 0 || algorithmNames.some((n) => n.split(':')[0] === a)),
  });
  mkdirSync(dirname(out), { recursive: true });
  commitOutputs([{ path: out, bytes: `${JSON.stringify(results, null, 2)}\n` }]);
  const failed = results.measurements.filter((m) => m.error || m.verified === false).length;
  process.stderr.write(`bench: ${results.measurements.length} measurements (${failed} failed or unverified) -> ${out}\n`);
  return 0;
}

type BenchValues = Parsed<typeof BENCH_FLAGS>['values'];

/** `--worker-sweep LIST`: the cpu backend at each worker count (bench/worker-sweep.ts), in Node, no peers. */
async function workerSweepCommand(argv: string[], values: BenchValues): Promise<number> {
  for (const flag of ['workers', 'browser', 'max-log2n', 'cub', 'nbody', 'conformance', 'latency', 'deadline-s'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} does not apply to --worker-sweep (it sets the workers, in Node)`);
  }
  const backendNames = list(values.backends);
  if (backendNames.some((b) => b !== 'cpu'))
    throw new UsageError(`--worker-sweep runs the cpu backend only, got --backends ${backendNames.join(',')}`);
  const counts = list(values['worker-sweep']).map((w) => positiveInt(w, '--worker-sweep'));
  if (counts.length === 0) throw new UsageError('--worker-sweep: expected worker counts, e.g. 1,2,4');
  const label = values.label ?? 'local';
  if (!/^[A-Za-z0-9_.-]+$/.test(label)) throw new UsageError(`--label: use letters, digits, '-', '_' or '.', got '${label}'`);
  const out = values.out ?? `report/results-${label}-workers.json`;
  const algorithmNames = list(values.algorithms);
  const warmupMs =
    values['warmup-ms'] === undefined
      ? DEFAULT_WARMUP_MS
      : values['warmup-ms'] === '0'
        ? 0
        : positiveInt(values['warmup-ms'], '--warmup-ms');
  const results = await runWorkerSweep({
    counts,
    cases: selectCases(algorithmNames.length > 0 ? algorithmNames : SWEEP_DEFAULT_CASES),
    sizes: sizePicker(list(values.sizes)),
    settings: {
      warmup: values.warmup === undefined ? 2 : values.warmup === '0' ? 0 : positiveInt(values.warmup, '--warmup'),
      warmupMs,
      repeats: positiveInt(values.repeats, '--repeats', 7),
      budgetMs: positiveInt(values['budget-ms'], '--budget-ms', 4000),
    },
    ...(values['no-wasm'] === true ? { wasm: false } : {}),
    label,
    command: `trident bench ${argv.join(' ')}`.trim(),
    quiet: values.quiet === true,
  });
  mkdirSync(dirname(out), { recursive: true });
  commitOutputs([{ path: out, bytes: `${JSON.stringify(results, null, 2)}\n` }]);
  const failed = results.measurements.filter((m) => m.error || m.verified === false).length;
  process.stderr.write(`bench: worker sweep: ${results.measurements.length} measurements (${failed} failed or unverified) -> ${out}\n`);
  return 0;
}

/** `--suite NAME`: the suite runner (bench/suite-runner.ts) with the command's flags. */
async function suiteCommand(argv: string[], values: BenchValues): Promise<number> {
  const suite = SUITES.get(values.suite as string);
  if (!suite) throw new UsageError(`--suite: unknown '${values.suite}' (known: ${[...SUITES.keys()].join(', ')})`);
  for (const flag of ['sizes', 'browser', 'warmup', 'budget-ms', 'no-wasm'] as const) {
    if (values[flag] !== undefined)
      throw new UsageError(`--${flag} does not apply to --suite (its sizes follow --max-log2n; it runs in Node)`);
  }
  const maxLog2n = positiveInt(values['max-log2n'], '--max-log2n', DEFAULT_MAX_LOG2N);
  if (maxLog2n < 8 || maxLog2n > 32) throw new UsageError(`--max-log2n: expected 8 to 32, got ${maxLog2n}`);
  const { steps, unknown } = selectSteps(suite, maxLog2n, list(values.algorithms));
  if (unknown.length > 0) {
    const keys = [...new Set(suite.steps(maxLog2n).map((s) => s.key))].join(', ');
    throw new UsageError(`--algorithms: not in suite ${suite.name}: ${unknown.join(', ')} (it has: ${keys})`);
  }
  const label = values.label ?? 'local';
  if (!/^[A-Za-z0-9_.-]+$/.test(label)) throw new UsageError(`--label: use letters, digits, '-', '_' or '.', got '${label}'`);
  const out = values.out ?? `report/results-${label}.json`;
  const warmupMs =
    values['warmup-ms'] === undefined ? undefined : values['warmup-ms'] === '0' ? 0 : positiveInt(values['warmup-ms'], '--warmup-ms');
  const backendNames = list(values.backends);
  const workers = workerCount(values.workers);
  const deadline = values['deadline-s'] === undefined ? undefined : positiveInt(values['deadline-s'], '--deadline-s');
  const results = await runSuite({
    suite,
    steps,
    maxLog2n,
    ...(backendNames.length > 0 ? { backends: backendNames.map((b) => backendKind(b, '--backends')) } : {}),
    sustained: {
      ...SUSTAINED,
      batches: positiveInt(values.repeats, '--repeats', SUSTAINED.batches),
      ...(warmupMs !== undefined ? { warmupMs } : {}),
    },
    deviceWarmupMs: warmupMs ?? SUITE_DEVICE_WARMUP_MS,
    label,
    command: `trident bench ${argv.join(' ')}`.trim(),
    ...(workers !== undefined ? { workers } : {}),
    quiet: values.quiet === true,
    anchors: [
      ...list(values.cub).map((file) => ({ kind: 'cub' as const, file })),
      ...list(values.nbody).map((file) => ({ kind: 'nbody' as const, file })),
    ],
    ...(values.conformance !== undefined ? { conformance: values.conformance } : {}),
    ...(values.latency !== undefined ? { latency: values.latency } : {}),
    ...(deadline !== undefined ? { deadlineS: deadline } : {}),
  });
  mkdirSync(dirname(out), { recursive: true });
  commitOutputs([{ path: out, bytes: `${JSON.stringify(results, null, 2)}\n` }]);
  const failed = results.measurements.filter((m) => m.error || m.verified === false).length;
  const anchors = results.anchors?.measurements.length ?? 0;
  process.stderr.write(
    `bench: suite ${suite.name}: ${results.measurements.length} measurements (${failed} failed, refused or unverified), ${anchors} anchor rows -> ${out}\n`,
  );
  return 0;
}
