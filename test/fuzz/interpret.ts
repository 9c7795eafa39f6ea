/**
 * The fuzzer's reference: an interpreter of the kernel IR written from the
 * semantics in packages/core/src/ir/nodes.ts, independent of every code
 * generator (the CPU backend's JavaScript included).
 *
 * Floats carry an error bound: a correctly rounded operation (add, sub, mul,
 * conversions, min/max, floor...) on exact operands is exact on every backend;
 * division, sqrt, fma and subgroup sums get WGSL's accuracy bounds (2.5 ulp for
 * division, sqrt inherited from 1/inverseSqrt, fma fused or not, sums in any
 * order); a result in the subnormal range may be flushed to zero. Bounds
 * propagate through later operations. A chain of f32 adds/subs, or of muls/divs,
 * may be regrouped by the shader compiler (WGSL "Reassociation and Fusion", GLSL ES
 * "Evaluation of Expressions"): its bound covers every grouping (docs/kernels.md). A value whose bits no longer follow from
 * the bounds (a conversion to an integer or a comparison that the error could
 * flip, a bitcast of an inexact float, an infinity or NaN, which GPUs need not
 * honour) becomes unknown and is not compared. A branch, loop or store index
 * that depends on an unknown value makes the case undecidable: it is skipped.
 *
 * Workgroups run in lockstep over the top-level statements, which is exact for
 * the cases the generator makes (no races by construction); subgroups are runs
 * of `subgroupSize` consecutive local indices.
 */
import { containsBarrier, type Expr, type Stmt } from 'trident';
import type { FuzzCase } from './generate.ts';

/**
 * A chain of f32 additions and subtractions, summarised by what bounds every grouping of it:
 * its operand count, exact sum, sum of magnitudes (errors included), summed operand errors,
 * and, when every operand is exact, the coarsest power of two all of them are multiples of.
 */
interface SumChain {
  readonly k: number;
  readonly total: number;
  readonly mag: number;
  readonly err: number;
  readonly grid: number | undefined;
}

/**
 * A chain of f32 multiplications and divisions: operand count, divisions, exact value, bounds
 * on the magnitude of any partial product (`hi`, `lo`: every subset of the operands), the
 * product of the operands' relative widenings (1 + error / magnitude), whether an operand is an
 * exact zero, and the significand bits of exact operands (Infinity once one is inexact).
 */
interface ProdChain {
  readonly k: number;
  readonly divs: number;
  readonly value: number;
  readonly hi: number;
  readonly lo: number;
  readonly rel: number;
  readonly zero: boolean;
  readonly bits: number;
}

/**
 * One component: value, error bound (f32 only), known, and whether the sign of a zero is uncertain.
 * An f32 sum or product also keeps a summary of its chain (`sum`, `prod`), which a shader
 * compiler may regroup: its bound then covers every grouping (see `regroupedSum`).
 */
interface Sc {
  v: number;
  e: number;
  k: boolean;
  z?: boolean;
  sum?: SumChain;
  prod?: ProdChain;
}
type Val = Sc[];

export class Undecidable extends Error {}

const UNKNOWN: Sc = { v: 0, e: 0, k: false };
const MIN_NORMAL = 2 ** -126;
const f32buf = new Float32Array(1);
const u32buf = new Uint32Array(f32buf.buffer);
const i32buf = new Int32Array(f32buf.buffer);

export function ulp(x: number): number {
  const a = Math.abs(Math.fround(x));
  if (!Number.isFinite(a)) return Number.POSITIVE_INFINITY;
  if (a < MIN_NORMAL) return 2 ** -149;
  f32buf[0] = a;
  const exp = (u32buf[0] as number) >>> 23;
  return 2 ** (exp - 127 - 23);
}

function scalarOf(t: string): string {
  return t.startsWith('vec') ? t.slice(5, -1) : t;
}

/** An f32 value read from memory: exactly these bits. */
function stored(v: number): Sc {
  return { v: Math.fround(v), e: 0, k: true };
}

/** An f32 constant: a -0 constant may lose its sign too (SwiftShader gave +0 for bitcast<i32>(-0 held in a variable), fuzz seed 2248). */
function constantF32(v: number): Sc {
  return Object.is(v, -0) ? { v: -0, e: 0, k: true, z: true } : stored(v);
}

/**
 * An f32 result: rounded, unknown if not finite, widened where a subnormal may be
 * flushed. A zero result's sign is uncertain: WGSL lets implementations ignore
 * the sign of a zero (SwiftShader gave +0 for 16777216 * -0, fuzz seed 1104).
 */
