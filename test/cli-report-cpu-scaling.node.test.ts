/**
 * The report's CPU scaling section (packages/cli/src/report/cpu-scaling.ts) from hand-made
 * worker-sweep files (every figure worked out by hand): GB/s per worker count and the share
 * of the copy ceiling on as many threads at the same n; the newest file's point where two
 * give one; nothing where no file holds a sweep; and the section in the rendered report.
 */
import { describe, expect, it } from 'vitest';
import type { BenchResults, Measurement, Stats } from '../packages/cli/src/bench/schema.ts';
import { buildReport } from '../packages/cli/src/commands/report.ts';
import { cpuScaling, cpuScalingBlocks } from '../packages/cli/src/report/cpu-scaling.ts';
import { type LoadedResults, readResults } from '../packages/cli/src/report/load.ts';

const stats = (median: number): Stats => ({ median, min: median, max: median, q1: median, q3: median, samples: [median] });

const MiB = 2 ** 20;
const n = 2 ** 24;

/** A Trident cpu row of a sweep: `bytes` in `ms` on `workers` workers. */
function ours(algorithm: string, variant: string, workers: number, ms: number, bytes: number): Measurement {
  return {
    algorithm,
    variant,
    implementation: 'trident',
    backend: 'cpu',
    runtime: 'node',
    adapter: `Test CPU (${workers} worker${workers === 1 ? '' : 's'})`,
    n,
    dtype: 'u32',
    timer: 'wall',
    warmup: 2,
    repeats: 3,
    ms: stats(ms),
    bytes,
    verified: true,
  };
}

/** The plain-JS copy ceiling on `threads` threads: 8n bytes in `ms`. */
function copy(threads: number, ms: number): Measurement {
  return {
    algorithm: 'zcopy',
    variant: 'copy',
    implementation: 'plain JS threads',
    role: 'ceiling',
    backend: 'js',
    runtime: 'node',
    adapter: `Test CPU (${threads} thread${threads === 1 ? '' : 's'})`,
    n,
    dtype: 'u32',
    timer: 'wall',
    warmup: 2,
    repeats: 3,
    ms: stats(ms),
    bytes: 8 * n,
    verified: true,
  };
}

function file(name: string, createdAt: string, measurements: Measurement[]): LoadedResults {
  const results: BenchResults = {
    schema: 'trident-bench/1',
    createdAt,
    label: 'box',
    machine: { os: 'linux', cpu: 'Test CPU' },
    adapters: { 'node/cpu': 'Test CPU' },
    versions: { node: 'v20' },
    settings: { command: 'trident bench --worker-sweep 1,2', warmup: 2, repeats: 3, sizes: { 'reduce:sum': [n] } },
    measurements,
  };
  return readResults(JSON.parse(JSON.stringify(results)), name);
}

// 64 MiB read in 10 ms = 6.7109 GB/s (1 worker), in 5 ms = 13.4218 GB/s (2 workers).
// The copy moves 128 MiB: in 20 ms = 6.7109 GB/s (1 thread), in 8 ms = 16.7772 GB/s (2 threads).
const sweep = file('sweep.json', '2026-11-27T10:00:00.000Z', [
  ours('reduce', 'sum', 1, 10, 64 * MiB),
  ours('reduce', 'sum', 2, 5, 64 * MiB),
  ours('scan', 'inclusive', 1, 40, 128 * MiB),
  { ...ours('scan', 'inclusive', 2, 1, 128 * MiB), ms: undefined, error: 'KernelExecutionError: out of time' },
  copy(1, 20),
  copy(2, 8),
]);

describe('CPU scaling', () => {
  it('gives GB/s per worker count and the share of the copy ceiling on as many threads', () => {
    const [p, ...rest] = cpuScaling([sweep]);
    expect(rest).toEqual([]);
    expect(p?.platform).toBe('box · node · cpu');
    expect(p?.workers).toEqual([1, 2]);
    const reduce = p?.lines.find((l) => l.algorithm === 'reduce (sum)');
    expect(reduce?.points.get(1)?.m.throughput?.value).toBeCloseTo(6.7109, 3);
    expect(reduce?.points.get(2)?.m.throughput?.value).toBeCloseTo(13.4218, 3);
    expect(reduce?.points.get(1)?.ceilingGbps).toBeCloseTo(6.7109, 3);
    expect(reduce?.points.get(2)?.ceilingGbps).toBeCloseTo(16.7772, 3);

    const blocks = cpuScalingBlocks([sweep]);
    expect(blocks[0]).toMatchObject({ kind: 'h', text: 'CPU scaling' });
    const table = blocks.find((b) => b.kind === 'table');
    if (table?.kind !== 'table') throw new Error('no table');
    expect(table.head).toEqual(['case @ n', '1 worker', '2 workers']);
    const text = table.rows.map((r) => r.map((c) => (typeof c === 'string' ? c : c.text)));
    // 6.7109 / 6.7109 = 100%; 13.4218 / 16.7772 = 80%; scan at 1 worker: 3.3554 GB/s of 6.7109 = 50%.
    expect(text).toContainEqual(['reduce (sum) @ 2^24', '6.71 GB/s · 100% of copy', '13.42 GB/s · 80% of copy']);
    expect(text).toContainEqual(['scan (inclusive) @ 2^24', '3.36 GB/s · 50% of copy', 'failed']);
    expect(text).toContainEqual(['copy ceiling @ 2^24', '6.71 GB/s', '16.78 GB/s']);
  });

  it('takes the newest file’s point where two files give one, and shows nothing without a sweep', () => {
    // A later run of the same machine: reduce at 2 workers in 4 ms (16.7772 GB/s, 100% of the 2-thread copy).
    const later = file('later.json', '2026-11-27T12:00:00.000Z', [ours('reduce', 'sum', 2, 4, 64 * MiB)]);
    const reduce = cpuScaling([later, sweep])[0]?.lines.find((l) => l.algorithm === 'reduce (sum)');
    expect(reduce?.points.get(2)?.m.ms?.median).toBe(4);
    expect(reduce?.points.get(1)?.m.ms?.median).toBe(10);

    // An ordinary bench file: its cpu rows name no worker count, so no section.
    const plain = file('plain.json', '2026-11-27T09:00:00.000Z', [
      { ...ours('reduce', 'sum', 2, 5, 64 * MiB), adapter: 'Test CPU' },
      copy(2, 8),
    ]);
    expect(cpuScalingBlocks([plain])).toEqual([]);
  });

  it('appears in the rendered report', async () => {
    const { markdown } = await buildReport([sweep]);
    expect(markdown).toContain('## CPU scaling');
    expect(markdown).toContain('| reduce (sum) @ 2^24 | 6.71 GB/s · 100% of copy | 13.42 GB/s · 80% of copy |');
  });
});
