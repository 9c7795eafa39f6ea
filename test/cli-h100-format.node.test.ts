/**
 * The GPU machine's runs in the one harness and the one results schema: the suite
 * `trident bench --suite h100` runs (which cases at which sizes, run for real on the cpu
 * backend at toy sizes), the anchors' output parsed into the results file's anchors block,
 * the report's strict loader (a file of another shape, or one breaking a rule, is a typed
 * error naming the file and the problem) and the one-off conversion of the earlier H100
 * shapes (scripts/convert-results.ts), whose converted files read with the same figures.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LimitExceededError } from 'trident';
import { describe, expect, it } from 'vitest';
import { parseAnchorOutput } from '../packages/cli/src/bench/anchors.ts';
import type { BenchCase } from '../packages/cli/src/bench/cases.ts';
import { measureCase } from '../packages/cli/src/bench/runner.ts';
import { runSuite } from '../packages/cli/src/bench/suite-runner.ts';
import { caseKey, findCase, SUITES, selectSteps } from '../packages/cli/src/bench/suites.ts';
import { SUSTAINED } from '../packages/cli/src/bench/sustained.ts';
import { analyze } from '../packages/cli/src/report/analysis.ts';
import { loadResultsFile, ResultsFileError, readResults } from '../packages/cli/src/report/load.ts';
import { convertResults } from '../scripts/convert-results.ts';
import { tempDir, trident } from './cli-helpers.ts';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/cli/${name}`, import.meta.url));
const json = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));
const LOCAL = fixture('results-local.json');
const H100_SUITE = fileURLToPath(new URL('../bench/results/archive/h100-suite-2026-11-27-1005.json', import.meta.url));

/** The fixture file with one change made by `edit`. */
function edited(edit: (r: Record<string, unknown>) => void): Record<string, unknown> {
  const r = json(LOCAL) as Record<string, unknown>;
  edit(r);
  return r;
}

const H100 = SUITES.get('h100')!;
const log2 = (n: number): number => Math.log2(n);
/** key -> the log2 sizes a suite runs it at. */
function sizesOf(steps: ReadonlyArray<{ key: string; n: number }>): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const s of steps) out[s.key] = [...(out[s.key] ?? []), log2(s.n)];
  return out;
}