function f32(v: number, e: number, z = false): Sc {
  const r = Math.fround(v);
  if (!Number.isFinite(r) || !Number.isFinite(e)) return UNKNOWN;
  let err = e;
  let zs = z || r === 0;
  if (r !== 0 && Math.abs(r) < MIN_NORMAL) {
    err = Math.max(err, MIN_NORMAL);
    zs = true;
  }
  return zs ? { v: r, e: err, k: true, z: true } : { v: r, e: err, k: true };
}

function wrap(type: string, x: number): number {
  return type === 'u32' ? x >>> 0 : type === 'i32' ? x | 0 : x;
}

function int(type: string, v: number): Sc {
  return { v: wrap(type, v), e: 0, k: true };
}

function convertFromF32(type: string, x: number): number {
  if (Number.isNaN(x)) return 0;
  const t = Math.trunc(x);
  if (type === 'u32') return Math.min(Math.max(t, 0), 0xffffffff);
  return Math.min(Math.max(t, -0x80000000), 0x7fffffff);
}

function bitsOfF32(type: string, x: number): number {
  f32buf[0] = x;
  return type === 'u32' ? (u32buf[0] as number) : (i32buf[0] as number);
}

function f32OfBits(x: number): number {
  u32buf[0] = x >>> 0;
  return f32buf[0] as number;
}

/** u32/i32 binary semantics of nodes.ts. */
function intBinary(fn: string, type: string, a: number, b: number): number {
  const signed = type === 'i32';
  switch (fn) {
    case 'add':
      return wrap(type, a + b);
    case 'sub':
      return wrap(type, a - b);
    case 'mul':
      return wrap(type, Math.imul(a, b));
    case 'div':
      if (b === 0) return a;
      if (signed && a === -0x80000000 && b === -1) return a;
      return wrap(type, Math.trunc(a / b));
    case 'rem':
      if (b === 0) return 0;
      if (signed && a === -0x80000000 && b === -1) return 0;
      return wrap(type, a - b * Math.trunc(a / b));
    case 'and':
      return wrap(type, a & b);
    case 'or':
      return wrap(type, a | b);
    case 'xor':
      return wrap(type, a ^ b);
    case 'shl':
      return wrap(type, a << (b % 32));
    case 'shr':
      return signed ? a >> (b % 32) : a >>> (b % 32);
    default:
      throw new Error(`intBinary ${fn}`);
  }
}

function compareExact(fn: string, a: number, b: number): boolean {
  switch (fn) {
    case 'eq':
      return a === b;
    case 'ne':
      return a !== b;
    case 'lt':
      return a < b;
    case 'le':
      return a <= b;
    case 'gt':
      return a > b;
    case 'ge':
      return a >= b;
    default:
      throw new Error(`compare ${fn}`);
  }
}

/** A float comparison decided by the error bounds, or unknown where they overlap. */
function compareF32(fn: string, a: Sc, b: Sc): Sc {
  const exact = compareExact(fn, a.v, b.v);
  if (a.e === 0 && b.e === 0) return { v: exact ? 1 : 0, e: 0, k: true };
  const slack = a.e + b.e;
  const d = a.v - b.v;
  if (Math.abs(d) > slack) return { v: exact ? 1 : 0, e: 0, k: true };
  return UNKNOWN;
}

function f32Binary(fn: string, a: Sc, b: Sc): Sc {
  const exact = a.e === 0 && b.e === 0;
  switch (fn) {
    case 'add':
    case 'sub': {
      const r = fn === 'add' ? a.v + b.v : a.v - b.v;
      const inOrder = f32(r, exact ? 0 : a.e + b.e + ulp(Math.abs(r) + a.e + b.e));
      return regroupedSum(inOrder, joinSums(sumOf(a), fn === 'add' ? sumOf(b) : negSum(sumOf(b))));
    }
    case 'mul': {
      const r = a.v * b.v;
      const e = Math.abs(a.v) * b.e + Math.abs(b.v) * a.e + a.e * b.e;
      return regroupedProduct(f32(r, exact ? 0 : e + ulp(Math.abs(r) + e)), prodOf(a), prodOf(b));
    }
    case 'div': {
      const ab = Math.abs(b.v);
      if (ab - b.e < MIN_NORMAL || ab + b.e > 2 ** 126) return UNKNOWN;
      const q = a.v / b.v;
      const prop = (a.e + Math.abs(q) * b.e) / (ab - b.e);
      const inOrder = f32(q, 2.5 * ulp(Math.abs(q) + prop) + prop + (exact ? 0 : ulp(Math.abs(q) + prop)));
      const divisor = invProd(prodOf(b));
      return divisor ? regroupedProduct(inOrder, prodOf(a), divisor) : UNKNOWN;
    }
    default:
      throw new Error(`f32Binary ${fn}`);
  }
}

