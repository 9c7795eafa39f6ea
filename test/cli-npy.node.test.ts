/**
 * .npy reading and writing, and the CLI's handling of malformed input: every
 * case exits with code 2, prints one line naming the file and the problem, and
 * writes no output file. Headers are held to NumPy's own rules: versions 1.0,
 * 2.0, 3.0; exactly the three keys of a plain dict literal; at most 10000 bytes.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeNpy, ioProblem, NpyError, parseNpy, readNpy } from '../packages/cli/src/npy.ts';
import { tempDir, trident } from './cli-helpers.ts';

/**
 * A .npy file with a hand-written header dict, padded as NumPy pads it (to `pad`
 * bytes of header when given). Version 3.0 headers are UTF-8, the others latin-1.
 */
function npyWithHeader(dict: string, payload: Uint8Array, version = 1, minor = 0, pad?: number): Uint8Array {
  const prefix = version === 1 ? 10 : 12;
  const text = version === 3 ? new TextEncoder().encode(dict) : Uint8Array.from(dict, (c) => c.charCodeAt(0));
  const headerLen = pad ?? Math.ceil((prefix + text.length + 1) / 64) * 64 - prefix;
  const out = new Uint8Array(prefix + headerLen + payload.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, minor]);
  const view = new DataView(out.buffer);
  if (version === 1) view.setUint16(8, headerLen, true);
  else view.setUint32(8, headerLen, true);
  out.fill(0x20, prefix, prefix + headerLen - 1);
  out.set(text, prefix);
  out[prefix + headerLen - 1] = 0x0a;
  out.set(payload, prefix + headerLen);
  return out;
}

const bytesOf = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

describe('npy round trip', () => {
  it('writes and reads <u4, <i4, <f4 1-D and (n, 4) f32, bit for bit', () => {
    const cases = [
      { data: new Uint32Array([0, 1, 0xffffffff, 123456789]), shape: [4] },
      { data: new Int32Array([-0x80000000, -1, 0, 0x7fffffff, 5]), shape: [5] },
      { data: new Float32Array([0, -0, Number.NaN, Number.POSITIVE_INFINITY, -1.5, 3.4e38, 1e-45, 2]), shape: [2, 4] },
      { data: new Float32Array(0), shape: [0] },
    ];
    for (const c of cases) {
      const back = parseNpy(encodeNpy(c.data, c.shape), 'mem.npy');
      expect(back.shape).toEqual(c.shape);
      expect(back.data.constructor).toBe(c.data.constructor);
      expect([...bytesOf(back.data)]).toEqual([...bytesOf(c.data)]);
    }
  });

  it('aligns the data to 64 bytes and writes a header NumPy accepts', () => {
    const bytes = encodeNpy(new Float32Array([1, 2, 3]));
    const headerLen = new DataView(bytes.buffer).getUint16(8, true);
    expect((10 + headerLen) % 64).toBe(0);
    const header = new TextDecoder().decode(bytes.subarray(10, 10 + headerLen));
    expect(header).toMatch(/^\{'descr': '<f4', 'fortran_order': False, 'shape': \(3,\), \} *\n$/);
  });

  it('reads v2.0 headers and NumPy-style spacing variants', () => {
    const payload = bytesOf(new Int32Array([7, -8, 9]));
    const a = parseNpy(npyWithHeader("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", payload, 2), 'v2.npy');
    expect([...a.data]).toEqual([7, -8, 9]);
    const b = parseNpy(npyWithHeader('{"descr":"<i4","fortran_order":False,"shape":(3,)}', payload), 'tight.npy');
    expect([...b.data]).toEqual([7, -8, 9]);
    // A 1-D array is the same bytes in either order, so fortran_order True is harmless there.
    const c = parseNpy(npyWithHeader("{'descr': '<i4', 'fortran_order': True, 'shape': (3,), }", payload), 'f1d.npy');
    expect([...c.data]).toEqual([7, -8, 9]);
  });

  it('reads v3.0 (UTF-8 header) and Python 2 long shape entries', () => {
    const payload = bytesOf(new Float32Array([1.5, -2]));
    const a = parseNpy(npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", payload, 3), 'v3.npy');
    expect([...a.data]).toEqual([1.5, -2]);
    const b = parseNpy(npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }", payload), 'py2.npy');
    expect(b.shape).toEqual([2]);
  });

  it('reads files from disk (Node Buffer pooling does not leak into the data)', () => {
    const dir = tempDir();
    const file = join(dir, 'small.npy');
    writeFileSync(file, encodeNpy(new Uint32Array([5, 6, 7])));
    const a = readNpy(file);
    expect(a.data.length).toBe(3);
    expect([...a.data]).toEqual([5, 6, 7]);
  });
});

const f32payload = bytesOf(new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]));
const good = npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }", f32payload);

