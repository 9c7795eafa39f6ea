/**
 * The bench results file (`trident bench --out results.json`), version 1.
 * docs/bench-schema.md explains each field; schema/bench-results.schema.json is
 * the same contract as JSON Schema for other tools (and other machines' runs,
 * such as the H100 run, which merge into the report).
 */
import type { MachineDescription } from '../describe.ts';
import type { DeviceDescription } from '../device-description.ts';

export const SCHEMA_ID = 'trident-bench/1';

export type TimerSourceName = 'gpu-timestamp' | 'wall';
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
   * the timestamps were read back (so the work had completed), for like-for-like
   * comparisons with peers that have only a wall clock.
   */
  readonly wallMs?: Stats;
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
  readonly machine: MachineDescription;
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
  };
  readonly measurements: readonly Measurement[];
  /** Every device measured, with caps and info: the report's capability matrix is generated from these. */
  readonly devices?: readonly BenchDevice[];
  /** How the environment was set up (e.g. Vulkan pointed at SwiftShader on a GPU-less machine). */
  readonly notes?: readonly string[];
  /** Backends that were asked for but gave no device, and why. */
  readonly unavailable?: ReadonlyArray<{ readonly backend: string; readonly runtime: string; readonly reason: string }>;
}

/** Median-based throughput, or undefined without a time or a work count. */
export function throughputOf(bytes: number | undefined, flops: number | undefined, ms: number, edges?: number): Measurement['throughput'] {
  if (!(ms > 0)) return undefined;
  if (edges !== undefined) return { value: edges / (ms * 1e6), unit: 'GTEPS' };
  if (flops !== undefined) return { value: flops / (ms * 1e6), unit: 'GFLOP/s' };
  if (bytes !== undefined) return { value: bytes / (ms * 1e6), unit: 'GB/s' };
  return undefined;
}
