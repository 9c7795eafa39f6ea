/**
 * The report's scoreboard, curves and capability matrix, from hand-made rows
 * (every figure worked out by hand) and from the committed H100 results
 * (bench/results/archive/h100-suite-2026-11-27-1005.json: CUB / CUDA anchors and the TF.js
 * call-latency rows must show on the scoreboard).
 */
import { fileURLToPath } from 'node:url';
import { scanFormulation } from '@trident/algorithms';
import { createDevice } from 'trident';
import { describe, expect, it } from 'vitest';
import { chosenFormulations } from '../packages/cli/src/bench/formulations.ts';
import type { Stats } from '../packages/cli/src/bench/schema.ts';
import { analyze } from '../packages/cli/src/report/analysis.ts';
import { buildCapabilityMatrix } from '../packages/cli/src/report/capabilities.ts';
import { curveBlocks } from '../packages/cli/src/report/curves.ts';
import { browserVsNode } from '../packages/cli/src/report/document.ts';
import { type LabelledMeasurement, loadResultsFile } from '../packages/cli/src/report/load.ts';
import { shortAdapter } from '../packages/cli/src/report/names.ts';
import { buildScoreboard, compare, headline } from '../packages/cli/src/report/scoreboard.ts';
import { fewInvocations, manyInvocationsView } from './alg-helpers.ts';

const H100_SUITE = fileURLToPath(new URL('../bench/results/archive/h100-suite-2026-11-27-1005.json', import.meta.url));
const H100_BROWSER = fileURLToPath(new URL('../bench/results/h100-browser-2026-11-27.json', import.meta.url));
const LOCAL = fileURLToPath(new URL('./fixtures/cli/results-local.json', import.meta.url));

const stats = (median: number): Stats => ({ median, min: median, max: median, q1: median, q3: median, samples: [median] });

function row(over: Partial<LabelledMeasurement> & Pick<LabelledMeasurement, 'algorithm' | 'n'>): LabelledMeasurement {
  const ms = over.ms ?? stats(1);
  return {
    label: 'm',
    variant: '',
    implementation: 'trident',
    backend: 'webgpu',
    runtime: 'chromium',
    adapter: 'GPU',
    dtype: 'u32',
    timer: 'gpu-timestamp',
    warmup: 1,
    repeats: 1,
    ms,
    ...over,
  };
}

