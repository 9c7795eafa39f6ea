/**
 * Loading results files for the report: one schema, `trident-bench/1` (bench/schema.ts),
 * read strictly (report/validate.ts). A file that cannot be read, is not JSON, is of
 * another schema or breaks a rule is a ResultsFileError naming the file and what is
 * wrong — never skipped, so no figure quietly drops out of a report. Results of earlier
 * shapes (the GPU machine's first harnesses) were converted once by
 * scripts/convert-results.ts.
 *
 * Each measurement is labelled with its file's machine label; the anchors' rows (CUB,
 * CUDA: `anchors.measurements`) join the file's measurements. Throughput is derived from
 * the work a row counts (bytes, flops or edges) and its median wherever it counts one,
 * so a hand-edited figure cannot disagree with its own time.
 */
import { readFileSync } from 'node:fs';
import {
  type AnchorOutput,
  type BenchDevice,
  type BenchMachine,
  type BenchResults,
  type ConformanceRun,
  type Measurement,
  throughputOf,
} from '../bench/schema.ts';
import { UsageError } from '../errors.ts';
import { SchemaViolation, validateResults } from './validate.ts';

/** A measurement with the machine it came from. */
export interface LabelledMeasurement extends Measurement {
  /** The machine label (results file `label`), e.g. 'local' or 'h100'. */
  readonly label: string;
  /** The Trident commit the file's run was built from (its `versions`), where it says one. */
  readonly commit?: string;
}

export interface LoadedResults {
  readonly file: string;
  readonly label: string;
  readonly machine: BenchMachine;
  readonly adapters: Readonly<Record<string, string>>;
  readonly versions: Readonly<Record<string, string>>;
  readonly createdAt: string;
  /** The file's measurements, then its anchors' (CUB, CUDA) rows. */
  readonly measurements: LabelledMeasurement[];
  readonly unavailable: NonNullable<BenchResults['unavailable']>;
  /** The devices the run described (caps, info, formulations); empty for files that carry none. */
  readonly devices: BenchDevice[];
  /** The anchors' raw output, as the run recorded it. */
  readonly anchorOutputs: readonly AnchorOutput[];
  readonly conformance: readonly ConformanceRun[];
  /** The producer's notes (environment set-up, protocol, conformance summary). */
  readonly notes: string[];
  /** What the report should say about this file (e.g. rows a newer file superseded). */
  readonly warnings: string[];
}

/** A results file the report cannot use: the file and what is wrong with it. */
export class ResultsFileError extends UsageError {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'ResultsFileError';
  }
}

export function loadResultsFile(file: string): LoadedResults {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ResultsFileError(file, `cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ResultsFileError(file, `not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  return readResults(json, file);
}

/** A parsed results file, validated and labelled; `file` names it in errors and in the report's sources. */
export function readResults(json: unknown, file: string): LoadedResults {
  let r: BenchResults;
  try {
    r = validateResults(json);
  } catch (err) {
    if (err instanceof SchemaViolation) throw new ResultsFileError(file, `not a valid trident-bench/1 file: ${err.message}`);
    throw err;
  }
  const commit = r.versions['trident commit'];
  // A timed row without its own protocol was timed by the file's (adaptive where the file names none).
  const fileProtocol = r.settings?.protocol === 'mixed' ? undefined : (r.settings?.protocol ?? 'adaptive');
  // Anchor rows (CUB, CUDA) were timed by their own programs: they take no protocol from the file.
  const label = (m: Measurement, anchor = false): LabelledMeasurement => {
    const throughput = m.ms ? (throughputOf(m.bytes, m.flops, m.ms.median, m.edges) ?? m.throughput) : m.throughput;
    const protocol = m.protocol ?? (m.ms && fileProtocol && !anchor ? fileProtocol : undefined);
    return {
      ...m,
      ...(throughput ? { throughput } : {}),
      ...(protocol ? { protocol } : {}),
      label: r.label,
      ...(commit ? { commit } : {}),
    };
  };
  return {
    file,
    label: r.label,
    machine: r.machine,
    adapters: r.adapters,
    versions: r.versions,
    createdAt: r.createdAt,
    measurements: [...r.measurements.map((m) => label(m)), ...(r.anchors?.measurements ?? []).map((m) => label(m, true))],
    unavailable: [...(r.unavailable ?? [])],
    devices: [...(r.devices ?? [])],
    anchorOutputs: r.anchors?.outputs ?? [],
    conformance: r.conformance ?? [],
    notes: [...(r.notes ?? [])],
    warnings: [],
  };
}
