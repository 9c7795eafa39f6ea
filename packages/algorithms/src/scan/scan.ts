/**
 * scan (Dulle 2016; Wenke 2013; Zervudakis 2018): inclusive and exclusive prefix sums over u32, i32
 * and f32, any length. Three formulations, chosen from `device.caps`:
 *
 * Single pass (scan-lookback.ts): a chained scan with decoupled look-back and the
 * look-back fallback, one dispatch, 2n element moves. Chosen where the device has
 * workgroups, atomic add and atomic load/store, and subgroups at least
 * LOOKBACK_MIN_WINDOW wide (the look-back reads one subgroup-wide window of
 * predecessors per round trip; narrower windows fall behind the tiles).
 *
 * Chunked (devices with 'serial-workgroups': a CPU): one contiguous chunk per
 * worker (reduce's chunk plan). Pass 1 sums each chunk (reduce's chunk kernel);
 * pass 2 gives each chunk its carry-in (the earlier chunks' sums, in order) and
 * scans the chunk in one sequential loop. Two dispatches, about 3n element moves,
 * no workgroup memory. Inputs whose serial scan costs a few dispatches at most
 * (SCAN_CHUNKED, by `caps.dispatchCostMicros`) skip pass 1: one chunk, one
 * dispatch of one workgroup, 2n element moves.
 *
 * Reduce-then-scan (the other workgroup devices: software adapters): contiguous tiles, one tile per workgroup (tile count sized from
 * `caps.concurrency`). Pass 1 sums each tile; the tile sums are scanned
 * recursively (exclusive) by the same code; pass 2 scans each tile chunk by chunk
 * (16 consecutive elements per invocation, a workgroup scan of the per-invocation
 * totals — subgroup scans first where 'subgroup' exists — and a running carry),
 * starting from the tile's carry-in. About 3n element moves.
 *
 * Gather (devices without workgroups: WebGL2; scan-gather.ts): a blocked scan whose
 * invocations loop over blocks of consecutive elements (block length from a tuning
 * table by the cost of a pass), block sums scanned recursively: about
 * 2 log_block n passes instead of Hillis–Steele's log2 n.
 */
import {
  type Buffer,
  type BufferDType,
  buffer,
  type Device,
  defineKernel,
  InvalidArgumentError,
  min,
  select,
  uniform,
  type Val,
  type Var,
  vec,
  vecType,
} from '@trident/core';
import { blockSize, cachedKernel, checkBuffer, dispatchGroups, scratch, strideWorkgroups, unsupported, workgroupScan } from '../common.ts';
import { capableFamily, chooseFamily, type Formulation } from '../plan.ts';
import { chunkKernel, chunkPlan, chunkSumDepth } from '../reduce/reduce.ts';
import { gatherScanSumDepth, recordGatherBlockScan } from './scan-gather.ts';
import {
  type LookbackTuning,
  lookbackPreferred,
  lookbackRuns,
  lookbackSumDepth,
  lookbackTuning,
  recordLookbackScan,
} from './scan-lookback.ts';
import * as TUNING from './tuning.ts';

const DTYPES: readonly BufferDType[] = ['u32', 'i32', 'f32'];
/** Consecutive elements per invocation in the block scan. */
const ITEMS = 16;
/** vec4 loads per invocation and chunk (ITEMS / 4): several loads in flight per barrier round. */
const VECS = ITEMS / 4;

export interface ScanOptions<D extends BufferDType = BufferDType> {
  /** Exclusive scan (out[0] = 0, out[i] = x[0] + … + x[i-1]); default inclusive. */
  readonly exclusive?: boolean;
  /** Where to write the result (same dtype and length as the input); a new buffer otherwise. */
  readonly output?: Buffer<D>;
}

type Num = 'u32' | 'i32' | 'f32';

// ---------- workgroup formulation ----------

interface TilePlan {
  readonly wg: number;
  /** Elements per chunk (wg * ITEMS). */
  readonly chunk: number;
  /** Elements per tile (a multiple of chunk). */
  readonly tile: number;
  readonly tiles: number;
  readonly width: 1 | 4;
  readonly subgroups: boolean;
}

