import type { BackendKind, DeviceCaps, DeviceInfo, TimerSource } from './caps.ts';
import type { BufferDType, HostArray } from './dtype.ts';
import type { Kernel } from './ir/builder.ts';

/**
 * What a backend implements. The public `Device` (device.ts) validates every
 * argument before calling in here, so implementations may assume well-formed
 * input: in-range offsets, matching dtypes, complete argument lists.
 *
 * Ordering contract ("stream order"): every call below that changes buffers is
 * executed in the order it was made, and each sees the effects of all earlier
 * ones. `read` returns data that includes every earlier call's effects.
 * Backends may batch freely as long as that holds.
 */
export interface BackendDevice {
  readonly kind: BackendKind;
  readonly info: DeviceInfo;
  readonly caps: DeviceCaps;

  createBuffer(dtype: BufferDType, length: number): BackendBuffer;
  destroyBuffer(buffer: BackendBuffer): void;
  /** Enqueues a write; `data` may be reused by the caller after the call returns. */
  write(buffer: BackendBuffer, offset: number, data: HostArray): void;
  /**
   * Resolves to elements [offset, offset + length): in a new array, or in `into[0 .. length)`
   * when given (of the buffer's dtype, long enough: checked by Device), which is then returned.
   */
  read(buffer: BackendBuffer, offset: number, length: number, into?: HostArray): Promise<HostArray>;
  copy(src: BackendBuffer, srcOffset: number, dst: BackendBuffer, dstOffset: number, length: number): void;
  fill(buffer: BackendBuffer, value: number, offset: number, length: number): void;
  /**
   * Optional: a buffer held as several storage bindings, as one BackendBuffer per binding
   * over the same memory, in order (see `Device.segments`). Absent, or one element, where
   * the buffer binds whole. Never destroyed on their own.
   */
  segments?(buffer: BackendBuffer): readonly BackendBuffer[];

  /** Compiles (or fetches from cache); throws UnsupportedFeatureError for kernels it cannot run. */
  compile(kernel: Kernel): CompiledKernel;
  dispatch(kernel: CompiledKernel, grid: Grid, args: ReadonlyMap<string, BackendBuffer | number>): void;
  /** Submits everything enqueued and waits until it has run. */
  flush(): Promise<void>;
  /** Runs `body` (which enqueues work), submits it and says how long the device took. */
  measure(body: () => void | Promise<void>): Promise<{ ms: number; source: TimerSource }>;
  /** The error that made the device unusable, if any (device lost, context lost). */
  lostReason(): string | undefined;
  destroy(): Promise<void>;
}

/** Backend-owned buffer storage; the public Buffer wraps one. */
export interface BackendBuffer {
  readonly dtype: BufferDType;
  readonly length: number;
}

export interface CompiledKernel {
  readonly kernel: Kernel;
  /** The generated source, for inspection and debugging. */
  readonly source: string;
}

/** Workgroup counts along x, y, z; the kernel sees them linearised (x fastest). */
export type Grid = readonly [number, number, number];

/** Options a backend's adapter accepts; backends extend this interface by declaration merging. */
// biome-ignore lint/suspicious/noEmptyInterface: extended by backend packages
export interface BackendOptionsMap {}

export interface BackendAdapter<K extends BackendKind = BackendKind> {
  readonly kind: K;
  /** Resolves to a working device or rejects with BackendUnavailableError saying why. */
  create(options: K extends keyof BackendOptionsMap ? BackendOptionsMap[K] | undefined : undefined): Promise<BackendDevice>;
}
