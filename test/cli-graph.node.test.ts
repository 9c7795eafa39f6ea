/**
 * The graph commands of `trident run` (bfs, components, mst, apsp, matching) on
 * `scipy.sparse.save_npz` files: their outputs agree with scipy.sparse.csgraph's
 * answers. The commands' own code (argument checks, .npz reading, the job on a
 * device, the output arrays) runs in-process on every backend; a few runs of the
 * real binary check files, exit codes and stderr lines (each spawn costs seconds). The .npz files and answers are written by
 * python3 + scipy in this run where they are found (test/fixtures/graph/
 * make-graph-fixtures.py), and committed small copies of them are checked always.
 * Malformed files: one line naming the file, exit 2, nothing written.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { zipSync } from 'fflate';
import { type BackendKind, createDevice, type Device } from 'trident';
import { describe, expect, it } from 'vitest';
import { describeError } from '../packages/cli/src/errors.ts';
import { encodeNpy, readNpy } from '../packages/cli/src/npy.ts';
import { ALGORITHMS, type AlgorithmCli, type RunValues } from '../packages/cli/src/run/algorithms.ts';
import { executeJob, type HostArray, type JobOutputs } from '../packages/cli/src/run/execute.ts';
import { tempDir, trident } from './cli-helpers.ts';
import { TEST_BACKENDS, TEST_DEVICE_OPTIONS } from './harness.ts';

const FIXTURES = fileURLToPath(new URL('./fixtures/graph/', import.meta.url));
const CASES = ['csr-f64', 'csc-f32-stored', 'coo-int-ties', 'csr-int64', 'pattern-bool'];

interface Expect {
  bfs0: number[];
  components: number[];
  mstEdges: number;
  mstWeight: number;
  apsp: Array<Array<number | null>> | null;
}

/** Fixtures written by python3 + scipy now, or undefined where they are missing. */
/** A folder of fixtures scipy wrote in this run, or why there is none. */
function scipyFixtures(): { dir: string } | { why: string } {
  const dir = tempDir('trident-scipy-');
  const r = spawnSync('python3', [join(FIXTURES, 'make-graph-fixtures.py'), dir], { encoding: 'utf8', timeout: 120_000 });
  return r.status === 0 ? { dir } : { why: `python3 make-graph-fixtures.py: ${r.error ?? ''} ${r.stderr ?? ''}`.trim() };
}

/** The single float64 of a (1,) '<f8' .npy. */
function readF64(file: string): number {
  const bytes = readFileSync(file);
  expect(bytes.toString('latin1', 0, 128)).toContain("'<f8'");
  return bytes.readDoubleLE(bytes.length - 8);
}

/** Runs one command's own code in-process: prepare (flags, files) then the job on `device`. */
async function runInProcess(device: Device, command: string, values: RunValues): Promise<JobOutputs> {
  const job = (ALGORITHMS[command] as AlgorithmCli).prepare(values);
  const outputs = await executeJob(device, job.spec);
  for (const role of Object.keys(job.outputs)) expect(outputs[role], `${command} output ${role}`).toBeDefined();
  return outputs;
}

