import type { BackendBuffer, BackendDevice, CompiledKernel, Grid } from './backend.ts';
import type { BackendKind, DeviceCaps, DeviceInfo, TimerSource } from './caps.ts';
import { type BufferDType, dtypeOfArray, type HostArray, isBufferDType, type TypedArrayFor, typedArrayConstructor } from './dtype.ts';
import { DeviceLostError, InvalidArgumentError, LimitExceededError, TridentError } from './errors.ts';
import type { DispatchArgs, Kernel } from './ir/builder.ts';
import { type ParamDecl, workgroupShapeOf } from './ir/nodes.ts';

/**
 * How many workgroups to run: explicit counts along x, y, z, or enough for
 * `invocations`. A number of invocations is a linear grid (folded into y and z past
 * the per-dimension limit); `[w, h]` or `[w, h, d]` is a 2-D / 3-D grid of
 * `ceil(w / sx) x ceil(h / sy) x ceil(d / sz)` workgroups for a kernel of
 * workgroupSize `[sx, sy, sz]`, for `k.globalId`.
 */
export type DispatchGrid =
  | { readonly workgroups: number | readonly [number, number?, number?] }
  | { readonly invocations: number | readonly [number, number?, number?] };

export interface Timing {
  readonly label: string;
  readonly ms: number;
  /** Where the figure comes from; benchmarks must not mix sources silently. */
  readonly source: TimerSource;
}

/** The elements a read takes and, optionally, the host array they land in. */
export interface ReadRange<D extends BufferDType = BufferDType> {
  readonly offset?: number;
  readonly length?: number;
  /** Receives the elements at [0, length) and is returned; a typed array of the buffer's dtype. */
  readonly into?: TypedArrayFor[D];
}

export interface SkippedBackend {
  readonly backend: BackendKind;
  readonly reason: string;
}

/**
 * A typed array of 32-bit elements on a device. Host <-> device movement is
 * explicit: `write` enqueues, `read` resolves after every earlier command ran.
 */
export class Buffer<D extends BufferDType = BufferDType> {
  readonly dtype: D;
  readonly length: number;
  readonly device: Device;
  /** @internal */
  readonly impl: BackendBuffer;
  /**
   * The buffer this one is a segment view of (`device.segments`), which owns the memory;
   * undefined for a buffer of its own.
   */
  readonly parent: Buffer<D> | undefined;
  /** Where a segment view's element 0 lies in its parent (0 for a buffer of its own). */
  readonly parentOffset: number;
  #destroyed = false;

  /** @internal use `device.createBuffer` */
  constructor(device: Device, impl: BackendBuffer, parent?: { readonly buffer: Buffer<D>; readonly offset: number }) {
    this.device = device;
    this.impl = impl;
    this.dtype = impl.dtype as D;
    this.length = impl.length;
    this.parent = parent?.buffer;
    this.parentOffset = parent?.offset ?? 0;
  }

  get byteLength(): number {
    return this.length * 4;
  }
  get destroyed(): boolean {
    return this.parent ? this.parent.destroyed : this.#destroyed;
  }

  /** Enqueues a write of `data` at element `offset`. The caller may reuse `data` afterwards. */
  write(data: TypedArrayFor[D] | ArrayLike<number>, offset = 0): void {
    this.device.writeBuffer(this, data, offset);
  }

  /**
   * Resolves to a copy of elements [offset, offset + length) once every earlier command ran.
   * With `into` (a typed array of this buffer's dtype, at least `length` long) the elements
   * land in `into[0 .. length)` and `into` is returned: a caller that reads the same size
   * again and again skips allocating (and first touching) a new array per read, which on
   * a real GPU is most of a large read's time (bench/h100/read-probe.ts).
   */
  read(range?: ReadRange<D>): Promise<TypedArrayFor[D]> {
    return this.device.readBuffer(this, range);
  }

