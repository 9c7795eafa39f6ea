/**
 * Small hostile inputs to `trident run`, each a one-line exit 2 naming the
 * problem, before a device is made and with nothing written: negative numbers
 * for options (read as values, then refused by range, not "ambiguous"), too
 * many workers, min / max of an empty array (NumPy raises; the sum of nothing
 * is 0), a header shape that is not a tuple, a 2-D data.npy in a sparse
 * matrix, a non-integer matrix shape. The command's own entry point runs
 * in-process (a child costs seconds each); the exit code and stderr are what
 * the binary would give.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { zipSync } from 'fflate';
import { describe, expect, it, vi } from 'vitest';
import { parse } from '../packages/cli/src/args.ts';
import { main } from '../packages/cli/src/main.ts';
import { encodeNpy, NpyError, parseNpy, readNpy } from '../packages/cli/src/npy.ts';
import { ALGORITHMS, RUN_OPTIONS } from '../packages/cli/src/run/algorithms.ts';
import { npyWithHeader, tempDir } from './cli-helpers.ts';

const GRAPH = fileURLToPath(new URL('./fixtures/graph/csr-f64.npz', import.meta.url));

/** `trident <args>` in-process: the exit code and what went to stderr. */
async function run(args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk);
    return true;
  });
  try {
    return { code: await main(args), stderr };
  } finally {
    spy.mockRestore();
  }
}

/** Expects exit 2 with exactly `line` on stderr (so no device was made: that would print a line first), and no output. */
async function refused(args: string[], line: string, out?: string): Promise<void> {
  const r = await run(args);
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toBe(`trident run: ${line}\n`);
  if (out !== undefined) expect(existsSync(out), 'nothing written').toBe(false);
}

/** format.npy as scipy writes it: a 0-d '<U3' string. */
function formatMember(format: 'csr' | 'coo'): Uint8Array {
  const text = new Uint8Array(12);
  for (let i = 0; i < 3; i++) new DataView(text.buffer).setUint32(4 * i, format.charCodeAt(i), true);
  return npyWithHeader("{'descr': '<U3', 'fortran_order': False, 'shape': (), }", text);
}