function tilePlan(device: Device, n: number): TilePlan {
  const wg = blockSize(device.caps, 8);
  const chunk = wg * ITEMS;
  const chunks = Math.max(1, Math.ceil(n / chunk));
  // Many more tiles than resident workgroups: each tile's chunks run one after the
  // other (barriers in between), so parallelism across tiles hides their latency.
  const want = 8 * strideWorkgroups(device.caps, n, wg, ITEMS * 32);
  const tile = Math.ceil(chunks / want) * chunk;
  return {
    wg,
    chunk,
    tile,
    tiles: Math.max(1, Math.ceil(n / tile)),
    width: n % 4 === 0 ? 4 : 1,
    subgroups: device.caps.features.has('subgroup'),
  };
}

/** The ITEMS consecutive elements starting at element `first` (zeros past the end). */
function loadItems<D extends Num>(
  src: { load(i: Val<'u32'>): Val<D> | Val<`vec4<${D}>`> },
  first: Val<'u32'>,
  width: 1 | 4,
): Array<Val<D>> {
  const out: Array<Val<D>> = [];
  if (width === 4) {
    const v4 = first.shr(2);
    for (let q = 0; q < VECS; q++) {
      const v = src.load(q === 0 ? v4 : v4.add(q)) as Val<`vec4<${D}>`>;
      out.push(...([v.x, v.y, v.z, v.w] as unknown as Array<Val<D>>));
    }
    return out;
  }
  for (let j = 0; j < ITEMS; j++) out.push(src.load(j === 0 ? first : first.add(j)) as Val<D>);
  return out;
}

/** Pairwise sum of a list. */
function pairwiseSum(xs: Array<Val<Num>>): Val<Num> {
  let level = xs;
  while (level.length > 1) {
    const next: Array<Val<Num>> = [];
    for (let i = 0; i < level.length; i += 2)
      next.push(level[i + 1] ? (level[i] as Val<Num>).add(level[i + 1] as never) : (level[i] as Val<Num>));
    level = next;
  }
  return level[0] as Val<Num>;
}

/** Pass 1: sums[t] = sum of tile t. */
function tileSumKernel(dtype: Num, width: 1 | 4, wg: number, subgroups: boolean) {
  return cachedKernel(`scan-sum:${dtype}:${width}:${wg}:${subgroups}`, () =>
    defineKernel({
      name: `scan_tile_sums_${dtype}_v${width}`,
      workgroupSize: wg,
      params: { src: buffer(dtype, 'read', { vector: width }), sums: buffer(dtype, 'write'), n: uniform('u32'), tile: uniform('u32') },
      body: ({ src, sums, n, tile }, k) => {
        const start = k.let(k.workgroupIndex.mul(tile), 'start');
        const end = k.let(select(start.add(tile).lt(n), start.add(tile), n), 'end');
        const acc = k.var(dtype, 0, 'acc');
        const base = k.let(start.add(k.localIndex.mul(ITEMS)), 'base');
        k.while(
          () => base.lt(end),
          () => {
            // Tiles are whole chunks, so a group never straddles a tile; past n, loads give 0.
            acc.set(acc.add(pairwiseSum(loadItems(src as never, base, width) as Array<Val<Num>>) as never));
            base.set(base.add(wg * ITEMS));
          },
        );
        const { total } = workgroupScan(k, acc as Val<Num>, wg, subgroups, k.var(dtype, 0) as Val<Num>);
        k.if(k.localIndex.eq(0), () => sums.store(k.workgroupIndex, total as never));
      },
    }),
  );
}