/** Malformed inputs: bytes, and the problem the message must name. */
const MALFORMED: ReadonlyArray<{ name: string; bytes: Uint8Array; problem: RegExp }> = [
  { name: 'bad magic', bytes: Uint8Array.from([...good].map((b, i) => (i === 1 ? 0x58 : b))), problem: /bad magic/ },
  { name: 'not npy at all', bytes: new TextEncoder().encode('x,y\n1,2\n'), problem: /bad magic/ },
  {
    name: 'unsupported dtype',
    bytes: npyWithHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", f32payload),
    problem: /unsupported dtype '<f8'/,
  },
  {
    name: 'big-endian',
    bytes: npyWithHeader("{'descr': '>u4', 'fortran_order': False, 'shape': (8,), }", f32payload),
    problem: /big-endian/,
  },
  {
    name: 'fortran order',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 4), }", f32payload),
    problem: /Fortran-order/,
  },
  {
    name: 'truncated data',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (9,), }", f32payload),
    problem: /truncated data: shape \(9\) needs 36 bytes, the file has 32/,
  },
  { name: 'truncated header', bytes: good.subarray(0, 40), problem: /truncated header/ },
  {
    name: 'trailing bytes',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }", f32payload),
    problem: /4 unexpected bytes after the data/,
  },
  {
    name: 'wrong shape (2-D where 1-D is needed)',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", f32payload),
    problem: /wrong shape \(2, 4\): expected a 1-D array/,
  },
  {
    name: 'malformed header',
    bytes: npyWithHeader("{'descr': '<f4', 'shape': (8,), }", f32payload),
    problem: /no 'fortran_order'/,
  },
  {
    name: 'unknown format version 4.0',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }", f32payload, 4),
    problem: /unsupported \.npy format version 4\.0/,
  },
  {
    name: 'unknown minor version 1.1',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }", f32payload, 1, 1),
    problem: /unsupported \.npy format version 1\.1/,
  },
  {
    name: 'fortran order in a v2.0 file',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (4, 2), }", f32payload, 2),
    problem: /Fortran-order/,
  },
  {
    name: '0-d array',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", f32payload.subarray(0, 4)),
    problem: /0-d array/,
  },
  {
    name: '3-d array',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2), }", f32payload),
    problem: /unsupported shape \(2, 2, 2\)/,
  },
  {
    name: 'header lies about the shape (2 x 3 for 8 elements)',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f32payload),
    problem: /8 unexpected bytes after the data of shape \(2, 3\)/,
  },
  {
    name: 'header lies about the shape (2^32 elements)',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296,), }", f32payload),
    problem: /truncated data: shape \(4294967296\) needs 17179869184 bytes, the file has 32/,
  },
  {
    name: 'oversized header (v2.0, 1 MiB of padding)',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }", f32payload, 2, 0, 1 << 20),
    problem: /header of 1048576 bytes is over the 10000-byte limit/,
  },
  {
    name: 'header length past the end of the file',
    bytes: (() => {
      const b = good.slice();
      new DataView(b.buffer).setUint16(8, 9000, true);
      return b;
    })(),
    problem: /truncated header/,
  },
  {
    name: 'header with an extra key',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (8,), 'x': 1}", f32payload),
    problem: /unexpected key 'x'/,
  },
  {
    name: 'header with an expression for the shape',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2*4,), }", f32payload),
    problem: /shape entry '2\*4'/,
  },
  {
    name: 'header that is a call, not a dict literal',
    bytes: npyWithHeader("dict(descr='<f4', fortran_order=False, shape=(8,))", f32payload),
    problem: /not a plain dict literal: expected '\{'/,
  },
  {
    name: 'header with text after the dict',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (8,), } or 1", f32payload),
    problem: /not a plain dict literal: text after the dict/,
  },
  {
    name: 'header with a key given twice',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (8,), 'descr': '<u4'}", f32payload),
    problem: /key 'descr' given twice/,
  },
  {
    name: 'header with a non-boolean fortran_order',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': 0, 'shape': (8,), }", f32payload),
    problem: /not a plain dict literal: expected a value/,
  },
  {
    name: 'header dict never closed',
    bytes: npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (8,), ", f32payload),
    problem: /not a plain dict literal/,
  },
];

