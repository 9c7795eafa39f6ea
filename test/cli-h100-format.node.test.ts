/**
 * The H100 run's own results format (the first H100 harness) loads as
 * measurements: Trident's library rows, the fastest hand-tuned IR kernel per
 * operation, and the CUB / CUDA anchor lines, all under the machine label 'h100'.
 */
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { newestMeasurements } from '../packages/cli/src/commands/report.ts';
import { analyze } from '../packages/cli/src/report/analysis.ts';
import { loadResultsFile } from '../packages/cli/src/report/load.ts';

const FILE = fileURLToPath(new URL('./fixtures/cli/h100-webgpu-format.json', import.meta.url));

it('reads library rows, the best tuned kernel and the anchors', () => {
  const r = loadResultsFile(FILE);
  expect(r.label).toBe('h100');
  const by = (impl: string, algorithm: string, variant: string) =>
    r.measurements.filter((m) => m.implementation === impl && m.algorithm === algorithm && m.variant === variant);
  const lib = by('trident', 'zcopy', 'copy');
  expect(lib).toHaveLength(1);
  expect(lib[0]).toMatchObject({ backend: 'webgpu', adapter: 'test-h100', n: 2 ** 28, timer: 'gpu-timestamp', verified: true });
  expect(lib[0]?.ms).toMatchObject({ median: 2, min: 1.9, max: 2.1 });
  expect(lib[0]?.throughput?.value).toBeCloseTo(1073.741824, 6);
  expect(by('trident', 'zcopy', 'fill')).toHaveLength(1);
  expect(by('trident', 'reduce', 'sum')).toHaveLength(1);
  // Of the two tuned zcopy kernels, the faster one is kept.
  expect(by('ir-tuned', 'zcopy', 'copy').map((m) => m.ms?.median)).toEqual([1.25]);
  // Anchors: memcpy (cuda), CUB reduce / scan / sort / histogram; the stray line is ignored.
  expect(by('cuda', 'zcopy', 'copy')[0]).toMatchObject({ runtime: 'native', backend: 'cuda', n: 2 ** 28 });
  expect(by('cub', 'reduce', 'sum')[0]?.ms?.median).toBe(0.4);
  expect(by('cub', 'scan', 'inclusive')).toHaveLength(1);
  expect(by('cub', 'sort', 'radix keys')[0]?.bytes).toBe(8 * 2 ** 28);
  expect(by('cub', 'histogram', '256 bins')).toHaveLength(1);
  expect(r.measurements).toHaveLength(9);

  // In the analysis: the library reduce is 0.8 ms, CUB 0.4 ms -> application efficiency 0.5 on that platform;
  // zcopy: tuned 1.25 ms and memcpy 0.7211 ms compete with the library's 2 ms copy (not the 1 ms fill).
  const a = analyze(r.measurements);
  const reduce = a.portability.find((p) => p.algorithm === 'reduce (sum)');
  // (CUB's time scaled to the library's work by the two rows' GB/s, which the file rounds: 0.5 to 5 digits.)
  expect(reduce?.application.platforms).toEqual([
    { platform: 'h100 · node · webgpu', n: 2 ** 28, efficiency: expect.closeTo(0.5, 4), competitors: 1 },
  ]);
  const zcopy = a.portability.find((p) => p.algorithm === 'zcopy (copy)');
  expect(zcopy?.application.platforms[0]?.efficiency).toBeCloseTo(0.7211 / 2, 12);
  expect(zcopy?.application.platforms[0]?.competitors).toBe(2);
});

