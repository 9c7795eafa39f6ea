/**
 * reduce (Dulle 2016, PRAM algorithms on GPGPUs; Stephan 2019, SYCL / HC / HIP / CUDA compared): sum / min / max over u32, i32 and f32.
 *
 * Workgroup formulation (devices with 'workgroup' and 'scatter'): a grid-stride
 * kernel sized from `caps.concurrency`; each invocation folds many elements
 * (vec4 loads when the length divides by 4, eight loads in flight per iteration)
 * with the op applied during the load, then a workgroup reduction (subgroup
 * reductions first where 'subgroup' exists). Each workgroup writes one partial and
 * a second one-workgroup pass folds the partials (so f32 summation order is fixed
 * for a given device); f32 min/max alone finish with one atomic per workgroup on
 * u32 order keys (NaN the extreme that wins: see `orderKey`), then a pass that
 * turns the key back into an f32.
 *
 * Chunked formulation (devices with 'serial-workgroups': a CPU's few, fat, serial
 * workgroups): one invocation per chunk of the tuning table's size folds its
 * contiguous chunk in one sequential loop (eight accumulators), writing one partial
 * each; one invocation then folds the partials in order. Two dispatches, no
 * workgroup memory, no atomics; inputs small enough for one thread
 * (REDUCE_SERIAL, by `caps.dispatchCostMicros`) are one chunk folded straight into
 * the result: one dispatch.
 *
 * Gather formulation (gather-only devices): log-step passes, each invocation
 * combining FAN_IN consecutive elements by a pairwise tree (read as four vec4s in the
 * first pass where the length divides by 4) and writing its own output element,
 * ping-ponging between two temporaries until one value is left.
 */
import {
  type Buffer,
  type BufferDType,
  buffer,
  type Device,
  defineKernel,
  InvalidArgumentError,
  type KernelBuilder,
  max,
  min,
  select,
  uniform,
  type Val,
  type ValueType,
  type Var,
  vec,
  vecType,
} from '@trident/core';
import {
  bindingsFor,
  blockSize,
  cachedKernel,
  checkBuffer,
  checkChoice,
  dispatchGroups,
  f32ToKey,
  gatherSize,
  gridStride,
  keyToF32,
  type ReduceOp,
  scratch,
  strideWorkgroups,
  workgroupReduce,
} from '../common.ts';

import { chooseFamily, type Formulation } from '../plan.ts';
import * as TUNING from './tuning.ts';

export type { ReduceOp } from '../common.ts';

const DTYPES: readonly BufferDType[] = ['u32', 'i32', 'f32'];
const OPS: readonly ReduceOp[] = ['sum', 'min', 'max'];

const FAN_IN = TUNING.FAN_IN.value;
const UNROLL = TUNING.UNROLL.value;
/** Exported for the chunked formulations of histogram, compact, scan and radix sort, which share its chunk plan. */
export const CHUNKED = TUNING.CHUNKED.value;
const REDUCE_SERIAL = TUNING.REDUCE_SERIAL.value;

/** reduce's chunk plan: chunkPlan, or the whole input as one chunk where REDUCE_SERIAL says so. */
function reducePlan(device: Device, n: number, vectors: boolean): { chunks: number; chunk: number; width: 1 | 4 } {
  const plan = chunkPlan(device, n, vectors);
  const serialNs = n * REDUCE_SERIAL.serialNsPerElement[plan.width];
  if (serialNs <= REDUCE_SERIAL.serialDispatchCosts * device.caps.dispatchCostMicros * 1000)
    return { chunks: 1, chunk: n, width: plan.width };
  return plan;
}

export interface ReduceOptions<D extends BufferDType = BufferDType> {
  readonly op: ReduceOp;
  /** Where `reduceInto` puts the result (element 0); a new 1-element buffer otherwise. */
  readonly output?: Buffer<D>;
}

/** The type the reduction runs in: f32 min/max run on u32 order keys. */
function accType(dtype: BufferDType, op: ReduceOp): BufferDType {
  return dtype === 'f32' && op !== 'sum' ? 'u32' : dtype;
}

