/**
 * What a benchmark case is: how it prepares, runs and checks one size on a device,
 * and the peers timed beside it. The cases themselves live in cases.ts (memory-bound
 * and N-body) and graph-cases.ts (graphs); both build on this module.
 */
import type { Device } from 'trident';

export interface PreparedRun {
  /** Records (and may await) one run of the algorithm; timed by device.time. */
  run(): void | Promise<void>;
  /** Checks the last run's output against the sequential reference. */
  verify(): Promise<boolean>;
  /**
   * Reads the last run's result into host memory, as a wall-clock peer's timed run does
   * (TF.js `await t.data()`, gpu.js returning arrays): the runner times run + read in runs
   * of their own (`wallWithReadMs`), so the report compares wall with wall, reads included.
   * Cases with a peer have it.
   */
  read?(): Promise<unknown>;
  dispose(): void;
}

/** One Node-side implementation timed beside Trident's (wall clock, one thread). */
export interface PeerRun {
  readonly implementation: string;
  /** The peer's own operation where it differs from the case's (TF.js top-k as a sort); else the case's variant. */
  readonly variant?: string;
  /** Bytes (or flops) of one run where the peer counts them as the case does, for its throughput. */
  readonly bytes?: number;
  readonly flops?: number;
  /** Untimed: build the peer's own data structure (e.g. a graphology Graph), or load the peer library. */
  prepare(): void | Promise<void>;
  run(): void;
  verify(): boolean;
}

/** Thrown by a peer's `prepare` when its library cannot run here (e.g. a native module missing): recorded as unavailable, not as a failure. */
export class PeerUnavailableError extends Error {
  override readonly name = 'PeerUnavailableError';
}

export interface BenchCase {
  readonly algorithm: string;
  readonly variant: string;
  readonly dtype: 'u32' | 'i32' | 'f32';
  /** Default sizes: elements (bodies for nbody). Kept small enough for a 2-core machine. */
  readonly sizes: readonly number[];
  bytes?(n: number): number;
  flops?(n: number): number;
  /** Stored edges one run traverses (graph cases: throughput in GTEPS). */
  edges?(n: number): number;
  /** Implementations to time beside Trident in Node, in the same run (graphology, the sequential reference). */
  peers?(n: number): readonly PeerRun[];
  setup(device: Device, n: number): PreparedRun;
}

export function sameArray(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
