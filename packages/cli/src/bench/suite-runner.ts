/**
 * `trident bench --suite NAME`: a named suite (bench/suites.ts) on the backends given, every
 * step timed by the sustained protocol (bench/sustained.ts), with what the same device call
 * measured beside it — the CUB / CUDA anchors, the conformance count, the per-call latency
 * rows — in one `trident-bench/1` file. The GPU machine's runs (bench/h100/run.sh suite |
 * quick) are this command, bundled.
 *
 * Never a crash for one size: a case that refuses a size (a typed error such as
 * LimitExceededError, or a device out of memory) is a row saying so; sizes past the
 * device's caps.limits.maxBufferElements are not run and a note says which; past
 * `deadlineS` the remaining steps become rows saying they were not run, so a call that
 * runs long still writes its file.
 */
import { execFileSync } from 'node:child_process';
import { type BackendKind, createDevice, type Device, registeredBackends } from 'trident';
import { describeMachine } from '../describe.ts';
import { describeDevice } from '../device-description.ts';
import { deviceOptions } from '../device-options.ts';
import { environmentNotes } from '../environment.ts';
import { Progress } from './progress.ts';
import { measureCase, warmDevice } from './runner.ts';
import type { AnchorOutput, BenchDevice, BenchResults, ConformanceRun, Measurement } from './schema.ts';
import { SCHEMA_ID } from './schema.ts';
import { readAnchors, readConformance, readLatency } from './suite-inputs.ts';
import { findCase, type Suite, type SuiteStep } from './suites.ts';
import type { SustainedSettings } from './sustained.ts';
import { installedVersions } from './versions.ts';

export interface SuiteOptions {
  readonly suite: Suite;
  readonly steps: readonly SuiteStep[];
  readonly maxLog2n: number;
  readonly backends?: readonly BackendKind[];
  readonly sustained: SustainedSettings;
  /** Back-to-back copies on each device before its first step (an idle GPU's clock ramps up). */
  readonly deviceWarmupMs: number;
  readonly label: string;
  readonly command: string;
  readonly workers?: number;
  readonly quiet?: boolean;
  readonly anchors: ReadonlyArray<{ kind: AnchorOutput['kind']; file: string }>;
  readonly conformance?: string;
  readonly latency?: string;
  /** Seconds from the start after which no further step runs. */
  readonly deadlineS?: number;
}