  /** Enqueues setting elements [offset, offset + length) to `value`. */
  fill(value: number, range?: { offset?: number; length?: number }): void {
    this.device.fillBuffer(this, value, range);
  }

  /**
   * Frees the storage. Further use throws; destroying twice is harmless. A segment view
   * owns no storage: destroying one does nothing (destroy its parent).
   */
  destroy(): void {
    if (this.#destroyed || this.parent) return;
    this.#destroyed = true;
    this.device.releaseBuffer(this);
  }
}

/**
 * A compute device: buffers, kernel dispatch in stream order, timers, caps.
 *
 * Stream order: `write`, `fill`, `copyBuffer` and `dispatch` are recorded in call
 * order; each sees the effects of every earlier one (the PRAM global
 * synchronisation between kernels). They may be batched and are submitted by
 * `flush`, `read` or `time`. Every argument is validated before anything is
 * recorded, so a rejected call changes nothing.
 */
export class Device {
  readonly backend: BackendKind;
  readonly info: DeviceInfo;
  readonly caps: DeviceCaps;
  /** Backends that `createDevice` tried before this one, and why each was passed over. */
  readonly skipped: readonly SkippedBackend[];
  /** @internal */
  readonly impl: BackendDevice;
  #destroyed = false;
  readonly #buffers = new Set<Buffer>();
  readonly #segmentViews = new WeakMap<Buffer, readonly Buffer[]>();

  constructor(impl: BackendDevice, skipped: readonly SkippedBackend[] = []) {
    this.impl = impl;
    this.backend = impl.kind;
    this.info = impl.info;
    this.caps = impl.caps;
    this.skipped = skipped;
  }

  createBuffer<D extends BufferDType>(dtype: D, lengthOrData: number | TypedArrayFor[D] | ArrayLike<number>): Buffer<D> {
    this.checkUsable();
    if (!isBufferDType(dtype)) throw new InvalidArgumentError('dtype', `must be 'u32', 'i32' or 'f32', got ${String(dtype)}`);
    const length = typeof lengthOrData === 'number' ? lengthOrData : lengthOrData?.length;
    checkCount('length', length);
    if (length > this.caps.limits.maxBufferElements) {
      throw new LimitExceededError(this.backend, 'maxBufferElements', length, this.caps.limits.maxBufferElements, 'buffer length');
    }
    const data = typeof lengthOrData === 'number' ? undefined : toHostArray(dtype, lengthOrData, 'data');
    const buffer = new Buffer<D>(this, this.impl.createBuffer(dtype, length));
    this.#buffers.add(buffer);
    if (data && data.length > 0) this.impl.write(buffer.impl, 0, data);
    return buffer;
  }

  /**
   * `buffer` as the runs a kernel can bind whole, in order: `[buffer]` where it fits one
   * storage binding (every buffer of most backends), else one view per segment (a WebGPU
   * buffer past `maxStorageBufferBindingSize` is held as several GPU buffers, see
   * docs/kernels.md). Every view but the last has the same length. Views share the
   * buffer's memory and lifetime: writes through one are writes to the buffer, they are
   * destroyed with it, and destroying a view does nothing. A kernel bound to views binds
   * one binding an array where the whole buffer would take one per segment, so passes
   * whose work lines up with the segments (element-wise, tiled) can run once per view.
   * The same views are returned for the same buffer.
   */
  segments<D extends BufferDType>(buffer: Buffer<D>): readonly Buffer<D>[] {
    this.checkUsable();
    this.checkBuffer(buffer, 'buffer');
    if (buffer.parent) return [buffer];
    const known = this.#segmentViews.get(buffer);
    if (known) return known as readonly Buffer<D>[];
    const parts = this.impl.segments?.(buffer.impl);
    let offset = 0;
    const views: readonly Buffer<D>[] =
      parts === undefined || parts.length <= 1
        ? [buffer]
        : Object.freeze(
            parts.map((impl) => {
              const view = new Buffer<D>(this, impl, { buffer, offset });
              offset += impl.length;
              return view;
            }),
          );
    this.#segmentViews.set(buffer, views);
    return views;
  }

