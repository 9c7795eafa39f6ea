/**
 * Shared helpers of the algorithm suite: argument validation, grid sizing, the
 * kernel cache and the workgroup-level building blocks (reduction and scan) that
 * several algorithms use. The choice of a formulation lives in plan.ts.
 */
import {
  type Buffer,
  type BufferDType,
  type Device,
  type DeviceCaps,
  type DispatchArgs,
  type Feature,
  InvalidArgumentError,
  type Kernel,
  type KernelBuilder,
  LimitExceededError,
  min,
  type ParamDecl,
  select,
  UnsupportedFeatureError,
  u32,
  type Val,
  type ValueType,
  type Var,
  type WorkgroupArray,
} from '@trident/core';

/** True when the device lists every feature in `features`. */
export function hasAll(device: Device, ...features: Feature[]): boolean {
  return features.every((f) => device.caps.features.has(f));
}

/** An UnsupportedFeatureError for `device`, naming it by its adapter. */
export function unsupported(device: Device, feature: string, algorithm: string, detail?: string): UnsupportedFeatureError {
  return new UnsupportedFeatureError(device.info.adapter, feature, algorithm, detail);
}

// ---------- validation (every check runs before anything is recorded) ----------

/** Checks that `value` is a live buffer of `device` with one of `dtypes`. */
export function checkBuffer<D extends BufferDType>(
  device: Device,
  value: unknown,
  name: string,
  dtypes: readonly D[],
): asserts value is Buffer<D> {
  const b = value as Buffer | null | undefined;
  if (b === null || typeof b !== 'object' || typeof b.dtype !== 'string' || !('impl' in b)) {
    throw new InvalidArgumentError(name, 'is not a Trident buffer');
  }
  if (b.device !== device) throw new InvalidArgumentError(name, 'belongs to another device');
  if (b.destroyed) throw new InvalidArgumentError(name, 'was destroyed');
  if (!(dtypes as readonly BufferDType[]).includes(b.dtype)) {
    throw new InvalidArgumentError(name, `must be a ${dtypes.join(' / ')} buffer, got ${b.dtype}`);
  }
}

/** Checks a count: a non-negative safe integer (optionally at least `min`). */
export function checkCount(name: string, value: unknown, min = 0): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidArgumentError(name, `must be an integer >= ${min}, got ${String(value)}`);
  }
}

/** Checks that a finite number was given. */
export function checkFinite(name: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new InvalidArgumentError(name, `must be a finite number, got ${String(value)}`);
}

/** Checks one option against a list of allowed values. */
export function checkChoice<T extends string>(name: string, value: unknown, allowed: readonly T[]): asserts value is T {
  if (!(allowed as readonly unknown[]).includes(value)) {
    throw new InvalidArgumentError(name, `must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${String(value)}`);
  }
}

/**
 * Throws LimitExceededError when a temporary of `elements` would not fit the device. A
 * buffer the device holds is one a kernel may bind (a backend splits one past a storage
 * binding over several), so the largest buffer is the only limit here.
 */
export function checkFits(device: Device, elements: number, what: string): void {
  const max = device.caps.limits.maxBufferElements;
  if (elements > max) throw new LimitExceededError(device.info.adapter, 'maxBufferElements', elements, max, what);
}

// ---------- sizing ----------

/** Largest power of two <= x (x >= 1). */
export function floorPow2(x: number): number {
  return 2 ** Math.floor(Math.log2(Math.max(1, x)));
}

/** Smallest power of two >= x (x >= 1). */
export function ceilPow2(x: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, x)));
}

/**
 * Workgroup size for block kernels: a power of two, at most `cap` (256 by default:
 * enough to hide latency on GPUs, small enough for every backend's limits), and
 * fitting `bytesPerInvocation` of workgroup memory per invocation.
 */
export function blockSize(caps: DeviceCaps, bytesPerInvocation = 4, cap = 256): number {
  const byInvocations = caps.limits.maxComputeInvocationsPerWorkgroup;
  const byMemory = bytesPerInvocation > 0 ? Math.floor(caps.limits.maxComputeWorkgroupStorageSize / bytesPerInvocation) : cap;
  return floorPow2(Math.min(cap, byInvocations, Math.max(1, byMemory)));
}

/** Workgroup size for gather (one invocation per element) kernels. */
export function gatherSize(caps: DeviceCaps): number {
  return floorPow2(Math.max(1, Math.min(caps.preferredWorkgroupSize, caps.limits.maxComputeInvocationsPerWorkgroup)));
}

/**
 * Workgroups for a grid-stride kernel over `work` items, each invocation taking at
 * least `minPerInvocation`: about `waves` waves (default two) of the device's
 * concurrency (so that a GPU is full and a CPU pool gets several workgroups per
 * worker), never more than the work needs, and at least one.
 */