/**
 * f32 min / max run on u32 order keys (`f32ToKey`: -Inf < … < -0 < +0 < … < +Inf < NaN)
 * and must both return NaN when any element is NaN (IEEE 754-2019 minimum / maximum,
 * NumPy's np.min / np.max). max takes the keys as they are: NaN's (0xffc00000) is the
 * largest. min adds MIN_KEY_SHIFT modulo 2^32, which wraps NaN's key to 0, below every
 * other, and keeps the order of the rest (+Inf's key 0xff800000 becomes 0xffc00000, the
 * largest). -0 < +0 holds in both, so min(-0, +0) is -0 and max(-0, +0) is +0.
 */
const MIN_KEY_SHIFT = 0x00400000;

/** The order key of `x` for `op` (see MIN_KEY_SHIFT). */
function orderKey(x: Val<'f32'>, op: ReduceOp): Val<'u32'> {
  const key = f32ToKey(x);
  return op === 'min' ? key.add(MIN_KEY_SHIFT) : key;
}

/** The f32 of an order key for `op`: NaN comes back as the canonical quiet NaN, the identities as ±Infinity. */
function keyValue(key: Val<'u32'>, op: ReduceOp): Val<'f32'> {
  return keyToF32(op === 'min' ? key.sub(MIN_KEY_SHIFT) : key);
}

/** The identity of `op` on accumulator type `t`, as stored bits/values. */
function identity(t: BufferDType, op: ReduceOp, keys: boolean): number {
  if (op === 'sum') return 0;
  // The keys of +Inf (for min, shifted) and -Inf: every other key passes them, and they decode to ±Infinity.
  if (keys) return op === 'min' ? (0xff800000 + MIN_KEY_SHIFT) >>> 0 : 0x007fffff;
  if (t === 'u32') return op === 'min' ? 0xffffffff : 0;
  if (t === 'i32') return op === 'min' ? 0x7fffffff : -0x80000000;
  return op === 'min' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
}

function apply<T extends ValueType>(op: ReduceOp, a: Val<T>, b: Val<T>): Val<T> {
  if (op === 'sum') return a.add(b);
  return op === 'min' ? min(a, b) : max(a, b);
}

function subgroupApply<T extends ValueType>(k: KernelBuilder, op: ReduceOp, v: Val<T>): Val<T> {
  if (op === 'sum') return k.subgroupAdd(v);
  return op === 'min' ? k.subgroupMin(v) : k.subgroupMax(v);
}

/** Pairwise fold of a list (depth ceil(log2 length)). */
function pairwise<T extends ValueType>(op: ReduceOp, xs: Array<Val<T>>): Val<T> {
  let level = xs;
  while (level.length > 1) {
    const next: Array<Val<T>> = [];
    for (let i = 0; i < level.length; i += 2) {
      const a = level[i] as Val<T>;
      const b = level[i + 1];
      next.push(b ? apply(op, a, b) : a);
    }
    level = next;
  }
  return level[0] as Val<T>;
}

// ---------- workgroup formulation ----------

interface BlockPlan {
  readonly width: 1 | 4;
  readonly wg: number;
  readonly workgroups: number;
  readonly subgroups: boolean;
  /** Elements of the vector view. */
  readonly n: number;
}

function blockPlan(device: Device, length: number): BlockPlan {
  const width: 1 | 4 = length % 4 === 0 ? 4 : 1;
  const n = length / width;
  const wg = blockSize(device.caps, 16);
  const workgroups = strideWorkgroups(device.caps, n, wg, UNROLL);
  return { width, wg, workgroups, subgroups: device.caps.features.has('subgroup'), n };
}

/**
 * The main pass. mode 'atomic': lid 0 of each workgroup folds its value into
 * out[0] atomically; mode 'partial': it stores it at out[workgroupIndex].
 */
