import type { BufferDType } from '@trident/core';

/**
 * One slice of a dispatch for a worker: the generated source (compiled once per
 * worker and cached by `id`), SharedArrayBuffer handles, uniforms and the range of
 * linear workgroups to run. runner.mjs executes it.
 */
export interface SliceTask {
  readonly id: string;
  readonly source: string;
  readonly buffers: Record<string, { readonly data: SharedArrayBuffer; readonly dtype: BufferDType; readonly length: number }>;
  readonly uniforms: Record<string, number>;
  readonly wgStart: number;
  readonly wgEnd: number;
  readonly numWorkgroups: number;
  /** The grid's workgroups along x, y, z (their product is numWorkgroups). */
  readonly grid: readonly number[];
}

/** A pool of workers that run slices, one at a time per worker. */
export interface SlicePool {
  run(task: SliceTask): Promise<void>;
  destroy(): Promise<void>;
}
