/**
 * Small files that declare huge arrays: `trident run` sizes every input from
 * what its headers declare and refuses it (exit 2, one line) before allocating
 * it when the host's memory budget or the device's largest buffer cannot hold
 * it; `.npz` members the reader does not use are never inflated, and a member
 * is inflated only up to the size its own `.npy` header declares. The children
 * run with TRIDENT_HOST_MEMORY = 1 GiB so the outcome does not depend on the
 * machine's memory; their peak RSS is read in the child (report-max-rss.mjs).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { createDevice } from 'trident';
import { describe, expect, it } from 'vitest';
import { describeError } from '../packages/cli/src/errors.ts';
import { encodeNpy, NpyError, readNpy } from '../packages/cli/src/npy.ts';
import { ALGORITHMS, type AlgorithmCli } from '../packages/cli/src/run/algorithms.ts';
import { checkJobFitsDevice, InputTooLargeError } from '../packages/cli/src/run/device-fit.ts';
import { executeJob } from '../packages/cli/src/run/execute.ts';
import { HostBudget } from '../packages/cli/src/run/host-budget.ts';
import { npyWithHeader, tempDir, tridentMeasured, type ZipEntry, zipArchive } from './cli-helpers.ts';

const GiB = 2 ** 30;
const HUGE_SCIPY = fileURLToPath(new URL('./fixtures/cli/huge-shape-coo.npz', import.meta.url));
const ENV = { TRIDENT_HOST_MEMORY: String(GiB) };
/** A run that never holds an input in full: the CLI's own ~100 MiB plus at most one 16 MiB inflate step. */
const RSS_BOUND_MIB = 256;

/** format.npy as scipy writes it: a 0-d '<U3' string. */
function formatMember(format: 'csr' | 'coo'): Uint8Array {
  const text = new Uint8Array(12);
  for (let i = 0; i < 3; i++) new DataView(text.buffer).setUint32(4 * i, format.charCodeAt(i), true);
  return npyWithHeader("{'descr': '<U3', 'fortran_order': False, 'shape': (), }", text);
}

/** A 3-vertex path 0 - 1 - 2 as scipy's CSR members. */
function csrMembers(): Record<string, Uint8Array> {
  return {
    'format.npy': formatMember('csr'),
    'shape.npy': encodeNpy(Int32Array.of(3, 3)),
    'indptr.npy': encodeNpy(Int32Array.of(0, 1, 3, 4)),
    'indices.npy': encodeNpy(Int32Array.of(1, 0, 2, 1)),
    'data.npy': encodeNpy(Float32Array.of(1, 1, 1, 1)),
  };
}

const stored = (name: string, data: Uint8Array): ZipEntry => ({ name, method: 0, data, size: data.length, crc: crc32(data) });

/** One deflate block of 16 MiB of zeros (a full flush: blocks like it can follow one another). */
const ZEROS = new Uint8Array(16 * 2 ** 20);
const ZERO_BLOCK = deflateRawSync(ZEROS, { level: 9, finishFlush: constants.Z_FULL_FLUSH });

/** A member that inflates to `prefix` then `blocks` × 16 MiB of zeros, in a few KB per GiB. */
function zeroBomb(name: string, prefix: Uint8Array, blocks: number): ZipEntry {
  const parts = [deflateRawSync(prefix, { finishFlush: constants.Z_FULL_FLUSH })];
  let crc = crc32(prefix);
  for (let i = 0; i < blocks; i++) {
    parts.push(ZERO_BLOCK);
    crc = crc32(ZEROS, crc);
  }
  parts.push(deflateRawSync(new Uint8Array(0))); // the final, empty block
  return { name, method: 8, data: Buffer.concat(parts), size: prefix.length + blocks * ZEROS.length, crc };
}

function noTempsIn(dir: string): void {
  expect(
    readdirSync(dir).filter((f) => f.startsWith('.')),
    'no temporary file left',
  ).toEqual([]);
}

