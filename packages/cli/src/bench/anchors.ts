/**
 * The native anchors' output as measurements: anchors/cub_anchor.cu and
 * bench/h100/cub-large.cu print lines like
 *
 *   n=2^<log2 n> CUB <operation>: <time> ms <throughput> GB/s
 *   n=2^<log2 n> memcpy d2d: <time> ms <throughput> GB/s (r+w)
 *
 * and anchors/nbody_anchor.cu lines like
 *
 *   nbody CUDA n=<bodies> tile=<tile>: <time> ms <throughput> GFLOP/s (20 flop/interaction)
 *
 * each the median of its own runs, timed with CUDA events (GPU-side: `gpu-timestamp`).
 * A line becomes a measurement named like Trident's case of the same operation (CUB's
 * radix sort keys -> sort / 'radix keys', memcpy -> zcopy / 'copy'), with the work
 * counted as that case counts it, so the report sets CUB beside Trident at the same n
 * and compares rates like for like. Lines that are no measurement (a skip, an error)
 * stay in the output's `lines` and come back as `unparsed`.
 */
import type { AnchorOutput, Measurement } from './schema.ts';
import { throughputOf } from './schema.ts';

/** One timed CUB / memcpy operation: the implementation and the Trident case it stands beside. */
interface AnchorOperation {
  readonly implementation: 'cub' | 'cuda';
  readonly algorithm: string;
  readonly variant: string;
  /** Bytes read + written by one run, as Trident's case of the operation counts them. */
  readonly bytes: (n: number) => number;
}

/** The operation names the CUB anchors print (between `n=2^K ` and `:`). */
const CUB_OPERATIONS: ReadonlyMap<string, AnchorOperation> = new Map([
  ['memcpy d2d', { implementation: 'cuda', algorithm: 'zcopy', variant: 'copy', bytes: (n) => 8 * n }],
  ['CUB reduce sum u32', { implementation: 'cub', algorithm: 'reduce', variant: 'sum', bytes: (n) => 4 * n + 4 }],
  ['CUB inclusive scan u32', { implementation: 'cub', algorithm: 'scan', variant: 'inclusive', bytes: (n) => 8 * n }],
  ['CUB exclusive scan u32', { implementation: 'cub', algorithm: 'scan', variant: 'exclusive', bytes: (n) => 8 * n }],
  ['CUB radix sort keys u32', { implementation: 'cub', algorithm: 'sort', variant: 'radix keys', bytes: (n) => 8 * n }],
  ['CUB radix sort pairs u32/u32', { implementation: 'cub', algorithm: 'sort', variant: 'radix pairs', bytes: (n) => 16 * n }],
  ['CUB histogram 256 bins', { implementation: 'cub', algorithm: 'histogram', variant: '256 bins', bytes: (n) => 4 * n + 4 * 256 }],
  // Select-if on a predicate (odd values: half kept) beside Trident's compaction by a flags array of the same density,
  // in its form with buffers given and the count left on the device (compactInto), as select-if is called;
  // counted as Trident's case counts its traffic, so the rate ratio is the time ratio at the same n.
  ['CUB select if u32 (half kept)', { implementation: 'cub', algorithm: 'compact', variant: 'half kept (into)', bytes: (n) => 10 * n }],
]);

const CUB_LINE = /^n=2\^(\d+)\s+(.+?):\s+(\d+(?:\.\d+)?)\s+ms\b/;
const NBODY_LINE = /^nbody CUDA n=(\d+) tile=(\d+):\s+(\d+(?:\.\d+)?)\s+ms\b/;
/** Flops per body-body interaction, as the anchor and Trident's N-body case count them. */
const NBODY_FLOPS = 20;

export interface ParsedAnchors {
  readonly output: AnchorOutput;
  readonly measurements: Measurement[];
  /** Non-empty lines that are no measurement (a skipped size, an error, an operation not known here). */
  readonly unparsed: string[];
}

/** One figure: the anchor prints the median of its own runs and nothing else. */
function single(ms: number): NonNullable<Measurement['ms']> {
  return { median: ms, min: ms, max: ms, q1: ms, q3: ms, samples: [ms] };
}

/**
 * Parses one anchor program's output. `gpu` names the GPU the anchors ran on (the
 * measurements' adapter); `file` is recorded with the lines.
 */
export function parseAnchorOutput(kind: AnchorOutput['kind'], file: string, text: string, gpu: string): ParsedAnchors {
  const lines = text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  const measurements: Measurement[] = [];
  const unparsed: string[] = [];
  for (const line of lines) {
    const m = kind === 'nbody' ? nbodyLine(line, gpu) : cubLine(line, gpu);
    if (m) measurements.push(m);
    else unparsed.push(line);
  }
  return { output: { kind, file, lines }, measurements, unparsed };
}

function base(gpu: string, ms: number) {
  return {
    backend: 'cuda',
    runtime: 'native',
    adapter: gpu,
    timer: 'gpu-timestamp',
    warmup: 1,
    repeats: 1,
    ms: single(ms),
  } as const;
}

function cubLine(line: string, gpu: string): Measurement | undefined {
  const m = CUB_LINE.exec(line.trim());
  const op = m ? CUB_OPERATIONS.get(m[2] as string) : undefined;
  if (!m || !op) return undefined;
  const n = 2 ** Number(m[1]);
  const ms = Number(m[3]);
  const bytes = op.bytes(n);
  const throughput = throughputOf(bytes, undefined, ms);
  return {
    algorithm: op.algorithm,
    variant: op.variant,
    implementation: op.implementation,
    ...base(gpu, ms),
    n,
    dtype: 'u32',
    bytes,
    ...(throughput ? { throughput } : {}),
  };
}

function nbodyLine(line: string, gpu: string): Measurement | undefined {
  const m = NBODY_LINE.exec(line.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const ms = Number(m[3]);
  // One all-pairs force evaluation, as Trident's 'accelerations' case.
  const flops = NBODY_FLOPS * n * n;
  const throughput = throughputOf(undefined, flops, ms);
  return {
    algorithm: 'nbody',
    variant: `tile ${m[2]}`,
    implementation: 'cuda',
    ...base(gpu, ms),
    n,
    dtype: 'f32',
    flops,
    ...(throughput ? { throughput } : {}),
  };
}
