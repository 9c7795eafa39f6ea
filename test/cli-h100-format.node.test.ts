/**
 * The GPU machine's results in the one results schema: the report's strict loader (a
 * file of another shape, or one breaking a rule, is a typed error naming the file and the
 * problem) and the one-off conversion of the earlier H100 shapes (scripts/convert-results.ts),
 * whose converted files read with the same figures.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { analyze } from '../packages/cli/src/report/analysis.ts';
import { loadResultsFile, ResultsFileError, readResults } from '../packages/cli/src/report/load.ts';
import { convertResults } from '../scripts/convert-results.ts';
import { tempDir, trident } from './cli-helpers.ts';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/cli/${name}`, import.meta.url));
const json = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));
const LOCAL = fixture('results-local.json');
const H100_SUITE = fileURLToPath(new URL('../bench/results/h100-suite-2026-11-27.json', import.meta.url));

/** The fixture file with one change made by `edit`. */
function edited(edit: (r: Record<string, unknown>) => void): Record<string, unknown> {
  const r = json(LOCAL) as Record<string, unknown>;
  edit(r);
  return r;
}

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