function blockKernel(dtype: BufferDType, op: ReduceOp, width: 1 | 4, wg: number, subgroups: boolean, mode: 'atomic' | 'partial') {
  const acc = accType(dtype, op);
  const keys = acc !== dtype;
  return cachedKernel(`reduce:${dtype}:${op}:${width}:${wg}:${subgroups}:${mode}`, () =>
    defineKernel({
      name: `reduce_${op}_${dtype}_v${width}_${mode}`,
      workgroupSize: wg,
      params: {
        input: buffer(dtype, 'read', { vector: width }),
        out: buffer(acc, mode === 'atomic' ? 'atomic' : 'write'),
        n: uniform('u32'),
        groups: uniform('u32'),
        // 'partial': where this dispatch's partials start in `out` (one dispatch a segment).
        first: uniform('u32'),
      },
      body: ({ input, out, n, groups, first }, k) => {
        const vt = vecType(acc, width);
        const id = identity(acc, op, keys);
        const toAcc = (x: Val<ValueType>) => toAccumulator(x, keys, width, op);
        const zero = constOf(k, vt, id);
        const a = k.let(zero, 'acc');
        const { i, stride } = gridStride(k, groups, n);
        // Main loop: UNROLL independent loads in flight, no bounds checks.
        const last = k.let(stride.mul(UNROLL - 1), 'last');
        k.while(
          () => i.add(last).lt(n),
          () => {
            const xs: Array<Val<ValueType>> = [];
            for (let u = 0; u < UNROLL; u++) xs.push(toAcc(input.load(u === 0 ? i : i.add(stride.mul(u)))));
            a.set(apply(op, a, pairwise(op, xs)));
            i.set(i.add(stride.mul(UNROLL)));
          },
        );
        k.while(
          () => i.lt(n),
          () => {
            a.set(apply(op, a, toAcc(input.load(i))));
            i.set(i.add(stride));
          },
        );
        const scalar = foldLanes(op, a, width);
        const r = workgroupReduce(
          k,
          scalar,
          wg,
          subgroups,
          (x, y) => apply(op, x, y),
          (v) => subgroupApply(k, op, v),
        );
        k.if(k.localIndex.eq(0).and(k.workgroupIndex.lt(groups)), () => {
          if (mode === 'partial') {
            out.store(first.add(k.workgroupIndex), r as never);
          } else if (op === 'sum') {
            out.atomicAdd(0, r as never);
          } else if (op === 'min') {
            out.atomicMin(0, r as never);
          } else {
            out.atomicMax(0, r as never);
          }
        });
      },
    }),
  );
}

/** A loaded value as the accumulator type: itself, or (f32 min / max) its u32 order key(s). */
function toAccumulator(x: Val<ValueType>, keys: boolean, width: 1 | 4, op: ReduceOp): Val<ValueType> {
  if (!keys) return x;
  if (width === 1) return orderKey(x as Val<'f32'>, op);
  const v = x as Val<'vec4<f32>'>;
  return vec4u(orderKey(v.x, op), orderKey(v.y, op), orderKey(v.z, op), orderKey(v.w, op));
}

/** The components of a vec4 accumulator combined pairwise; a scalar as it is. */
function foldLanes(op: ReduceOp, a: Val<ValueType>, width: 1 | 4): Val<ValueType> {
  if (width === 1) return a;
  const v = a as unknown as Val<'vec4<u32>'>;
  return pairwise(op, [v.x, v.y, v.z, v.w] as Array<Val<ValueType>>);
}

function vec4u(x: Val<'u32'>, y: Val<'u32'>, z: Val<'u32'>, w: Val<'u32'>): Val<ValueType> {
  return vec('u32', x, y, z, w) as Val<ValueType>;
}

function constOf(k: KernelBuilder, type: ValueType, value: number): Val<ValueType> {
  return k.var(type, value) as Val<ValueType>;
}

/** Converts the u32 key of `op` in keys[0] back to f32 in out[0] (one invocation). */
function keyFinishKernel(op: ReduceOp) {
  return cachedKernel(`reduce:keyFinish:${op}`, () =>
    defineKernel({
      name: `reduce_key_to_f32_${op}`,
      workgroupSize: 1,
      params: { keys: buffer('u32', 'read'), out: buffer('f32', 'write') },
      body: ({ keys, out }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.eq(0), () => out.store(i, keyValue(keys.load(0), op)));
      },
    }),
  );
}

// ---------- chunked formulation (serial workgroups) ----------