describe('trident run: inputs that declare more than the machine holds', () => {
  it('a 1 KB .npz declaring shape (2e9, 2e9): exit 2 in one line before anything is allocated, RSS bounded', async () => {
    const dir = tempDir();
    const file = join(dir, 'huge-shape.npz');
    const out = join(dir, 'labels.npy');
    const shape = new DataView(new ArrayBuffer(16));
    shape.setBigInt64(0, 2_000_000_000n, true);
    shape.setBigInt64(8, 2_000_000_000n, true);
    const members = {
      'format.npy': formatMember('coo'),
      'shape.npy': npyWithHeader("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", new Uint8Array(shape.buffer)),
      'row.npy': encodeNpy(Int32Array.of(0)),
      'col.npy': encodeNpy(Int32Array.of(1)),
      'data.npy': encodeNpy(Float32Array.of(1)),
    };
    writeFileSync(file, zipSync(members));
    expect(readFileSync(file).length).toBeLessThan(1500);
    const r = await tridentMeasured(['run', 'components', '--backend', 'cpu', '--workers', '1', '--graph', file, '--out', out], {
      env: ENV,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toMatch(/shape \(2000000000, 2000000000\) needs \d+\.\d GiB, more than the .* of host memory/);
    expect(r.stderr, 'refused before a device was made').not.toMatch(/ on cpu/);
    expect(r.maxRssMiB).toBeLessThan(RSS_BOUND_MIB);
    expect(existsSync(out)).toBe(false);
    noTempsIn(dir);
    // The refusal itself, in-process, for this file and for the committed one scipy.sparse.save_npz
    // wrote (945 bytes, COO, shape (2e9, 2e9)): from the shape alone, before any member is read.
    for (const graph of [file, HUGE_SCIPY]) {
      expect(() => (ALGORITHMS.components as AlgorithmCli).prepare({ graph, out }, new HostBudget(GiB))).toThrow(
        /shape \(2000000000, 2000000000\) needs .* of host memory/,
      );
    }
  });

  it('on a host with room for it, the same file is refused by the device limit before its members are read', async () => {
    const dir = tempDir();
    const out = join(dir, 'labels.npy');
    // A 1 TiB budget stands for a big host: the check that refuses it now is the device's largest buffer.
    const r = await tridentMeasured(['run', 'components', '--backend', 'cpu', '--workers', '1', '--graph', HUGE_SCIPY, '--out', out], {
      env: { TRIDENT_HOST_MEMORY: String(1024 * GiB) },
    });
    expect(r.code, r.stderr).toBe(2);
    // The largest buffer (the row offsets) or, where one buffer may hold them, all the graph's buffers together.
    expect(r.stderr).toMatch(
      /^trident run: .*huge-shape-coo\.npz \(2000000000 vertices\)(?: needs a buffer of 2000000001 elements|, .* need 16000000004 bytes of buffers together); this device holds at most \d+\n$/,
    );
    expect(r.maxRssMiB).toBeLessThan(RSS_BOUND_MIB);
    expect(existsSync(out)).toBe(false);
    noTempsIn(dir);
  });

  it('a 3 MB .npz with a 3 GiB member the reader does not use: the member is never inflated (exit 0, RSS bounded)', async () => {
    const dir = tempDir();
    const file = join(dir, 'junk-member.npz');
    const out = join(dir, 'labels.npy');
    const entries = [...Object.entries(csrMembers()).map(([n, d]) => stored(n, d)), zeroBomb('junk.npy', new Uint8Array(0), 192)];
    const zip = zipArchive(entries);
    expect(zip.length).toBeLessThan(4 * 2 ** 20);
    expect(entries.at(-1)?.size).toBe(3 * GiB);
    writeFileSync(file, zip);
    const r = await tridentMeasured(['run', 'components', '--backend', 'cpu', '--workers', '1', '--graph', file, '--out', out], {
      env: ENV,
    });
    expect(r.code, r.stderr).toBe(0);
    expect([...readNpy(out).data]).toEqual([0, 0, 0]);
    expect(r.maxRssMiB).toBeLessThan(RSS_BOUND_MIB);
    noTempsIn(dir);
  });

  it('a member that inflates past the size its .npy header declares is stopped there: exit 2, RSS bounded', async () => {
    const dir = tempDir();
    const file = join(dir, 'bomb.npz');
    const out = join(dir, 'labels.npy');
    const { 'data.npy': data, ...rest } = csrMembers();
    // data.npy's header declares 4 float32 (16 bytes of data); the stream goes on for 1 GiB of zeros.
    const entries = [...Object.entries(rest).map(([n, d]) => stored(n, d)), zeroBomb('data.npy', data as Uint8Array, 64)];
    writeFileSync(file, zipArchive(entries));
    writeFileSync(out, encodeNpy(Int32Array.of(7)));
    const r = await tridentMeasured(['run', 'components', '--backend', 'cpu', '--workers', '1', '--graph', file, '--out', out], {
      env: ENV,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/bomb\.npz: data\.npy: inflates past the \d+ bytes its header declares \(shape \(4\)\)/);
    expect(r.maxRssMiB).toBeLessThan(RSS_BOUND_MIB);
    expect([...readNpy(out).data], 'the old output is untouched').toEqual([7]);
    noTempsIn(dir);
  });

  it('a member header declaring more entries than the budget: refused before inflating (in-process)', () => {
    const dir = tempDir();
    const file = join(dir, 'declares-16gib.npz');
    const members = {
      ...csrMembers(),
      'indices.npy': npyWithHeader("{'descr': '<i8', 'fortran_order': False, 'shape': (2147483648,), }", new Uint8Array(16)),
    };
    writeFileSync(file, zipSync(members));
    let error: unknown;
    try {
      (ALGORITHMS.components as AlgorithmCli).prepare({ graph: file, out: 'x.npy' }, new HostBudget(GiB));
    } catch (e) {
      error = e;
    }
    const { code, line } = describeError(error);
    expect(code).toBe(2);
    expect(line).toMatch(/declares-16gib\.npz: indices\.npy \(shape \(2147483648,?\), <i8\) needs 16\.0 GiB, more than/);
  });

  it('entry counts that disagree between members are refused from the headers, before the big member is inflated', () => {
    const dir = tempDir();
    const file = join(dir, 'counts.npz');
    const { 'indices.npy': _indices, 'data.npy': data, ...rest } = csrMembers();
    // indices.npy declares 2^26 int32 (256 MiB of real zeros) where data.npy, stored before it, holds 4.
    const header = npyWithHeader("{'descr': '<i4', 'fortran_order': False, 'shape': (67108864,), }");
    // Past its first 8 blocks (128 MiB inflated, ~130 KB compressed: several of the reader's
    // 16 KiB steps) the member is not deflate at all: a reader that inflated it past its header
    // would stop with "cannot inflate" instead of the count check's message.
    const bomb = zeroBomb('indices.npy', header, 8);
    const corrupt = { ...bomb, data: Buffer.concat([bomb.data.subarray(0, bomb.data.length - 5), Buffer.alloc(64 * 1024, 0xff)]) };
    const entries = [...Object.entries(rest).map(([n, d]) => stored(n, d)), stored('data.npy', data as Uint8Array), corrupt];
    writeFileSync(file, zipArchive(entries));
    expect(() => (ALGORITHMS.components as AlgorithmCli).prepare({ graph: file, out: 'x.npy' }, new HostBudget(64 * GiB))).toThrow(
      /counts\.npz: indices\.npy has 67108864 entries, data\.npy 4$/,
    );
  });

  it('a .npy larger than the budget is refused from its header, before its data is read (in-process)', () => {
    const dir = tempDir();
    const file = join(dir, 'big.npy');
    writeFileSync(file, encodeNpy(new Uint32Array(2 ** 19))); // 2 MiB of data
    expect(() => (ALGORITHMS.zcopy as AlgorithmCli).prepare({ in: file, out: 'y.npy' }, new HostBudget(2 ** 20))).toThrow(
      /big\.npy: shape \(524288\) needs 2\.0 MiB, more than the 1\.0 MiB of host memory/,
    );
    // Within the budget it reads as before.
    expect(
      (ALGORITHMS.zcopy as AlgorithmCli).prepare({ in: file, out: 'y.npy' }, new HostBudget(4 * 2 ** 20)).spec.inputs.in?.data,
    ).toHaveLength(2 ** 19);
    expect(() => readNpy(join(dir, 'missing.npy'))).toThrow(NpyError);
  });

  it("inputs beyond the device's largest buffer: exit 2 naming the file, before any buffer is made", async () => {
    const device = await createDevice({ backend: 'cpu', options: { cpu: { workers: 1 } } });
    try {
      const max = device.caps.limits.maxBufferElements;
      const tiny = { dtype: 'u32' as const, shape: [1], data: Uint32Array.of(0) };
      // A graph whose row offsets (rows + 1 entries) cannot fit one buffer.
      const spec = { algorithm: 'components', params: { rows: max, columns: max }, inputs: { indptr: tiny, indices: tiny } };
      let error: unknown;
      try {
        await executeJob(device, spec);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InputTooLargeError);
      expect(describeError(error).code).toBe(2);
      expect(() => checkJobFitsDevice(device.caps, spec, { indptr: 'g.npz' })).toThrow(
        new RegExp(`g\\.npz \\(${max} vertices\\) needs a buffer of ${max + 1} elements; this device holds at most ${max}`),
      );
      // apsp's n x n distances are counted too.
      const n = Math.ceil(Math.sqrt(max)) + 1;
      expect(() => checkJobFitsDevice(device.caps, { ...spec, algorithm: 'apsp', params: { rows: n, columns: n } })).toThrow(
        /apsp's .* distance matrix/,
      );
    } finally {
      await device.destroy();
    }
  });
});