// ---------- regrouping (WGSL "Reassociation and Fusion"; GLSL ES "Evaluation of Expressions") ----------

/** The f32 significand of a nonzero finite f32 `v` without its trailing zeros, and the power of two of its last set bit. */
function significand(v: number): { m: number; lsb: number } {
  f32buf[0] = v;
  const bits = u32buf[0] as number;
  const exp = (bits >>> 23) & 0xff;
  const frac = bits & 0x7fffff;
  const m = exp === 0 ? frac : frac | 0x800000;
  const tz = 31 - Math.clz32(m & -m);
  return { m: m >>> tz, lsb: 2 ** ((exp === 0 ? 1 : exp) - 150 + tz) };
}

function sumOf(x: Sc): SumChain {
  if (x.sum) return x.sum;
  const grid = x.e > 0 ? undefined : x.v === 0 ? Number.POSITIVE_INFINITY : significand(x.v).lsb;
  return { k: 1, total: x.v, mag: Math.abs(x.v) + x.e, err: x.e, grid };
}

function negSum(c: SumChain): SumChain {
  return { ...c, total: -c.total };
}

function joinSums(a: SumChain, b: SumChain): SumChain {
  const grid = a.grid === undefined || b.grid === undefined ? undefined : Math.min(a.grid, b.grid);
  return { k: a.k + b.k, total: a.total + b.total, mag: a.mag + b.mag, err: a.err + b.err, grid };
}

/** The negation of an f32 value: exact, so its chain stays regroupable with the sign flipped. */
function negF32(x: Sc): Sc {
  const r = f32(-x.v, x.e, x.z);
  if (!r.k) return r;
  if (x.sum) return { ...r, sum: negSum(x.sum) };
  if (x.prod) return { ...r, prod: { ...x.prod, value: -x.prod.value } };
  return r;
}

/**
 * A sum of a chain of f32 adds and subs (through variables too: shader compilers see SSA
 * values, not statements), held to what every grouping of it can give. WGSL lets an
 * implementation reassociate ("Reassociation and Fusion"); GLSL ES takes addition as
 * associative ("Evaluation of Expressions"). Any grouping of k operands rounds k-1 partial
 * sums, none larger than the sum of the magnitudes, so each rounding is within one ulp of that
 * (the rounding mode is unspecified: up or down) or is a subnormal flushed to zero. Exact only
 * when every partial sum is representable: exact operands on a common grid, within 2^24 steps.
 */
function regroupedSum(inOrder: Sc, c: SumChain): Sc {
  if (!inOrder.k) return inOrder;
  if (c.k <= 2) return { ...inOrder, sum: c };
  const mag = c.mag * (1 + 2 ** -20);
  // A grouping may overflow where the written order does not.
  if (!Number.isFinite(Math.fround(mag))) return UNKNOWN;
  if (c.grid !== undefined && c.grid >= MIN_NORMAL && c.mag < 2 ** 24 * c.grid) return { ...f32(c.total, 0), sum: c };
  const r = f32(c.total, c.err + (c.k - 1) * (ulp(mag) + MIN_NORMAL) + ulp(c.total), true);
  return r.k ? { ...r, sum: c } : r;
}

/** Relative error of one f32 multiplication (unspecified rounding: under one ulp) and of one division (2.5 ulp, then rounded). */
const MUL_REL = 2 ** -23;
const DIV_REL = 3.5 * 2 ** -23;

function prodOf(x: Sc): ProdChain {
  if (x.prod) return x.prod;
  const a = Math.abs(x.v);
  const zero = x.v === 0 && x.e === 0;
  const bits = x.e > 0 ? Number.POSITIVE_INFINITY : zero ? 0 : Math.ceil(Math.log2(significand(x.v).m + 1));
  if (zero) return { k: 1, divs: 0, value: 0, hi: 1, lo: 1, rel: 1, zero, bits };
  // An operand that may be zero has no relative bound (rel Infinity: the chain's value becomes unknown).
  const rel = a - x.e > 0 ? (a + x.e) / a : Number.POSITIVE_INFINITY;
  return { k: 1, divs: 0, value: x.v, hi: Math.max(a + x.e, 1), lo: Math.min(a - x.e, 1), rel, zero, bits };
}

