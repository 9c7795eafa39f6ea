/**
 * Loading results files for the report. Files written by `trident bench`
 * (schema 'trident-bench/1') load as they are. Files from elsewhere — the H100
 * run, hand-made anchor tables — are accepted if they are close enough; the
 * rules are in docs/bench-schema.md ("Other producers"):
 *
 * - the list of measurements may be called `measurements`, `results` or `rows`;
 * - a measurement needs `algorithm`, `n` (or `size`/`elements`) and a time:
 *   `ms` as Stats or a number, or `median_ms`/`medianMs`/`time_ms`/`timeMs`;
 * - `implementation` defaults to 'trident', `runtime` to 'node' ('native' for
 *   implementations cub/cuda), `timer` to 'wall' unless given, `variant` to '';
 * - throughput is recomputed from bytes/flops when present, else taken from
 *   `throughput` ({value, unit}), `gbps`/`GBps` or `gflops`.
 *
 * Anything else in a measurement is ignored; a measurement missing the
 * essentials is dropped with a warning (returned, not thrown), so one odd row
 * cannot sink a report.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { type BenchDevice, type BenchResults, type Measurement, SCHEMA_ID, type Stats, throughputOf } from '../bench/schema.ts';
import type { MachineDescription } from '../describe.ts';
import { UsageError } from '../errors.ts';
import { fromH100AbFormat, fromH100WebgpuFormat, isH100AbFormat, isH100WebgpuFormat } from './h100-format.ts';

/** A measurement with the machine it came from. */
export interface LabelledMeasurement extends Measurement {
  /** The machine label (results file `label`), e.g. 'local' or 'h100'. */
  readonly label: string;
}

