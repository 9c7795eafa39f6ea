/**
 * `trident bench` in Node (no Chromium: that path runs in the main job): the
 * results file follows the documented schema, every measurement was verified
 * against the reference and names one timer source.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { BenchResults } from '../packages/cli/src/bench/schema.ts';
import { tempDir, trident } from './cli-helpers.ts';

it('bench --no-browser writes a trident-bench/1 file with verified, timed measurements', () => {
  const out = join(tempDir(), 'r.json');
  const args = [
    'bench',
    '--no-browser',
    '--no-peers',
    '--backends',
    'cpu',
    '--workers',
    '2',
    '--algorithms',
    'zcopy,reduce:sum,nbody',
    '--sizes',
    '4096',
  ];
  const r = trident([...args, '--sizes', 'nbody=64', '--repeats', '3', '--warmup', '1', '--label', 'test-machine', '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  const results = JSON.parse(readFileSync(out, 'utf8')) as BenchResults;
  expect(results.schema).toBe('trident-bench/1');
  expect(results.label).toBe('test-machine');
  expect(results.machine.cores).toBeGreaterThan(0);
  expect(results.adapters['node/cpu']).toBeTruthy();
  expect(results.versions.node).toBe(process.version);
  expect(results.measurements.map((m) => `${m.algorithm}:${m.variant}:${m.n}`)).toEqual([
    'zcopy:copy:4096',
    'zcopy:fill:4096',
    'reduce:sum:4096',
    'nbody:accelerations:64',
  ]);
  for (const m of results.measurements) {
    expect(m.error).toBeUndefined();
    expect(m.verified).toBe(true);
    expect(m.timer).toBe('wall');
    expect(m.wallMs).toBeUndefined(); // only GPU-timed rows carry a separate wall time
    expect(m.repeats).toBe(3);
    expect(m.ms?.samples).toHaveLength(3);
    expect(m.ms?.min).toBeLessThanOrEqual(m.ms?.median as number);
    expect(m.ms?.median).toBeLessThanOrEqual(m.ms?.max as number);
    expect(m.throughput?.value).toBeCloseTo((m.flops ?? (m.bytes as number)) / ((m.ms?.median as number) * 1e6), 9);
  }
  expect(results.measurements[0]?.bytes).toBe(8 * 4096);
  expect(results.measurements[3]?.flops).toBe(20 * 64 * 64);
  expect(results.measurements[3]?.throughput?.unit).toBe('GFLOP/s');
  // The device measured, described for the report's capability matrix.
  expect(results.devices?.map((d) => [d.runtime, d.backend])).toEqual([['node', 'cpu']]);
  expect(results.devices?.[0]?.caps.features).toContain('host-memory');
  expect(results.devices?.[0]?.formulations.sort).toMatch(/^radix sort/);
});

it('bench: an unknown algorithm is a usage error (exit 2)', () => {
  const r = trident(['bench', '--no-browser', '--algorithms', 'fft']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/--algorithms: unknown 'fft'/);
});