export function strideWorkgroups(caps: DeviceCaps, work: number, wg: number, minPerInvocation = 1, waves = 2): number {
  const byWork = Math.ceil(work / (wg * minPerInvocation));
  // GPUs: `waves` waves of resident invocations. Worker pools (concurrency = workers,
  // each running whole workgroups): a few workgroups per worker, at least 8.
  const byDevice = Math.max(8, waves * Math.ceil(caps.concurrency / wg), caps.concurrency <= 64 ? 4 * caps.concurrency : 0);
  return Math.max(1, Math.min(byWork, byDevice));
}

// ---------- kernel cache ----------

const kernels = new Map<string, Kernel>();

/**
 * Kernels are pure functions of their parameters (dtype, op, workgroup size…),
 * so one process-wide cache keyed by those parameters serves every device.
 */
export function cachedKernel<P extends Record<string, ParamDecl>>(key: string, build: () => Kernel<P>): Kernel<P> {
  let k = kernels.get(key);
  if (!k) {
    k = build() as unknown as Kernel;
    kernels.set(key, k);
  }
  return k as unknown as Kernel<P>;
}

// ---------- temporaries ----------

const pools = new WeakMap<Device, Map<string, Buffer>>();

/**
 * A temporary of at least `length` elements, reused across calls (no allocation
 * in hot loops). Reuse is safe in stream order: a later call's writes come after
 * every earlier call's reads. `role` must be distinct for temporaries that are
 * alive at the same time within one call. Contents are undefined on return.
 */
export function scratch<D extends BufferDType>(device: Device, role: string, dtype: D, length: number): Buffer<D> {
  let pool = pools.get(device);
  if (!pool) {
    pool = new Map();
    pools.set(device, pool);
  }
  const key = `${role}:${dtype}`;
  const have = pool.get(key);
  const { maxBufferElements, maxStorageBufferBindingSize } = device.caps.limits;
  // One binding's worth of elements, in whole vec4s (temporaries are bound as vec4 views too).
  const binding = Math.floor(maxStorageBufferBindingSize / 16) * 4;
  // A buffer past one binding takes one binding per segment in every kernel that binds it:
  // reuse one only where it spans about as many bindings as `length` needs.
  if (
    have &&
    !have.destroyed &&
    have.length >= length &&
    (have.length <= binding || Math.ceil(have.length / binding) <= Math.ceil(length / binding))
  )
    return have as Buffer<D>;
  // Rounded up so that growing sizes reuse it, but never past what one buffer holds, nor
  // past one binding when `length` fits one; past one binding only to whole vec4s (a power
  // of two could add segments and double the memory).
  const cap = length <= binding ? Math.min(maxBufferElements, binding) : Math.min(maxBufferElements, Math.ceil(length / 16) * 16);
  const size = Math.min(Math.max(ceilPow2(length), 16), Math.max(length, cap));
  const b = device.createBuffer(dtype, size);
  pool.set(key, b);
  if (have && !have.destroyed) {
    // Recorded work may still use the old one: free it once that work has run.
    void device
      .flush()
      .catch(() => undefined)
      .finally(() => have.destroy());
  }
  return b;
}

/**
 * Storage bindings `buffer` takes in a kernel that binds it: one, or one per segment where
 * it is larger than one binding (maxStorageBufferBindingSize; see docs/kernels.md). A
 * backend's segments hold slightly less than a binding (whole vectors, a spare element), so
 * this counts against a binding less 64 bytes: it may count one binding too many, never
 * too few, so that a pass split on it is never one too late.
 */
export function bindingsOf(device: Device, buffer: Buffer): number {
  return bindingsFor(device, buffer.length);
}

/** One dispatch's share of a pass run once per segment: the arrays' views and the elements in them. */
export interface SegmentRun {
  /** The arrays' views (`device.segments`), in the order given, or the arrays themselves. */
  readonly views: readonly Buffer[];
  /** Elements of this run (the first `n` of each view). */
  readonly n: number;
}

/**
 * The first `n` elements of `arrays` as runs that each lie in one segment of every array
 * (`device.segments`), in order: passes whose work lines up with the segments run one
 * dispatch per run, binding one binding per array instead of one per segment. One run of
 * the whole arrays where any of them fits one binding or they are split unlike (the same
 * device splits every 32-bit array alike, so arrays of at least n elements line up).
 */
export function segmentRuns(device: Device, arrays: readonly Buffer[], n: number): SegmentRun[] {
  const split = arrays.map((a) => device.segments(a));
  const first = split[0]?.[0]?.length;
  if (split.some((views) => views.length === 1 || views[0]?.length !== first)) return [{ views: arrays, n }];
  const runs: SegmentRun[] = [];
  for (let s = 0, start = 0; start < n; s++) {
    const views = split.map((v) => v[s] as Buffer);
    const count = Math.min(n - start, ...views.map((v) => v.length));
    runs.push({ views, n: count });
    start += count;
  }
  return runs;
}