describe('scoreboard comparisons', () => {
  it('a wall-clock peer is held against Trident’s wall time of the same runs, not its GPU time', () => {
    const ours = row({ algorithm: 'reduce', variant: 'sum', n: 1024, ms: stats(1), wallMs: stats(4) });
    const peer = row({ algorithm: 'reduce', variant: 'sum', n: 1024, implementation: 'tfjs', timer: 'wall', ms: stats(8) });
    const c = compare(peer, ours);
    expect(c?.basis).toBe('wall vs wall');
    expect(c?.speedup).toBe(2);
    expect(c?.oursTimer).toBe('wall, to completion');
    expect(c?.text).toMatch(/Trident 4\.00 ms \(wall, to completion\), TF\.js 8\.00 ms \(wall\)/);
    // Without a wall time the ratio is still given, but marked.
    const { wallMs: _w, ...gpuOnly } = ours;
    expect(compare(peer, gpuOnly)?.basis).toBe('mixed timers');
    expect(compare(peer, gpuOnly)?.speedup).toBe(8);
  });

  it('rows that count their work compare by throughput: an N-body step of two evaluations vs one CUDA evaluation', () => {
    const n = 1000;
    // Trident: one step = 2 evaluations = 2 * 20 n^2 flop in 2 ms; CUDA: one evaluation, 20 n^2 flop in 1.25 ms.
    const ours = row({
      algorithm: 'nbody',
      variant: '1 step',
      n,
      ms: stats(2),
      flops: 40 * n * n,
      throughput: { value: (40 * n * n) / 2e6, unit: 'GFLOP/s' },
    });
    const cuda = row({
      algorithm: 'nbody',
      variant: 'tile 256',
      n,
      implementation: 'cuda',
      backend: 'cuda',
      runtime: 'native',
      ms: stats(1.25),
      throughput: { value: (20 * n * n) / 1.25e6, unit: 'GFLOP/s' },
    });
    const c = compare(cuda, ours);
    expect(c?.ratio).toBe('throughput');
    expect(c?.speedup).toBeCloseTo(1.25, 12); // a time ratio would say 0.625
  });

  it('headline: the preferred variant at the largest n; latency pairings never headline', () => {
    const rows = [
      row({ algorithm: 'sort', variant: 'merge', n: 4096 }),
      row({ algorithm: 'sort', variant: 'auto', n: 1024 }),
      row({ algorithm: 'sort', variant: 'auto', n: 2048 }),
      row({ algorithm: 'sort', variant: 'auto', n: 8192, error: 'boom', ms: undefined }),
      row({ algorithm: 'sort', variant: 'f32 keys · one call + read', n: 1 << 20 }),
    ];
    expect(headline('sort', rows)).toMatchObject({ variant: 'auto', n: 2048 });
    expect(headline('sort', rows.slice(0, 1))).toMatchObject({ variant: 'merge' });
    expect(headline('sort', rows.slice(3))).toBeUndefined();
  });

  it('shortens adapter strings', () => {
    expect(shortAdapter('ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)')).toBe(
      'SwiftShader',
    );
    expect(shortAdapter('NVIDIA H100 80GB HBM3 (NVIDIA: 580.159.04 580.159.4.0)')).toBe('NVIDIA H100');
    expect(shortAdapter('Intel(R) Xeon(R) Processor')).toBe('Intel Xeon');
    expect(shortAdapter('2 Web Workers')).toBe('2 Web Workers');
  });
});

describe('plain-JS ceiling rows', () => {
  const cpu = { backend: 'cpu', runtime: 'node' as const, timer: 'wall' as const, adapter: 'Xeon' };
  const n = 2 ** 24;
  const ours = row({ ...cpu, algorithm: 'reduce', variant: 'sum', n, ms: stats(8) });
  const ceiling = row({
    ...cpu,
    algorithm: 'reduce',
    variant: 'sum',
    n,
    implementation: 'plain JS threads',
    role: 'ceiling',
    backend: 'js',
    adapter: 'Xeon (2 threads)',
    ms: stats(6),
  });
  const tfjs = row({ ...cpu, algorithm: 'reduce', variant: 'sum', n, implementation: 'TF.js wasm (Node)', backend: 'js', ms: stats(16) });

  it('are a share on the cpu cell, never the peer to beat', () => {
    const all = [ours, ceiling, tfjs];
    const analysis = analyze(all);
    const cell = buildScoreboard(all, analysis).rows.find((r) => r.algorithm === 'reduce')?.cells[0];
    expect(cell?.best?.peer.implementation).toBe('TF.js wasm (Node)');
    expect(cell?.best?.speedup).toBe(2);
    expect(cell?.comparisons).toHaveLength(1);
    expect(cell?.ceiling?.share).toBe(0.75);
    expect(cell?.ceiling?.text).toMatch(/^75% of the plain-JS ceiling @ n=2\^24: Trident 8\.00 ms, plain JS on 2 threads 6\.00 ms/);
    // Not a peer in the details either, nor a competitor in application efficiency (the best-known time stays TF.js's 16 ms > 8).
    expect(analysis.peers.get('reduce')?.map((p) => p.peer.implementation)).toEqual(['TF.js wasm (Node)']);
    expect(analysis.jsCeilings.get('reduce')).toEqual([{ ceiling, ours, share: 0.75 }]);
    expect(analysis.portability.find((p) => p.algorithm === 'reduce (sum)')?.application.platforms[0]?.efficiency).toBe(1);
  });

  it('application efficiency holds a GPU-timed row to a wall-clock peer by its own wall time with the read', () => {
    const gpu = row({
      label: 'm',
      algorithm: 'reduce',
      variant: 'sum',
      n,
      backend: 'webgl2',
      timer: 'gpu-timestamp',
      ms: stats(1),
      wallMs: stats(2),
      wallWithReadMs: stats(4),
    });
    const peer = row({
      label: 'm',
      algorithm: 'reduce',
      variant: 'sum',
      n,
      implementation: 'TF.js webgl',
      backend: 'webgl',
      timer: 'wall',
      ms: stats(3),
    });
    const efficiency = (rows: LabelledMeasurement[]) =>
      analyze(rows).portability.find((p) => p.algorithm === 'reduce (sum)')?.application.platforms[0]?.efficiency;
    // GPU time 1 ms against the peer's 3 ms of wall would be 1; call + read (4 ms) against 3 ms is 0.75.
    expect(efficiency([gpu, peer])).toBe(0.75);
    // Without the read figure, the wall time to completion (2 ms): ahead of the peer.
    const { wallWithReadMs: _, ...noRead } = gpu;
    expect(efficiency([noRead, peer])).toBe(1);
  });

  it('bound only Trident cpu of the same runtime and n', () => {
    const chromium = { ...ours, runtime: 'chromium' as const };
    const all = [chromium, ceiling];
    const cell = buildScoreboard(all, analyze(all)).rows[0]?.cells[0];
    expect(cell?.measurement).toBe(chromium);
    expect(cell?.ceiling).toBeUndefined();
  });
});