/**
 * Internal (scan's chunked formulation shares it): chunk count and length for n
 * elements, and the vector width the chunk kernel reads with: CHUNKED.simdWidth on a
 * device with 'simd' when n divides by it (chunks then hold whole vectors) and the
 * caller can read vectors (`vectors`: the buffer's length divides too; no f32 keys), 1 otherwise.
 */
export function chunkPlan(device: Device, n: number, vectors = true): { chunks: number; chunk: number; width: 1 | 4 } {
  const chunks = Math.max(1, Math.min(device.caps.concurrency * CHUNKED.chunksPerConcurrency, Math.ceil(n / CHUNKED.minChunk)));
  const w = CHUNKED.simdWidth;
  const width: 1 | 4 = vectors && device.caps.features.has('simd') && n % w === 0 ? w : 1;
  return { chunks, chunk: Math.ceil(n / chunks / width) * width, width };
}

/** The longest chain of f32 additions behind one chunk's partial sum (its lanes, their fold, the vector's components). */
export function chunkSumDepth(plan: { chunk: number; width: 1 | 4 }): number {
  return Math.ceil(plan.chunk / (CHUNKED.lanes * plan.width)) + Math.ceil(Math.log2(CHUNKED.lanes)) + Math.ceil(Math.log2(plan.width));
}

/**
 * partials[c] = op over input[c*chunk, min(n, (c+1)*chunk)), folded in CHUNKED.lanes
 * interleaved accumulators; with width 4, n and chunk count vec4 elements of the
 * input's vector view, the accumulators are vectors, and their components fold last.
 */
export function chunkKernel(dtype: BufferDType, op: ReduceOp, width: 1 | 4 = 1) {
  const acc = accType(dtype, op);
  const keys = acc !== dtype;
  if (keys && width !== 1) throw new Error('internal: f32 min/max keys are folded from scalars');
  return cachedKernel(`reduce-chunk:${dtype}:${op}:${width}`, () =>
    defineKernel({
      name: `reduce_chunk_${op}_${dtype}${width === 1 ? '' : `_v${width}`}`,
      workgroupSize: 1,
      params: {
        input: buffer(dtype, 'read', { vector: width }),
        partials: buffer(acc, 'write'),
        n: uniform('u32'),
        chunk: uniform('u32'),
      },
      body: ({ input, partials, n, chunk }, k) => {
        const toAcc = (x: Val<ValueType>): Val<ValueType> => (keys ? orderKey(x as Val<'f32'>, op) : x);
        const c = k.let(k.globalIndex, 'c');
        const start = k.let(c.mul(chunk), 'start');
        const end = k.let(min(n, start.add(chunk)), 'end');
        const vt = vecType(acc, width);
        const lanes = Array.from({ length: CHUNKED.lanes }, (_, l) => k.var(vt, identity(acc, op, keys), `a${l}`) as Var<ValueType>);
        const i = k.var('u32', start, 'i');
        k.while(
          () => i.add(CHUNKED.lanes - 1).lt(end),
          () => {
            for (const [l, a] of lanes.entries()) a.set(apply(op, a, toAcc(input.load(l === 0 ? i : i.add(l)))));
            i.set(i.add(CHUNKED.lanes));
          },
        );
        const first = lanes[0] as Var<ValueType>;
        k.while(
          () => i.lt(end),
          () => {
            first.set(apply(op, first, toAcc(input.load(i))));
            i.set(i.add(1));
          },
        );
        const folded = pairwise(op, lanes);
        if (width === 1) partials.store(c, folded as never);
        else {
          const v = folded as unknown as Val<'vec4<u32>'>;
          partials.store(c, pairwise(op, [v.x, v.y, v.z, v.w] as Array<Val<ValueType>>) as never);
        }
      },
    }),
  );
}

/** out[0] = op over partials[0..m) in order (one invocation); f32 min/max keys turn back into f32. */
function combineKernel(dtype: BufferDType, op: ReduceOp) {
  const acc = accType(dtype, op);
  const keys = acc !== dtype;
  return cachedKernel(`reduce-combine:${dtype}:${op}`, () =>
    defineKernel({
      name: `reduce_combine_${op}_${dtype}`,
      workgroupSize: 1,
      params: { partials: buffer(acc, 'read'), out: buffer(dtype, 'write'), m: uniform('u32') },
      body: ({ partials, out, m }, k) => {
        const a = k.var(acc, identity(acc, op, keys), 'a') as Var<ValueType>;
        k.for({ from: 0, to: m }, (j) => a.set(apply(op, a, partials.load(j) as Val<ValueType>)));
        k.if(k.globalIndex.eq(0), () => out.store(0, (keys ? keyValue(a as Val<'u32'>, op) : a) as never));
      },
    }),
  );
}

