/**
 * Reading `scipy.sparse.save_npz` files: a zip (deflated by default, stored with
 * `compressed=False`) of `.npy` members — `format.npy` ('csr', 'csc' or 'coo'),
 * `shape.npy` (2 integers), then `indptr.npy` + `indices.npy` (CSR / CSC) or
 * `row.npy` + `col.npy` (COO), and `data.npy` (absent: pattern-only, weight 1).
 * The zip is read with fflate: listed from its central directory, then the
 * members the format uses streamed through fflate's inflater in small steps,
 * each member bounded by its own `.npy` header (parsed with npy.ts's parser)
 * and reserved from the host budget before it is held; members not used are
 * never inflated.
 *
 * Every matrix comes out as CSR with u32 indices and f32 weights. Index arrays
 * may be int32 or int64 (values beyond 32 bits are an error), data any integer,
 * float or bool dtype. Anything malformed is an InputError naming the file: not a
 * zip, a missing member, a shape / indptr / length mismatch, an index out of
 * range, a NaN weight.
 */
import { readFileSync, statSync } from 'node:fs';
import { Unzip, type UnzipFile, UnzipInflate, unzipSync } from 'fflate';
import { InputError } from './errors.ts';
import { ioProblem, parseHeader, type ReserveHostMemory } from './npy.ts';
import { HostBudget } from './run/host-budget.ts';

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

/** One member's elements, read on demand from its bytes (no copy of the whole array as JS numbers). */
interface Numeric {
  readonly shape: readonly number[];
  readonly count: number;
  /** The dtype without its byte-order mark: 'i4', 'f8', 'b1', ... */
  readonly kind: string;
  get(i: number): number | bigint;
}

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

const NPY_MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];
/** The prefix and NumPy's header limit: a member whose header is not complete by then is refused. */
const MAX_PREFIX = 12 + 10_000;

interface MemberLayout {
  readonly descr: string;
  readonly fortranOrder: boolean;
  readonly shape: readonly number[];
  readonly dataStart: number;
  /** The member's whole size as its header declares it: header plus elements × item size. */
  readonly totalBytes: number;
}

/** Parses a member's `.npy` header from its first bytes; undefined until enough bytes have arrived. */
function memberLayout(bytes: Uint8Array, fail: (problem: string) => never): MemberLayout | undefined {
  if (bytes.length < 10) return undefined;
  if (NPY_MAGIC.some((b, i) => bytes[i] !== b)) fail('not a .npy member');
  const major = bytes[6] as number;
  if (major < 1 || major > 3) fail(`unsupported .npy version ${major}`);
  const start = major === 1 ? 10 : 12;
  if (bytes.length < start) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  if (start + len > MAX_PREFIX) fail(`header of ${len} bytes is over the 10000-byte limit`);
  if (bytes.length < start + len) return undefined;
  const header = parseHeader(new TextDecoder('latin1').decode(bytes.subarray(start, start + len)), fail);
  const text = /^[<|]([US])(\d+)$/.exec(header.descr);
  const item = text ? Number(text[2]) * (text[1] === 'U' ? 4 : 1) : READERS[header.descr.replace(/^=/, '<')]?.[0];
  if (item === undefined) fail(`unsupported dtype '${header.descr}'`);
  const count = header.shape.reduce((a, b) => a * b, 1);
  return { ...header, dataStart: start + len, totalBytes: start + len + count * (item as number) };
}

/**
 * Collects one member's inflated bytes, bounded by what its own `.npy` header
 * declares: the header is parsed from the first bytes, the declared size is
 * reserved from the host budget, then exactly that many bytes are accepted. A
 * member that inflates past its declared size is refused as soon as it does.
 */
class MemberSink {
  private staged: Uint8Array = new Uint8Array(0);
  private out: Uint8Array | undefined;
  private at = 0;
  done = false;
  layout: MemberLayout | undefined;

  constructor(
    private readonly file: string,
    readonly name: string,
    private readonly reserve: ReserveHostMemory,
    private readonly checkLayout: LayoutCheck,
  ) {}

  private fail(problem: string): never {
    throw new InputError(this.file, `${this.name}: ${problem}`);
  }