it('reads the A/B run format, and a newer run of the same label supersedes the older one', () => {
  const ab = loadResultsFile(fileURLToPath(new URL('./fixtures/cli/h100-webgpu-ab-format.json', import.meta.url)));
  expect(ab.label).toBe('h100');
  expect(ab.notes).toEqual(['a note from the run']);
  const lib = ab.measurements.filter((m) => m.implementation === 'trident');
  expect(lib.map((m) => `${m.algorithm}/${m.variant}/${m.dtype}/${m.n}`)).toEqual([
    'zcopy/copy/u32/268435456',
    'reduce/sum f32/f32/268435456',
    'sort/radix keys/u32/67108864',
    'nbody/1 step/f32/262144',
  ]);
  expect(lib[0]?.throughput?.value).toBeCloseTo(2147.483648, 6);
  expect(lib[2]?.bytes).toBe(8 * 67108864);
  expect(lib[3]?.throughput).toEqual({ value: expect.closeTo(20000, 6), unit: 'GFLOP/s' });
  expect(lib[3]?.verified).toBe(false);
  expect(ab.measurements.filter((m) => m.implementation === 'ir-tuned').map((m) => [m.algorithm, m.ms?.median])).toEqual([
    ['zcopy', 0.78],
    ['reduce', 0.36],
  ]);
  expect(ab.measurements.filter((m) => m.runtime === 'native').map((m) => `${m.implementation} ${m.algorithm} ${m.variant}`)).toEqual([
    'cuda zcopy copy',
    'cub sort radix keys',
  ]);

  // Both fixtures are label 'h100'; both have Trident's zcopy copy, a tuned zcopy, memcpy and CUB radix keys at 2^28:
  // the newer (A/B) file's four are kept.
  const older = loadResultsFile(FILE);
  const { measurements, superseded } = newestMeasurements([older, ab]);
  const zcopy = measurements.filter((m) => m.implementation === 'trident' && m.algorithm === 'zcopy' && m.variant === 'copy');
  expect(zcopy.map((m) => m.ms?.median)).toEqual([1]);
  expect(superseded).toEqual([`${FILE}: 4 measurement(s) superseded by a newer run of the same machine label`]);
});

it("reads the algorithms' gpu-check format: results rows and anchors as an object of times", () => {
  const r = loadResultsFile(fileURLToPath(new URL('./fixtures/cli/h100-gpu-check-format.json', import.meta.url)));
  expect(r.label).toBe('h100');
  expect(r.warnings).toEqual([]);
  expect(r.measurements.map((m) => `${m.implementation} ${m.algorithm}/${m.variant} n=${m.n} ${m.ms?.median}`)).toEqual([
    'trident scan/inclusive n=268435456 4',
    'trident sort/radix keys n=67108864 40',
    'cub scan/inclusive n=268435456 0.8',
    'cub sort/radix keys n=67108864 1.6',
  ]);
  // CUB radix keys at 2^26 is the best-known time for Trident's radix sort at 2^26: e = 1.6 / 40.
  const sort = analyze(r.measurements).portability.find((p) => p.algorithm === 'sort (radix keys)');
  expect(sort?.application.platforms[0]?.efficiency).toBeCloseTo(0.04, 12);
});

it("reads the suite format: keys and pairs sorts meet CUB's keys and pairs rows", () => {
  const r = loadResultsFile(fileURLToPath(new URL('./fixtures/cli/h100-suite-format.json', import.meta.url)));
  expect(r.warnings).toEqual([]);
  expect(r.measurements.map((m) => `${m.implementation} ${m.algorithm}/${m.variant} ${m.bytes}`)).toEqual([
    `trident sort/radix keys ${8 * 2 ** 28}`,
    `trident sort/radix pairs ${16 * 2 ** 28}`,
    `trident histogram/256 bins ${1789.6 * 0.6 * 1e6}`,
    `cub sort/radix keys ${8 * 2 ** 28}`,
    `cub sort/radix pairs ${16 * 2 ** 28}`,
    `cub histogram/256 bins ${2147.5 * 0.5 * 1e6}`,
    // The CUDA N-body anchor line (flops, not bytes).
    'cuda nbody/tile 256 undefined',
  ]);
  const portability = analyze(r.measurements).portability;
  const efficiency = (name: string) => portability.find((p) => p.algorithm === name)?.application.platforms[0]?.efficiency;
  expect(efficiency('sort (radix keys)')).toBeCloseTo(6.4 / 20, 12);
  expect(efficiency('sort (radix pairs)')).toBeCloseTo(9 / 30, 12);
  // Byte counts rebuilt from each row's rounded GB/s differ in the 5th digit; the rival's time is scaled by them.
  expect(efficiency('histogram (256 bins)')).toBeCloseTo(0.5 / 0.6, 4);
});
