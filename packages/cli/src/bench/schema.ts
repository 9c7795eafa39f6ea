/**
 * The bench results file (`trident bench --out results.json`), version 1.
 * docs/bench-schema.md explains each field; schema/bench-results.schema.json is
 * the same contract as JSON Schema for other tools. Every results file the report
 * reads is in this form, the GPU machine's suite runs (`trident bench --suite h100`)
 * included; report/validate.ts holds the rules it checks on loading.
 */
import type { MachineDescription } from '../describe.ts';
import type { DeviceDescription } from '../device-description.ts';

export const SCHEMA_ID = 'trident-bench/1';

export type TimerSourceName = 'gpu-timestamp' | 'wall';
/** How a measurement was timed: bench/timing.ts (adaptive warm-up, then repeats) or bench/sustained.ts. */
export type TimingProtocol = 'adaptive' | 'sustained';
/** GTEPS (graph algorithms): 10^9 stored edges traversed per second. */
export type ThroughputUnit = 'GB/s' | 'GFLOP/s' | 'GTEPS';

/** Who wrote the code that was timed. 'trident' is us; the rest are peers and anchors. */
export type Implementation = 'trident' | 'gpu.js' | 'tfjs' | 'cub' | 'cuda' | 'wgsl-hand' | (string & {});

export interface Stats {
  /** Milliseconds per run. */
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** First and third quartile (linear interpolation). */
  readonly q1: number;
  readonly q3: number;
  /** Every timed repeat, in the order run. */
  readonly samples: readonly number[];
}

export interface Measurement {
  /** zcopy | reduce | scan | histogram | compact | sort | nbody (peers use the same names for the same operation). */
  readonly algorithm: string;
  /** What exactly ran: e.g. 'sum', 'inclusive', 'radix', 'keys', '256 bins'. Empty when there is one variant. */
  readonly variant: string;
  readonly implementation: Implementation;
  /**
   * 'ceiling': not a peer but the machine's own bound for the cpu backend — plain JS loops on as many
   * threads as the backend has workers (bench/ceiling.ts); the report shows Trident's share of it.
   */
  readonly role?: 'ceiling';
  /** The backend or peer mode: cpu, webgpu, webgl2; for peers e.g. 'webgl', 'wasm'; for anchors 'cuda'. */
  readonly backend: string;
  /** Where it ran: node, chromium (headless, in a page), or native (a compiled anchor). */
  readonly runtime: 'node' | 'chromium' | 'native';
  /** The adapter, renderer or CPU that ran it. */
  readonly adapter: string;
  /** Problem size: elements (keys, bodies for nbody). */
  readonly n: number;
  readonly dtype: 'u32' | 'i32' | 'f32';
  /** The clock every sample came from. A measurement never mixes sources. */
  readonly timer: TimerSourceName;
  /** Untimed runs before the checked run, as the adaptive warm-up ran them (bench/timing.ts). */
  readonly warmup: number;
  readonly repeats: number;
  /** Milliseconds; absent when `error` says why it could not run. */
  readonly ms?: Stats;
  /**
   * Where `timer` is gpu-timestamp: wall-clock ms of the same runs, from the call until
   * the timestamps were read back (so the work had completed; the result itself stays on
   * the device).
   */
  readonly wallMs?: Stats;
  /**
   * Wall-clock ms of runs of their own, each from the call until its result was read into
   * host memory: timed the way the wall-clock peers are (TF.js `await t.data()`, gpu.js
   * returning arrays), by the adaptive protocol (bench/timing.ts). Trident's cases with a
   * peer have it (BenchCase `read`); the report compares them with wall-clock peers by it.
   */
  readonly wallWithReadMs?: Stats;
  /**
   * How `ms` (and `wallMs`) were timed: 'adaptive' (adaptive warm-up, then repeats) or
   * 'sustained' (bench/sustained.ts). Absent: the file's `settings.protocol`; a file whose
   * timed rows differ says `settings.protocol: 'mixed'` and every such row says its own.
   */
  readonly protocol?: TimingProtocol;
  /** Bytes read + written by one run (the GB/s numerator), for memory-bound algorithms. */
  readonly bytes?: number;
  /** Floating-point operations of one run (nbody: 20 per interaction), for compute-bound ones. */
  readonly flops?: number;
  /** Stored edges one run traverses (bfs, components: the GTEPS numerator). */
  readonly edges?: number;
  /** Median throughput: bytes / median time in GB/s, or flops / median time in GFLOP/s. */
  readonly throughput?: { readonly value: number; readonly unit: ThroughputUnit };
  /** Whether the output was checked against the sequential reference (true = matched). */
  readonly verified?: boolean;
  /** Why this combination did not run (unsupported feature, peer lacks the operation, failure). */
  readonly error?: string;
}

/**
 * One native anchor program's output (anchors/cub_anchor.cu, anchors/nbody_anchor.cu,
 * bench/h100/cub-large.cu), as it printed it in the same device call as the Trident rows.
 */
export interface AnchorOutput {
  /** Which parser read it: 'cub' (CUB and cudaMemcpy lines) or 'nbody' (the CUDA N-body kernel). */
  readonly kind: 'cub' | 'nbody';
  /** The file the lines were read from (its base name). */
  readonly file: string;
  /** Every non-empty line, as printed, including any that are no measurement (errors, skips). */
  readonly lines: readonly string[];
}

/**
 * Native figures of the same machine, measured beside Trident's rows (bench/anchors.ts parses
 * them): the raw output and one measurement per timed line (implementation 'cub' or 'cuda',
 * runtime 'native', backend 'cuda'), named like Trident's case of the same operation so the
 * report sets CUB beside Trident at the same n.
 */