describe('the h100 suite', () => {
  it('runs every algorithm of the local bench at the CUB anchor sizes, N-body and graphs at theirs', () => {
    const sizes = sizesOf(H100.steps(28));
    for (const key of [
      'zcopy:copy',
      'reduce:sum',
      'scan:inclusive',
      'histogram:256 bins',
      'compact:half kept',
      'compact:half kept (into)',
      'sort:radix keys',
      'sort:radix pairs',
    ])
      expect(sizes[key], key).toEqual([24, 26, 28]);
    expect(sizes['nbody:accelerations']).toEqual([16, 18]);
    expect(sizes['bfs:rmat']).toEqual([22, 24, 26]);
    expect(sizes['components:rmat']).toEqual([22, 24, 26]);
    // Every step names a case there is.
    for (const s of H100.steps(28)) expect(findCase(s.key), s.key).toBeDefined();
    // Each graph size's two cases run together (one graph generated for both).
    const graphs = H100.steps(28).filter((s) => s.key.endsWith(':rmat'));
    expect(graphs.map((s) => `${s.key}@${log2(s.n)}`).slice(0, 2)).toEqual(['bfs:rmat@22', 'components:rmat@22']);
  });

  it('--max-log2n 31 adds 2^29 … 2^31 to the element-wise cases and the graphs; 12 shrinks everything to toy sizes', () => {
    expect(sizesOf(H100.steps(31))['sort:radix pairs']).toEqual([24, 26, 28, 29, 30, 31]);
    expect(sizesOf(H100.steps(31))['nbody:accelerations']).toEqual([16, 18]);
    // Graphs past one binding too: 2^29 stored edges is R-MAT scale 25 at edge factor 8; from 2^30
    // the graphs are Graph500's edge factor 16, a case of its own (test/cli-suite-graphs.node.test.ts).
    expect(sizesOf(H100.steps(30))['bfs:rmat']).toEqual([22, 24, 26, 29]);
    expect(sizesOf(H100.steps(30))['bfs:rmat ef16']).toEqual([30]);
    expect(sizesOf(SUITES.get('h100-quick')!.steps(30))['components:rmat']).toEqual([24, 29]);
    const toy = sizesOf(H100.steps(12));
    expect(toy['reduce:sum']).toEqual([8, 10, 12]);
    expect(toy['nbody:accelerations']).toEqual([8, 10]);
    expect(toy['bfs:rmat']).toEqual([10]);
    expect(sizesOf(SUITES.get('h100-quick')!.steps(28))['sort:radix keys']).toEqual([24, 28]);
  });

  it('--algorithms keeps some of its cases; names it does not have come back', () => {
    const { steps, unknown } = selectSteps(H100, 28, ['reduce:sum', 'bfs', 'apsp']);
    expect([...new Set(steps.map((s) => s.key))]).toEqual(['reduce:sum', 'bfs:rmat']);
    expect(unknown).toEqual(['apsp']);
  });

  it('a refusal is a row saying so (sustained protocol), not a crash of the run', async () => {
    const refusing: BenchCase = {
      algorithm: 'zcopy',
      variant: 'copy',
      dtype: 'u32',
      sizes: [],
      setup: (device, n) => {
        throw new LimitExceededError(device.backend, 'maxStorageBufferBindingSize', 4 * n, 2 ** 31 - 8, 'binding');
      },
    };
    const { createDevice } = await import('trident');
    const device = await createDevice({ backend: 'cpu', options: { cpu: { workers: 1 } } });
    try {
      const m = await measureCase(device, refusing, 2 ** 29, { warmup: 0, warmupMs: 0, repeats: 0, budgetMs: 0, sustained: SUSTAINED });
      expect(m.ms).toBeUndefined();
      expect(m.error).toMatch(/^LimitExceededError: binding exceeds limit 'maxStorageBufferBindingSize'/);
      expect(m.n).toBe(2 ** 29);
    } finally {
      await device.destroy();
    }
  });

  it("sizes past the device's caps.limits.maxBufferElements are not run, and a note says so", async () => {
    const results = await runSuite({
      suite: H100,
      steps: [
        { key: 'reduce:sum', n: 2 ** 10 },
        { key: 'reduce:sum', n: 2 ** 40 },
      ],
      maxLog2n: 40,
      backends: ['cpu'],
      workers: 1,
      sustained: { ...SUSTAINED, batches: 3, warmupMs: 5 },
      deviceWarmupMs: 0,
      label: 'test',
      command: 'test',
      quiet: true,
      anchors: [],
    });
    expect(results.measurements.map((m) => [m.n, m.verified])).toEqual([[2 ** 10, true]]);
    expect(results.settings).toMatchObject({ suite: 'h100', protocol: 'sustained', repeats: 3 });
    expect(results.notes?.join('\n')).toMatch(/cpu: not run at 2\^40: above caps\.limits\.maxBufferElements/);
  });
});

describe('the anchors', () => {
  const CUB = [
    'n=2^24 memcpy d2d: 0.0524 ms 2562.2 GB/s (r+w)',
    'n=2^24 CUB reduce sum u32: 0.0317 ms 2114.1 GB/s',
    'n=2^28 CUB radix sort pairs u32/u32: 9.1234 ms 29.423 Gpairs/s',
    'n=2^30 CUB select if u32 (half kept): 1.5000 ms 2863.3 GB/s (read)',
    'n=2^31 CUB radix sort pairs u32/u32: skipped (no room for 1234 bytes of temporaries)',
    'CUDA error out of memory at 40',
    '',
  ].join('\n');

  it('CUB and memcpy lines become rows named as the Trident case of the same operation, counted as it counts them', () => {
    const { output, measurements, unparsed } = parseAnchorOutput('cub', 'cub.txt', CUB, 'Test GPU');
    expect(output).toEqual({ kind: 'cub', file: 'cub.txt', lines: CUB.split('\n').filter(Boolean) });
    expect(measurements.map((m) => `${m.implementation} ${m.algorithm}:${m.variant} 2^${log2(m.n)} ${m.ms?.median}`)).toEqual([
      'cuda zcopy:copy 2^24 0.0524',
      'cub reduce:sum 2^24 0.0317',
      'cub sort:radix pairs 2^28 9.1234',
      'cub compact:half kept (into) 2^30 1.5',
    ]);
    for (const m of measurements) {
      expect(m).toMatchObject({ backend: 'cuda', runtime: 'native', timer: 'gpu-timestamp', adapter: 'Test GPU', repeats: 1 });
      // The work as Trident's case of the operation counts it, so the report compares rates like for like.
      expect(m.bytes, m.algorithm).toBe(findCase(caseKey(m))?.bytes?.(m.n));
      expect(m.throughput?.value).toBeCloseTo((m.bytes as number) / ((m.ms?.median as number) * 1e6), 9);
    }
    expect(unparsed).toEqual([
      'n=2^31 CUB radix sort pairs u32/u32: skipped (no room for 1234 bytes of temporaries)',
      'CUDA error out of memory at 40',
    ]);
  });

  it('the CUDA N-body lines: one force evaluation, 20 flop per interaction, each tile its own row', () => {
    const text =
      'nbody CUDA n=65536 tile=128: 3.000 ms 28633 GFLOP/s (20 flop/interaction)\nnbody CUDA n=65536 tile=256: 2.500 ms 34360 GFLOP/s (20 flop/interaction)\n';
    const { measurements } = parseAnchorOutput('nbody', 'nbody.txt', text, 'Test GPU');
    expect(measurements.map((m) => [m.variant, m.n, m.flops, m.dtype])).toEqual([
      ['tile 128', 65536, 20 * 65536 ** 2, 'f32'],
      ['tile 256', 65536, 20 * 65536 ** 2, 'f32'],
    ]);
    expect(measurements[1]?.throughput).toEqual({ value: expect.closeTo(34359.738, 3), unit: 'GFLOP/s' });
  });
});

