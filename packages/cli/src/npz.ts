/**
 * Reading `scipy.sparse.save_npz` files: a zip (deflated by default, stored with
 * `compressed=False`) of `.npy` members — `format.npy` ('csr', 'csc' or 'coo'),
 * `shape.npy` (2 integers), then `indptr.npy` + `indices.npy` (CSR / CSC) or
 * `row.npy` + `col.npy` (COO), and `data.npy` (absent: pattern-only, weight 1).
 * The zip is read with fflate; each member's header with npy.ts's parser.
 *
 * Every matrix comes out as CSR with u32 indices and f32 weights. Index arrays
 * may be int32 or int64 (values beyond 32 bits are an error), data any integer,
 * float or bool dtype. Anything malformed is an InputError naming the file: not a
 * zip, a missing member, a shape / indptr / length mismatch, an index out of
 * range, a NaN weight.
 */
import { readFileSync } from 'node:fs';
import { unzipSync } from 'fflate';
import { InputError } from './errors.ts';
import { ioProblem, parseHeader } from './npy.ts';

export interface SparseGraph {
  readonly rows: number;
  readonly columns: number;
  readonly indptr: Uint32Array;
  readonly indices: Uint32Array;
  /** Undefined when the file has no data member (a pattern-only matrix). */
  readonly weights: Float32Array | undefined;
  /** The first (row, column) stored more than once, if any (scipy reads duplicates as their sum). */
  readonly duplicate: readonly [number, number] | undefined;
}

type Numeric = { readonly shape: number[]; readonly values: ArrayLike<number> | BigInt64Array | BigUint64Array; readonly kind: string };

const READERS: Record<string, [number, (v: DataView, o: number) => number | bigint]> = {
  '<i1': [1, (v, o) => v.getInt8(o)],
  '|i1': [1, (v, o) => v.getInt8(o)],
  '<u1': [1, (v, o) => v.getUint8(o)],
  '|u1': [1, (v, o) => v.getUint8(o)],
  '|b1': [1, (v, o) => v.getUint8(o)],
  '<i2': [2, (v, o) => v.getInt16(o, true)],
  '<u2': [2, (v, o) => v.getUint16(o, true)],
  '<i4': [4, (v, o) => v.getInt32(o, true)],
  '<u4': [4, (v, o) => v.getUint32(o, true)],
  '<i8': [8, (v, o) => v.getBigInt64(o, true)],
  '<u8': [8, (v, o) => v.getBigUint64(o, true)],
  '<f2': [2, (v, o) => halfToFloat(v.getUint16(o, true))],
  '<f4': [4, (v, o) => v.getFloat32(o, true)],
  '<f8': [8, (v, o) => v.getFloat64(o, true)],
};

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? Number.NaN : s * Number.POSITIVE_INFINITY;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/** Parses one `.npy` member into numbers (or, for `format.npy`, text). */
function parseMember(bytes: Uint8Array, file: string, member: string): Numeric | string {
  const fail = (problem: string): never => {
    throw new InputError(file, `${member}: ${problem}`);
  };
  const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];
  if (bytes.length < 10 || magic.some((b, i) => bytes[i] !== b)) fail('not a .npy member');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const major = bytes[6] as number;
  const start = major === 1 ? 10 : 12;
  if (major < 1 || major > 3 || bytes.length < start) fail(`unsupported .npy version ${major}`);
  const len = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  if (start + len > bytes.length) fail('truncated header');
  const header = parseHeader(new TextDecoder('latin1').decode(bytes.subarray(start, start + len)), fail);
  const count = header.shape.reduce((a, b) => a * b, 1);
  const data = start + len;
  // Text: format.npy holds a 0-d '<U3' (UTF-32) or '|S3' string.
  const text = /^[<|]([US])(\d+)$/.exec(header.descr);
  if (text) {
    const width = Number(text[2]) * (text[1] === 'U' ? 4 : 1);
    if (bytes.length < data + width) fail('truncated data');
    let s = '';
    for (let i = 0; i < Number(text[2]); i++) {
      const c = text[1] === 'U' ? view.getUint32(data + 4 * i, true) : (bytes[data + i] as number);
      if (c === 0) break;
      s += String.fromCodePoint(c);
    }
    return s;
  }
  const reader = READERS[header.descr.replace(/^=/, '<')];
  if (!reader) return fail(`unsupported dtype '${header.descr}'`);
  if (header.fortranOrder && header.shape.length > 1) fail('Fortran-order arrays are not supported');
  const [size, get] = reader;
  if (bytes.length - data !== count * size) fail(`data length ${bytes.length - data} does not hold shape (${header.shape.join(', ')})`);
  const out: Array<number | bigint> = new Array(count);
  for (let i = 0; i < count; i++) out[i] = get(view, data + i * size);
  const values =
    size === 8 && typeof out[0] === 'bigint' ? BigInt64Array.from(out as bigint[], (b) => BigInt.asIntN(64, b)) : (out as number[]);
  return { shape: header.shape, values, kind: header.descr.slice(1) };
}