describe('copy ceilings', () => {
  const n = 2 ** 24;
  const cpu = { backend: 'cpu', runtime: 'chromium' as const, timer: 'wall' as const, adapter: '16 Web Workers' };
  // 8n bytes in 1 ms = 134.2 GB/s; Trident's cpu zcopy takes 10 ms (13.4 GB/s), the plain-JS copy 1 ms.
  const zcopy = row({
    ...cpu,
    algorithm: 'zcopy',
    variant: 'copy',
    n,
    ms: stats(10),
    bytes: 8 * n,
    throughput: { value: (8 * n) / 10e6, unit: 'GB/s' },
  });
  const copy = row({
    ...cpu,
    algorithm: 'zcopy',
    variant: 'copy',
    n,
    implementation: 'plain JS threads',
    role: 'ceiling',
    backend: 'js',
    adapter: 'Web Workers (16 threads)',
    ms: stats(1),
    bytes: 8 * n,
    throughput: { value: (8 * n) / 1e6, unit: 'GB/s' },
  });
  const reduce = row({
    ...cpu,
    algorithm: 'reduce',
    variant: 'sum',
    n,
    ms: stats(1),
    bytes: 4 * n,
    throughput: { value: (4 * n) / 1e6, unit: 'GB/s' },
  });

  it('a cpu platform is held to the plain-JS copy where it beats Trident’s zcopy, and says so', () => {
    const analysis = analyze([zcopy, copy, reduce]);
    const r = analysis.rows.get('reduce')?.[0];
    expect(r?.ceiling?.source).toBe('plain-JS copy (TypedArray set on 16 threads)');
    expect(r?.zcopyShare).toBeCloseTo(0.5, 12);
    expect(analysis.platformCeilings).toEqual([
      { platform: 'm · chromium · cpu', best: { gbps: (8 * n) / 1e6, n, source: 'plain-JS copy (TypedArray set on 16 threads)' } },
    ]);
  });

  it('a GPU platform keeps its own zcopy; a plain-JS copy bounds only cpu', () => {
    const gpu = { ...zcopy, backend: 'webgl2', timer: 'gpu-timestamp' as const };
    const analysis = analyze([gpu, copy]);
    expect(analysis.platformCeilings).toEqual([
      { platform: 'm · chromium · webgl2', best: { gbps: (8 * n) / 10e6, n, source: 'Trident zcopy' } },
    ]);
  });
});