/** Pass 2: scans each tile starting from carries[t] (exclusive scan of tile sums; ignored with one tile). */
function tileScanKernel(dtype: Num, width: 1 | 4, wg: number, subgroups: boolean, exclusive: boolean) {
  return cachedKernel(`scan-tile:${dtype}:${width}:${wg}:${subgroups}:${exclusive}`, () =>
    defineKernel({
      name: `scan_tiles_${dtype}_v${width}${exclusive ? '_excl' : ''}`,
      workgroupSize: wg,
      params: {
        src: buffer(dtype, 'read', { vector: width }),
        dst: buffer(dtype, 'write', { vector: width }),
        carries: buffer(dtype, 'read'),
        n: uniform('u32'),
        tile: uniform('u32'),
        useCarries: uniform('u32'),
      },
      body: ({ src, dst, carries, n, tile, useCarries }, k) => {
        const start = k.let(k.workgroupIndex.mul(tile), 'start');
        const end = k.let(select(start.add(tile).lt(n), start.add(tile), n), 'end');
        const carry = k.var(dtype as Num, 0, 'carry');
        k.if(useCarries.ne(0), () => carry.set(carries.load(k.workgroupIndex) as Val<Num>));
        const chunkStart = k.let(start, 'chunk');
        k.while(
          () => chunkStart.lt(end),
          () => {
            const first = k.let(chunkStart.add(k.localIndex.mul(ITEMS)), 'first');
            const xs = loadItems(src as never, first, width) as Array<Val<Num>>;
            const x = xs.map((v, j) => k.let(v, `x${j}`) as Val<Num>);
            // Serial scan of the invocation's ITEMS elements.
            const incl: Array<Val<Num>> = [];
            let run = x[0] as Val<Num>;
            incl.push(run);
            for (let j = 1; j < ITEMS; j++) {
              run = k.let(run.add(x[j] as never), `s${j}`) as Val<Num>;
              incl.push(run);
            }
            const { exclusive: before, total } = workgroupScan(k, run, wg, subgroups, k.var(dtype, 0) as Val<Num>);
            const offset = k.let(carry.add(before as never), 'offset') as Val<Num>;
            const outs = x.map((_, j) => {
              if (exclusive) return j === 0 ? offset : offset.add(incl[j - 1] as never);
              return offset.add(incl[j] as never);
            });
            if (width === 4) {
              const v4 = first.shr(2);
              for (let q = 0; q < VECS; q++) {
                const o = outs.slice(4 * q, 4 * q + 4) as never[];
                dst.store(q === 0 ? v4 : v4.add(q), vec(dtype as 'u32', ...(o as [never, never, never, never])) as never);
              }
            } else {
              // Stores past the buffer's end are dropped (IR semantics); the tile's end is a chunk boundary or n.
              for (let j = 0; j < ITEMS; j++) dst.store(j === 0 ? first : first.add(j), outs[j] as never);
            }
            carry.set(carry.add(total as never));
            chunkStart.set(chunkStart.add(wg * ITEMS));
          },
        );
      },
    }),
  );
}

function recordBlockScan(device: Device, src: Buffer, dst: Buffer, n: number, exclusive: boolean, level: number): void {
  const dtype = src.dtype as Num;
  // Temporaries are scalar views: the vector width follows the real length only at level 0.
  const p = tilePlan(device, n);
  const width: 1 | 4 = level === 0 && src.length === n && dst.length === n ? p.width : 1;
  let carries: Buffer;
  if (p.tiles > 1) {
    const sums = scratch(device, `scan.sums${level}`, dtype, p.tiles);
    carries = scratch(device, `scan.carries${level}`, dtype, p.tiles);
    dispatchGroups(device, tileSumKernel(dtype, width, p.wg, p.subgroups), p.tiles, { src, sums, n, tile: p.tile });
    recordBlockScan(device, sums, carries, p.tiles, true, level + 1);
  } else {
    carries = scratch(device, 'scan.nocarry', dtype, 1);
  }
  dispatchGroups(device, tileScanKernel(dtype, width, p.wg, p.subgroups, exclusive), p.tiles, {
    src,
    dst,
    carries,
    n,
    tile: p.tile,
    useCarries: p.tiles > 1 ? 1 : 0,
  });
}

// ---------- public API ----------

export type ScanFormulation = 'single-pass' | 'reduce-then-scan' | 'chunked' | 'gather';

/**
 * Internal: a formulation and tuning other than the device's default, for the
 * conformance suite and benchmarks. Not a stable API.
 */
export interface ScanVariant {
  readonly formulation?: ScanFormulation;
  readonly lookback?: Partial<LookbackTuning>;
}

const SCAN_SUMMARIES: Readonly<Record<ScanFormulation, string>> = {
  'single-pass': 'single pass: chained scan with decoupled look-back',
  'reduce-then-scan': 'reduce-then-scan over workgroup tiles',
  chunked: 'per-worker chunks: chunk sums, then carries and one sequential scan per chunk',
  gather: 'blocked gather passes (block sums scanned recursively)',
};

/**
 * The formulation `scan` uses on `device` (or the one `variant` asks for, if the
 * device runs it), with the look-back tile it runs with where it is the single pass.
 */
export function scanFormulation(device: Device, variant: ScanVariant = {}): Formulation<ScanFormulation, LookbackTuning | undefined> {
  const name = scanFormulationName(device, variant);
  const family = name === 'chunked' ? 'serial' : name === 'gather' ? 'gather' : 'workgroup';
  const shape = name === 'single-pass' ? lookbackTuning(device, variant.lookback) : undefined;
  return { family, name, shape, summary: SCAN_SUMMARIES[name] };
}