async function checkAll(device: Device, dir: string, cases: readonly string[]): Promise<void> {
  const backend = device.backend;
  for (const name of cases) {
    const graph = join(dir, `${name}.npz`);
    const want = JSON.parse(readFileSync(join(dir, `${name}.expect.json`), 'utf8')) as Expect;
    const what = `${name} on ${backend}`;
    const levels = (await runInProcess(device, 'bfs', { graph, source: '0', out: 'x' })).out as HostArray;
    expect(levels.dtype, what).toBe('i32');
    expect(Array.from(levels.data), `${what} bfs`).toEqual(want.bfs0);

    const labels = (await runInProcess(device, 'components', { graph, out: 'x' })).out as HostArray;
    expect(Array.from(labels.data), `${what} components`).toEqual(want.components);

    const m = await runInProcess(device, 'mst', { graph, out: 'x', 'out-weight': 'y' });
    const forest = m.out as HostArray;
    expect(forest.dtype, what).toBe('i32');
    expect(forest.shape, what).toEqual([want.mstEdges, 2]);
    for (let i = 0; i < want.mstEdges; i++) {
      const u = forest.data[2 * i] as number;
      expect(u < (forest.data[2 * i + 1] as number), `${what} row ${i} has u < v`).toBe(true);
      if (i > 0) expect((forest.data[2 * i - 2] as number) <= u, `${what} rows sorted`).toBe(true);
    }
    const total = m['out-weight'] as HostArray;
    expect(total.dtype, what).toBe('f64');
    // scipy sums float64 weights; Trident's are f32 (the stored values rounded once), summed in float64.
    expect(total.data[0] as number, `${what} mst weight`).toBeCloseTo(want.mstWeight, 2);

    if (want.apsp) {
      const dist = (await runInProcess(device, 'apsp', { graph, out: 'x' })).out as HostArray;
      const n = want.apsp.length;
      expect(dist.shape, what).toEqual([n, n]);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          const e = want.apsp[i]?.[j] ?? null;
          const g = dist.data[i * n + j] as number;
          if (e === null) expect(g, `${what} apsp (${i}, ${j})`).toBe(Number.POSITIVE_INFINITY);
          else expect(Math.abs(g - e) <= 1e-5 * Math.max(1, e), `${what} apsp (${i}, ${j}): ${g} vs ${e}`).toBe(true);
        }
      }
    }
  }
  const bip = JSON.parse(readFileSync(join(dir, 'bipartite.expect.json'), 'utf8')) as { matching: number };
  const match = (await runInProcess(device, 'matching', { graph: join(dir, 'bipartite.npz'), out: 'x' })).out as HostArray;
  expect(match.dtype).toBe('i32');
  const mates = Array.from(match.data).filter((v) => v >= 0);
  expect(new Set(mates).size, 'right vertices matched once').toBe(mates.length);
  expect(mates.length, `matching on ${backend}: scipy's maximum`).toBe(bip.matching);
}