describe('malformed .npy input to trident run', () => {
  it('parseNpy throws NpyError naming the file', () => {
    expect(() => parseNpy(MALFORMED[0]?.bytes as Uint8Array, 'x.npy')).toThrow(NpyError);
    expect(() => parseNpy(MALFORMED[0]?.bytes as Uint8Array, 'x.npy')).toThrow(/^x\.npy: /);
  });

  for (const c of MALFORMED) {
    it(`${c.name}: exit 2, one line naming the file, no output`, () => {
      const dir = tempDir();
      const input = join(dir, 'input.npy');
      const out = join(dir, 'out.npy');
      writeFileSync(input, c.bytes);
      const r = trident(['run', 'zcopy', '--backend', 'cpu', '--workers', '1', '--in', input, '--out', out]);
      expect(r.code).toBe(2);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(input);
      expect(lines[0]).toMatch(c.problem);
      expect(existsSync(out)).toBe(false);
    });
  }

  it('a missing input file: exit 2 naming it', () => {
    const dir = tempDir();
    const r = trident(['run', 'zcopy', '--in', join(dir, 'nope.npy'), '--out', join(dir, 'o.npy')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/nope\.npy: no such file$/);
    expect(existsSync(join(dir, 'o.npy'))).toBe(false);
  });

  it('a directory as input: exit 2 naming it', () => {
    const dir = tempDir();
    const r = trident(['run', 'zcopy', '--in', dir, '--out', join(dir, 'o.npy')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`trident run: ${dir}: is a directory`);
    expect(existsSync(join(dir, 'o.npy'))).toBe(false);
  });

  it('an unreadable input path (a file used as a directory): exit 2 naming it', () => {
    const dir = tempDir();
    const file = join(dir, 'plain.npy');
    writeFileSync(file, good);
    const input = join(file, 'x.npy');
    const r = trident(['run', 'zcopy', '--in', input, '--out', join(dir, 'o.npy')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`trident run: ${input}: a part of the path is not a directory`);
  });

  it('read errors are named by kind (unit: permission denied cannot be staged as root)', () => {
    const err = (code: string) => Object.assign(new Error(code), { code });
    expect(ioProblem(err('EACCES'))).toBe('permission denied');
    expect(ioProblem(err('EIO'))).toBe('cannot read (EIO)');
  });

  it('a usage error (missing --out): exit 2, nothing written', () => {
    const dir = tempDir();
    const input = join(dir, 'x.npy');
    writeFileSync(input, good);
    const r = trident(['run', 'zcopy', '--in', input]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/--out is required/);
  });
});
