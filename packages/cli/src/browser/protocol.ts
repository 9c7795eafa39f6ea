/** What Node sends the benchmark page and what the page sends back (plain JSON both ways). */
import type { RunSettings } from '../bench/runner.ts';
import type { BenchDevice, Measurement } from '../bench/schema.ts';
import type { DeviceDescription } from '../device-description.ts';
import type { WireArray } from '../run/execute.ts';

export interface PageCase {
  /** `algorithm:variant`, a key of CASES. */
  readonly key: string;
  readonly sizes: readonly number[];
}

export interface PageConfig {
  readonly backends: readonly string[];
  readonly cases: readonly PageCase[];
  /**
   * bench/runner.ts RunSettings for Trident's cases: warm-up (count and ms), repeats, budget;
   * with `sustained`, the sustained protocol times them (the runs that include the result's
   * read keep the adaptive fields). The peers and the plain-JS ceiling always take the
   * adaptive fields.
   */
  readonly settings: RunSettings;
  /**
   * Back-to-back copies on each device for this many ms before its first case (GPU time where
   * it has timestamps): an idle GPU's clock comes up first, as the Node suite's devices do.
   */
  readonly deviceWarmupMs?: number;
  readonly workers?: number;
  /** false: the cpu device runs every kernel as JavaScript (bench --no-wasm). */
  readonly wasm?: boolean;
  /** Run the peers (TensorFlow.js, gpu.js) too. */
  readonly peers: boolean;
  /** Peer sizes by algorithm (reduce, scan, sort, nbody). */
  readonly peerSizes: Readonly<Record<string, readonly number[]>>;
  /**
   * A peer's time budget per run, ms: where one peer's checked run at a size takes longer, that row
   * says so (untimed) and the peer's larger sizes of the operation are skipped with a row each
   * (TF.js webgl's top-k at k = 2^24 takes ~20 s a run on an H100). Absent: no budget.
   */
  readonly peerBudgetMs?: number;
}

export interface PageResult {
  readonly measurements: Measurement[];
  readonly unavailable: Array<{ backend: string; runtime: string; reason: string }>;
  readonly adapters: Record<string, string>;
  readonly versions: Record<string, string>;
  /** The devices measured in the page, with caps, info and formulations. */
  readonly devices?: BenchDevice[];
}

/** A `trident run` job as sent to the page: inputs as raw bytes (base64), so every bit survives. */
export interface WireJob {
  readonly algorithm: string;
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly inputs: Readonly<Record<string, WireArray>>;
}

export type WireRunResult = { outputs: Record<string, WireArray>; backend: string; adapter: string } | { error: string };

export type PageDeviceEntry = ({ available: true } & DeviceDescription) | { backend: string; available: false; reason: string };

declare global {
  interface Window {
    tridentDevices?: (workers: number) => Promise<PageDeviceEntry[]>;
    tridentRun?: (backend: string, job: WireJob, workers: number) => Promise<WireRunResult>;
    tridentBench?: (config: PageConfig) => Promise<PageResult>;
    /** Exposed by Node (page.exposeFunction): one call per step started. */
    tridentProgress?: (label: string) => Promise<void>;
  }
}

/** bench/h100/browser-run.ts --parts read-probe: sizes as log2 n, the WebGL2 read-wait settings to compare. */
export interface ReadProbeConfig {
  readonly sizes: readonly number[];
  readonly blockingReadBytes: readonly number[];
  readonly warmup: number;
  readonly rounds: number;
  readonly perRound: number;
}

export type ReadProbeRow =
  | {
      readonly label: string;
      readonly log2n: number;
      readonly medianMs: number;
      readonly p10Ms: number;
      readonly p90Ms: number;
      readonly samples: number;
    }
  | { readonly label: string; readonly log2n: number; readonly error: string };

declare global {
  interface Window {
    tridentReadProbe?: (config: ReadProbeConfig) => Promise<ReadProbeRow[]>;
  }
}
