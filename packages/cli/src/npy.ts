/**
 * NumPy `.npy` reading and writing for the dtypes Trident buffers hold.
 *
 * Format (numpy/lib/format.py): the magic `\x93NUMPY`, a major and minor version
 * byte, the header length (u16 LE in v1.0, u32 LE in v2.0 and v3.0), then an
 * ASCII (v3: UTF-8) Python dict literal `{'descr': '<f4', 'fortran_order':
 * False, 'shape': (n,), }` padded with spaces and a newline so the data starts
 * on a 64-byte boundary, then the raw little-endian elements.
 *
 * Only what the CLI can feed a device is accepted: `<u4`, `<i4`, `<f4`, 1-D or
 * 2-D, C order. Everything else is an NpyError that names the file and the
 * problem, so the CLI can print it as one line.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';

export type NpyDType = 'u32' | 'i32' | 'f32';

export type NpyData = Uint32Array | Int32Array | Float32Array;

export interface NpyArray {
  readonly dtype: NpyDType;
  /** C-order shape: [n] or [rows, cols]. */
  readonly shape: readonly number[];
  readonly data: NpyData;
}

/** A malformed or unusable `.npy` file; `message` is one line: "<file>: <problem>". */
export class NpyError extends Error {
  readonly file: string;
  readonly problem: string;
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`);
    this.name = 'NpyError';
    this.file = file;
    this.problem = problem;
  }
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
const DESCR: Record<NpyDType, string> = { u32: '<u4', i32: '<i4', f32: '<f4' };
const MAX_HEADER_BYTES = 10_000;
const FROM_DESCR: Record<string, NpyDType> = { '<u4': 'u32', '<i4': 'i32', '<f4': 'f32' };

export function dtypeOfData(data: NpyData): NpyDType {
  if (data instanceof Uint32Array) return 'u32';
  if (data instanceof Int32Array) return 'i32';
  return 'f32';
}

/** What a `.npy` file's header says: enough to size (and refuse) the data before reading it. */
export interface NpyLayout {
  readonly dtype: NpyDType;
  readonly shape: readonly number[];
  /** Byte offset of the first element. */
  readonly dataStart: number;
  /** Bytes of data the shape declares (elements × 4). */
  readonly dataBytes: number;
}

/** Bytes to read to be sure of having the whole header (the prefix plus NumPy's header limit). */
export const NPY_PREFIX_BYTES = 12 + MAX_HEADER_BYTES;

/**
 * Parses the magic, version and header from the file's first bytes (`prefix`
 * may be the whole file or only its start); `file` only labels errors.
 */
export function parseNpyLayout(prefix: Uint8Array, file: string): NpyLayout {
  const fail = (problem: string): never => {
    throw new NpyError(file, problem);
  };
  if (prefix.length < 10 || MAGIC.some((b, i) => prefix[i] !== b)) fail('not a NumPy .npy file (bad magic)');
  const major = prefix[6] as number;
  const minor = prefix[7] as number;
  const view = new DataView(prefix.buffer, prefix.byteOffset, prefix.byteLength);
  if (minor !== 0 || major < 1 || major > 3) fail(`unsupported .npy format version ${major}.${minor} (1.0, 2.0 and 3.0 are read)`);
  if (major > 1 && prefix.length < 12) fail('truncated header');
  const headerStart = major === 1 ? 10 : 12;
  const headerLen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  // NumPy's reader refuses headers past max_header_size (10000) by default, to bound the parse.
  if (headerLen > MAX_HEADER_BYTES) fail(`header of ${headerLen} bytes is over the ${MAX_HEADER_BYTES}-byte limit`);
  if (headerStart + headerLen > prefix.length) fail('truncated header');
  const header = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(prefix.subarray(headerStart, headerStart + headerLen));
  const dict = parseHeader(header, fail);

  const descr = dict.descr;
  if (descr.startsWith('>')) fail(`big-endian dtype '${descr}' is not supported (use little-endian <u4, <i4 or <f4)`);
  // '=' means native order; NumPy writes '<' on little-endian hosts, but accept '=' as little-endian too since Node only runs LE here.
  const normal = descr.startsWith('=') ? `<${descr.slice(1)}` : descr;
  const dtype = FROM_DESCR[normal];
  if (dtype === undefined) return fail(`unsupported dtype '${descr}' (supported: <u4, <i4, <f4)`);
  const shape = dict.shape;
  if (shape.length === 0) fail('0-d array (a NumPy scalar) is not read: save it as a 1-element array (np.atleast_1d)');
  if (shape.length > 2) fail(`unsupported shape (${shape.join(', ')}): only 1-D or 2-D arrays are read`);
  // A 1-D array is the same bytes in either order; a 2-D one in Fortran order is transposed.
  if (dict.fortranOrder && shape.length > 1) fail('Fortran-order arrays are not supported (save with C order)');
  const count = shape.reduce((a, b) => a * b, 1);
  return { dtype, shape, dataStart: headerStart + headerLen, dataBytes: count * 4 };
}

/** The data length check: the file holds exactly the bytes its shape declares. */
function checkDataLength(layout: NpyLayout, fileBytes: number, file: string): void {
  const have = fileBytes - layout.dataStart;
  const want = layout.dataBytes;
  const shape = layout.shape.join(', ');
  if (have < want) throw new NpyError(file, `truncated data: shape (${shape}) needs ${want} bytes, the file has ${have}`);
  if (have > want) throw new NpyError(file, `${have - want} unexpected bytes after the data of shape (${shape})`);
}

function typed(dtype: NpyDType, raw: ArrayBuffer): NpyData {
  return dtype === 'u32' ? new Uint32Array(raw) : dtype === 'i32' ? new Int32Array(raw) : new Float32Array(raw);
}

/** Parses `.npy` bytes; `file` only labels errors. */
export function parseNpy(bytes: Uint8Array, file: string): NpyArray {
  const layout = parseNpyLayout(bytes, file);
  checkDataLength(layout, bytes.length, file);
  // Copy into a fresh buffer so the array is aligned and owned whatever the header
  // length was (and not a view of Node's shared Buffer pool, whose slice() does not copy).
  const copy = new Uint8Array(layout.dataBytes);
  copy.set(bytes.subarray(layout.dataStart, layout.dataStart + layout.dataBytes));
  return { dtype: layout.dtype, shape: layout.shape, data: typed(layout.dtype, copy.buffer) };
}

export interface NpyHeader {
  descr: string;
  fortranOrder: boolean;
  shape: number[];
}

/**
 * Parses the header: exactly NumPy's dict literal — the keys 'descr',
 * 'fortran_order' and 'shape', once each, with a string, True/False and a tuple
 * of non-negative integers — in any NumPy version's spacing and quoting. Anything
 * else (extra keys, expressions, nesting) is refused rather than guessed at, as
 * NumPy's own reader (ast.literal_eval plus a key check) refuses it.
 */
export function parseHeader(header: string, fail: (problem: string) => never): NpyHeader {
  let at = 0;
  const space = () => {
    while (at < header.length && /\s/.test(header[at] as string)) at++;
  };
  const notLiteral = (what: string): never => fail(`malformed header (not a plain dict literal: ${what} at offset ${at})`);
  const expect = (c: string) => {
    space();
    if (header[at] !== c) notLiteral(`expected '${c}'`);
    at++;
  };
  const string = (): string => {
    space();
    const quote = header[at];
    if (quote !== "'" && quote !== '"') return notLiteral('expected a string');
    const end = header.indexOf(quote, at + 1);
    if (end < 0) return notLiteral('unterminated string');
    const text = header.slice(at + 1, end);
    if (text.includes('\\')) notLiteral('escape in a string');
    at = end + 1;
    return text;
  };
  const word = (): string => {
    space();
    const m = /^[A-Za-z_]\w*/.exec(header.slice(at));
    if (!m) return notLiteral('expected a value');
    at += m[0].length;
    return m[0];
  };
  const tuple = (): string[] => {
    expect('(');
    const items: string[] = [];
    let comma = false;
    for (;;) {
      space();
      if (header[at] === ')') break;
      const m = /^[^,)\s]+/.exec(header.slice(at));
      if (!m) return notLiteral('expected a shape entry');
      items.push(m[0]);
      at += m[0].length;
      space();
      comma = header[at] === ',';
      if (comma) at++;
      else if (header[at] !== ')') notLiteral("expected ',' or ')'");
    }
    at++;
    // In Python `(5)` is the integer 5, not a tuple (np.load refuses it): one entry needs its comma, `(5,)`.
    if (items.length === 1 && !comma) fail(`malformed header (shape (${items[0]}) is not a tuple: a 1-D shape is written (${items[0]},))`);
    return items;
  };

  const found: Partial<NpyHeader> = {};
  expect('{');
  for (;;) {
    space();
    if (header[at] === '}') break;
    const key = string();
    expect(':');
    space();
    if (key in found) fail(`malformed header (key '${key}' given twice)`);
    if (key === 'descr') {
      // Structured dtypes have a list of fields as descr.
      if (header[at] === '[') fail('unsupported dtype (structured arrays are not supported)');
      found.descr = string();
    } else if (key === 'fortran_order') {
      const v = word();
      if (v !== 'True' && v !== 'False') fail(`malformed header (fortran_order '${v}')`);
      found.fortranOrder = v === 'True';
    } else if (key === 'shape') {
      found.shape = tuple().map((p) => {
        // Python 2 NumPy wrote long integers with an L suffix.
        const v = /^\d+L?$/.test(p) ? Number(p.replace('L', '')) : Number.NaN;
        if (!Number.isSafeInteger(v)) fail(`malformed header (shape entry '${p}')`);
        return v;
      });
    } else {
      fail(`malformed header (unexpected key '${key}')`);
    }
    space();
    if (header[at] === ',') at++;
    else if (header[at] !== '}') notLiteral("expected ',' or '}'");
  }
  at++;
  space();
  if (at < header.length) notLiteral('text after the dict');
  if (found.descr === undefined) return fail("malformed header (no 'descr')");
  if (found.fortranOrder === undefined) return fail("malformed header (no 'fortran_order')");
  if (found.shape === undefined) return fail("malformed header (no 'shape')");
  return { descr: found.descr, fortranOrder: found.fortranOrder, shape: found.shape };
}

const IO_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENAMETOOLONG: 'path too long',
};

/** One line for a failed read: the common cases in words, the rest by errno code. */
export function ioProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return (code !== undefined ? IO_PROBLEMS[code] : undefined) ?? `cannot read (${String(code ?? err)})`;
}

/** Takes `bytes` of host memory for `what` of `file`, or throws (exit 2) where the run has no room for it. */
export type ReserveHostMemory = (file: string, what: string, bytes: number) => void;

/**
 * Reads and parses a `.npy` file; I/O failures become NpyError too. The header
 * is read first: the data's length is checked against the shape from the file's
 * size, and its bytes reserved through `reserve`, before the data is read.
 */
export function readNpy(file: string, reserve?: ReserveHostMemory): NpyArray {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    throw new NpyError(file, ioProblem(err));
  }
  try {
    const st = fstatSync(fd);
    // A pipe (`<(...)`, /dev/stdin) has no size to check first: its bytes are what was sent.
    if (!st.isFile() && !st.isDirectory()) return parseNpy(readFileSync(fd), file);
    const size = st.size;
    const prefix = new Uint8Array(Math.min(size, NPY_PREFIX_BYTES));
    readFully(fd, prefix, 0, file);
    const layout = parseNpyLayout(prefix, file);
    checkDataLength(layout, size, file);
    reserve?.(file, `shape (${layout.shape.join(', ')})`, layout.dataBytes);
    const data = new Uint8Array(layout.dataBytes);
    readFully(fd, data, layout.dataStart, file);
    return { dtype: layout.dtype, shape: layout.shape, data: typed(layout.dtype, data.buffer) };
  } finally {
    closeSync(fd);
  }
}

function readFully(fd: number, into: Uint8Array, position: number, file: string): void {
  for (let at = 0; at < into.length; ) {
    let n: number;
    try {
      n = readSync(fd, into, at, Math.min(into.length - at, 1 << 30), position + at);
    } catch (err) {
      throw new NpyError(file, ioProblem(err));
    }
    if (n === 0) throw new NpyError(file, 'truncated data (the file shrank while it was read)');
    at += n;
  }
}

/** Serialises an array as `.npy` (v1.0, or v2.0 if the header outgrows 64 KiB). */
export function encodeNpy(data: NpyData | Float64Array, shape: readonly number[] = [data.length]): Uint8Array {
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== data.length) throw new RangeError(`shape (${shape.join(', ')}) does not hold ${data.length} elements`);
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  const descr = data instanceof Float64Array ? '<f8' : DESCR[dtypeOfData(data)];
  const dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  let version = 1;
  let prefix = 10;
  // Pad with spaces and end with '\n' so the data starts on a 64-byte boundary (NumPy >= 1.x convention).
  let total = Math.ceil((prefix + dict.length + 1) / 64) * 64;
  if (total - prefix > 0xffff) {
    version = 2;
    prefix = 12;
    total = Math.ceil((prefix + dict.length + 1) / 64) * 64;
  }
  const headerLen = total - prefix;
  const header = dict.padEnd(headerLen - 1, ' ') + '\n';
  const out = new Uint8Array(total + data.byteLength);
  out.set(MAGIC, 0);
  out[6] = version;
  out[7] = 0;
  const view = new DataView(out.buffer);
  if (version === 1) view.setUint16(8, headerLen, true);
  else view.setUint32(8, headerLen, true);
  for (let i = 0; i < header.length; i++) out[prefix + i] = header.charCodeAt(i);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), total);
  return out;
}
