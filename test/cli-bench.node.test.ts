/**
 * `trident bench` in Node (no Chromium: that path runs in the main job): the
 * results file follows the documented schema, every measurement was verified
 * against the reference and names one timer source.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CASES } from '../packages/cli/src/bench/cases.ts';
import { CEILING_CASES, chunks, measureCeiling, prepareCeiling } from '../packages/cli/src/bench/ceiling.ts';
import { nodeCeilingThreads } from '../packages/cli/src/bench/ceiling-node.ts';
import type { BenchResults } from '../packages/cli/src/bench/schema.ts';
import { timeRepeats, WARMUP_MAX_RUNS, warmUp, warmupRule } from '../packages/cli/src/bench/timing.ts';
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
  // Trident's rows, then the plain-JS ceilings of the copy (TypedArray set per thread) and of reduce
  // (no peers: they run with --no-peers too).
  expect(results.measurements.map((m) => `${m.implementation}:${m.algorithm}:${m.variant}:${m.n}`)).toEqual([
    'trident:zcopy:copy:4096',
    'trident:zcopy:fill:4096',
    'trident:reduce:sum:4096',
    'trident:nbody:accelerations:64',
    'plain JS threads:zcopy:copy:4096',
    'plain JS threads:reduce:sum:4096',
  ]);
  expect(results.measurements.map((m) => m.role)).toEqual([undefined, undefined, undefined, undefined, 'ceiling', 'ceiling']);
  expect(results.measurements[4]?.adapter).toMatch(/\(2 threads\)$/);
  expect(results.measurements[5]?.adapter).toMatch(/\(2 threads\)$/);
  expect(results.settings.warmupMs).toBe(150);
  for (const m of results.measurements) {
    // The adaptive warm-up: at least --warmup 1, at most WARMUP_MAX_RUNS.
    expect(m.warmup).toBeGreaterThanOrEqual(1);
    expect(m.warmup).toBeLessThanOrEqual(WARMUP_MAX_RUNS);
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
  expect(results.devices?.[0]?.formulations.sort).toMatch(/radix sort/);
});

it('bench: an unknown algorithm is a usage error (exit 2)', () => {
  const r = trident(['bench', '--no-browser', '--algorithms', 'fft']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/--algorithms: unknown 'fft'/);
});

describe('adaptive warm-up (bench/timing.ts)', () => {
  /** A fake clock that each run advances by the next of `durations` (then the last one again). */
  function fakeRuns(durations: readonly number[]): { run: () => void; now: () => number; runs: () => number } {
    let t = 0;
    let i = 0;
    return {
      run: () => {
        t += durations[Math.min(i, durations.length - 1)] as number;
        i++;
      },
      now: () => t,
      runs: () => i,
    };
  }

  it('runs at least `min` times, then while elapsed + the last run stays within the budget', async () => {
    const f = fakeRuns([10]);
    // 10 ms runs, budget 100: after 9 runs 90 + 10 >= 100 stops it.
    expect(await warmUp(f.run, { min: 2, budgetMs: 100, slowMs: 1000, max: 50 }, f.now)).toBe(9);
    expect(f.runs()).toBe(9);
  });

  it('settles a JIT-like case: slow first calls, then fast ones, up to the cap', async () => {
    const f = fakeRuns([18, 1.5, 0.9, 0.5]);
    expect(await warmUp(f.run, { min: 2, budgetMs: 200, slowMs: 1000, max: 50 }, f.now)).toBe(50);
  });

  it('stops after one slow run, even before `min`', async () => {
    const f = fakeRuns([300]);
    expect(await warmUp(f.run, { min: 2, budgetMs: 200, slowMs: 250, max: 50 }, f.now)).toBe(1);
  });

  it('with a zero budget runs exactly `min` times (0: none)', async () => {
    const f = fakeRuns([1]);
    expect(await warmUp(f.run, { min: 3, budgetMs: 0, slowMs: 1000, max: 50 }, f.now)).toBe(3);
    const g = fakeRuns([1]);
    expect(await warmUp(g.run, { min: 0, budgetMs: 0, slowMs: 1000, max: 50 }, g.now)).toBe(0);
  });

  it('the bench rule: a run over a quarter of --budget-ms is slow; the cap never undercuts --warmup', () => {
    expect(warmupRule({ warmup: 2, warmupMs: 200, budgetMs: 4000 })).toEqual({ min: 2, budgetMs: 200, slowMs: 1000, max: WARMUP_MAX_RUNS });
    expect(warmupRule({ warmup: 80, warmupMs: 0, budgetMs: 4000 }).max).toBe(80);
  });

  it('timed repeats stop at the budget, never below 3', async () => {
    const f = fakeRuns([40]);
    expect(await timeRepeats(f.run, { repeats: 7, budgetMs: 100 }, f.now)).toEqual([40, 40, 40]);
    const g = fakeRuns([1]);
    expect(await timeRepeats(g.run, { repeats: 7, budgetMs: 100 }, g.now)).toHaveLength(7);
  });
});

