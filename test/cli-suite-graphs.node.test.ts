/**
 * The GPU machine suite's graphs: R-MAT built on worker threads (bench/rmat-threads.ts) is
 * rmatGraph's graph entry for entry whatever the thread count, and rmatGraph draws the graphs it
 * drew before its draws went branch-free; the suite's graph steps (edge factor 8 up to 2^29
 * stored edges, Graph500's edge factor 16 from 2^30, a case of its own); a graph the device
 * cannot hold is refused before the host builds it; and a toy suite run with graphs completes,
 * checked, its host phases printed.
 */
import { type GraphInput, rmatGraph } from '@trident/algorithms';
import { type Device, LimitExceededError } from 'trident';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bfsCase, storedOf } from '../packages/cli/src/bench/graph-cases.ts';
import { rmatGraphThreads, runOnWorkers, xorshiftJump } from '../packages/cli/src/bench/rmat-threads.ts';
import { SUITE_GRAPH_CASES } from '../packages/cli/src/bench/suite-cases.ts';
import { runSuite } from '../packages/cli/src/bench/suite-runner.ts';
import { findCase, SUITES, selectSteps } from '../packages/cli/src/bench/suites.ts';
import { SUSTAINED } from '../packages/cli/src/bench/sustained.ts';

/** FNV-1a over the 32-bit words of indptr, indices and the weights' bits. */
function fingerprint(g: GraphInput): string {
  let h = 0x811c9dc5;
  const add = (w: number): void => {
    h = Math.imul(h ^ (w >>> 0), 0x01000193);
  };
  for (let i = 0; i < g.indptr.length; i++) add(g.indptr[i] as number);
  for (let i = 0; i < g.indices.length; i++) add(g.indices[i] as number);
  if (g.weights) for (const w of new Uint32Array(Float32Array.from(g.weights).buffer)) add(w);
  return (h >>> 0).toString(16).padStart(8, '0');
}

function expectSameGraph(got: GraphInput, want: GraphInput): void {
  expect(got.rows).toBe(want.rows);
  expect(got.symmetric).toBe(want.symmetric);
  expect(Uint32Array.from(got.indptr)).toEqual(Uint32Array.from(want.indptr));
  expect(Uint32Array.from(got.indices)).toEqual(Uint32Array.from(want.indices));
}

const log2 = (n: number): number => Math.log2(n);
function sizesOf(steps: ReadonlyArray<{ key: string; n: number }>): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const s of steps) out[s.key] = [...(out[s.key] ?? []), log2(s.n)];
  return out;
}

describe('R-MAT generation', () => {
  it('rmatGraph draws the graphs it drew before (fingerprints of its output, weights included)', () => {
    expect(fingerprint(rmatGraph(10, 8, { symmetric: true, seed: 2026 }))).toBe('1a036ddd');
    expect(fingerprint(rmatGraph(12, 16, { symmetric: true, seed: 2026 }))).toBe('73249ec5');
    expect(fingerprint(rmatGraph(9, 4, { seed: 19, weights: 'random' }))).toBe('9ab5aa66');
    expect(fingerprint(rmatGraph(11, 3))).toBe('38a003aa');
  });

  it('a jump of k draws lands on the state k steps of xorshift32 reach', () => {
    for (const start of [1, 2026, 0xdeadbeef, 0xffffffff]) {
      let x = start;
      let step = 0;
      for (const k of [0, 1, 2, 31, 32, 33, 1000, 4097]) {
        for (; step < k; step++) {
          x ^= x << 13;
          x ^= x >>> 17;
          x ^= x << 5;
          x >>>= 0;
        }
        expect(xorshiftJump(start, k), `${start} + ${k}`).toBe(x);
      }
    }
  });

  it('on 1, 2, 3 and 5 threads: the graph rmatGraph gives, entry for entry (symmetric and directed)', () => {
    const symmetric = rmatGraph(11, 8, { symmetric: true, seed: 2026 });
    for (const threads of [1, 2, 3]) {
      const { graph, times } = rmatGraphThreads(11, 8, { symmetric: true, seed: 2026, threads });
      expect(times.threads).toBe(threads);
      expectSameGraph(graph, symmetric);
      // Ordinary memory: Dawn's writeBuffer crashes the process on views of a SharedArrayBuffer.
      for (const a of [graph.indptr, graph.indices]) expect((a as Uint32Array).buffer).not.toBeInstanceOf(SharedArrayBuffer);
    }
    // Seed 0 is 1 (xorshift's state must not be 0), more threads than rows of some ranges.
    const directed = rmatGraph(5, 3, { seed: 0 });
    for (const threads of [1, 5]) expectSameGraph(rmatGraphThreads(5, 3, { seed: 0, threads }).graph, directed);
  });

  it('a worker writes all of an array of 4 GiB (2^30 entries: the CSR of scale 25 at edge factor 16)', () => {
    // A typed array sent to a worker arrives with its byte length cut to 32 bits: 4 GiB arrived empty and the
    // worker's writes were dropped. One edge (1, 7) whose row starts at the array's last entry; the untouched
    // pages of the shared memory are never committed.
    const shared = (length: number): Uint32Array => new Uint32Array(new SharedArrayBuffer(4 * length));
    const entries = 2 ** 30;
    const arrays = { us: shared(1), vs: shared(1), indptr: shared(3), indices: shared(entries) };
    arrays.us[0] = 1;
    arrays.vs[0] = 7;
    arrays.indptr.set([0, entries - 1, entries]);
    runOnWorkers([{ kind: 'fill', lo: 0, hi: 2, symmetric: false }], arrays);
    expect(arrays.indices[entries - 1]).toBe(7);
  });
});