/** An index array as u32, checking that every value fits 32 bits and lies in [0, limit]. */
function indexArray(a: Numeric, file: string, member: string, limit: number, inclusive = false): Uint32Array {
  if (a.shape.length !== 1) throw new InputError(file, `${member}: expected a 1-D array, got shape (${a.shape.join(', ')})`);
  if (a.kind.startsWith('f')) throw new InputError(file, `${member}: indices must be integers, got dtype ${a.kind}`);
  const out = new Uint32Array(a.values.length);
  for (let i = 0; i < out.length; i++) {
    const raw = a.values[i] as number | bigint;
    if (typeof raw === 'bigint' && (raw > 0x7fffffffn || raw < -0x80000000n))
      throw new InputError(file, `${member}: entry ${i} (${raw}) does not fit 32 bits`);
    const v = Number(raw);
    if (v < 0 || (inclusive ? v > limit : v >= limit))
      throw new InputError(file, `${member}: entry ${i} (${v}) is out of range [0, ${limit}${inclusive ? ']' : ')'}`);
    out[i] = v;
  }
  return out;
}

/** Reads a `save_npz` file as CSR; throws InputError (exit 2, one line) on anything malformed. */
export function readSparseGraph(file: string): SparseGraph {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new InputError(file, ioProblem(err));
  }
  let members: Record<string, Uint8Array>;
  try {
    members = unzipSync(bytes);
  } catch (err) {
    throw new InputError(file, `not a scipy .npz file (zip: ${(err as Error).message})`);
  }
  const member = (name: string, optional = false): Numeric | undefined => {
    const b = members[`${name}.npy`];
    if (!b) {
      if (optional) return undefined;
      throw new InputError(file, `missing member ${name}.npy (not a scipy.sparse.save_npz file?)`);
    }
    const v = parseMember(b, file, `${name}.npy`);
    if (typeof v === 'string') throw new InputError(file, `${name}.npy: expected numbers, got text`);
    return v;
  };
  const fmtBytes = members['format.npy'];
  if (!fmtBytes) throw new InputError(file, 'missing member format.npy (not a scipy.sparse.save_npz file?)');
  const format = parseMember(fmtBytes, file, 'format.npy');
  if (typeof format !== 'string') throw new InputError(file, 'format.npy: expected a string');
  if (!['csr', 'csc', 'coo'].includes(format)) throw new InputError(file, `unsupported sparse format '${format}' (csr, csc or coo)`);
  const shape = member('shape') as Numeric;
  if (shape.values.length !== 2) throw new InputError(file, `shape.npy: expected 2 entries, got ${shape.values.length}`);
  const [rows, columns] = Array.from(shape.values as ArrayLike<number | bigint>, Number) as [number, number];
  if (!(rows >= 0 && columns >= 0 && rows < 2 ** 31 - 1 && columns < 2 ** 31 - 1))
    throw new InputError(file, `shape.npy: (${rows}, ${columns}) is not a matrix shape Trident can hold`);
  const data = member('data', true);
  let weights: Float32Array | undefined;
  let major: Uint32Array;
  let minor: Uint32Array;
  let majorCount: number;
  let ptr: Uint32Array | undefined;
  if (format === 'coo') {
    major = indexArray(member('row') as Numeric, file, 'row.npy', rows);
    minor = indexArray(member('col') as Numeric, file, 'col.npy', columns);
    majorCount = rows;
    if (minor.length !== major.length) throw new InputError(file, `col.npy has ${minor.length} entries, row.npy ${major.length}`);
  } else {
    majorCount = format === 'csr' ? rows : columns;
    const minorCount = format === 'csr' ? columns : rows;
    minor = indexArray(member('indices') as Numeric, file, 'indices.npy', minorCount);
    ptr = indexArray(member('indptr') as Numeric, file, 'indptr.npy', minor.length, true);
    if (ptr.length !== majorCount + 1)
      throw new InputError(file, `indptr.npy has ${ptr.length} entries, the shape (${rows}, ${columns}) needs ${majorCount + 1}`);
    if (ptr[0] !== 0 || ptr[majorCount] !== minor.length)
      throw new InputError(
        file,
        `indptr.npy must run from 0 to the number of indices (${minor.length}), got ${ptr[0]} .. ${ptr[majorCount]}`,
      );
    for (let i = 0; i < majorCount; i++)
      if ((ptr[i + 1] as number) < (ptr[i] as number)) throw new InputError(file, `indptr.npy decreases at entry ${i + 1}`);
    major = new Uint32Array(minor.length);
    for (let i = 0; i < majorCount; i++) major.fill(i, ptr[i], ptr[i + 1]);
  }
  if (data) {
    if (data.values.length !== minor.length)
      throw new InputError(file, `data.npy has ${data.values.length} entries for ${minor.length} indices`);
    weights = Float32Array.from(data.values as ArrayLike<number | bigint>, Number);
    const nan = weights.findIndex(Number.isNaN);
    if (nan >= 0) throw new InputError(file, `data.npy: entry ${nan} is NaN`);
  }
  // To CSR: (row, column) pairs; CSC swaps the roles. Counting sort by row, stable.
  const rowOf = format === 'csc' ? minor : major;
  const colOf = format === 'csc' ? major : minor;
  const m = rowOf.length;
  const indptr = new Uint32Array(rows + 1);
  for (let e = 0; e < m; e++) indptr[(rowOf[e] as number) + 1] = (indptr[(rowOf[e] as number) + 1] as number) + 1;
  for (let r = 0; r < rows; r++) indptr[r + 1] = (indptr[r + 1] as number) + (indptr[r] as number);
  const fill = indptr.slice(0, rows);
  const indices = new Uint32Array(m);
  const w = weights ? new Float32Array(m) : undefined;
  for (let e = 0; e < m; e++) {
    const r = rowOf[e] as number;
    const at = fill[r] as number;
    fill[r] = at + 1;
    indices[at] = colOf[e] as number;
    if (w && weights) w[at] = weights[e] as number;
  }
  return { rows, columns, indptr, indices, weights: w, duplicate: firstDuplicate(indptr, indices) };
}

/** The first (row, column) that a row stores twice. */
function firstDuplicate(indptr: Uint32Array, indices: Uint32Array): readonly [number, number] | undefined {
  const seen = new Map<number, number>();
  for (let r = 0; r + 1 < indptr.length; r++) {
    for (let e = indptr[r] as number; e < (indptr[r + 1] as number); e++) {
      const c = indices[e] as number;
      if (seen.get(c) === r) return [r, c];
      seen.set(c, r);
    }
  }
  return undefined;
}