describe('plain-JS ceiling (bench/ceiling.ts)', () => {
  it('splits n into contiguous chunks, one per thread', () => {
    expect(chunks(10, 3)).toEqual([
      [0, 4],
      [4, 8],
      [8, 10],
    ]);
    expect(chunks(1, 2)).toEqual([
      [0, 1],
      [1, 1],
    ]);
  });

  it('each operation matches its reference on worker threads (uneven sizes, two threads), and a check before any run fails', async () => {
    const threads = nodeCeilingThreads(2);
    try {
      for (const key of CEILING_CASES) {
        for (const n of [1, 1000, 4099]) {
          const c = await prepareCeiling(key, n, threads);
          // Nothing ran yet: outputs are zeros (reduce: 0), which the reference check must reject.
          if (n > 1) expect(c.verify(), `${key} n=${n} before a run`).toBe(false);
          await c.run();
          expect(c.verify(), `${key} n=${n}`).toBe(true);
          await c.run();
          expect(c.verify(), `${key} n=${n}, second run`).toBe(true);
        }
      }
    } finally {
      await threads.terminate();
    }
  });

  it('a measurement is marked as a ceiling, with its warm-up count', async () => {
    const threads = nodeCeilingThreads(2);
    try {
      const m = await measureCeiling(
        'scan:inclusive',
        2048,
        threads,
        { warmup: 2, warmupMs: 20, budgetMs: 4000, repeats: 3 },
        'node',
        'cpu',
      );
      expect(m).toMatchObject({
        role: 'ceiling',
        implementation: 'plain JS threads',
        algorithm: 'scan',
        variant: 'inclusive',
        verified: true,
      });
      expect(m.warmup).toBeGreaterThanOrEqual(2);
      expect(m.ms?.samples).toHaveLength(3);
      expect(m.bytes).toBe(8 * 2048);
    } finally {
      await threads.terminate();
    }
  });
});

describe('Node peers', () => {
  const peersOf = (key: string, n: number) => {
    const c = CASES.find((x) => `${x.algorithm}:${x.variant}` === key);
    return c?.peers?.(n) ?? [];
  };

  it('scan: a plain single-thread loop; sort: TF.js top-k (k = n) on cpu and wasm; nbody: gpu.js cpu — each verified', async () => {
    const picked = [
      ...peersOf('scan:inclusive', 1000).filter((p) => p.implementation === 'plain JS loop'),
      ...peersOf('sort:auto', 1000).filter((p) => p.variant === 'top-k (k = n)'),
      ...peersOf('nbody:accelerations', 64),
    ];
    expect(picked.map((p) => p.implementation)).toEqual(['plain JS loop', 'TF.js cpu (Node)', 'TF.js wasm (Node)', 'gpu.js cpu (Node)']);
    for (const p of picked) {
      await p.prepare();
      p.run();
      expect(p.verify(), p.implementation).toBe(true);
    }
  });

  it('bench runs the new peers beside Trident, and --no-peers runs none of them (the ceiling stays)', () => {
    const dir = tempDir();
    const run = (extra: string[], out: string): BenchResults => {
      const args = ['bench', '--no-browser', '--backends', 'cpu', '--workers', '2', '--algorithms', 'scan,sort:auto,nbody'];
      const r = trident([...args, '--sizes', '1024', '--sizes', 'nbody=32', '--repeats', '3', '--warmup-ms', '0', ...extra, '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(readFileSync(out, 'utf8')) as BenchResults;
    };
    const withPeers = run([], join(dir, 'peers.json'));
    const names = (r: BenchResults) =>
      r.measurements.filter((m) => m.implementation !== 'trident').map((m) => `${m.implementation} ${m.algorithm}`);
    expect(names(withPeers)).toEqual(
      expect.arrayContaining(['plain JS loop scan', 'TF.js cpu (Node) sort', 'TF.js wasm (Node) sort', 'gpu.js cpu (Node) nbody']),
    );
    for (const m of withPeers.measurements) expect(m.verified, `${m.implementation} ${m.algorithm}`).toBe(true);
    const without = run(['--no-peers'], join(dir, 'none.json'));
    expect(names(without)).toEqual(['plain JS threads scan']);
  });
});