/** A run of `segmentRuns` cut into tiles: its tiles are numbered `firstTile` … `firstTile + tiles - 1` across the runs. */
export interface TiledRun extends SegmentRun {
  readonly firstTile: number;
  readonly tiles: number;
}

/**
 * `segmentRuns` for passes that cut their input into tiles of `tile` elements, one
 * workgroup a tile: tiles end at run ends and are numbered across the runs, so a pass of
 * one dispatch per run addresses per-tile data (counts, offsets) by `firstTile` plus its
 * workgroup. `tiles`: all the runs' tiles.
 */
export function tiledRuns(device: Device, arrays: readonly Buffer[], n: number, tile: number): { runs: TiledRun[]; tiles: number } {
  const runs: TiledRun[] = [];
  let tiles = 0;
  for (const run of segmentRuns(device, arrays, n)) {
    const count = Math.ceil(run.n / tile);
    runs.push({ ...run, firstTile: tiles, tiles: count });
    tiles += count;
  }
  return { runs, tiles };
}

/** `bindingsOf` for a buffer of `length` 32-bit elements (also the count of its `device.segments`, or one more). */
export function bindingsFor(device: Device, length: number): number {
  const binding = device.caps.limits.maxStorageBufferBindingSize;
  const bytes = length * 4;
  return bytes <= binding ? 1 : Math.ceil(bytes / Math.max(4, binding - 64));
}

// ---------- element-wise operators ----------

export type ReduceOp = 'sum' | 'min' | 'max';

// ---------- workgroup building blocks ----------

/**
 * Reduces `value` over the workgroup with `op`; the result is valid in every
 * invocation after the call. Every invocation must call it (uniform control flow).
 * With 'subgroup', each subgroup reduces first and one value per subgroup goes
 * through workgroup memory; otherwise a tree over all `wg` values. Either way the
 * tree is pairwise (lid with lid + stride), so f32 sums have depth log2(wg).
 */
export function workgroupReduce<T extends ValueType>(
  k: KernelBuilder,
  value: Val<T>,
  wg: number,
  subgroups: boolean,
  op: (a: Val<T>, b: Val<T>) => Val<T>,
  subgroupOp: (v: Val<T>) => Val<T>,
): Val<T> {
  const arr = k.workgroupArray(value.type, wg);
  const lid = k.localIndex;
  const count = k.var('u32', wg, 'count');
  if (subgroups) {
    const v = subgroupOp(value);
    // A workgroup narrower than the subgroup size fills only part of one subgroup.
    const sg = k.let(min(k.subgroupSize, u32(wg)), 'sg');
    k.if(k.subgroupInvocation.eq(0), () => arr.store(lid.div(sg), v));
    count.set(count.div(sg));
  } else {
    arr.store(lid, value);
  }
  k.barrier();
  treeReduce(k, arr, count, op);
  return arr.load(0);
}

/** In-place pairwise tree over arr[0, count) (count a power of two, uniform). Ends with a barrier. */
function treeReduce<T extends ValueType>(
  k: KernelBuilder,
  arr: WorkgroupArray<T>,
  count: Val<'u32'>,
  op: (a: Val<T>, b: Val<T>) => Val<T>,
): void {
  const lid = k.localIndex;
  const s = k.let(count.shr(1), 's');
  k.while(
    () => s.gt(0),
    () => {
      k.if(lid.lt(s), () => arr.store(lid, op(arr.load(lid), arr.load(lid.add(s)))));
      k.barrier();
      s.set(s.shr(1));
    },
  );
}

/**
 * Exclusive prefix sum of `value` over the workgroup's invocations (in local-index
 * order) and the workgroup total, both valid in every invocation. `zero` is the
 * additive identity of T. Hillis–Steele over one value per subgroup (after a
 * subgroup scan where 'subgroup' exists) or per invocation.
 */