function scanFormulationName(device: Device, variant: ScanVariant): ScanFormulation {
  const capable = capableFamily(device, 'scan');
  const asked = variant.formulation;
  if (asked === undefined) {
    const family = chooseFamily(device, 'scan', { families: ['serial', 'workgroup', 'gather'] });
    if (family === 'serial') return 'chunked';
    if (family === 'gather') return 'gather';
    return lookbackPreferred(device) ? 'single-pass' : 'reduce-then-scan';
  }
  if (asked === 'chunked' && !device.caps.features.has('scatter')) throw unsupported(device, 'scatter', 'scan', 'chunked');
  if (asked === 'reduce-then-scan' && capable !== 'workgroup') throw unsupported(device, 'workgroup', 'scan', 'reduce-then-scan');
  if (asked === 'single-pass' && !lookbackRuns(device)) throw unsupported(device, 'atomic-other', 'scan', 'single-pass look-back');
  return asked;
}

/**
 * Prefix sums of `input`: inclusive (out[i] = x[0] + … + x[i]) or, with
 * `exclusive: true`, exclusive (out[0] = 0). Records the work and returns the
 * output buffer (`options.output`, or a new one of the input's dtype and length).
 *
 * Semantics: u32 / i32 wrap modulo 2^32 and are bit-identical to the sequential
 * reference. f32 adds in f32 in an order set by the formulation: within a tile,
 * serially over each quad (4 consecutive elements), then, in the single pass's
 * default layout, subgroup scans across lanes, a serial sum over each subgroup's
 * rows and one subgroup's scan of the subgroups' totals (reduce-then-scan: serial
 * over each invocation's few elements, then a subgroup and Hillis–Steele workgroup
 * scan of invocation totals); across tiles, the single pass adds the look-back's
 * terms (predecessors' aggregates, one inclusive prefix or tiles the fallback
 * re-reduced, in subgroup-wide sums) in an order that depends on timing, so f32
 * results may differ between runs, always within the bound;
 * reduce-then-scan adds a running carry and an exclusive scan of tile sums in a
 * fixed order; chunked (serial-workgroup devices) adds the earlier chunks' sums in
 * order, then serially along the chunk; gather devices add serially within blocks
 * and add the scanned block sums as carries. Error bound per element:
 * |out[i] - exact| <= γ(d) · Σ_{j<=i}|x_j|, d = `scanSumDepth(device, n)` (for the
 * single pass d grows by 3 per tile: a bound on the look-back chain, see
 * scan-lookback.ts).
 * NaN and infinities propagate to every later element.
 *
 * Edge cases: n = 0 returns an empty buffer; n = 1 gives [x0] (inclusive) or [0].
 * Complexity: O(n) work; 2n element moves in one dispatch (single pass), about 3n
 * (reduce-then-scan), O(n) work in about 2 log_block(n) passes (gather devices;
 * n (block + 3) / 2 element reads). Throws
 * InvalidArgumentError for a bad input or output buffer (dtype, length, aliasing).
 */
export function scan<D extends BufferDType>(device: Device, input: Buffer<D>, options: ScanOptions<D> = {}): Buffer<D> {
  return scanVariant(device, input, options, {});
}

/** Internal: `scan` with a formulation and tuning other than the default (see ScanVariant). */
export function scanVariant<D extends BufferDType>(
  device: Device,
  input: Buffer<D>,
  options: ScanOptions<D>,
  variant: ScanVariant,
): Buffer<D> {
  checkBuffer(device, input, 'input', DTYPES);
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options', 'must be an object');
  if (options.exclusive !== undefined && typeof options.exclusive !== 'boolean') {
    throw new InvalidArgumentError('options.exclusive', `must be a boolean, got ${String(options.exclusive)}`);
  }
  const out = options.output;
  if (out !== undefined) {
    checkBuffer(device, out, 'options.output', [input.dtype]);
    if (out.length !== input.length)
      throw new InvalidArgumentError('options.output', `length ${out.length} differs from the input length ${input.length}`);
    if (out === input) throw new InvalidArgumentError('options.output', 'must not be the input buffer');
  }
  scanFormulation(device, variant); // throws UnsupportedFeatureError before anything is created
  const output = out ?? device.createBuffer(input.dtype, input.length);
  if (input.length === 0) return output;
  recordScan(device, input, output, input.length, options.exclusive === true, variant);
  return output;
}