describe("the suite's graph steps", () => {
  const quick = SUITES.get('h100-quick')!;

  it('edge factor 8 up to 2^29 stored edges, Graph500’s edge factor 16 from 2^30 (scale 25), as cases of their own', () => {
    expect(sizesOf(quick.steps(29))).toMatchObject({ 'bfs:rmat': [24, 29], 'components:rmat': [24, 29] });
    expect(sizesOf(quick.steps(29))['bfs:rmat ef16']).toBeUndefined();
    const at30 = sizesOf(quick.steps(30));
    expect(at30).toMatchObject({ 'bfs:rmat': [24, 29], 'bfs:rmat ef16': [30], 'components:rmat ef16': [30] });
    expect(sizesOf(SUITES.get('h100')!.steps(31))).toMatchObject({ 'bfs:rmat': [22, 24, 26, 29], 'bfs:rmat ef16': [30, 31] });
    // 2^30 stored entries: 2 * 16 * 2^25; 2^29 at edge factor 8: 2 * 8 * 2^25.
    expect(storedOf('rmat ef16', 2 ** 30)).toBe(2 ** 30);
    expect(storedOf('rmat', 2 ** 29)).toBe(2 ** 29);
    expect(findCase('bfs:rmat ef16')?.edges?.(2 ** 30)).toBe(2 ** 30);
    // --algorithms bfs,components picks both shapes; the graph cases a suite runs are its own (threaded) ones.
    const { steps } = selectSteps(quick, 30, ['bfs', 'components']);
    expect(steps.map((s) => `${s.key}@${log2(s.n)}`)).toEqual([
      'bfs:rmat@24',
      'components:rmat@24',
      'bfs:rmat@29',
      'components:rmat@29',
      'bfs:rmat ef16@30',
      'components:rmat ef16@30',
    ]);
    for (const key of ['bfs:rmat', 'components:rmat', 'bfs:rmat ef16', 'components:rmat ef16'])
      expect(SUITE_GRAPH_CASES).toContain(findCase(key));
  });

  it('a graph past the device’s maxTotalBufferBytes is a LimitExceededError before the host builds it', () => {
    let built = false;
    const c = bfsCase('rmat ef16', {
      rmat: (scale, edgeFactor, seed) => {
        built = true;
        return rmatGraph(scale, edgeFactor, { symmetric: true, seed });
      },
    });
    const limits = { maxBufferElements: 2 ** 20, maxTotalBufferBytes: 2 ** 16 };
    // Only the caps are read before the refusal.
    const device = { backend: 'cpu', caps: { limits } } as unknown as Device;
    expect(() => c.setup(device, 2 ** 14)).toThrow(LimitExceededError);
    expect(() => c.setup(device, 2 ** 14)).toThrow(/maxTotalBufferBytes/);
    expect(() => c.setup(device, 2 ** 21)).toThrow(/maxBufferElements/);
    expect(built).toBe(false);
  });
});

describe('a toy suite run with graphs', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('runs BFS and components at edge factor 8 and 16 on the cpu backend, checked, and prints each host phase', async () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const results = await runSuite({
      suite: SUITES.get('h100-quick')!,
      steps: [
        { key: 'bfs:rmat', n: 2 ** 10 },
        { key: 'components:rmat', n: 2 ** 10 },
        { key: 'bfs:rmat ef16', n: 2 ** 11 },
        { key: 'components:rmat ef16', n: 2 ** 11 },
      ],
      maxLog2n: 12,
      backends: ['cpu'],
      workers: 1,
      sustained: { ...SUSTAINED, batches: 3, warmupMs: 5, batchMs: 5 },
      deviceWarmupMs: 0,
      label: 'toy',
      command: 'test',
      quiet: true,
      anchors: [],
    });
    expect(results.measurements.map((m) => [`${m.algorithm}:${m.variant}`, m.n, m.edges, m.verified, m.error])).toEqual([
      ['bfs:rmat', 2 ** 10, 2 ** 10, true, undefined],
      ['components:rmat', 2 ** 10, 2 ** 10, true, undefined],
      ['bfs:rmat ef16', 2 ** 11, 2 ** 11, true, undefined],
      ['components:rmat ef16', 2 ** 11, 2 ** 11, true, undefined],
    ]);
    const out = lines.join('');
    // One graph built and uploaded per size (the second case of a size reuses it); every step checked.
    expect(out.match(/host R-MAT scale 6, edge factor 8: generation [\d.]+ s, CSR [\d.]+ s \(1 thread\)/g)).toHaveLength(1);
    expect(out.match(/host R-MAT scale 6, edge factor 16: generation/g)).toHaveLength(1);
    expect(out.match(/: upload \(createGraph: checks and copy\) [\d.]+ s/g)).toHaveLength(2);
    for (const step of ['bfs:rmat n=2^10', 'components:rmat n=2^10', 'bfs:rmat ef16 n=2^11', 'components:rmat ef16 n=2^11'])
      expect(out).toContain(`host ${step}: reference `);
  }, 60_000);
});