export function workgroupScan<T extends ValueType>(
  k: KernelBuilder,
  value: Val<T>,
  wg: number,
  subgroups: boolean,
  zero: Val<T>,
): { exclusive: Val<T>; total: Val<T> } {
  const arr = k.workgroupArray(value.type, wg);
  const lid = k.localIndex;
  const count = k.var('u32', wg, 'count');
  const slot = k.let(lid, 'slot');
  const inner = k.let(zero, 'inner');
  if (subgroups) {
    const incl = k.subgroupInclusiveAdd(value);
    inner.set(k.subgroupExclusiveAdd(value));
    // A workgroup narrower than the subgroup size fills only part of one subgroup.
    const sg = k.let(min(k.subgroupSize, u32(wg)), 'sg');
    slot.set(lid.div(sg));
    // The last lane of each subgroup holds the subgroup's total.
    k.if(k.subgroupInvocation.eq(sg.sub(1)), () => arr.store(slot, incl));
    count.set(count.div(sg));
  } else {
    arr.store(lid, value);
  }
  k.barrier();
  const d = k.var('u32', 1, 'd');
  k.while(
    () => d.lt(count),
    () => {
      const t = k.let(zero, 't');
      k.if(lid.lt(count).and(lid.ge(d)), () => t.set(arr.load(lid.sub(d))));
      k.barrier();
      k.if(lid.lt(count), () => arr.store(lid, arr.load(lid).add(t)));
      k.barrier();
      d.set(d.shl(1));
    },
  );
  // arr now holds inclusive scans of the per-slot totals.
  const before = k.let(zero, 'before');
  k.if(slot.gt(0), () => before.set(arr.load(slot.sub(1))));
  const total = arr.load(count.sub(1));
  const exclusive = subgroups ? before.add(inner) : before;
  k.barrier(); // arr may be reused by the caller's next round
  return { exclusive, total };
}

// ---------- order-preserving keys ----------

/**
 * The u32 key of an f32 in the total order -Inf < … < -0 < +0 < … < +Inf < NaN:
 * every NaN first becomes the canonical quiet NaN 0x7fc00000 (so all NaNs are
 * equal and sort last, whatever sign or payload, and backends that quiet
 * signalling NaNs agree), then positive values get the top bit set and negative
 * values are inverted. `keyToF32` undoes the second step.
 */
export function f32ToKey(x: Val<'f32'>): Val<'u32'> {
  const b = x.bitcast('u32');
  const c = select(b.and(0x7fffffff).gt(0x7f800000), u32(CANONICAL_NAN), b);
  const mask = c.bitcast('i32').shr(31).bitcast('u32').or(0x80000000);
  return c.xor(mask);
}

/** The bits every NaN key maps back to. */
export const CANONICAL_NAN = 0x7fc00000;

/** Inverse of `f32ToKey` (NaNs come back as the canonical NaN). */
export function keyToF32(key: Val<'u32'>): Val<'f32'> {
  const mask = key.shr(31).sub(1).or(0x80000000);
  return key.xor(mask).bitcast('f32');
}

/** The u32 key of an i32 in numeric order (flip the sign bit); its own inverse. */
export function i32ToKey(x: Val<'i32'>): Val<'u32'> {
  return x.bitcast('u32').xor(0x80000000);
}

export function keyToI32(key: Val<'u32'>): Val<'i32'> {
  return key.xor(0x80000000).bitcast('i32');
}

// ---------- dispatch ----------

/**
 * Dispatches `count` workgroups of `kernel`. Expressed as invocations so the
 * device folds grids beyond `maxComputeWorkgroupsPerDimension` into y and z
 * (rounding up: kernels that index by workgroup must ignore the extra ones).
 */
export function dispatchGroups<P extends Record<string, ParamDecl>>(
  device: Device,
  kernel: Kernel<P>,
  count: number,
  args: DispatchArgs<P, Buffer>,
): void {
  device.dispatch(kernel, { invocations: count * kernel.ir.workgroupSize }, args);
}

/**
 * Start index and stride of a grid-stride loop over `groups` workgroups. The
 * workgroups a folded grid adds past `groups` start at `n`, so they take no part
 * (their loops are empty) and every element is visited exactly once.
 */
export function gridStride(k: KernelBuilder, groups: Val<'u32'>, n: Val<'u32'>): { i: Var<'u32'>; stride: Var<'u32'> } {
  const stride = k.let(groups.mul(k.workgroupSize), 'stride');
  const i = k.let(select(k.workgroupIndex.lt(groups), k.globalIndex, n), 'i');
  return { i, stride };
}

/**
 * Binary search in a kernel: sets `lo` to the first index in [lo, hi) whose entry of the
 * non-decreasing `incl` exceeds `j` (`hi` if none). Narrows `lo` and `hi` in place.
 */
export function lowerBound(
  k: KernelBuilder,
  incl: { load(i: Val<'u32'>): Val<'u32'> },
  j: Val<'u32'>,
  lo: Var<'u32'>,
  hi: Var<'u32'>,
): void {
  k.while(
    () => lo.lt(hi),
    () => {
      const mid = k.let(lo.add(hi.sub(lo).shr(1)), 'mid');
      k.if(
        incl.load(mid).gt(j),
        () => hi.set(mid),
        () => lo.set(mid.add(1)),
      );
    },
  );
}