describe('trident run graph commands', () => {
  for (const backend of TEST_BACKENDS) {
    it(`agree with scipy's answers on the committed fixtures [${backend}]`, async () => {
      const device = await createDevice({ backend, options: TEST_DEVICE_OPTIONS });
      try {
        await checkAll(device, FIXTURES, CASES);
      } finally {
        await device.destroy();
      }
    });
  }

  it('agree with scipy on .npz files scipy writes in this run (where python3 + scipy are found)', async (ctx) => {
    const made = scipyFixtures();
    if ('why' in made) {
      // CI installs python3 + scipy and requires them (.ci/run); elsewhere the committed
      // fixtures above carry the check.
      if (process.env.TRIDENT_REQUIRE_SCIPY) expect.fail(`TRIDENT_REQUIRE_SCIPY is set, but ${made.why}`);
      ctx.skip();
      return;
    }
    const { dir } = made;
    const device = await createDevice({
      backend: TEST_BACKENDS.includes('cpu') ? 'cpu' : (TEST_BACKENDS[0] as BackendKind),
      options: TEST_DEVICE_OPTIONS,
    });
    try {
      await checkAll(device, dir, CASES);
    } finally {
      await device.destroy();
    }
  });

  it('the real binary writes the outputs (mst: forest and float64 weight)', () => {
    const dir = tempDir();
    const graph = join(FIXTURES, 'coo-int-ties.npz');
    const want = JSON.parse(readFileSync(join(FIXTURES, 'coo-int-ties.expect.json'), 'utf8')) as Expect;
    const r = trident([
      'run',
      'mst',
      '--graph',
      graph,
      '--out',
      join(dir, 'f.npy'),
      '--out-weight',
      join(dir, 'w.npy'),
      '--backend',
      'cpu',
      '--workers',
      '2',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(readNpy(join(dir, 'f.npy')).shape).toEqual([want.mstEdges, 2]);
    expect(readF64(join(dir, 'w.npy'))).toBeCloseTo(want.mstWeight, 4);
  });

  it('malformed files: one line naming the file, exit 2, nothing written', () => {
    const dir = tempDir();
    const npy = (a: Uint32Array | Int32Array | Float32Array, shape?: number[]) => encodeNpy(a, shape);
    const format = Uint8Array.from(readFileSync(join(FIXTURES, 'csr-f64.npz')));
    const base = {
      'format.npy': npy(new Uint32Array(0)), // replaced below
      'shape.npy': npy(Int32Array.of(3, 3)),
      'indptr.npy': npy(Int32Array.of(0, 1, 2, 2)),
      'indices.npy': npy(Int32Array.of(1, 0)),
      'data.npy': npy(Float32Array.of(1, 1)),
    };
    // format.npy as scipy writes it: a 0-d '<U3' string.
    const header = "{'descr': '<U3', 'fortran_order': False, 'shape': (), }";
    const pad = 64 - ((10 + header.length + 1) % 64);
    const fmtHead = `${header}${' '.repeat(pad % 64)}\n`;
    const fmt = new Uint8Array(10 + fmtHead.length + 12);
    fmt.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
    new DataView(fmt.buffer).setUint16(8, fmtHead.length, true);
    fmt.set(new TextEncoder().encode(fmtHead), 10);
    new DataView(fmt.buffer).setUint32(10 + fmtHead.length, 0x63, true); // 'c'
    new DataView(fmt.buffer).setUint32(14 + fmtHead.length, 0x73, true); // 's'
    new DataView(fmt.buffer).setUint32(18 + fmtHead.length, 0x72, true); // 'r'
    base['format.npy'] = fmt;
    const zip = (members: Record<string, Uint8Array>) => zipSync(members);
    const { 'indices.npy': _drop, ...missing } = base;
    const bad: Array<[string, Uint8Array, string, string[]]> = [
      ['not-zip.npz', new TextEncoder().encode('hello'), 'not a scipy .npz file', ['components']],
      ['truncated.npz', format.subarray(0, 100), 'not a scipy .npz file', ['components']],
      ['missing.npz', zip(missing), 'missing member indices.npy', ['components']],
      ['indptr.npz', zip({ ...base, 'indptr.npy': npy(Int32Array.of(0, 1, 2)) }), 'indptr.npy has 3 entries', ['components']],
      ['range.npz', zip({ ...base, 'indices.npy': npy(Int32Array.of(1, 3)) }), 'out of range', ['components']],
      ['decreasing.npz', zip({ ...base, 'indptr.npy': npy(Int32Array.of(0, 2, 1, 2)) }), 'decreases', ['components']],
      ['nan.npz', zip({ ...base, 'data.npy': npy(Float32Array.of(1, Number.NaN)) }), 'NaN', ['mst']],
      [
        'dup.npz',
        zip({ ...base, 'indptr.npy': npy(Int32Array.of(0, 2, 2, 2)), 'indices.npy': npy(Int32Array.of(1, 1)) }),
        'more than once',
        ['mst', 'apsp'],
      ],
      ['negative.npz', zip({ ...base, 'data.npy': npy(Float32Array.of(1, -2)) }), 'negative', ['apsp']],
      ['rect.npz', zip({ ...base, 'shape.npy': npy(Int32Array.of(3, 4)) }), 'not square', ['bfs', 'components', 'mst', 'apsp']],
    ];
    // int64 indices beyond 32 bits.
    const big = encodeNpy(Int32Array.of(1, 0, 0, 1)).slice();
    const head = new TextDecoder('latin1').decode(big.subarray(0, 64)).replace("'<i4'", "'<i8'").replace('(4,)', '(2,)');
    for (let i = 0; i < head.length; i++) big[i] = head.charCodeAt(i);
    bad.push(['int64.npz', zip({ ...base, 'indices.npy': big }), 'does not fit 32 bits', ['components']]);
    for (const [name, bytes, message, commands] of bad) {
      const file = join(dir, name);
      writeFileSync(file, bytes);
      for (const command of commands) {
        const values: RunValues = { graph: file, out: join(dir, 'x.npy'), ...(command === 'bfs' ? { source: '0' } : {}) };
        let error: unknown;
        try {
          (ALGORITHMS[command] as AlgorithmCli).prepare(values);
        } catch (e) {
          error = e;
        }
        const { code, line } = describeError(error);
        expect(code, `${name} ${command}: ${String(error)}`).toBe(2);
        expect(line, name).toContain(file);
        expect(line, name).toContain(message);
      }
    }
    // Through the real binary: one line on stderr, exit 2, no output file.
    for (const name of ['not-zip.npz', 'dup.npz']) {
      const out = join(dir, `${name}.out.npy`);
      const r = trident(['run', 'mst', '--graph', join(dir, name), '--out', out, '--backend', 'cpu']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toContain(join(dir, name));
      expect(existsSync(out), `${name}: nothing written`).toBe(false);
    }
    expect(() => (ALGORITHMS.bfs as AlgorithmCli).prepare({ graph: join(FIXTURES, 'csr-f64.npz'), source: '100000', out: 'x' })).toThrow(
      /--source/,
    );
  });
});