/**
 * Internal entry for other algorithms: scans the first `n` elements of `src` into
 * `dst` (either may be longer, e.g. pooled temporaries; elements of `dst` past n
 * may be overwritten by reduce-then-scan). `src` and `dst` must be different
 * buffers: the single pass's fallback re-reads earlier tiles of `src`. No validation.
 */
export function recordScan(device: Device, src: Buffer, dst: Buffer, n: number, exclusive: boolean, variant: ScanVariant = {}): void {
  if (n === 0) return;
  const { name: formulation, shape } = scanFormulation(device, variant);
  if (shape !== undefined) recordLookbackScan(device, src, dst, n, exclusive, shape);
  else if (formulation === 'reduce-then-scan') recordBlockScan(device, src, dst, n, exclusive, 0);
  else if (formulation === 'chunked') recordChunkedScan(device, src, dst, n, exclusive);
  else recordGatherBlockScan(device, src, dst, n, exclusive);
}

/** The longest chain of f32 additions behind one output of `scan` for `n` elements on `device` (an upper bound). */
export function scanSumDepth(device: Device, n: number, variant: ScanVariant = {}): number {
  if (n <= 1) return 1;
  const formulation = scanFormulation(device, variant).name;
  if (formulation === 'gather') return gatherScanSumDepth(device, n);
  if (formulation === 'single-pass') return lookbackSumDepth(device, n, lookbackTuning(device, variant.lookback));
  if (formulation === 'chunked') {
    // One sequential pass of f32 (their scans are scalar): n - 1 additions from the carry of 0.
    if (serialScan(device, n, 1)) return n;
    // A chunk's sum (its lanes and their fold), the earlier sums in order, then the chunk's own serial scan.
    // The sums pass reads scalars or vectors depending on the source buffer's length: the longer chain of the two.
    return Math.max(
      ...[chunkPlan(device, n, false), chunkPlan(device, n)].map((plan) => plan.chunks + chunkSumDepth(plan) + plan.chunk + 1),
    );
  }
  let depth = 0;
  let m = n;
  for (;;) {
    const p = tilePlan(device, m);
    // 3 serial adds in a group, the workgroup scan, the offset and carry adds per chunk.
    depth += ITEMS + Math.ceil(Math.log2(p.wg)) + 2 + p.tile / p.chunk + 2;
    if (p.tiles <= 1) break;
    // The tile sums themselves: serial per invocation plus a tree, then their scan.
    depth += p.tile / p.chunk + 2 + Math.ceil(Math.log2(p.wg));
    m = p.tiles;
  }
  return depth;
}

// ---------- chunked formulation (serial workgroups) ----------

/**
 * dst[start..end) = the scan of src's chunk c, starting from the sum of sums[0..c).
 * Width 4 (u32 / i32 on 'simd' devices; n, chunk, start, end then count vec4s):
 * each vec4 is scanned in registers — two shifted adds, x + [0, x0, x1, x2], then
 * + [0, 0, t0, t1] — plus the carry held as a vector, and the carry becomes the
 * result's last lane broadcast: the chain from one vec4 to the next is one add and
 * one shuffle, not four dependent adds (integers only: f32 keeps its serial order).
 */
