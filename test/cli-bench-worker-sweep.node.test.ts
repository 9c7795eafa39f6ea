/**
 * `trident bench --worker-sweep`: the cpu backend at each worker count with the plain-JS copy
 * ceiling on as many threads, written as ordinary trident-bench/1 measurements whose adapters
 * say the count; counts past the logical CPUs left out; options that do not apply refused.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { BenchResults } from '../packages/cli/src/bench/schema.ts';
import { sweepCounts, workersAdapter } from '../packages/cli/src/bench/worker-sweep.ts';
import { cpuScaling } from '../packages/cli/src/report/cpu-scaling.ts';
import { readResults } from '../packages/cli/src/report/load.ts';
import { tempDir, trident } from './cli-helpers.ts';

it('sweepCounts: ascending, once each, those past the CPUs left out', () => {
  expect(sweepCounts([16, 2, 1, 2, 8, 4], 8)).toEqual({ counts: [1, 2, 4, 8], dropped: [16] });
  expect(workersAdapter('AMD EPYC', 1)).toBe('AMD EPYC (1 worker)');
  expect(workersAdapter('AMD EPYC', 16)).toBe('AMD EPYC (16 workers)');
});

it('bench --worker-sweep writes each count’s rows and copy ceiling, which the report’s CPU scaling section reads', () => {
  const out = join(tempDir(), 'sweep.json');
  const past = availableParallelism() + 1;
  const r = trident([
    'bench',
    '--worker-sweep',
    `1,2,${past}`,
    '--sizes',
    '2^12',
    '--repeats',
    '3',
    '--warmup',
    '1',
    '--label',
    'box',
    '--out',
    out,
  ]);
  expect(r.code, r.stderr).toBe(0);
  const results = JSON.parse(readFileSync(out, 'utf8')) as BenchResults;
  const counts = availableParallelism() >= 2 ? [1, 2] : [1];
  const rows = results.measurements.map((m) => `${m.implementation}:${m.algorithm}:${m.variant} ${m.adapter.replace(/^.*\(/, '(')}`);
  expect(rows).toEqual(
    counts.flatMap((w) => [
      `trident:reduce:sum (${w} worker${w === 1 ? '' : 's'})`,
      `trident:scan:inclusive (${w} worker${w === 1 ? '' : 's'})`,
      `plain JS threads:zcopy:copy (${w} thread${w === 1 ? '' : 's'})`,
    ]),
  );
  for (const m of results.measurements) {
    expect(m.error).toBeUndefined();
    expect(m.verified).toBe(true);
    expect(m.n).toBe(4096);
  }
  // Devices, largest count first (the one the capability matrix keeps), each saying its count.
  expect(results.devices?.map((d) => [d.adapter.replace(/^.*\(/, '('), d.caps.concurrency])).toEqual(
    [...counts].reverse().map((w) => [`(${w} worker${w === 1 ? '' : 's'})`, w]),
  );
  expect(results.notes?.join(' ')).toContain(`left out: ${past}`);
  const scaling = cpuScaling([readResults(results, 'sweep.json')]);
  expect(scaling.map((p) => [p.platform, p.workers])).toEqual([['box · node · cpu', counts]]);
  expect(scaling[0]?.lines.map((l) => l.algorithm)).toEqual(['reduce (sum)', 'scan (inclusive)']);
  expect(scaling[0]?.lines[0]?.points.get(1)?.ceilingGbps).toBeGreaterThan(0);
});

it('bench --worker-sweep refuses what does not apply (exit 2)', () => {
  for (const [extra, message] of [
    [['--workers', '1'], /--workers does not apply to --worker-sweep/],
    [['--backends', 'webgpu'], /--worker-sweep runs the cpu backend only/],
    [['--suite', 'h100'], /--worker-sweep and --suite/],
    [['--browser', 'cpu'], /--browser does not apply to --worker-sweep/],
  ] as const) {
    const r = trident(['bench', '--worker-sweep', '1', ...extra]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
  }
  const r = trident(['bench', '--worker-sweep', '0']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/--worker-sweep: expected a positive integer/);
});