describe('trident run: small hostile inputs', () => {
  it('negative numbers are option values, refused by range with the range named', async () => {
    const dir = tempDir();
    const keys = join(dir, 'k.npy');
    writeFileSync(keys, encodeNpy(Uint32Array.of(1, 2)));
    const bodies = join(dir, 'b.npy');
    writeFileSync(bodies, encodeNpy(new Float32Array(8), [2, 4]));
    const out = join(dir, 'o.npy');
    await refused(['run', 'histogram', '--bins', '-3', '--in', keys, '--out', out], "--bins: expected a positive integer, got '-3'", out);
    await refused(
      ['run', 'nbody', '--in', bodies, '--steps', '-1', '--dt', '0.1', '--out', out],
      "--steps: expected an integer >= 0, got '-1'",
      out,
    );
    await refused(
      ['run', 'bfs', '--graph', GRAPH, '--source', '-1', '--out', out],
      "--source: expected a vertex id (an integer >= 0), got '-1'",
      out,
    );
    // A negative value where one is valid is taken as the value (leapfrog backwards in time).
    expect(parse(['nbody', '--dt', '-0.5', '--softening', '-.5', '--steps=-2'], RUN_OPTIONS, true).values).toMatchObject({
      dt: '-0.5',
      softening: '-.5',
      steps: '-2',
    });
    // Not a number: still an option, so a missing value is still reported as such.
    expect(() => parse(['zcopy', '--in', '--out', 'x'], RUN_OPTIONS, true)).toThrow(/argument is ambiguous/);
  });

  it('--workers is bounded by the logical CPUs', async () => {
    const dir = tempDir();
    const keys = join(dir, 'k.npy');
    writeFileSync(keys, encodeNpy(Uint32Array.of(3, 1, 2)));
    const cpus = availableParallelism();
    await refused(
      ['run', 'sort', '--workers', String(cpus + 1), '--in', keys, '--out', join(dir, 'o.npy')],
      `--workers: at most ${cpus} (the logical CPUs here), got ${cpus + 1}`,
    );
    await refused(
      ['run', 'sort', '--workers', '64', '--in', keys, '--out', join(dir, 'o.npy')],
      `--workers: at most ${cpus} (the logical CPUs here), got 64`,
    );
  });

  it('min / max of an empty array: exit 2; the sum of nothing is 0', async () => {
    const dir = tempDir();
    const empty = join(dir, 'e.npy');
    writeFileSync(empty, encodeNpy(new Float32Array(0)));
    const out = join(dir, 'r.npy');
    for (const op of ['min', 'max']) {
      await refused(
        ['run', 'reduce', '--op', op, '--in', empty, '--out', out],
        `${empty}: ${op} of an empty array is undefined (sum of nothing is 0)`,
        out,
      );
    }
    const r = await run(['run', 'reduce', '--op', 'sum', '--backend', 'cpu', '--workers', '1', '--in', empty, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect([...readNpy(out).data]).toEqual([0]);
  });

  it('a header shape (5) is not a tuple (np.load refuses it); (5,) is', async () => {
    const dir = tempDir();
    const data = new Uint8Array(new Uint32Array(5).buffer);
    const bad = join(dir, 'not-a-tuple.npy');
    writeFileSync(bad, npyWithHeader("{'descr': '<u4', 'fortran_order': False, 'shape': (5), }", data));
    expect(() => parseNpy(readFileSync(bad), bad)).toThrow(NpyError);
    await refused(
      ['run', 'zcopy', '--in', bad, '--out', join(dir, 'o.npy')],
      `${bad}: malformed header (shape (5) is not a tuple: a 1-D shape is written (5,))`,
      join(dir, 'o.npy'),
    );
    const good = npyWithHeader("{'descr': '<u4', 'fortran_order': False, 'shape': (5,), }", data);
    expect(parseNpy(good, 'good.npy').shape).toEqual([5]);
    const pair = npyWithHeader("{'descr': '<u4', 'fortran_order': False, 'shape': (5, 1), }", data);
    expect(parseNpy(pair, 'pair.npy').shape).toEqual([5, 1]);
  });

  it('a 2-D data.npy in a CSR .npz: exit 2; a float shape (1.5, 1.5) in a COO .npz: exit 2 before a device', async () => {
    const dir = tempDir();
    const csr = join(dir, 'data-2d.npz');
    writeFileSync(
      csr,
      zipSync({
        'format.npy': formatMember('csr'),
        'shape.npy': encodeNpy(Int32Array.of(2, 2)),
        'indptr.npy': encodeNpy(Int32Array.of(0, 1, 2)),
        'indices.npy': encodeNpy(Int32Array.of(1, 0)),
        'data.npy': encodeNpy(Float32Array.of(1, 1), [2, 1]),
      }),
    );
    const out = join(dir, 'labels.npy');
    await refused(['run', 'components', '--graph', csr, '--out', out], `${csr}: data.npy: expected a 1-D array, got shape (2, 1)`, out);
    const coo = join(dir, 'float-shape.npz');
    const shape = new Float64Array([1.5, 1.5]);
    writeFileSync(
      coo,
      zipSync({
        'format.npy': formatMember('coo'),
        'shape.npy': npyWithHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", new Uint8Array(shape.buffer)),
        'row.npy': encodeNpy(Int32Array.of(0)),
        'col.npy': encodeNpy(Int32Array.of(1)),
      }),
    );
    await refused(['run', 'components', '--graph', coo, '--out', out], `${coo}: shape.npy: expected integers, got f8 (1.5, 1.5)`, out);
    // It is found by the header pass the command runs before it makes a device (commands/run.ts).
    expect(() => ALGORITHMS.components?.declare?.({ graph: coo, out })).toThrow(/shape\.npy: expected integers/);
  });
});