// ---------- gather formulation ----------

/**
 * out[i] = op over src[i*FAN_IN .. i*FAN_IN + FAN_IN) (pairwise), src of length n in
 * elements of its view: scalars, or (width 4) vec4s, FAN_IN / 4 of them an invocation
 * (on WebGL2 a vec4 is one texel: one fetch for four elements instead of four).
 */
function gatherKernel(srcType: BufferDType, acc: BufferDType, op: ReduceOp, toKeys: boolean, wg: number, width: 1 | 4) {
  return cachedKernel(`reduce-gather:${srcType}:${acc}:${op}:${toKeys}:${wg}:${width}`, () =>
    defineKernel({
      name: `reduce_gather_${op}_${srcType}_v${width}${toKeys ? '_keys' : ''}`,
      workgroupSize: wg,
      params: { src: buffer(srcType, 'read', { vector: width }), dst: buffer(acc, 'write'), n: uniform('u32'), m: uniform('u32') },
      body: ({ src, dst, n, m }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(m), () => {
          const loads = FAN_IN / width;
          const base = k.let(i.mul(loads), 'base');
          const id = constOf(k, vecType(acc, width), identity(acc, op, acc !== srcType || toKeys));
          const xs: Array<Val<ValueType>> = [];
          for (let j = 0; j < loads; j++) {
            const idx = j === 0 ? base : base.add(j);
            const v = toAccumulator(src.load(idx) as Val<ValueType>, toKeys, width, op);
            xs.push(selectVal(idx.lt(n), v, id));
          }
          dst.store(i, foldLanes(op, pairwise(op, xs), width) as never);
        });
      },
    }),
  );
}

function selectVal(c: Val<'bool'>, a: Val<ValueType>, b: Val<ValueType>): Val<ValueType> {
  return select(c, a, b);
}

// ---------- public API ----------

export type ReduceFormulationName = 'chunked' | 'grid-stride' | 'gather-passes';

/** The formulation `reduce` runs on `device` (see the file comment). */
export function reduceFormulation(device: Device): Formulation<ReduceFormulationName> {
  const family = chooseFamily(device, 'reduce', { families: ['serial', 'workgroup', 'gather'] });
  if (family === 'serial') {
    const simd = device.caps.features.has('simd') ? ' (vec4 loads)' : '';
    return {
      family,
      name: 'chunked',
      shape: undefined,
      summary: `per-worker chunks, one sequential loop each${simd}, then the partials in order`,
    };
  }
  if (family === 'workgroup') {
    const subgroups = device.caps.features.has('subgroup') ? ', subgroup reductions' : '';
    return { family, name: 'grid-stride', shape: undefined, summary: `grid-stride workgroup reduction${subgroups}` };
  }
  return { family, name: 'gather-passes', shape: undefined, summary: 'log-step gather passes' };
}

function validate<D extends BufferDType>(device: Device, input: Buffer<D>, options: ReduceOptions<D>): void {
  checkBuffer(device, input, 'input', DTYPES);
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options', 'must be an object with an op');
  checkChoice('options.op', options.op, OPS);
  if (options.output !== undefined) {
    checkBuffer(device, options.output, 'options.output', [input.dtype]);
    if (options.output.length < 1) throw new InvalidArgumentError('options.output', 'must hold at least one element');
    if (options.output === input) throw new InvalidArgumentError('options.output', 'must not be the input buffer');
  }
}

/**
 * Records a reduction of `input` with `options.op` and returns a buffer whose
 * element 0 will hold the result (`options.output` if given). See `reduce`.
 */