  push(chunk: Uint8Array): void {
    if (this.out === undefined) {
      const joined = new Uint8Array(this.staged.length + chunk.length);
      joined.set(this.staged);
      joined.set(chunk, this.staged.length);
      this.staged = joined;
      this.layout = memberLayout(this.staged, (p) => this.fail(p));
      if (this.layout === undefined) {
        if (this.staged.length > MAX_PREFIX) this.fail('malformed header');
        return;
      }
      const { shape, descr, totalBytes } = this.layout;
      this.checkLayout(this.name, this.layout);
      this.reserve(this.file, `${this.name} (shape (${shape.join(', ')}), ${descr})`, totalBytes);
      this.out = new Uint8Array(totalBytes);
      chunk = this.staged;
      this.staged = new Uint8Array(0);
    }
    if (chunk.length > this.out.length - this.at) {
      this.fail(`inflates past the ${this.out.length} bytes its header declares (shape (${this.layout?.shape.join(', ')}))`);
    }
    this.out.set(chunk, this.at);
    this.at += chunk.length;
  }

  finish(): Uint8Array {
    if (this.out === undefined) return this.fail('truncated header');
    if (this.at !== this.out.length) {
      this.fail(`data length ${this.at - (this.layout?.dataStart ?? 0)} does not hold shape (${this.layout?.shape.join(', ')})`);
    }
    return this.out;
  }
}

/** Checks a member's declared shape against what is known already; throws InputError to refuse it before it is inflated. */
type LayoutCheck = (name: string, layout: MemberLayout) => void;

/** Compressed bytes handed to the unzipper at a time: one step inflates to at most ~16 MiB (deflate's 1032:1). */
const PUSH_BYTES = 16 * 1024;

/**
 * Inflates the members named in `wanted` (and no other: members the reader does
 * not use are skipped compressed), each bounded by its `.npy` header. Members
 * not in the archive are absent from the result.
 */
function readMembers(
  bytes: Uint8Array,
  file: string,
  wanted: readonly string[],
  reserve: ReserveHostMemory,
  checkLayout: LayoutCheck = () => {},
): Map<string, Uint8Array> {
  const sinks = new Map<string, MemberSink>();
  let failure: unknown;
  const unzip = new Unzip((entry: UnzipFile) => {
    if (!wanted.includes(entry.name) || sinks.has(entry.name) || failure !== undefined) return;
    const sink = new MemberSink(file, entry.name, reserve, checkLayout);
    sinks.set(entry.name, sink);
    entry.ondata = (err, chunk, final) => {
      if (failure !== undefined) return;
      try {
        if (err) throw new InputError(file, `${entry.name}: cannot inflate (${err.message})`);
        sink.push(chunk);
        if (final) sink.done = true;
      } catch (e) {
        failure = e;
        entry.terminate();
      }
    };
    try {
      entry.start();
    } catch (e) {
      failure = new InputError(file, `${entry.name}: ${(e as Error).message}`);
    }
  });
  unzip.register(UnzipInflate);
  try {
    for (let at = 0; at < bytes.length && failure === undefined; at += PUSH_BYTES) {
      unzip.push(bytes.subarray(at, at + PUSH_BYTES), at + PUSH_BYTES >= bytes.length);
    }
  } catch (err) {
    failure ??= new InputError(file, `not a scipy .npz file (zip: ${(err as Error).message})`);
  }
  if (failure !== undefined) throw failure;
  const out = new Map<string, Uint8Array>();
  for (const [name, sink] of sinks) {
    if (!sink.done) throw new InputError(file, `${name}: truncated (the archive ends inside it)`);
    out.set(name, sink.finish());
  }
  return out;
}

/** A member's elements (or, for `format.npy`, its text). */
function parseMember(bytes: Uint8Array, file: string, member: string): Numeric | string {
  const fail = (problem: string): never => {
    throw new InputError(file, `${member}: ${problem}`);
  };
  const layout = memberLayout(bytes, fail) as MemberLayout;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const data = layout.dataStart;
  // Text: format.npy holds a 0-d '<U3' (UTF-32) or '|S3' string.
  const text = /^[<|]([US])(\d+)$/.exec(layout.descr);
  if (text) {
    let s = '';
    for (let i = 0; i < Number(text[2]); i++) {
      const c = text[1] === 'U' ? view.getUint32(data + 4 * i, true) : (bytes[data + i] as number);
      if (c === 0) break;
      s += String.fromCodePoint(c);
    }
    return s;
  }
  if (layout.fortranOrder && layout.shape.length > 1) fail('Fortran-order arrays are not supported');
  const [size, get] = READERS[layout.descr.replace(/^=/, '<')] as [number, (v: DataView, o: number) => number | bigint];
  const count = layout.shape.reduce((a, b) => a * b, 1);
  return { shape: layout.shape, count, kind: layout.descr.slice(1), get: (i) => get(view, data + i * size) };
}