export interface BenchAnchors {
  readonly outputs: readonly AnchorOutput[];
  readonly measurements: readonly Measurement[];
}

/** The conformance specs' count on one backend of the machine (bench/h100/vitest-shim.mjs writes it). */
export interface ConformanceRun {
  readonly backend: string;
  /** Where the specs ran (absent in files that did not say). */
  readonly runtime?: 'node' | 'chromium';
  readonly passed: number;
  readonly failed: number;
  /** The commit the specs ran at, where the run recorded it. */
  readonly commit?: string;
  readonly failures?: ReadonlyArray<{ readonly test: string; readonly error: string }>;
}

/**
 * The machine: what `describeMachine` records. Files converted from the GPU machine's earlier
 * producers (scripts/convert-results.ts) carry only what those recorded (os, cpu), so the
 * rest is optional here; `gpu` names the GPU where one ran (nvidia-smi's name and driver).
 */
export type BenchMachine = Pick<MachineDescription, 'os' | 'cpu'> &
  Partial<MachineDescription> & {
    readonly gpu?: string;
    readonly label?: string;
    readonly browser?: string;
  };

/** Where a file came from when it was converted from an earlier shape rather than written by `trident bench`. */
export interface Provenance {
  /** The converter (scripts/convert-results.ts) and what it read. */
  readonly convertedBy: string;
  readonly originalShape: string;
  /** The original file's fields that have no place in this schema (raw sweep rows, ratios, diagnostics), kept as they were. */
  readonly original: Readonly<Record<string, unknown>>;
}

/** A device the run measured: its caps and info as `trident devices` prints them, and what each algorithm chose on it. */
export interface BenchDevice extends DeviceDescription {
  readonly runtime: 'node' | 'chromium';
}

export interface BenchResults {
  readonly schema: typeof SCHEMA_ID;
  /** ISO 8601 time the run started. */
  readonly createdAt: string;
  /** A short name for the machine, used to label rows in the report (e.g. 'local', 'h100'). */
  readonly label: string;
  readonly machine: BenchMachine;
  /** Adapters seen, by backend (and runtime) key such as 'node/cpu' or 'chromium/webgl2'. */
  readonly adapters: Readonly<Record<string, string>>;
  /** Versions of what ran: node, trident, webgpu (Dawn), chromium, gpu.js, tfjs, cuda... */
  readonly versions: Readonly<Record<string, string>>;
  /** The command line and settings, so a run can be repeated. */
  readonly settings: {
    readonly command: string;
    /** --warmup: untimed runs at least. */
    readonly warmup: number;
    /** --warmup-ms: the adaptive warm-up's budget (absent in files written before it). */
    readonly warmupMs?: number;
    readonly repeats: number;
    readonly sizes: Readonly<Record<string, readonly number[]>>;
    /** `--suite NAME`: the named suite that chose the cases and sizes (bench/suites.ts). */
    readonly suite?: string;
    /**
     * How each measurement was timed: 'adaptive' (the default: adaptive warm-up, then `repeats`
     * timed runs each) or 'sustained' (back-to-back runs in batches under sustained load, the
     * median of `repeats` batch means; bench/sustained.ts). Absent: adaptive. 'mixed': the
     * rows differ (the browser bench on the GPU machine: its GPU backends sustained, its cpu
     * backend and the peers adaptive), and every timed row but the native anchors' says its
     * own `protocol`; `warmup`, `warmupMs` and `repeats` are then the adaptive rows' settings.
     */
    readonly protocol?: TimingProtocol | 'mixed';
  };
  readonly measurements: readonly Measurement[];
  /** Every device measured, with caps and info: the report's capability matrix is generated from these. */
  readonly devices?: readonly BenchDevice[];
  /** How the environment was set up (e.g. Vulkan pointed at SwiftShader on a GPU-less machine). */
  readonly notes?: readonly string[];
  /** Backends that were asked for but gave no device, and why. */
  readonly unavailable?: ReadonlyArray<{ readonly backend: string; readonly runtime: string; readonly reason: string }>;
  /** Native anchors (CUB, CUDA) run in the same call as the Trident rows (suite runs on the GPU machine). */
  readonly anchors?: BenchAnchors;
  /** The conformance specs' counts on this machine, from the same call or session. */
  readonly conformance?: readonly ConformanceRun[];
  /** Files converted from an earlier shape: what they came from. */
  readonly provenance?: Provenance;
}

/**
 * What a file's `settings.protocol` says of these rows: the one protocol every timed row
 * that names one used, 'mixed' where they differ, undefined where none names one.
 */
export function fileProtocol(measurements: readonly Measurement[]): TimingProtocol | 'mixed' | undefined {
  const used = new Set(measurements.flatMap((m) => (m.ms && m.protocol ? [m.protocol] : [])));
  if (used.size > 1) return 'mixed';
  return [...used][0];
}

/** Median-based throughput, or undefined without a time or a work count. */
export function throughputOf(bytes: number | undefined, flops: number | undefined, ms: number, edges?: number): Measurement['throughput'] {
  if (!(ms > 0)) return undefined;
  if (edges !== undefined) return { value: edges / (ms * 1e6), unit: 'GTEPS' };
  if (flops !== undefined) return { value: flops / (ms * 1e6), unit: 'GFLOP/s' };
  if (bytes !== undefined) return { value: bytes / (ms * 1e6), unit: 'GB/s' };
  return undefined;
}