export function reduceInto<D extends BufferDType>(device: Device, input: Buffer<D>, options: ReduceOptions<D>): Buffer<D> {
  validate(device, input, options);
  const { family } = reduceFormulation(device);
  const { op } = options;
  const dtype: BufferDType = input.dtype;
  const acc = accType(dtype, op);
  const keys = acc !== dtype;
  const out = options.output ?? device.createBuffer(input.dtype, 1);
  const empty = identity(acc, op, keys);
  if (input.length === 0) {
    if (keys) out.fill(op === 'min' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY, { length: 1 });
    else out.fill(empty, { length: 1 });
    return out;
  }
  if (family === 'serial') {
    // f32 min/max fold u32 keys made from scalars: those read scalars.
    const { chunks, chunk, width } = reducePlan(device, input.length, !keys);
    if (chunks === 1 && !keys) {
      // One chunk, folded straight into the result (its type is the accumulator's).
      device.dispatch(
        chunkKernel(dtype, op, width),
        { invocations: 1 },
        { input, partials: out, n: input.length / width, chunk: chunk / width },
      );
      return out;
    }
    const partials = scratch(device, 'reduce.chunks', acc, chunks);
    device.dispatch(
      chunkKernel(dtype, op, width),
      { invocations: chunks },
      { input, partials, n: input.length / width, chunk: chunk / width },
    );
    device.dispatch(combineKernel(dtype, op), { invocations: 1 }, { partials, out, m: chunks });
    return out;
  }
  if (family === 'workgroup') {
    const p = blockPlan(device, input.length);
    if (!keys) {
      // One partial per workgroup, then one workgroup folds them: in a fixed order, which
      // makes f32 sums reproducible, and faster than an atomic per workgroup into the
      // result, whose updates of one address queue at the cache (LEDGER.md reduce.partials).
      // Past one binding, one pass per segment (each binds one binding, not one per
      // segment), their partials side by side.
      const pieces = device.segments(input);
      const plans = pieces.map((piece) => blockPlan(device, piece.length));
      const count = plans.reduce((sum, q) => sum + q.workgroups, 0);
      const partials = scratch(device, 'reduce.partials', acc, count);
      let first = 0;
      pieces.forEach((piece, s) => {
        const q = plans[s] as BlockPlan;
        dispatchGroups(device, blockKernel(dtype, op, q.width, q.wg, q.subgroups, 'partial'), q.workgroups, {
          input: piece,
          out: partials,
          n: q.n,
          groups: q.workgroups,
          first,
        });
        first += q.workgroups;
      });
      dispatchGroups(device, blockKernel(acc, op, 1, p.wg, p.subgroups, 'partial'), 1, {
        input: partials,
        out,
        n: count,
        groups: 1,
        first: 0,
      });
      return out;
    }
    const target = keys ? scratch(device, 'reduce.key', 'u32', 1) : out;
    target.fill(empty, { length: 1 });
    for (const piece of device.segments(input)) {
      const q = blockPlan(device, piece.length);
      dispatchGroups(device, blockKernel(dtype, op, q.width, q.wg, q.subgroups, 'atomic'), q.workgroups, {
        input: piece,
        out: target as never,
        n: q.n,
        groups: q.workgroups,
        first: 0,
      });
    }
    if (keys) dispatchGroups(device, keyFinishKernel(op), 1, { keys: target as Buffer<'u32'>, out: out as Buffer<'f32'> });
    return out;
  }
  // Gather passes: n -> ceil(n / FAN_IN) -> … -> 1.
  const wg = gatherSize(device.caps);
  let src: Buffer = input;
  let n = input.length;
  let pass = 0;
  while (true) {
    const m = Math.ceil(n / FAN_IN);
    const finalPass = m === 1;
    const dst: Buffer = finalPass && !keys ? out : scratch(device, `reduce.pass${pass % 2}`, acc, m);
    const toKeys = keys && pass === 0;
    // The input as vec4s where its length allows (the temporaries after it are short).
    const width: 1 | 4 = pass === 0 && n % 4 === 0 ? 4 : 1;
    device.dispatch(gatherKernel(src.dtype, acc, op, toKeys, wg, width), { invocations: m }, { src, dst, n: n / width, m });
    src = dst;
    n = m;
    pass++;
    if (finalPass) break;
  }
  if (keys) dispatchGroups(device, keyFinishKernel(op), 1, { keys: src as Buffer<'u32'>, out: out as Buffer<'f32'> });
  return out;
}

