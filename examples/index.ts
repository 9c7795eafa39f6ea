/** The examples by name, each a function of a device that checks itself against a reference (for run.ts, the browser page and the tests). */
import type { Device } from 'trident';
import { runCsr } from './csr-graph.ts';
import { runHistogram } from './histogram-atomics.ts';
import { runMatmul } from './matmul-tiled.ts';
import { runStencil } from './stencil-2d.ts';

export interface ExampleResult {
  readonly ok: boolean;
  readonly [detail: string]: unknown;
}

export const EXAMPLES = {
  stencil: (device: Device): Promise<ExampleResult> => runStencil(device),
  matmul: (device: Device): Promise<ExampleResult> => runMatmul(device),
  histogram: (device: Device): Promise<ExampleResult> => runHistogram(device),
  csr: (device: Device): Promise<ExampleResult> => runCsr(device),
} as const;

export type ExampleName = keyof typeof EXAMPLES;