/** An index array as u32, checking that every value fits 32 bits and lies in [0, limit]. */
function indexArray(a: Numeric, file: string, member: string, limit: number, inclusive = false): Uint32Array {
  if (a.shape.length !== 1) throw new InputError(file, `${member}: expected a 1-D array, got shape (${a.shape.join(', ')})`);
  if (a.kind.startsWith('f')) throw new InputError(file, `${member}: indices must be integers, got dtype ${a.kind}`);
  const out = new Uint32Array(a.count);
  for (let i = 0; i < out.length; i++) {
    const raw = a.get(i);
    if (typeof raw === 'bigint' && (raw > 0x7fffffffn || raw < -0x80000000n))
      throw new InputError(file, `${member}: entry ${i} (${raw}) does not fit 32 bits`);
    const v = Number(raw);
    if (v < 0 || (inclusive ? v > limit : v >= limit))
      throw new InputError(file, `${member}: entry ${i} (${v}) is out of range [0, ${limit}${inclusive ? ']' : ')'}`);
    out[i] = v;
  }
  return out;
}

/** The members each sparse format stores (data.npy is optional: pattern-only matrices). */
const FORMAT_MEMBERS: Record<string, readonly string[]> = {
  csr: ['indptr', 'indices'],
  csc: ['indptr', 'indices'],
  coo: ['row', 'col'],
};

/** What a `save_npz` file declares, from its central directory, `format.npy` and `shape.npy` only. */
export interface SparseHeader {
  readonly format: 'csr' | 'csc' | 'coo';
  readonly rows: number;
  readonly columns: number;
}

interface OpenedArchive extends SparseHeader {
  readonly bytes: Uint8Array;
  readonly names: ReadonlySet<string>;
}

/** Reads the archive, lists its members and parses format.npy and shape.npy (nothing else is inflated). */
function openSparse(file: string, reserve: ReserveHostMemory): OpenedArchive {
  let bytes: Uint8Array;
  try {
    reserve(file, 'the archive', statSync(file).size);
    bytes = readFileSync(file);
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError(file, ioProblem(err));
  }
  // The central directory lists the members without inflating any.
  const names = new Set<string>();
  try {
    unzipSync(bytes, {
      filter: (f) => {
        names.add(f.name);
        return false;
      },
    });
  } catch (err) {
    throw new InputError(file, `not a scipy .npz file (zip: ${(err as Error).message})`);
  }
  for (const name of ['format.npy', 'shape.npy'])
    if (!names.has(name)) throw new InputError(file, `missing member ${name} (not a scipy.sparse.save_npz file?)`);
  const head = readMembers(bytes, file, ['format.npy', 'shape.npy'], reserve);
  const format = parseMember(head.get('format.npy') as Uint8Array, file, 'format.npy');
  if (typeof format !== 'string') throw new InputError(file, 'format.npy: expected a string');
  if (FORMAT_MEMBERS[format] === undefined) throw new InputError(file, `unsupported sparse format '${format}' (csr, csc or coo)`);
  const shape = parseMember(head.get('shape.npy') as Uint8Array, file, 'shape.npy');
  if (typeof shape === 'string') throw new InputError(file, 'shape.npy: expected numbers, got text');
  if (shape.shape.length !== 1 || shape.count !== 2)
    throw new InputError(file, `shape.npy: expected 2 entries, got shape (${shape.shape.join(', ')})`);
  const dims = [shape.get(0), shape.get(1)].map(Number) as [number, number];
  // scipy refuses a non-integer shape too (operator.index on each entry).
  if (!/^[iu]/.test(shape.kind)) throw new InputError(file, `shape.npy: expected integers, got ${shape.kind} (${dims.join(', ')})`);
  const [rows, columns] = dims;
  if (!(rows >= 0 && columns >= 0 && rows < 2 ** 31 - 1 && columns < 2 ** 31 - 1))
    throw new InputError(file, `shape.npy: (${rows}, ${columns}) is not a matrix shape Trident can hold`);
  return { bytes, names, format: format as SparseHeader['format'], rows, columns };
}

/** Host bytes of the CSR arrays a shape needs beyond the members: row offsets and a fill cursor per row (plus the stored offsets). */
function rowArraysBytes(h: SparseHeader): number {
  const majorCount = h.format === 'csc' ? h.columns : h.rows;
  return 8 * (h.rows + 1) + (h.format === 'coo' ? 0 : 4 * (majorCount + 1));
}