function chunkScanKernel(dtype: BufferDType, exclusive: boolean, width: 1 | 4 = 1) {
  if (width === 4 && dtype === 'f32') throw new Error('internal: the vec4 scan is for integers');
  return cachedKernel(`scan-chunk:${dtype}:${exclusive}:${width}`, () =>
    defineKernel({
      name: `scan_chunk_${exclusive ? 'exclusive' : 'inclusive'}_${dtype}${width === 4 ? '_v4' : ''}`,
      workgroupSize: 1,
      params: {
        src: buffer(dtype, 'read', { vector: width }),
        dst: buffer(dtype, 'write', { vector: width }),
        sums: buffer(dtype, 'read'),
        n: uniform('u32'),
        chunk: uniform('u32'),
      },
      body: ({ src, dst, sums, n, chunk }, k) => {
        const c = k.let(k.globalIndex, 'c');
        const start = k.let(c.mul(chunk), 'start');
        const end = k.let(min(n, start.add(chunk)), 'end');
        const carry = k.var(dtype, 0, 'carry') as Var<'u32'>;
        k.for({ from: 0, to: c }, (j) => carry.set(carry.add(sums.load(j) as Val<'u32'>)));
        if (width === 4) {
          const s = dtype as 'u32';
          const carries = k.var(vecType(dtype, 4) as 'vec4<u32>', vec(s, carry, carry, carry, carry), 'carries');
          // One vec4: its own prefix sums (off the carry chain), then the carry added; the
          // chain from one vec4 to the next is one vector add.
          const scanVec4 = (at: Val<'u32'>, tag: string) => {
            const x = k.let(src.load(at) as unknown as Val<'vec4<u32>'>, `x${tag}`);
            const shifted = k.let(x.add(vec(s, 0, x.x, x.y, x.z)), `shifted${tag}`);
            const local = k.let(shifted.add(vec(s, 0, 0, shifted.x, shifted.y)), `local${tag}`);
            const inclusive = k.let(local.add(carries), `inclusive${tag}`);
            dst.store(at, (exclusive ? inclusive.sub(x) : inclusive) as never);
            carries.set(carries.add(vec(s, local.w, local.w, local.w, local.w)));
          };
          const i = k.var('u32', start, 'i');
          k.while(
            () => i.add(UNROLL_VEC4 - 1).lt(end),
            () => {
              for (let u = 0; u < UNROLL_VEC4; u++) scanVec4(u === 0 ? i : i.add(u), String(u));
              i.set(i.add(UNROLL_VEC4));
            },
          );
          k.while(
            () => i.lt(end),
            () => {
              scanVec4(i, 't');
              i.set(i.add(1));
            },
          );
          return;
        }
        k.for({ from: start, to: end }, (i) => {
          const v = k.let(src.load(i) as Val<'u32'>, 'v');
          if (exclusive) {
            dst.store(i, carry as never);
            carry.set(carry.add(v));
          } else {
            carry.set(carry.add(v));
            dst.store(i, carry as never);
          }
        });
      },
    }),
  );
}

const SCAN_CHUNKED = TUNING.SCAN_CHUNKED.value;
/** vec4s the chunked scan's loop scans an iteration (fewer loop instructions per element). */
const UNROLL_VEC4 = 2;

/** Whether the chunked scan of n elements, scanned `width` at a time, runs as one sequential pass (SCAN_CHUNKED). */
function serialScan(device: Device, n: number, width: 1 | 4): boolean {
  const ns = n * SCAN_CHUNKED.serialNsPerElement[width];
  return ns <= SCAN_CHUNKED.serialDispatchCosts * device.caps.dispatchCostMicros * 1000;
}

/** The width the chunked scan's pass reads and writes: vec4 for u32 / i32 of whole vec4s on 'simd' devices. */
function scanWidth(device: Device, src: Buffer, dst: Buffer, n: number): 1 | 4 {
  const whole = src.length % 4 === 0 && dst.length % 4 === 0 && n % 4 === 0;
  return src.dtype !== 'f32' && whole && device.caps.features.has('simd') ? 4 : 1;
}

function recordChunkedScan(device: Device, src: Buffer, dst: Buffer, n: number, exclusive: boolean): void {
  const vec4s = scanWidth(device, src, dst, n);
  if (serialScan(device, n, vec4s)) {
    // One chunk: its carry-in is 0 (no sums are read), so the sums buffer is any buffer of the dtype.
    const sums = scratch(device, 'scan.chunks', src.dtype, 1);
    const m = n / vec4s;
    device.dispatch(chunkScanKernel(src.dtype, exclusive, vec4s), { invocations: 1 }, { src, dst, sums, n: m, chunk: m });
    return;
  }
  // The sums pass reads vec4s where n and src's length divide by 4 (chunks then hold whole vectors).
  const { chunks, chunk, width } = chunkPlan(device, n, src.length % 4 === 0);
  const sums = scratch(device, 'scan.chunks', src.dtype, chunks);
  device.dispatch(
    chunkKernel(src.dtype, 'sum', width),
    { invocations: chunks },
    { input: src, partials: sums, n: n / width, chunk: chunk / width },
  );
  // Chunks hold whole vec4s where the sums pass read vec4s.
  const w: 1 | 4 = width === 4 ? vec4s : 1;
  device.dispatch(chunkScanKernel(src.dtype, exclusive, w), { invocations: chunks }, { src, dst, sums, n: n / w, chunk: chunk / w });
}