/**
 * Reduces `input` with `op` ('sum' | 'min' | 'max') and resolves to the result.
 *
 * Semantics:
 * - u32 / i32 sums wrap modulo 2^32 (as on a GPU); the result is bit-identical to
 *   the sequential reference on every backend.
 * - f32 min / max are IEEE 754-2019 minimum / maximum, as NumPy's np.min / np.max:
 *   either is NaN if any element is NaN (the canonical quiet NaN, bits 0x7fc00000,
 *   whatever sign or payload came in), on every backend and formulation; zeros are
 *   ordered -0 < +0, so min(-0, +0) is -0 and max(-0, +0) is +0.
 * - f32 sums add in f32. Order: each invocation folds its grid-stride elements
 *   (8 loads per step added pairwise, vec4 lanes kept apart and added pairwise at
 *   the end), then pairwise trees over the workgroup and over the partials (gather
 *   devices: pairwise trees of FAN_IN elements per pass). The order is fixed for a
 *   given device and length, so results are reproducible there. Error bound:
 *   |sum - exact| <= γ(d) · Σ|x_i| with γ(d) = d·u / (1 - d·u), u = 2^-24, and d the
 *   longest chain of additions, given by `reduceSumDepth(device, n)`; plus
 *   (n + d) · 2^-126 where the device flushes subnormals to zero (GPUs may).
 *   min / max compare bit patterns, so subnormals are kept exactly.
 *   Infinities and NaNs propagate as in IEEE 754: a NaN element, or +Inf and
 *   -Inf together, give NaN.
 * - Empty input: sum 0; min / max the op's identity (u32: 2^32-1 / 0, i32: 2^31-1 /
 *   -2^31, f32: +Infinity / -Infinity), as JavaScript's Math.min() / Math.max(),
 *   so partial results combine. NumPy raises for an empty min / max instead: a
 *   caller that mirrors NumPy checks `input.length` first (the CLI exits with 2).
 *
 * Complexity: O(n) work; span O(n / P + log n). One read of the input, at most
 * one atomic per workgroup. Throws InvalidArgumentError for a bad input buffer or
 * op; UnsupportedFeatureError when the device runs no gather kernels.
 */
export async function reduce<D extends BufferDType>(device: Device, input: Buffer<D>, options: { op: ReduceOp }): Promise<number> {
  validate(device, input, options);
  // A fresh result buffer: a pooled one could be overwritten by another call before the read completes.
  const out = reduceInto(device, input, { op: options.op });
  try {
    const host = await out.read({ offset: 0, length: 1 });
    return host[0] as number;
  } finally {
    out.destroy();
  }
}

/**
 * The longest chain of f32 additions `reduce` performs for `n` elements on
 * `device` (the d of its error bound γ(d) · Σ|x_i|).
 */
export function reduceSumDepth(device: Device, n: number): number {
  if (n <= 1) return 0;
  const { family } = reduceFormulation(device);
  if (family === 'serial') {
    // A lane's chain over its chunk, the pairwise fold of the lanes (and components), then the partials in order.
    const plan = reducePlan(device, n, true);
    return chunkSumDepth(plan) + plan.chunks;
  }
  if (family === 'gather') return Math.ceil(Math.log2(n)) + 4 * Math.ceil(Math.log(n) / Math.log(FAN_IN));
  const p = blockPlan(device, n);
  const invocations = p.workgroups * p.wg;
  const perInvocation = Math.ceil(p.n / invocations);
  const tree = Math.ceil(Math.log2(p.wg));
  // Past one binding each segment leaves its own partials (each segment's plan has at most
  // as many workgroups, and as many elements an invocation, as the whole input's).
  const segments = bindingsFor(device, n);
  // Folds + the pairwise tree of UNROLL loads + 2 (vec4 lanes) + workgroup tree, then the partials pass.
  const first = perInvocation + Math.ceil(Math.log2(UNROLL)) + (p.width === 4 ? 2 : 0) + tree;
  const second = Math.ceil((segments * p.workgroups) / p.wg) + 2 + tree;
  return first + second;
}