  /** Compiles a kernel now (it is also compiled on first dispatch); throws if this device cannot run it. */
  compile(kernel: Kernel): CompiledKernel {
    this.checkUsable();
    this.checkKernelLimits(kernel);
    return this.impl.compile(kernel);
  }

  /**
   * Records a dispatch of `kernel` over `grid`. Workgroups beyond
   * `maxComputeWorkgroupsPerDimension` are folded into y (and z); kernels see a
   * linear `globalIndex` either way and must guard against indices past their data.
   */
  dispatch<P extends Record<string, ParamDecl>>(kernel: Kernel<P>, grid: DispatchGrid, args: DispatchArgs<P, Buffer>): void {
    this.checkUsable();
    this.checkKernelLimits(kernel as unknown as Kernel);
    const compiled = this.impl.compile(kernel as unknown as Kernel);
    const workgroups = this.resolveGrid(kernel, grid);
    const bound = this.bindArgs(kernel as unknown as Kernel, args as Record<string, Buffer | number>);
    this.impl.dispatch(compiled, workgroups, bound);
  }

  /** Records a copy of `length` elements (default: all of `src` from `srcOffset`). */
  copyBuffer(src: Buffer, dst: Buffer, options?: { srcOffset?: number; dstOffset?: number; length?: number }): void {
    this.checkUsable();
    this.checkBuffer(src, 'src');
    this.checkBuffer(dst, 'dst');
    if (src.dtype !== dst.dtype) throw new InvalidArgumentError('dst', `dtype ${dst.dtype} differs from src dtype ${src.dtype}`);
    const srcOffset = options?.srcOffset ?? 0;
    const dstOffset = options?.dstOffset ?? 0;
    checkCount('srcOffset', srcOffset);
    checkCount('dstOffset', dstOffset);
    const length = options?.length ?? Math.max(0, src.length - srcOffset);
    checkCount('length', length);
    checkRange('src', srcOffset, length, src.length);
    checkRange('dst', dstOffset, length, dst.length);
    // Ranges in the memory that owns them (a segment view's parent).
    const from = srcOffset + src.parentOffset;
    const to = dstOffset + dst.parentOffset;
    if ((src.parent ?? src) === (dst.parent ?? dst) && from < to + length && to < from + length) {
      throw new InvalidArgumentError('dst', 'source and destination ranges overlap');
    }
    if (length > 0) this.impl.copy(src.impl, srcOffset, dst.impl, dstOffset, length);
  }

  /** Submits recorded work and resolves once it has run. */
  async flush(): Promise<void> {
    this.checkUsable();
    await this.guard(() => this.impl.flush());
  }

  /**
   * Times the work `body` records: submits what was pending first, runs `body`,
   * submits and waits. GPU timestamps where the device has them, wall clock otherwise.
   */
  async time(label: string, body: () => void | Promise<void>): Promise<Timing> {
    this.checkUsable();
    await this.flush();
    const { ms, source } = await this.guard(() => this.impl.measure(body));
    return { label, ms, source };
  }