/**
 * A chain as a divisor: a / (b * c) regroups as a / b / c. Its operands' widenings invert: with
 * R = prod(1 + x_i), prod(1 / (1 - x_i)) <= 1 / (2 - R) while R < 2.
 */
function invProd(c: ProdChain): ProdChain | undefined {
  if (c.zero || c.lo <= 0 || c.rel >= 2) return undefined;
  return {
    k: c.k,
    divs: c.divs + 1,
    value: 1 / c.value,
    hi: 1 / c.lo,
    lo: 1 / c.hi,
    rel: 1 / (2 - c.rel),
    zero: false,
    bits: Number.POSITIVE_INFINITY,
  };
}

/**
 * A product of a chain of f32 muls and divs, held to what every grouping can give (WGSL's own
 * example of reassociation: (a * b) / c becoming (a / c) * b). Each of the k-1 operations adds
 * its relative error; a grouping whose partial product (any subset of the operands) may
 * overflow or reach the subnormal range makes the value unknown. Exact only for exact operands
 * without divisions whose significands together fit 24 bits.
 */
function regroupedProduct(inOrder: Sc, a: ProdChain, b: ProdChain): Sc {
  if (!inOrder.k) return inOrder;
  const c: ProdChain = {
    k: a.k + b.k,
    divs: a.divs + b.divs,
    value: a.value * b.value,
    hi: a.hi * b.hi,
    lo: a.lo * b.lo,
    rel: a.rel * b.rel,
    zero: a.zero || b.zero,
    bits: a.bits + b.bits,
  };
  if (c.k <= 2) return { ...inOrder, prod: c };
  const rel = c.rel * (1 + (c.divs > 0 ? DIV_REL : MUL_REL)) ** (c.k - 1);
  if (!Number.isFinite(rel) || c.hi * rel >= 2 ** 127 || c.lo / rel < 2 * MIN_NORMAL) return UNKNOWN;
  if (c.zero) return { ...f32(0, 0, true), prod: c };
  if (c.divs === 0 && c.bits <= 24) return { ...f32(c.value, 0), prod: c };
  const r = f32(c.value, Math.abs(c.value) * (rel - 1) + ulp(c.value), true);
  return r.k ? { ...r, prod: c } : r;
}

/** A monotone function over the error interval. */
function monotone(fn: (x: number) => number, a: Sc): Sc {
  const r = fn(a.v);
  if (a.e === 0) return f32(r, 0, a.z);
  const lo = fn(a.v - a.e);
  const hi = fn(a.v + a.e);
  return f32(r, Math.max(Math.abs(hi - r), Math.abs(r - lo)), true);
}

function minMaxF32(fn: 'min' | 'max', a: Sc, b: Sc): Sc {
  const r = fn === 'min' ? Math.min(a.v, b.v) : Math.max(a.v, b.v);
  // min(-0, +0) may be either zero on a GPU.
  const zeroSign = r === 0 && (a.v === 0 || b.v === 0) && (Object.is(a.v, -0) || Object.is(b.v, -0));
  return f32(r, Math.max(a.e, b.e), zeroSign || a.z || b.z);
}

type Builtins = {
  globalIndex: number;
  localIndex: number;
  workgroupIndex: number;
  workgroupSize: number;
  numWorkgroups: number;
  subgroupSize: number;
  subgroupInvocation: number;
};

class Inv {
  readonly env = new Map<number, Val>();
  done = false;
  readonly b: Builtins;
  constructor(b: Builtins) {
    this.b = b;
  }
}

type Signal = 'normal' | 'break' | 'continue' | 'return';

/** What each output should hold: known values to compare, unknowns to skip. */
export type Expected = Record<string, Sc[]>;

