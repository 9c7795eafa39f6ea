/**
 * What the GPU machine's suite reads from the other programs of the same device call
 * (bench/h100/run.sh): the anchors' output (bench/anchors.ts parses it), the conformance
 * specs' count (bench/h100/vitest-shim.mjs: `{ passed, failed, failures }`) and the
 * per-call latency rows beside TF.js webgpu (bench/h100/latency-check.ts). A file that
 * is there but malformed is a UsageError naming it; one that is missing (a step of the
 * call failed) is left out with a note, so the measurements still come back.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { UsageError } from '../errors.ts';
import { type ParsedAnchors, parseAnchorOutput } from './anchors.ts';
import type { AnchorOutput, ConformanceRun, Measurement, Stats } from './schema.ts';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** A file's JSON, or undefined when it is not there. */
function readJson(file: string, flag: string): unknown {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`${flag} ${file}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
}

export interface SuiteInput<T> {
  readonly value?: T;
  /** What the results file's notes should say about this input (missing, parsed, odd lines). */
  readonly notes: string[];
}

/** Anchor outputs: each file parsed by its kind; a missing file becomes a note. */
export function readAnchors(files: ReadonlyArray<{ kind: AnchorOutput['kind']; file: string }>, gpu: string): SuiteInput<ParsedAnchors[]> {
  const parsed: ParsedAnchors[] = [];
  const notes: string[] = [];
  for (const { kind, file } of files) {
    if (!existsSync(file)) {
      notes.push(`anchor output ${file} is missing (its program did not build or run in this call)`);
      continue;
    }
    const p = parseAnchorOutput(kind, basename(file), readFileSync(file, 'utf8'), gpu);
    parsed.push(p);
    notes.push(`anchors: ${p.measurements.length} rows from ${basename(file)} (${kind}), run in the same call before the Trident rows`);
    for (const line of p.unparsed) notes.push(`anchors: ${basename(file)}: not a measurement: ${line}`);
  }
  return { value: parsed, notes };
}

/** The conformance specs' count (`--conformance`), as run on `backend`. */
export function readConformance(file: string, backend: string): SuiteInput<ConformanceRun> {
  const json = readJson(file, '--conformance');
  if (json === undefined) return { notes: [`conformance file ${file} is missing (the specs did not finish in this call)`] };
  if (!isObject(json) || !isCount(json.passed) || !isCount(json.failed))
    throw new UsageError(`--conformance ${file}: expected { passed, failed } counts`);
  const failures = Array.isArray(json.failures)
    ? json.failures.filter(isObject).map((f) => ({ test: String(f.test ?? ''), error: String(f.error ?? '').split('\n')[0] ?? '' }))
    : [];
  const run: ConformanceRun = {
    backend,
    runtime: 'node',
    passed: json.passed,
    failed: json.failed,
    ...(failures.length > 0 ? { failures } : {}),
  };
  return {
    value: run,
    notes: [`conformance specs on ${backend} (node, bundled on bench/h100/vitest-shim.mjs): ${json.passed} passed, ${json.failed} failed`],
  };
}

/** latency-check's operations as result rows: the case they pair with and the variant naming what was timed. */
const LATENCY_VARIANTS: Readonly<Record<string, readonly [string, string]>> = {
  reduce: ['reduce', 'sum f32 · one call + read'],
  scan: ['scan', 'inclusive f32 · one call + read'],
  sort: ['sort', 'f32 keys · one call + read'],
  // Trident only: the read lands in a host array allocated once (read({ into })).
  'scan into': ['scan', 'inclusive f32 · one call + read into a reused array'],
  'sort into': ['sort', 'f32 keys · one call + read into a reused array'],
};

function isStats(v: unknown): v is Stats {
  return (
    isObject(v) &&
    ['median', 'min', 'max', 'q1', 'q3'].every((k) => typeof v[k] === 'number') &&
    Array.isArray(v.samples) &&
    v.samples.every((x) => typeof x === 'number')
  );
}

/**
 * latency-check's wall-clock rows (`--latency`) as measurements: Trident and TF.js webgpu
 * side by side, one call awaited with its read, in the same process as the suite's other rows.
 */
export function readLatency(file: string, adapter: string): SuiteInput<Measurement[]> {
  const json = readJson(file, '--latency');
  if (json === undefined) return { notes: [`latency file ${file} is missing (latency-check did not finish in this call)`] };
  if (!isObject(json) || !Array.isArray(json.rows)) throw new UsageError(`--latency ${file}: expected { rows: [...] }`);
  const out: Measurement[] = [];
  for (const r of json.rows.filter(isObject)) {
    const v = LATENCY_VARIANTS[String(r.op)];
    if (!v || !isStats(r.wall) || !isCount(r.n)) continue;
    out.push({
      algorithm: v[0],
      variant: v[1],
      implementation: r.library === 'tfjs-webgpu' ? 'tfjs' : 'trident',
      backend: 'webgpu',
      runtime: 'node',
      adapter,
      n: r.n,
      dtype: 'f32',
      timer: 'wall',
      // latency-check's least number of warm-up calls (bench/h100/latency-check.ts).
      warmup: 5,
      repeats: r.wall.samples.length,
      ms: r.wall,
      verified: r.ok === true,
    });
  }
  return {
    value: out,
    notes: [
      `latency: ${out.length} rows from ${basename(file)} (bench/h100/latency-check.ts, same call): wall clock from the call to the resolved read, f32, TF.js webgpu in the same process; ${String(json.protocol ?? '')}`.trim(),
    ],
  };
}