  /** Frees every buffer and the device. Later calls throw DeviceLostError. */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    for (const b of [...this.#buffers]) b.destroy();
    this.#destroyed = true;
    await this.impl.destroy();
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  // ---------- used by Buffer ----------

  /** @internal */
  writeBuffer<D extends BufferDType>(buffer: Buffer<D>, data: TypedArrayFor[D] | ArrayLike<number>, offset: number): void {
    this.checkUsable();
    this.checkBuffer(buffer, 'buffer');
    checkCount('offset', offset);
    const host = toHostArray(buffer.dtype, data, 'data');
    checkRange('data', offset, host.length, buffer.length);
    if (host.length > 0) this.impl.write(buffer.impl, offset, host);
  }

  /** @internal */
  async readBuffer<D extends BufferDType>(buffer: Buffer<D>, range?: ReadRange<D>): Promise<TypedArrayFor[D]> {
    this.checkUsable();
    this.checkBuffer(buffer, 'buffer');
    const offset = range?.offset ?? 0;
    checkCount('offset', offset);
    const length = range?.length ?? Math.max(0, buffer.length - offset);
    checkCount('length', length);
    checkRange('range', offset, length, buffer.length);
    const into = range?.into;
    if (into !== undefined) checkReadTarget(into, buffer.dtype, length);
    return (await this.guard(() => this.impl.read(buffer.impl, offset, length, into))) as TypedArrayFor[D];
  }

  /** @internal */
  fillBuffer(buffer: Buffer, value: number, range?: { offset?: number; length?: number }): void {
    this.checkUsable();
    this.checkBuffer(buffer, 'buffer');
    checkScalar('value', buffer.dtype, value);
    const offset = range?.offset ?? 0;
    checkCount('offset', offset);
    const length = range?.length ?? Math.max(0, buffer.length - offset);
    checkCount('length', length);
    checkRange('range', offset, length, buffer.length);
    if (length > 0) this.impl.fill(buffer.impl, value, offset, length);
  }

  /** @internal */
  releaseBuffer(buffer: Buffer): void {
    this.#buffers.delete(buffer);
    if (!this.#destroyed) this.impl.destroyBuffer(buffer.impl);
  }

  // ---------- validation ----------

  private checkUsable(): void {
    if (this.#destroyed) throw new DeviceLostError(this.backend, 'the device was destroyed');
    const lost = this.impl.lostReason();
    if (lost !== undefined) throw new DeviceLostError(this.backend, lost);
  }

  /** Turns failures of a device that meanwhile was lost into DeviceLostError. */
  private async guard<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      const lost = this.impl.lostReason();
      if (lost !== undefined && !(err instanceof DeviceLostError)) throw new DeviceLostError(this.backend, lost, { cause: err });
      throw err;
    }
  }

  private checkBuffer(buffer: unknown, name: string): asserts buffer is Buffer {
    if (!(buffer instanceof Buffer)) throw new InvalidArgumentError(name, 'is not a Trident buffer');
    if (buffer.device !== this) throw new InvalidArgumentError(name, 'belongs to another device');
    if (buffer.destroyed) throw new InvalidArgumentError(name, 'was destroyed');
  }

  /** Limits every backend shares; backends check what only they know (e.g. padded workgroup memory). */
  private checkKernelLimits(kernel: Kernel): void {
    const max = this.caps.limits.maxComputeInvocationsPerWorkgroup;
    if (kernel.ir.workgroupSize > max) {
      throw new LimitExceededError(
        this.backend,
        'maxComputeInvocationsPerWorkgroup',
        kernel.ir.workgroupSize,
        max,
        `workgroup size of kernel '${kernel.name}'`,
      );
    }
  }

  private resolveGrid(kernel: Kernel, grid: DispatchGrid): Grid {
    const maxPerDim = this.caps.limits.maxComputeWorkgroupsPerDimension;
    let total: number;
    if (grid && 'invocations' in grid && typeof grid.invocations === 'number') {
      checkCount('grid.invocations', grid.invocations);
      total = Math.ceil(grid.invocations / kernel.ir.workgroupSize);
    } else if (grid && ('workgroups' in grid || 'invocations' in grid)) {
      let counts: readonly number[];
      if ('workgroups' in grid) {
        const w = grid.workgroups;
        counts = typeof w === 'number' ? [w] : w.map((d) => d ?? 1);
      } else {
        const inv = grid.invocations as readonly [number, number?, number?];
        if (!Array.isArray(inv) || inv.length < 1 || inv.length > 3)
          throw new InvalidArgumentError('grid.invocations', 'must be a number or [x, y?, z?]');
        counts = inv.map((n, i) => {
          checkCount(`grid.invocations[${i}]`, n ?? 1);
          return Math.ceil((n ?? 1) / (workgroupShapeOf(kernel.ir)[i] ?? 1));
        });
      }
      const [x = 1, y = 1, z = 1] = counts;
      for (const [i, d] of [x, y, z].entries()) {
        checkCount(`grid.workgroups[${i}]`, d);
        if (d > maxPerDim)
          throw new LimitExceededError(this.backend, 'maxComputeWorkgroupsPerDimension', d, maxPerDim, `workgroups along axis ${i}`);
      }
      return [x, y, z];
    } else {
      throw new InvalidArgumentError('grid', 'must be { workgroups } or { invocations }');
    }
    if (total <= maxPerDim) return [total, 1, 1];
    // Fold into as few rows (and slices) as the limit allows, each as short as it can
    // be: the surplus workgroups past `total` (which kernels must guard) stay below one
    // row's worth per slice instead of up to a whole dimension's.
    const z = Math.ceil(total / maxPerDim ** 2);
    if (z > maxPerDim)
      throw new LimitExceededError(this.backend, 'maxComputeWorkgroupsPerDimension', total, maxPerDim ** 3, 'total workgroups');
    const perSlice = Math.ceil(total / z);
    const y = Math.ceil(perSlice / maxPerDim);
    return [Math.ceil(perSlice / y), y, z];
  }

  private bindArgs(kernel: Kernel, args: Record<string, Buffer | number>): Map<string, BackendBuffer | number> {
    if (typeof args !== 'object' || args === null) throw new InvalidArgumentError('args', 'must be an object of parameters');
    const bound = new Map<string, BackendBuffer | number>();
    // Buffers bound so far and their names (a few per kernel: a scan beats a Map). Indexed loops
    // throughout: a dispatch runs this before V8 optimizes it, thousands of times.
    const seen: Buffer[] = [];
    const seenNames: string[] = [];
    const limits = this.caps.limits;
    const params = kernel.ir.params;
    const names = paramNames(kernel);
    const given = Object.keys(args);
    for (let i = 0; i < given.length; i++) {
      const name = given[i] as string;
      if (!names.has(name)) throw new InvalidArgumentError(name, `kernel '${kernel.name}' has no such parameter`);
    }
    for (let i = 0; i < params.length; i++) {
      // Indexed, not destructured: array destructuring runs the iterator protocol before V8 optimizes.
      const param = params[i] as (typeof params)[number];
      const name = param[0];
      const decl = param[1];
      const value = args[name];
      if (decl.kind === 'uniform') {
        if (typeof value !== 'number') throw new InvalidArgumentError(name, `kernel '${kernel.name}' needs a ${decl.dtype} number`);
        checkScalar(name, decl.dtype, value);
        bound.set(name, value);
        continue;
      }
      this.checkBuffer(value, name);
      if (value.dtype !== decl.dtype)
        throw new InvalidArgumentError(name, `kernel '${kernel.name}' needs a ${decl.dtype} buffer, got ${value.dtype}`);
      if (value.length % decl.vector !== 0) {
        throw new InvalidArgumentError(name, `length ${value.length} is not a multiple of the vector width ${decl.vector}`);
      }
      // No check against maxStorageBufferBindingSize: a backend binds every buffer it made (the
      // WebGPU backend splits one past a binding into several bindings, and refuses a kernel
      // whose buffers then need more bindings than a kernel may have).
      const at = seen.indexOf(value);
      // A segment view and its parent share memory: aliases, but two bindings.
      const alias = at >= 0 ? at : indexOfParentOrView(seen, value);
      if (alias >= 0) {
        const other = seenNames[alias] as string;
        if (kernel.info.writes.has(name) || kernel.info.writes.has(other)) {
          throw new InvalidArgumentError(
            name,
            `the same buffer is also bound to '${other}', and kernel '${kernel.name}' writes one of them`,
          );
        }
      }
      if (at >= 0) seenNames[at] = name;
      else {
        seen.push(value);
        seenNames.push(name);
      }
      bound.set(name, value.impl);
    }
    if (seen.length > limits.maxBuffersPerKernel) {
      throw new LimitExceededError(this.backend, 'maxBuffersPerKernel', seen.length, limits.maxBuffersPerKernel, `kernel '${kernel.name}'`);
    }
    return bound;
  }
}

/** The index in `seen` of `buffer`'s parent or of a segment view of `buffer`, or -1. */
function indexOfParentOrView(seen: readonly Buffer[], buffer: Buffer): number {
  for (let i = 0; i < seen.length; i++) {
    const b = seen[i] as Buffer;
    if (b.parent === buffer || (buffer.parent !== undefined && buffer.parent === b)) return i;
  }
  return -1;
}

const paramNameSets = new WeakMap<Kernel, ReadonlySet<string>>();

/** The names of a kernel's parameters, as a set made once per kernel. */
function paramNames(kernel: Kernel): ReadonlySet<string> {
  let names = paramNameSets.get(kernel);
  if (!names) {
    names = new Set(kernel.ir.params.map(([p]) => p));
    paramNameSets.set(kernel, names);
  }
  return names;
}

function checkCount(name: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidArgumentError(name, `must be a non-negative integer, got ${String(value)}`);
  }
}

/** `into` of a read: a typed array of the buffer's dtype with room for `length` elements. */
function checkReadTarget(into: unknown, dtype: BufferDType, length: number): void {
  const expected = typedArrayConstructor(dtype).name;
  if (dtypeOfArray(into) !== dtype) {
    const got = into === null || typeof into !== 'object' ? String(into) : `a ${into.constructor.name}`;
    throw new InvalidArgumentError('into', `must be a ${expected} for a ${dtype} buffer, got ${got}`);
  }
  const { length: room } = into as HostArray;
  if (room < length) throw new InvalidArgumentError('into', `has ${room} elements, the read needs ${length}`);
}

function checkRange(name: string, offset: number, length: number, size: number): void {
  if (offset + length > size)
    throw new InvalidArgumentError(name, `range [${offset}, ${offset + length}) exceeds the buffer length ${size}`);
}

export function checkScalar(name: string, dtype: BufferDType, value: unknown): void {
  if (typeof value !== 'number') throw new InvalidArgumentError(name, `must be a number, got ${typeof value}`);
  if (dtype === 'f32') return;
  const lo = dtype === 'u32' ? 0 : -0x80000000;
  const hi = dtype === 'u32' ? 0xffffffff : 0x7fffffff;
  if (!Number.isInteger(value) || value < lo || value > hi) throw new InvalidArgumentError(name, `${value} is not a ${dtype}`);
}

/**
 * Converts user data to the host array of `dtype`, refusing silent conversions:
 * a typed array must be of the same dtype; plain numbers must fit the dtype.
 */
export function toHostArray(dtype: BufferDType, data: unknown, name: string): HostArray {
  const arrayType = dtypeOfArray(data);
  if (arrayType !== undefined) {
    if (arrayType !== dtype) throw new InvalidArgumentError(name, `is a ${arrayType} array, the buffer is ${dtype}`);
    return data as HostArray;
  }
  if (ArrayBuffer.isView(data)) throw new InvalidArgumentError(name, `must be a ${dtype} typed array or an array of numbers`);
  if (!data || typeof (data as ArrayLike<number>).length !== 'number') throw new InvalidArgumentError(name, 'must be an array of numbers');
  const list = data as ArrayLike<number>;
  const out = new (typedArrayConstructor(dtype))(list.length);
  for (let i = 0; i < list.length; i++) {
    checkScalar(`${name}[${i}]`, dtype, list[i]);
    out[i] = list[i] as number;
  }
  return out;
}

export function isTridentError(err: unknown): err is TridentError {
  return err instanceof TridentError;
}