export function interpret(c: FuzzCase, subgroupSize: number): Expected {
  const ir = c.ir;
  const inputs = new Map(c.inputs.map((i) => [i.name, i]));
  const vecWidth = new Map(ir.params.map(([n, d]) => [n, d.kind === 'buffer' ? d.vector : 1]));
  const out: Expected = {};
  for (const o of c.outputs) out[o.name] = Array.from({ length: o.length }, () => ({ v: 0, e: 0, k: true }));
  const wgSize = ir.workgroupSize;

  let wgMem = new Map<number, Sc[]>();

  const evalExpr = (e: Expr, inv: Inv): Val => {
    switch (e.op) {
      case 'const': {
        const s = scalarOf(e.type);
        const vals = Array.isArray(e.value) ? e.value : [e.value];
        return vals.map((v) =>
          s === 'bool' ? { v: v ? 1 : 0, e: 0, k: true } : s === 'f32' ? constantF32(v as number) : int(s, v as number),
        );
      }
      case 'uniform':
        return [e.type === 'f32' ? constantF32(c.uniforms[e.name] as number) : int(e.type, c.uniforms[e.name] as number)];
      case 'builtin': {
        // The generator makes 1-D kernels only: the vec3 ids are not among its built-ins.
        if (!(e.name in inv.b)) throw new Error(`fuzz reference: built-in '${e.name}' is not generated`);
        return [int('u32', inv.b[e.name as keyof Builtins])];
      }
      case 'var': {
        const v = inv.env.get(e.id);
        if (!v) throw new Error(`var ${e.id} read before its let`);
        return v;
      }
      case 'length': {
        const input = inputs.get(e.buffer);
        const len = (input ? input.data.length : (c.outputs.find((o) => o.name === e.buffer)?.length ?? 0)) / (vecWidth.get(e.buffer) ?? 1);
        return [int('u32', len)];
      }
      case 'unary': {
        const a = evalExpr(e.a, inv);
        const s = scalarOf(e.type);
        return a.map((x) => {
          if (!x.k) return UNKNOWN;
          if (e.fn === 'not') return { v: x.v ? 0 : 1, e: 0, k: true };
          if (e.fn === 'bitnot') return int(s, ~x.v);
          return s === 'f32' ? negF32(x) : int(s, -x.v);
        });
      }
      case 'binary': {
        const a = evalExpr(e.a, inv);
        const b = evalExpr(e.b, inv);
        const s = scalarOf(e.a.type);
        return a.map((x, i) => {
          const y = b[i] as Sc;
          if (!x.k || !y.k) return UNKNOWN;
          if (e.type === 'bool') {
            if (s === 'f32') return compareF32(e.fn, x, y);
            if (e.fn === 'and') return { v: x.v & y.v, e: 0, k: true };
            if (e.fn === 'or') return { v: x.v | y.v, e: 0, k: true };
            return { v: compareExact(e.fn, x.v, y.v) ? 1 : 0, e: 0, k: true };
          }
          if (s === 'f32') return f32Binary(e.fn, x, y);
          return int(s, intBinary(e.fn, s, x.v, y.v));
        });
      }
      case 'call':
        return evalCall(e, inv);
      case 'select': {
        const cond = evalExpr(e.cond, inv)[0] as Sc;
        const t = evalExpr(e.ifTrue, inv);
        const f = evalExpr(e.ifFalse, inv);
        if (!cond.k) return t.map(() => UNKNOWN);
        return cond.v ? t : f;
      }
      case 'convert': {
        const a = evalExpr(e.a, inv);
        const from = scalarOf(e.a.type);
        const to = scalarOf(e.type);
        return a.map((x) => {
          if (!x.k) return UNKNOWN;
          if (to === 'f32') return f32(from === 'bool' ? x.v : x.v, 0);
          if (to === 'bool') return { v: x.v !== 0 ? 1 : 0, e: 0, k: true };
          if (from === 'f32') {
            const r = convertFromF32(to, x.v);
            if (x.e > 0 && (convertFromF32(to, x.v - x.e) !== r || convertFromF32(to, x.v + x.e) !== r)) return UNKNOWN;
            return int(to, r);
          }
          return int(to, x.v);
        });
      }
      case 'bitcast': {
        const a = evalExpr(e.a, inv);
        const from = scalarOf(e.a.type);
        const to = scalarOf(e.type);
        return a.map((x) => {
          if (!x.k) return UNKNOWN;
          if (from === 'f32') {
            if (x.e > 0 || (x.v === 0 && x.z)) return UNKNOWN;
            return int(to, bitsOfF32(to, x.v));
          }
          if (to === 'f32') {
            const f = f32OfBits(x.v);
            // NaN and infinity need not be honoured on GPUs; subnormals may flush.
            if (!Number.isFinite(f)) return UNKNOWN;
            return Math.abs(f) < MIN_NORMAL && f !== 0 ? f32(f, 0) : stored(f);
          }
          return int(to, x.v);
        });
      }
      case 'load': {
        const idx = evalExpr(e.index, inv)[0] as Sc;
        const w = vecWidth.get(e.buffer) ?? 1;
        if (!idx.k) return new Array(w).fill(UNKNOWN);
        const data = inputs.get(e.buffer)?.data;
        if (!data) throw new Error(`load from ${e.buffer}`);
        const s = scalarOf(e.type);
        const n = data.length / w;
        const i = idx.v;
        return Array.from({ length: w }, (_, j) => {
          const v = i >= 0 && i < n ? (data[i * w + j] as number) : 0;
          return s === 'f32' ? stored(v) : int(s, v);
        });
      }
      case 'wgLoad': {
        const idx = evalExpr(e.index, inv)[0] as Sc;
        if (!idx.k) return [UNKNOWN];
        const mem = wgMem.get(e.array) as Sc[];
        return [idx.v >= 0 && idx.v < mem.length ? (mem[idx.v] as Sc) : { v: 0, e: 0, k: true }];
      }
      case 'wgAtomic': {
        const idx = evalExpr(e.index, inv)[0] as Sc;
        const val = evalExpr(e.value, inv)[0] as Sc;
        const mem = wgMem.get(e.array) as Sc[];
        if (e.fn === 'load') {
          if (!idx.k) return [UNKNOWN];
          return [idx.v >= 0 && idx.v < mem.length ? (mem[idx.v] as Sc) : int(e.type, 0)];
        }
        if (!idx.k) throw new Undecidable('workgroup atomic at an unknown index');
        if (idx.v >= 0 && idx.v < mem.length) {
          const old = mem[idx.v] as Sc;
          mem[idx.v] = old.k && val.k ? int(e.type, intBinary(e.fn, e.type, old.v, val.v)) : UNKNOWN;
        }
        return [UNKNOWN]; // results are unused by construction
      }
      case 'atomic': {
        const idx = evalExpr(e.index, inv)[0] as Sc;
        const val = evalExpr(e.value, inv)[0] as Sc;
        if (!idx.k) throw new Undecidable('atomic at an unknown index');
        const mem = out[e.buffer] as Sc[];
        if (idx.v >= 0 && idx.v < mem.length) {
          const old = mem[idx.v] as Sc;
          let r: number;
          if (e.fn === 'min' || e.fn === 'max') r = e.fn === 'min' ? Math.min(old.v, val.v) : Math.max(old.v, val.v);
          else r = intBinary(e.fn, e.type, old.v, val.v);
          mem[idx.v] = old.k && val.k ? int(e.type, r) : UNKNOWN;
        }
        return [UNKNOWN];
      }
      case 'construct':
        return e.args.flatMap((a) => evalExpr(a, inv));
      case 'extract':
        return [evalExpr(e.a, inv)[e.component] as Sc];
      case 'subgroup':
        throw new Error('subgroup operations are evaluated by the lockstep loop');
      default:
        throw new Error(`expr ${(e as Expr).op}`);
    }
  };

  const evalCall = (e: Extract<Expr, { op: 'call' }>, inv: Inv): Val => {
    const args = e.args.map((a) => evalExpr(a, inv));
    const s = scalarOf(e.type);
    const first = args[0] as Val;
    return first.map((_, i) => {
      const xs = args.map((a) => a[i] as Sc);
      if (xs.some((x) => !x.k)) return UNKNOWN;
      const [a, b, c2] = xs as [Sc, Sc, Sc];
      if (s !== 'f32') {
        switch (e.fn) {
          case 'abs':
            return int(s, s === 'i32' ? Math.abs(a.v) : a.v);
          case 'min':
            return int(s, Math.min(a.v, b.v));
          case 'max':
            return int(s, Math.max(a.v, b.v));
          case 'clamp':
            return int(s, Math.min(Math.max(a.v, b.v), c2.v));
          case 'countOneBits': {
            let n = 0;
            for (let x = a.v >>> 0; x; x >>>= 1) n += x & 1;
            return int(s, n);
          }
          default:
            throw new Error(`int call ${e.fn}`);
        }
      }
      switch (e.fn) {
        case 'abs':
          return f32(Math.abs(a.v), a.e, a.z);
        case 'min':
        case 'max':
          return minMaxF32(e.fn, a, b);
        case 'clamp':
          return minMaxF32('min', minMaxF32('max', a, b), c2);
        case 'floor':
          return monotone(Math.floor, a);
        case 'ceil':
          return monotone(Math.ceil, a);
        case 'trunc':
          return monotone(Math.trunc, a);
        case 'sqrt': {
          if (a.v - a.e < 0) return a.v === 0 && a.e === 0 ? f32(a.v, 0, true) : UNKNOWN;
          const r = Math.sqrt(a.v);
          const spread = a.e > 0 ? Math.max(Math.sqrt(a.v + a.e) - r, r - Math.sqrt(Math.max(0, a.v - a.e))) : 0;
          // WGSL: inherited from 1 / inverseSqrt(x): 2 ulp, then a 2.5 ulp division.
          return f32(r, spread + 5 * ulp(r + spread));
        }
        case 'fma': {
          const prod = a.v * b.v;
          const r = prod + c2.v;
          const prop = Math.abs(a.v) * b.e + Math.abs(b.v) * a.e + a.e * b.e + c2.e;
          // Fused or not: one rounding of the product more or less.
          return f32(r, prop + ulp(Math.abs(prod) + prop) + ulp(Math.abs(r) + prop));
        }
        default:
          throw new Error(`f32 call ${e.fn}`);
      }
    });
  };

  const exec = (stmts: readonly Stmt[], inv: Inv): Signal => {
    for (const s of stmts) {
      const sig = execOne(s, inv);
      if (sig !== 'normal') return sig;
    }
    return 'normal';
  };

  const execOne = (s: Stmt, inv: Inv): Signal => {
    switch (s.op) {
      case 'let':
        inv.env.set(s.id, evalExpr(s.init, inv));
        return 'normal';
      case 'assign':
        inv.env.set(s.id, evalExpr(s.value, inv));
        return 'normal';
      case 'store': {
        const idx = evalExpr(s.index, inv)[0] as Sc;
        const val = evalExpr(s.value, inv);
        if (!idx.k) throw new Undecidable('store at an unknown index');
        const mem = out[s.buffer] as Sc[];
        const w = val.length;
        if (idx.v >= 0 && idx.v < mem.length / w) for (let j = 0; j < w; j++) mem[idx.v * w + j] = val[j] as Sc;
        return 'normal';
      }
      case 'wgStore': {
        const idx = evalExpr(s.index, inv)[0] as Sc;
        const val = evalExpr(s.value, inv)[0] as Sc;
        if (!idx.k) throw new Undecidable('workgroup store at an unknown index');
        const mem = wgMem.get(s.array) as Sc[];
        if (idx.v >= 0 && idx.v < mem.length) mem[idx.v] = val;
        return 'normal';
      }
      case 'eval':
        evalExpr(s.expr, inv);
        return 'normal';
      case 'if': {
        const cond = evalExpr(s.cond, inv)[0] as Sc;
        if (!cond.k) throw new Undecidable('branch on an unknown condition');
        return exec(cond.v ? s.thenBlock : s.elseBlock, inv);
      }
      case 'loop': {
        for (let guard = 0; ; guard++) {
          if (guard > 10_000) throw new Error('runaway loop in the reference');
          const pre = exec(s.condPrelude, inv);
          if (pre !== 'normal') return pre;
          const cond = evalExpr(s.cond, inv)[0] as Sc;
          if (!cond.k) throw new Undecidable('loop on an unknown condition');
          if (!cond.v) return 'normal';
          const sig = exec(s.body, inv);
          if (sig === 'break') return 'normal';
          if (sig === 'return') return 'return';
          const up = exec(s.update, inv);
          if (up !== 'normal') return up;
        }
      }
      case 'break':
        return 'break';
      case 'continue':
        return 'continue';
      case 'return':
        return 'return';
      case 'barrier':
        return 'normal';
      default:
        throw new Error(`stmt ${(s as { op: string }).op}`);
    }
  };

  const subgroupOp = (e: Extract<Expr, { op: 'subgroup' }>, lanes: Inv[]): Val[] => {
    const vals = lanes.map((l) => evalExpr(e.a, l));
    const s = scalarOf(e.a.type);
    if (e.fn === 'ballot') {
      const known = vals.every((v) => (v[0] as Sc).k);
      const words = [0, 0, 0, 0];
      vals.forEach((v, l) => {
        if ((v[0] as Sc).v) words[l >> 5] = ((words[l >> 5] as number) | (1 << (l & 31))) >>> 0;
      });
      const res = words.map((w) => (known ? int('u32', w) : UNKNOWN));
      return lanes.map(() => res);
    }
    if (e.fn === 'broadcastFirst') return lanes.map(() => vals[0] as Val);
    if (e.fn === 'shuffle') {
      return lanes.map((l) => {
        const lane = evalExpr(e.lane as Expr, l)[0] as Sc;
        if (!lane.k) return [UNKNOWN];
        return vals[lane.v] ?? [UNKNOWN];
      });
    }
    const combine = (xs: Sc[]): Sc => {
      if (xs.some((x) => !x.k)) return UNKNOWN;
      if (xs.length === 0) return s === 'f32' ? f32(0, 0) : int(s, 0);
      if (e.fn === 'min' || e.fn === 'max') {
        if (s === 'f32') return xs.reduce((p, q) => minMaxF32(e.fn as 'min' | 'max', p, q));
        return int(s, e.fn === 'min' ? Math.min(...xs.map((x) => x.v)) : Math.max(...xs.map((x) => x.v)));
      }
      if (s !== 'f32')
        return int(
          s,
          xs.reduce((p, x) => p + x.v, 0),
        );
      // Any summation order: the error grows by one rounding of the running magnitude per addition.
      const sum = xs.reduce((p, x) => p + x.v, 0);
      const mag = xs.reduce((p, x) => p + Math.abs(x.v) + x.e, 0);
      const e0 = xs.reduce((p, x) => p + x.e, 0);
      const exact = xs.every((x) => x.e === 0) && xs.length === 1;
      return f32(sum, exact ? 0 : e0 + (xs.length - 1) * ulp(mag) + ulp(mag), true);
    };
    return lanes.map((_, l) => {
      const from = e.fn === 'inclusiveAdd' ? vals.slice(0, l + 1) : e.fn === 'exclusiveAdd' ? vals.slice(0, l) : vals;
      return [combine(from.map((v) => v[0] as Sc))];
    });
  };

  /** A condition every live invocation of the workgroup must agree on (it guards barriers). */
  const uniformCond = (e: Expr, invs: Inv[]): boolean => {
    const live = invs.filter((i) => !i.done);
    const conds = live.map((i) => evalExpr(e, i)[0] as Sc);
    if (conds.some((x) => !x.k)) throw new Undecidable('barrier under an unknown condition');
    const first = conds[0]?.v ?? 0;
    if (conds.some((x) => x.v !== first)) throw new Error('generator bug: barrier under non-uniform control flow');
    return first !== 0;
  };

  /**
   * Runs statements for a whole workgroup: statement by statement across the
   * invocations, and, for an `if` or loop holding a barrier, its (uniform)
   * control flow once for all, with the same lockstep inside.
   */
  const lockstep = (stmts: readonly Stmt[], invs: Inv[]): void => {
    for (const s of stmts) {
      if (s.op === 'let' && s.init.op === 'subgroup') {
        for (let first = 0; first < wgSize; first += subgroupSize) {
          const lanes = invs.slice(first, first + subgroupSize);
          const results = subgroupOp(s.init, lanes);
          lanes.forEach((l, i) => {
            l.env.set(s.id, results[i] as Val);
          });
        }
        continue;
      }
      if (s.op === 'if' && containsBarrier([s])) {
        lockstep(uniformCond(s.cond, invs) ? s.thenBlock : s.elseBlock, invs);
        continue;
      }
      if (s.op === 'loop' && containsBarrier([s])) {
        for (let guard = 0; ; guard++) {
          if (guard > 10_000) throw new Error('runaway loop in the reference');
          lockstep(s.condPrelude, invs);
          if (!uniformCond(s.cond, invs)) break;
          lockstep(s.body, invs);
          lockstep(s.update, invs);
        }
        continue;
      }
      for (const inv of invs) {
        if (inv.done) continue;
        const sig = execOne(s, inv);
        if (sig === 'return') inv.done = true;
      }
    }
  };

  for (let g = 0; g < c.workgroups; g++) {
    wgMem = new Map(ir.workgroupArrays.map((a) => [a.id, Array.from({ length: a.length }, () => int(a.type, 0))]));
    const invs = Array.from(
      { length: wgSize },
      (_, l) =>
        new Inv({
          globalIndex: g * wgSize + l,
          localIndex: l,
          workgroupIndex: g,
          workgroupSize: wgSize,
          numWorkgroups: c.workgroups,
          subgroupSize,
          subgroupInvocation: l % subgroupSize,
        }),
    );
    lockstep(ir.body, invs);
  }
  return out;
}

/** Whether `got` (the device's element) agrees with the expectation; unknowns agree with anything. */
export function agrees(dtype: 'u32' | 'i32' | 'f32', want: Sc, got: number): boolean {
  if (!want.k) return true;
  if (dtype !== 'f32') return got === want.v;
  if (want.e === 0) return got === want.v;
  return Math.abs(got - want.v) <= want.e;
}

export function describeExpected(want: Sc): string {
  if (!want.k) return 'unknown';
  return want.e > 0 ? `${want.v} ± ${want.e}` : String(want.v);
}