/** The GPU's name and driver (nvidia-smi), or undefined off the GPU machine. */
function gpuName(): string | undefined {
  try {
    const out = execFileSync('nvidia-smi', ['--query-gpu=name,driver_version', '--format=csv,noheader'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
    });
    return out.split('\n')[0]?.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A step that did not run, as a row saying why. */
function notRun(device: Device, key: string, n: number, why: string): Measurement {
  const c = findCase(key);
  return {
    algorithm: c?.algorithm ?? key.split(':')[0] ?? key,
    variant: c?.variant ?? key.split(':').slice(1).join(':'),
    implementation: 'trident',
    backend: device.backend,
    runtime: 'node',
    adapter: device.info.adapter,
    n,
    dtype: c?.dtype ?? 'u32',
    timer: device.caps.timerSource,
    warmup: 0,
    repeats: 0,
    error: why,
  };
}

const fmtLog2 = (n: number): string => (Number.isInteger(Math.log2(n)) ? `2^${Math.log2(n)}` : String(n));

export async function runSuite(options: SuiteOptions): Promise<BenchResults> {
  const createdAt = new Date().toISOString();
  const started = performance.now();
  const deadline = options.deadlineS !== undefined ? started + 1000 * options.deadlineS : Number.POSITIVE_INFINITY;
  const kinds = options.backends ?? registeredBackends();
  const notes: string[] = [
    `suite ${options.suite.name} (${options.suite.description}), --max-log2n ${options.maxLog2n}; every row timed under sustained load: the median of ${options.sustained.batches} batch means, each batch about ${options.sustained.batchMs} ms of back-to-back runs (at most ${options.sustained.maxBatchRuns}), after at least ${options.sustained.warmupMs} ms of the same load, following one run checked against the sequential reference; each device first ran ${options.deviceWarmupMs} ms of back-to-back copies`,
  ];
  const unavailable: Array<{ backend: string; runtime: string; reason: string }> = [];
  const devices: Device[] = [];
  for (const kind of kinds) {
    try {
      devices.push(await createDevice({ backend: kind, options: deviceOptions(options.workers) }));
    } catch (err) {
      const reason =
        err instanceof Error && 'reasons' in err ? String((err as { reasons: { reason: string }[] }).reasons[0]?.reason) : String(err);
      unavailable.push({ backend: kind, runtime: 'node', reason });
      process.stderr.write(`bench: ${kind} unavailable: ${reason}\n`);
    }
  }
  const adapters: Record<string, string> = {};
  const described: BenchDevice[] = [];
  const measurements: Measurement[] = [];
  const progress = new Progress(devices.length * options.steps.length, { quiet: options.quiet === true });
  try {
    for (const device of devices) {
      adapters[`node/${device.backend}`] = device.info.adapter;
      described.push({ ...describeDevice(device), runtime: 'node' });
      await warmDevice(device, 2 ** Math.min(options.maxLog2n, 26), options.deviceWarmupMs);
      const limit = device.caps.limits.maxBufferElements;
      const over = options.steps.filter((s) => s.n > limit);
      if (over.length > 0) {
        const sizes = [...new Set(over.map((s) => fmtLog2(s.n)))].join(', ');
        notes.push(`${device.backend}: not run at ${sizes}: above caps.limits.maxBufferElements (${limit})`);
      }
      for (const step of options.steps) {
        if (step.n > limit) {
          progress.step();
          continue;
        }
        const c = findCase(step.key);
        progress.start(`${device.backend} ${step.key} n=${fmtLog2(step.n)}`);
        let m: Measurement;
        if (!c) m = notRun(device, step.key, step.n, `no case '${step.key}'`);
        else if (performance.now() > deadline)
          m = notRun(device, step.key, step.n, `not run: past the suite's deadline (--deadline-s ${options.deadlineS})`);
        else m = await measureCase(device, c, step.n, { warmup: 0, warmupMs: 0, repeats: 0, budgetMs: 0, sustained: options.sustained });
        measurements.push(m);
        if (m.error) progress.note(`  ${device.backend} ${step.key} n=${step.n}: ${m.error}`);
        else if (m.verified === false) progress.note(`  ${device.backend} ${step.key} n=${step.n}: result differs from the reference`);
        progress.step();
      }
    }
  } finally {
    for (const d of devices) await d.destroy();
  }
  progress.finish();

  const gpu = gpuName();
  const anchorInput = readAnchors(options.anchors, gpu ?? 'unknown GPU');
  notes.push(...anchorInput.notes);
  const anchorRuns = anchorInput.value ?? [];
  if (anchorRuns.length > 0) adapters['native/cuda'] = gpu ?? 'unknown GPU';
  // The conformance specs and the latency check ran on the suite's (first) backend in this call.
  const backend = devices[0]?.backend ?? kinds[0] ?? 'webgpu';
  const conformance: ConformanceRun[] = [];
  if (options.conformance) {
    const c = readConformance(options.conformance, backend);
    notes.push(...c.notes);
    if (c.value) conformance.push(c.value);
  }
  if (options.latency) {
    const l = readLatency(options.latency, adapters[`node/${backend}`] ?? backend);
    notes.push(...l.notes);
    measurements.push(...(l.value ?? []));
  }

  const sizes: Record<string, number[]> = {};
  for (const s of options.steps) sizes[s.key] = [...(sizes[s.key] ?? []), s.n];
  const keys = new Set(options.steps.map((s) => s.key));
  for (const key of keys) if (!findCase(key)) notes.push(`no case '${key}' in this build`);
  return {
    schema: SCHEMA_ID,
    createdAt,
    label: options.label,
    machine: { ...describeMachine(), ...(gpu ? { gpu } : {}) },
    adapters,
    // A bundle resolves no package versions: the GPU machine's run names the commit it was built from instead (run.sh pack).
    versions: {
      node: process.version,
      ...installedVersions(),
      ...(process.env.TRIDENT_COMMIT ? { 'trident commit': process.env.TRIDENT_COMMIT } : {}),
    },
    settings: {
      command: options.command,
      warmup: 1,
      warmupMs: options.sustained.warmupMs,
      repeats: options.sustained.batches,
      sizes,
      suite: options.suite.name,
      protocol: 'sustained',
    },
    measurements,
    devices: described,
    unavailable,
    ...(anchorRuns.length > 0
      ? { anchors: { outputs: anchorRuns.map((a) => a.output), measurements: anchorRuns.flatMap((a) => a.measurements) } }
      : {}),
    ...(conformance.length > 0 ? { conformance } : {}),
    notes: [...notes, ...environmentNotes],
  };
}