describe('browser WebGPU against Node WebGPU', () => {
  const gb = (bytes: number, ms: number) => ({ value: bytes / (ms * 1e6), unit: 'GB/s' as const });
  const at = (runtime: 'node' | 'chromium', algorithm: string, variant: string, n: number, ms: number) =>
    row({ label: 'h100', runtime, algorithm, variant, n, ms: stats(ms), bytes: 4 * n, throughput: gb(4 * n, ms) });

  it('compares at the largest n both ran, else by throughput at each one’s largest n', () => {
    const lines = browserVsNode([
      at('chromium', 'reduce', 'sum', 2 ** 24, 0.04),
      at('node', 'reduce', 'sum', 2 ** 24, 0.02),
      at('node', 'reduce', 'sum', 2 ** 28, 0.35),
      at('chromium', 'scan', 'inclusive', 2 ** 26, 0.2),
      at('node', 'scan', 'inclusive', 2 ** 28, 0.4),
    ]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('reduce n=2^24 0.040 ms vs 0.020 ms (0.50×, adaptive)');
    // 2^28 in 0.4 ms is 2684 GB/s; 2^26 in 0.2 ms is 1342: half the speed, at another n.
    expect(lines[0]).toContain('scan 1342 GB/s @ n=2^26 vs 2684 @ n=2^28 (0.50×, throughput, different n)');
  });

  it('compares only the same case timed by the same protocol, and names the builds', () => {
    const lines = browserVsNode([
      { ...at('chromium', 'reduce', 'sum', 2 ** 24, 0.04), protocol: 'adaptive', commit: 'aaa' },
      { ...at('node', 'reduce', 'sum', 2 ** 24, 0.02), protocol: 'sustained', commit: 'bbb' },
      { ...at('chromium', 'scan', 'inclusive', 2 ** 24, 0.1), protocol: 'sustained', commit: 'aaa' },
      { ...at('node', 'scan', 'inclusive', 2 ** 24, 0.1), protocol: 'sustained', commit: 'bbb' },
      at('chromium', 'sort', 'auto', 2 ** 24, 2),
      at('node', 'sort', 'radix keys', 2 ** 24, 1),
    ]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('Chromium at aaa, Node at bbb');
    expect(lines[0]).toContain('reduce 1678 GB/s @ n=2^24 vs 3355 @ n=2^24 (0.50×, throughput, protocols adaptive / sustained)');
    expect(lines[0]).toContain('scan n=2^24 0.10 ms vs 0.10 ms (1.00×, sustained)');
    expect(lines[0]).toContain("sort: not compared (the browser ran 'auto', Node 'radix keys')");
  });

  it('says nothing without both runtimes', () => {
    expect(browserVsNode([at('chromium', 'reduce', 'sum', 2 ** 24, 0.04)])).toEqual([]);
  });
});

describe('the committed H100 browser results', () => {
  const browser = loadResultsFile(H100_BROWSER);
  const suite = loadResultsFile(H100_SUITE);
  const all = [...suite.measurements, ...browser.measurements];
  const analysis = analyze(all);
  const board = buildScoreboard(all, analysis);

  it('give the three Chromium columns beside Node’s, each with a ceiling measured in the same page', () => {
    const keys = board.platforms.map((p) => p.key);
    for (const b of ['webgl2', 'webgpu', 'cpu']) {
      expect(keys).toContain(`h100 · chromium · ${b}`);
      expect(analysis.platformCeilings.find((c) => c.platform === `h100 · chromium · ${b}`)).toBeDefined();
    }
    expect(analysis.platformCeilings.find((c) => c.platform === 'h100 · chromium · cpu')?.best.source).toMatch(/^plain-JS copy/);
    expect(browser.label).toBe('h100');
    expect(browser.machine.cpu).toBeTruthy();
  });

  it('give a browser-against-Node line for the H100', () => {
    const [line] = browserVsNode(all);
    expect(line).toMatch(/^Browser WebGPU against Node \(Dawn\) WebGPU on the same GPU \(h100;/);
    // The page times sort() allocating its output, the suite radixSort into outputs allocated once.
    expect(line).toContain("sort: not compared (the browser ran 'auto', Node 'radix keys')");
  });
});

describe('the committed H100 results on the scoreboard', () => {
  const h100 = loadResultsFile(H100_SUITE);
  const analysis = analyze(h100.measurements);
  const board = buildScoreboard(h100.measurements, analysis);
  const column = board.platforms.findIndex((p) => p.key === 'h100 · node · webgpu');
  const cell = (algorithm: string) => board.rows.find((r) => r.algorithm === algorithm)?.cells[column];

  it('has one H100 WebGPU column, named by its GPU', () => {
    expect(column).toBeGreaterThanOrEqual(0);
    expect(board.platforms[column]?.shortAdapter).toBe('NVIDIA H100');
  });

  it('reduce: % of zcopy at 2^28, the toughest peer CUB (same timer), TF.js compared wall vs wall on the call-latency rows', () => {
    const reduce = cell('reduce');
    expect(reduce?.measurement?.n).toBe(2 ** 28);
    // 3061.2 GB/s over zcopy's 2842.6 GB/s (bench/results/archive/h100-suite-2026-11-27-1005.json).
    expect(reduce?.figure?.share).toBeCloseTo(3061.2 / 2842.6, 2);
    expect(reduce?.best?.peer.implementation).toBe('cub');
    expect(reduce?.best?.basis).toBe('same timer');
    expect(reduce?.best?.speedup).toBeCloseTo(3061.2 / 3035.8, 2);
    const tfjs = reduce?.comparisons.find((c) => c.peer.implementation === 'tfjs');
    expect(tfjs?.basis).toBe('same timer'); // both rows are wall clock, call + read
    expect(tfjs?.n).toBe(2 ** 24);
    expect(tfjs?.speedup).toBeCloseTo(13.7352 / 0.1139, 6);
    expect(reduce?.tooltip).toMatch(/TF\.js 13\.7 ms \(wall\)/);
  });

  it('nbody: CUDA anchor rows are read and compared by GFLOP/s', () => {
    const nbody = cell('nbody');
    expect(nbody?.best?.peer.implementation).toBe('cuda');
    expect(nbody?.best?.peer.variant).toBe('tile 512');
    expect(nbody?.best?.speedup).toBeCloseTo(37360 / 33525, 2);
  });

  it('bfs: the suite’s R-MAT check, in GTEPS as the bench counts them (stored edges / median time)', () => {
    const bfs = cell('bfs');
    expect(bfs?.measurement?.variant).toBe('rmat');
    expect(bfs?.measurement?.n).toBe(134217728);
    expect(bfs?.measurement?.timer).toBe('wall');
    expect(bfs?.measurement?.throughput?.unit).toBe('GTEPS');
    expect(bfs?.measurement?.throughput?.value).toBeCloseTo(134217728 / ((bfs?.measurement?.ms?.median as number) * 1e6), 9);
    expect(bfs?.measurement?.ms?.samples).toHaveLength(8);
  });

  it('histogram wins, sort loses against CUB', () => {
    expect(cell('histogram')?.best?.speedup).toBeGreaterThan(1);
    expect(cell('sort')?.best?.speedup).toBeLessThan(1);
    expect(board.rows.find((r) => r.algorithm === 'sort')?.verdict).toMatch(
      /beats the toughest peer on 0 of 1 platform; worst 0\.64× vs CUB \(h100 · node · webgpu\)/,
    );
  });

  it('curves: the TF.js and Trident call-latency rows are lines of five sizes each', () => {
    const reduce = curveBlocks(h100.measurements, analysis.algorithms).find((c) => c.chart.id === 'curve-reduce');
    const series = (name: string) => reduce?.chart.points.filter((p) => p.series === name) ?? [];
    expect(series('h100 · node · TF.js webgpu (call + read)')).toHaveLength(5);
    expect(series('h100 · node · webgpu (call + read)')).toHaveLength(5);
    expect(series('h100 · native · CUB cuda').map((p) => p.n)).toEqual([2 ** 24, 2 ** 26, 2 ** 28]);
  });
});

describe('capability matrix', () => {
  it('is generated from the devices in the results file', () => {
    const matrix = buildCapabilityMatrix([loadResultsFile(LOCAL)]);
    expect(matrix.columns.map((c) => c.key)).toEqual(['fixture · node · cpu', 'fixture · node · webgpu']);
    const cells = (property: string) => matrix.rows.find((r) => r.property === property)?.cells.map((c) => c.text);
    expect(cells('buffers')).toEqual(['zero-copy host memory', 'device memory, explicit upload / read-back']);
    expect(cells('workgroup memory')).toEqual(['64 KiB', '32 KiB']);
    expect(cells('barriers')).toEqual(['phase splitting', 'workgroupBarrier']);
    expect(cells('timer and source')).toEqual(['wall (performance.now)', 'gpu-timestamp (timestamp-query)']);
    expect(cells('sort')).toEqual(['radix sort (workgroup digits, scatter)', 'radix sort (workgroup digits, scatter)']);
  });

  it('a results file without device descriptions is named, not guessed', () => {
    expect(buildCapabilityMatrix([loadResultsFile(H100_SUITE)]).undescribed).toEqual(['h100']);
  });

  it('the formulations the bench records follow the device caps (cpu backend)', async () => {
    const device = await createDevice({ backend: 'cpu', options: { cpu: { workers: 1 } } });
    try {
      const f = chosenFormulations(device);
      expect(f.scan).toBe(scanFormulation(device).summary);
      // A CPU has serial workgroups: the chunked formulations.
      expect(device.caps.features.has('serial-workgroups')).toBe(true);
      expect(f.sort).toMatch(/^LSD radix sort, 8-bit digits over per-worker chunks/);
      expect(f.reduce).toMatch(/^per-worker chunks/);
      expect(f.nbody).toMatch(/^blocks of bodies per invocation/);
      expect(f.histogram).toMatch(/^per-worker chunk sub-histograms/);
      expect(f.compact).toMatch(/^per-worker chunks/);
      expect(f.components).toMatch(/pull passes/);
    } finally {
      await device.destroy();
    }
  });

  it('the formulations the bench records follow the device caps (webgpu here: a software GPU, then as if it ran many invocations)', async () => {
    const device = await createDevice({ backend: 'webgpu' });
    try {
      // A software adapter (SwiftShader, as in CI) runs few invocations at once: gather formulations.
      const f = chosenFormulations(device);
      expect(fewInvocations(device.caps)).toBe(device.info.software);
      if (device.info.software) {
        expect(f.scan).toMatch(/gather passes/);
        expect(f.reduce).toBe('log-step gather passes');
        expect(f.sort).toMatch(/^merge sort by merge path, 16 keys an invocation in four stripes/);
        expect(f.compact).toMatch(/binary-search gather/);
        expect(f.bfs).toMatch(/^frontier list, one invocation per frontier vertex/);
        expect(f.components).toMatch(/pull passes/);
      } else expect(f.sort).toBe('radix sort (workgroup digits, scatter)');
      expect(f.scan).toBe(scanFormulation(device).summary);
      expect(f.zcopy).toBe('grid-stride workgroups');
      const wide = chosenFormulations(manyInvocationsView(device));
      expect(wide.reduce).toMatch(/^grid-stride workgroup reduction/);
      expect(wide.sort).toBe('radix sort (workgroup digits, scatter)');
      expect(wide.scan).toBe(scanFormulation(manyInvocationsView(device)).summary);
      expect(scanFormulation(manyInvocationsView(device)).name).not.toBe('gather');
      expect(wide.components).toMatch(/^hooking/);
    } finally {
      await device.destroy();
    }
  });
});