export interface LoadedResults {
  readonly file: string;
  readonly label: string;
  readonly machine: Partial<MachineDescription>;
  readonly adapters: Readonly<Record<string, string>>;
  readonly versions: Readonly<Record<string, string>>;
  readonly createdAt: string;
  readonly measurements: LabelledMeasurement[];
  readonly unavailable: NonNullable<BenchResults['unavailable']>;
  /** The devices the run described (caps, info, formulations); empty for files that carry none. */
  readonly devices: BenchDevice[];
  /** The producer's notes (environment set-up, conformance summary). */
  readonly notes: string[];
  readonly warnings: string[];
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function loadResultsFile(file: string): LoadedResults {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  return normalizeResults(json, file);
}

export function normalizeResults(json: unknown, file: string): LoadedResults {
  if (!isObject(json)) throw new UsageError(`${file}: a results file must be a JSON object`);
  const warnings: string[] = [];
  if (isH100WebgpuFormat(json)) {
    // The H100 run's own format (the first H100 harness): converted, then read like any tolerant file.
    const h = fromH100WebgpuFormat(json);
    const machine = { os: 'linux', cpu: typeof json.machine === 'string' ? json.machine : '', gpu: String(json.gpu ?? h.adapter) };
    return normalizeResults(
      {
        label: guessLabel(file) || h.label,
        machine,
        createdAt: json.date,
        adapters: { 'node/webgpu': h.adapter, 'native/cuda': String(json.gpu ?? h.adapter) },
        versions: {},
        measurements: h.measurements,
        notes: h.notes,
      },
      file,
    );
  }
  if (isH100AbFormat(json)) {
    // The H100 A/B run's format (bench/webgpu-h100-ab.ts): library rows for every algorithm, tuned IR kernels, CUB lines.
    const h = fromH100AbFormat(json);
    return normalizeResults(
      {
        label: guessLabel(file),
        machine: { os: 'linux', cpu: typeof json.machine === 'string' ? json.machine : '' },
        // A full time where the file has one: several runs of one day must order by it.
        createdAt: json.createdAt ?? json.date,
        adapters: { 'node/webgpu': h.adapter },
        versions: {},
        measurements: h.measurements,
        notes: h.notes,
      },
      file,
    );
  }
  const machineRaw = isObject(json.machine) ? json.machine : {};
  const label = str(json.label) ?? str(machineRaw.label) ?? guessLabel(file);
  const rawList = [json.measurements, json.results, json.rows].find(Array.isArray) as unknown[] | undefined;
  if (!rawList) throw new UsageError(`${file}: no 'measurements' (or 'results'/'rows') list`);
  const measurements: LabelledMeasurement[] = [];
  rawList.forEach((raw, i) => {
    const m = normalizeMeasurement(raw, label);
    if (typeof m === 'string') warnings.push(`${basename(file)}: measurement ${i} dropped: ${m}`);
    else measurements.push(m);
  });
  if (json.schema !== undefined && json.schema !== SCHEMA_ID) {
    warnings.push(`${basename(file)}: schema '${String(json.schema)}' is not '${SCHEMA_ID}'; read tolerantly`);
  }
  const unavailable = Array.isArray(json.unavailable)
    ? json.unavailable.filter(isObject).map((u) => ({
        backend: str(u.backend) ?? '?',
        runtime: str(u.runtime) ?? 'node',
        reason: str(u.reason) ?? '',
      }))
    : [];
  return {
    file,
    label,
    machine: machineRaw as Partial<MachineDescription>,
    adapters: isObject(json.adapters) ? (json.adapters as Record<string, string>) : {},
    versions: isObject(json.versions) ? (json.versions as Record<string, string>) : {},
    createdAt: str(json.createdAt) ?? str(json.date) ?? '',
    measurements,
    unavailable,
    devices: Array.isArray(json.devices) ? json.devices.filter(isBenchDevice) : [],
    notes: Array.isArray(json.notes) ? json.notes.filter((x): x is string => typeof x === 'string') : [],
    warnings,
  };
}

function isBenchDevice(v: unknown): v is BenchDevice {
  if (!isObject(v) || typeof v.backend !== 'string' || typeof v.adapter !== 'string' || !isObject(v.caps)) return false;
  const caps = v.caps;
  return isObject(caps.limits) && Array.isArray(caps.features) && typeof caps.timerSource === 'string';
}

/** 'bench/results/h100-2026-11-22.json' -> 'h100'. */
function guessLabel(file: string): string {
  const base = basename(file).replace(/\.json$/i, '');
  return base.split(/[-_.]/)[0] || base;
}

function normalizeStats(raw: Json): Stats | undefined {
  const ms = raw.ms;
  if (isObject(ms)) {
    const median = num(ms.median);
    if (median === undefined) return undefined;
    const samples = Array.isArray(ms.samples) ? ms.samples.filter((x): x is number => typeof x === 'number') : [median];
    return {
      median,
      min: num(ms.min) ?? median,
      max: num(ms.max) ?? median,
      q1: num(ms.q1) ?? num(ms.min) ?? median,
      q3: num(ms.q3) ?? num(ms.max) ?? median,
      samples,
    };
  }
  const median = num(ms) ?? num(raw.median_ms) ?? num(raw.medianMs) ?? num(raw.time_ms) ?? num(raw.timeMs);
  if (median === undefined) return undefined;
  const min = num(raw.min_ms) ?? num(raw.minMs) ?? median;
  const max = num(raw.max_ms) ?? num(raw.maxMs) ?? median;
  return { median, min, max, q1: min, q3: max, samples: [median] };
}

function normalizeMeasurement(raw: unknown, label: string): LabelledMeasurement | string {
  if (!isObject(raw)) return 'not an object';
  const algorithm = str(raw.algorithm);
  if (!algorithm) return "no 'algorithm'";
  const n = num(raw.n) ?? num(raw.size) ?? num(raw.elements);
  if (n === undefined) return `${algorithm}: no 'n'`;
  const implementation = str(raw.implementation) ?? 'trident';
  const native = implementation === 'cub' || implementation === 'cuda';
  const runtime = str(raw.runtime);
  const stats = normalizeStats(raw);
  const error = str(raw.error);
  if (!stats && !error) return `${algorithm} n=${n}: no time and no error`;
  const bytes = num(raw.bytes);
  const flops = num(raw.flops);
  let throughput = stats ? throughputOf(bytes, flops, stats.median) : undefined;
  if (!throughput && isObject(raw.throughput) && num(raw.throughput.value) !== undefined) {
    const unit = raw.throughput.unit === 'GFLOP/s' || raw.throughput.unit === 'GTEPS' ? raw.throughput.unit : 'GB/s';
    throughput = { value: num(raw.throughput.value) as number, unit };
  }
  if (!throughput) {
    const gbps = num(raw.gbps) ?? num(raw.GBps);
    const gflops = num(raw.gflops) ?? num(raw.GFLOPs);
    if (gflops !== undefined) throughput = { value: gflops, unit: 'GFLOP/s' };
    else if (gbps !== undefined) throughput = { value: gbps, unit: 'GB/s' };
  }
  const timer = raw.timer === 'gpu-timestamp' ? 'gpu-timestamp' : 'wall';
  const wallMs = isObject(raw.wallMs) ? normalizeStats({ ms: raw.wallMs }) : undefined;
  const dtype = raw.dtype === 'i32' || raw.dtype === 'f32' ? raw.dtype : 'u32';
  const m: LabelledMeasurement = {
    label,
    algorithm,
    variant: str(raw.variant) ?? '',
    implementation,
    ...(raw.role === 'ceiling' ? { role: 'ceiling' as const } : {}),
    backend: str(raw.backend) ?? (native ? 'cuda' : 'unknown'),
    runtime: runtime === 'chromium' || runtime === 'native' || runtime === 'node' ? runtime : native ? 'native' : 'node',
    adapter: str(raw.adapter) ?? '',
    n,
    dtype,
    timer,
    warmup: num(raw.warmup) ?? 0,
    repeats: num(raw.repeats) ?? stats?.samples.length ?? 0,
    ...(stats ? { ms: stats } : {}),
    ...(wallMs && timer !== 'wall' ? { wallMs } : {}),
    ...(bytes !== undefined ? { bytes } : {}),
    ...(flops !== undefined ? { flops } : {}),
    ...(throughput ? { throughput } : {}),
    ...(typeof raw.verified === 'boolean' ? { verified: raw.verified } : {}),
    ...(error ? { error } : {}),
  };
  return m;
}