describe('trident bench --suite (binary)', () => {
  it('runs the suite at toy sizes on webgpu (SwiftShader here), folds in the anchors and the conformance count, and the report renders it', () => {
    const dir = tempDir();
    const cub = join(dir, 'cub.txt');
    // A CUB figure at one of the toy sizes, so the report sets it beside Trident's row.
    writeFileSync(cub, 'n=2^12 CUB reduce sum u32: 0.0010 ms 16.4 GB/s\n');
    writeFileSync(join(dir, 'conformance.json'), JSON.stringify({ passed: 12, failed: 0, failures: [] }));
    const out = join(dir, 'suite.json');
    const r = trident([
      'bench',
      '--suite',
      'h100',
      '--max-log2n',
      '12',
      '--backends',
      'webgpu',
      '--algorithms',
      'reduce:sum,sort:radix pairs,bfs',
      '--warmup-ms',
      '20',
      '--repeats',
      '3',
      '--label',
      'toy',
      '--cub',
      cub,
      '--nbody',
      join(dir, 'missing-nbody.txt'),
      '--conformance',
      join(dir, 'conformance.json'),
      '--quiet',
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const loaded = loadResultsFile(out);
    expect(
      loaded.measurements.filter((m) => m.implementation === 'trident').map((m) => `${m.algorithm}:${m.variant}@${log2(m.n)}`),
    ).toEqual([
      'reduce:sum@8',
      'reduce:sum@10',
      'reduce:sum@12',
      'sort:radix pairs@8',
      'sort:radix pairs@10',
      'sort:radix pairs@12',
      'bfs:rmat@10',
    ]);
    for (const m of loaded.measurements.filter((x) => x.implementation === 'trident')) {
      expect(m.verified, `${m.algorithm} ${m.n}`).toBe(true);
      expect(m.repeats).toBe(3);
      expect(m.ms?.samples).toHaveLength(3);
    }
    expect(loaded.measurements.filter((m) => m.implementation === 'cub').map((m) => m.n)).toEqual([2 ** 12]);
    expect(loaded.anchorOutputs).toEqual([{ kind: 'cub', file: 'cub.txt', lines: ['n=2^12 CUB reduce sum u32: 0.0010 ms 16.4 GB/s'] }]);
    expect(loaded.conformance).toEqual([{ backend: 'webgpu', runtime: 'node', passed: 12, failed: 0 }]);
    expect(loaded.notes.join('\n')).toMatch(/missing-nbody\.txt is missing/);
    expect(loaded.devices.map((d) => d.backend)).toEqual(['webgpu']);

    const report = join(dir, 'report');
    const rep = trident(['report', '--from', out, '--out', report]);
    expect(rep.code, rep.stderr).toBe(0);
    const md = readFileSync(join(report, 'REPORT.md'), 'utf8');
    // CUB beside Trident's reduce at the same n, and the device's capability matrix.
    expect(md).toMatch(/\| reduce \| [^|]*[▲▼] [\d.]+× CUB[^|]*\|/);
    expect(md).toContain('## Capability matrix');
  }, 120_000);

  it('flags of the suite need --suite; an unknown suite is a usage error', () => {
    expect(trident(['bench', '--no-browser', '--max-log2n', '12']).stderr).toMatch(/--max-log2n needs --suite/);
    const r = trident(['bench', '--suite', 'h200']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--suite: unknown 'h200' \(known: h100, h100-quick\)/);
  });
});

describe('the strict loader', () => {
  it('reads a trident-bench/1 file: measurements labelled, throughput from the work and the median', () => {
    const r = loadResultsFile(LOCAL);
    expect(r.label).toBe('fixture');
    expect(r.measurements.every((m) => m.label === 'fixture')).toBe(true);
    const zcopy = r.measurements.find((m) => m.algorithm === 'zcopy' && m.backend === 'cpu');
    // 8e6 bytes in a 1 ms median: 8 GB/s (the file gives no throughput; it follows from the row).
    expect(zcopy?.throughput).toEqual({ value: 8, unit: 'GB/s' });
  });

  const rejects = (name: string, edit: (r: Record<string, unknown>) => void, problem: RegExp) =>
    it(`rejects ${name}`, () => {
      const call = () => readResults(edited(edit), 'bad.json');
      expect(call).toThrow(ResultsFileError);
      expect(call).toThrow(problem);
    });

  rejects('a file of another shape (no schema)', (r) => delete r.schema, /^bad\.json: .*schema: missing .*convert-results/);
  rejects('another schema version', (r) => (r.schema = 'trident-bench/2'), /schema: "trident-bench\/2", not 'trident-bench\/1'/);
  rejects(
    'a measurement with neither a time nor an error',
    (r) => delete (r.measurements as Array<Record<string, unknown>>)[1]?.ms,
    /measurements\[1\]: neither 'ms' \(a time\) nor 'error'/,
  );
  rejects(
    'a median that is not a number',
    (r) => (((r.measurements as Array<Record<string, unknown>>)[0]?.ms as Record<string, unknown>).median = '1'),
    /measurements\[0\]\.ms\.median: expected a number, got "1"/,
  );
  rejects(
    'an unknown timer',
    (r) => ((r.measurements as Array<Record<string, unknown>>)[2]!.timer = 'cuda-events'),
    /measurements\[2\]\.timer: expected one of gpu-timestamp, wall/,
  );
  rejects('a missing label', (r) => delete r.label, /label: expected a string/);
  rejects(
    'a malformed anchors block',
    (r) => (r.anchors = { outputs: [{ kind: 'cub', file: 'cub.txt' }], measurements: [] }),
    /anchors\.outputs\[0\]\.lines: expected an array/,
  );
  rejects(
    'a conformance count that is not a count',
    (r) => (r.conformance = [{ backend: 'webgpu', passed: -1, failed: 0 }]),
    /conformance\[0\]\.passed: expected an integer of at least 0/,
  );

  it('trident report: a folder holding a file of an earlier shape is an error naming it, not a skipped source', () => {
    const dir = tempDir();
    const out = tempDir();
    writeFileSync(join(dir, 'local.json'), readFileSync(LOCAL));
    writeFileSync(join(dir, 'h100-old.json'), readFileSync(fixture('h100-suite-format.json')));
    const r = trident(['report', '--from', dir, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/h100-old\.json: not a valid trident-bench\/1 file: schema: missing/);
  });
});

describe('the conversion of the earlier H100 shapes', () => {
  it("the suite's shape: Trident rows as measurements, the CUB / CUDA lines as the anchors block, same figures", () => {
    const { results, dropped } = convertResults(json(fixture('h100-suite-format.json')), 'h100-suite-format.json');
    expect(dropped).toEqual([]);
    expect(results.schema).toBe('trident-bench/1');
    expect(results.provenance?.originalShape).toBe('h100-suite');
    const r = readResults(JSON.parse(JSON.stringify(results)), 'converted.json');
    expect(r.label).toBe('h100');
    expect(r.measurements.map((m) => `${m.implementation} ${m.algorithm}/${m.variant} ${m.bytes}`)).toEqual([
      `trident sort/radix keys ${8 * 2 ** 28}`,
      `trident sort/radix pairs ${16 * 2 ** 28}`,
      `trident histogram/256 bins ${1789.6 * 0.6 * 1e6}`,
      `cub sort/radix keys ${8 * 2 ** 28}`,
      `cub sort/radix pairs ${16 * 2 ** 28}`,
      `cub histogram/256 bins ${2147.5 * 0.5 * 1e6}`,
      'cuda nbody/tile 256 undefined',
    ]);
    // The anchors' lines stay with the rows parsed from them.
    expect(r.anchorOutputs.map((o) => [o.kind, o.lines.length])).toEqual([
      ['cub', 3],
      ['nbody', 1],
    ]);
    const portability = analyze(r.measurements).portability;
    const efficiency = (name: string) => portability.find((p) => p.algorithm === name)?.application.platforms[0]?.efficiency;
    expect(efficiency('sort (radix keys)')).toBeCloseTo(6.4 / 20, 12);
    expect(efficiency('sort (radix pairs)')).toBeCloseTo(9 / 30, 12);
  });

  it('the first harness and the A/B run: library rows, the fastest tuned IR kernel per operation, the anchors', () => {
    const first = readResults(convertResults(json(fixture('h100-webgpu-format.json')), 'h100-webgpu-format.json').results, 'first.json');
    const by = (impl: string, algorithm: string, variant: string) =>
      first.measurements.filter((m) => m.implementation === impl && m.algorithm === algorithm && m.variant === variant);
    expect(by('trident', 'zcopy', 'copy')[0]).toMatchObject({ adapter: 'test-h100', n: 2 ** 28, timer: 'gpu-timestamp', verified: true });
    expect(by('ir-tuned', 'zcopy', 'copy').map((m) => m.ms?.median)).toEqual([1.25]);
    expect(by('cub', 'reduce', 'sum')[0]?.ms?.median).toBe(0.4);
    expect(first.measurements).toHaveLength(9);
    const ab = readResults(convertResults(json(fixture('h100-webgpu-ab-format.json')), 'h100-webgpu-ab-format.json').results, 'ab.json');
    expect(ab.notes).toEqual(['a note from the run']);
    expect(ab.measurements.filter((m) => m.implementation === 'ir-tuned').map((m) => [m.algorithm, m.ms?.median])).toEqual([
      ['zcopy', 0.78],
      ['reduce', 0.36],
    ]);
  });

  it("the algorithms' check shape (anchors as an object of times), and a loosely shaped file's rows without a time named", () => {
    const { results } = convertResults(json(fixture('h100-gpu-check-format.json')), 'h100-gpu-check-format.json');
    expect(results.measurements.map((m) => `${m.implementation} ${m.algorithm}/${m.variant} ${m.ms?.median}`)).toEqual([
      'trident scan/inclusive 4',
      'trident sort/radix keys 40',
    ]);
    expect(results.anchors?.measurements.map((m) => `${m.implementation} ${m.algorithm}/${m.variant} ${m.ms?.median}`)).toEqual([
      'cub scan/inclusive 0.8',
      'cub sort/radix keys 1.6',
    ]);
    const undated = {
      results: [
        { algorithm: 'reduce', n: 4, median_ms: 1 },
        { algorithm: 'scan', n: 4 },
      ],
    };
    expect(() => convertResults(undated, 'x.json')).toThrow(/no date in the file/);
    const { dropped } = convertResults(undated, 'x.json', { createdAt: '2026-01-01T00:00:00Z' });
    expect(dropped).toEqual(['measurement 1: scan n=4: no time and no error']);
  });

  it('the committed suite file of 2026-11-27 was converted: its reduce and CUB rows read as the call measured them', () => {
    const r = loadResultsFile(H100_SUITE);
    expect(r.conformance).toEqual([{ backend: 'webgpu', runtime: 'node', passed: 278, failed: 0 }]);
    const at = (impl: string, algorithm: string, variant: string, n: number) =>
      r.measurements.find((m) => m.implementation === impl && m.algorithm === algorithm && m.variant === variant && m.n === n);
    // The call's own figures: reduce sum u32 0.3508 ms at 2^28, CUB 0.3537 ms (its anchor line): 1.008x, as its ratios said.
    expect(at('trident', 'reduce', 'sum', 2 ** 28)?.ms?.median).toBe(0.3508);
    expect(at('cub', 'reduce', 'sum', 2 ** 28)?.ms?.median).toBe(0.3537);
    expect(r.anchorOutputs.flatMap((o) => o.lines)).toContain('n=2^28 CUB reduce sum u32: 0.3537 ms 3035.8 GB/s');
  });
});