/**
 * The matrix format and shape a `save_npz` file declares, read without inflating
 * its index or data members: what the CLI checks against the host budget and
 * the device's limits before it reads the rest (InputError, exit 2, on
 * anything malformed up to there).
 */
export function readSparseHeader(file: string, budget: HostBudget = new HostBudget()): SparseHeader {
  const reserve: ReserveHostMemory = (f, what, n) => budget.take(f, what, n);
  const { format, rows, columns } = openSparse(file, reserve);
  reserve(file, `shape (${rows}, ${columns})`, rowArraysBytes({ format, rows, columns }));
  return { format, rows, columns };
}

/**
 * Reads a `save_npz` file as CSR; throws InputError (exit 2, one line) on
 * anything malformed. Memory is bounded before it is taken: the archive is
 * listed from its central directory, only the members the format uses are
 * inflated (each bounded by its own `.npy` header), and the sizes the headers
 * and the matrix shape declare are reserved from `budget` before the arrays
 * are made.
 */
export function readSparseGraph(file: string, budget: HostBudget = new HostBudget()): SparseGraph {
  const reserve: ReserveHostMemory = (f, what, n) => budget.take(f, what, n);
  const { bytes, names, format, rows, columns } = openSparse(file, reserve);
  const used = FORMAT_MEMBERS[format] as readonly string[];
  const present = (name: string, optional = false): boolean => {
    if (names.has(`${name}.npy`)) return true;
    if (optional) return false;
    throw new InputError(file, `missing member ${name}.npy (not a scipy.sparse.save_npz file?)`);
  };
  const majorCount = format === 'csc' ? columns : rows;
  reserve(file, `shape (${rows}, ${columns})`, rowArraysBytes({ format, rows, columns }));

  for (const name of used) present(name);
  const hasData = present('data', true);
  // Entry counts from the headers, before each member is inflated: indptr.npy holds one more entry than
  // the rows (CSR) or columns (CSC); every other member holds one entry per stored element.
  let perEntry: { name: string; count: number } | undefined;
  const checkLayout: LayoutCheck = (name, layout) => {
    const count = layout.shape.reduce((a, b) => a * b, 1);
    if (name === 'indptr.npy') {
      if (count !== majorCount + 1)
        throw new InputError(file, `indptr.npy has ${count} entries, the shape (${rows}, ${columns}) needs ${majorCount + 1}`);
    } else if (perEntry === undefined) {
      perEntry = { name, count };
    } else if (count !== perEntry.count) {
      throw new InputError(file, `${name} has ${count} entries, ${perEntry.name} ${perEntry.count}`);
    }
  };
  const members = readMembers(
    bytes,
    file,
    [...used, ...(hasData ? ['data'] : [])].map((n) => `${n}.npy`),
    reserve,
    checkLayout,
  );
  const member = (name: string): Numeric => {
    const v = parseMember(members.get(`${name}.npy`) as Uint8Array, file, `${name}.npy`);
    if (typeof v === 'string') throw new InputError(file, `${name}.npy: expected numbers, got text`);
    // Converted to a 4-byte-per-entry array (indices, weights), and the CSR copies of the edges.
    reserve(file, `${name}.npy (${v.count} entries)`, 12 * v.count);
    return v;
  };
  let weights: Float32Array | undefined;
  let major: Uint32Array;
  let minor: Uint32Array;
  let ptr: Uint32Array | undefined;
  if (format === 'coo') {
    major = indexArray(member('row'), file, 'row.npy', rows);
    minor = indexArray(member('col'), file, 'col.npy', columns);
    if (minor.length !== major.length) throw new InputError(file, `col.npy has ${minor.length} entries, row.npy ${major.length}`);
  } else {
    const minorCount = format === 'csr' ? columns : rows;
    minor = indexArray(member('indices'), file, 'indices.npy', minorCount);
    ptr = indexArray(member('indptr'), file, 'indptr.npy', minor.length, true);
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
  if (hasData) {
    const data = member('data');
    if (data.shape.length !== 1) throw new InputError(file, `data.npy: expected a 1-D array, got shape (${data.shape.join(', ')})`);
    if (data.count !== minor.length) throw new InputError(file, `data.npy has ${data.count} entries for ${minor.length} indices`);
    weights = new Float32Array(data.count);
    for (let i = 0; i < weights.length; i++) weights[i] = Number(data.get(i));
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
