import type { KernelClass } from './ir/analyze.ts';

export type BackendKind = 'webgpu' | 'webgl2' | 'cpu';
export const BACKEND_KINDS: readonly BackendKind[] = ['webgpu', 'webgl2', 'cpu'];

export type TimerSource = 'gpu-timestamp' | 'wall';

/**
 * Features a device may have. The kernel classes say which kernels it runs; the
 * rest describe the device. Algorithms test features, never backend names.
 */
export type Feature =
  | KernelClass
  /** GPU timestamps for `device.time` (otherwise wall clock around a flush). */
  | 'timestamp'
  /** Atomic add/min/max are emulated by blending into f32: exact only below `limits.maxExactAtomicCount`. */
  | 'atomics-via-blending'
  /** Buffers live in host memory; reads and writes are cheap copies. */
  | 'host-memory'
  /**
   * Few, fat, serial workgroups (a CPU): about `concurrency` workgroups run at once,
   * each one invocation after another, so a long sequential loop per invocation over a
   * contiguous chunk is the fast shape, and workgroup memory and barriers only cost.
   */
  | 'serial-workgroups'
  /**
   * vec4 values of u32/i32/f32 run as SIMD registers (WebAssembly SIMD on the CPU
   * backend): a vec4 load or add costs about what a scalar one does, so a serial
   * loop reads and folds vectors where the length allows.
   */
  | 'simd';

/** Numeric limits, named as in WebGPU where one exists; 0 means "not available". */
export interface DeviceLimits {
  /** Largest buffer, in 32-bit elements. */
  readonly maxBufferElements: number;
  /**
   * Bytes all of the device's buffers together may hold; 0 where the device does not
   * say (WebGPU reports no memory size: an allocation past it fails as
   * LimitExceededError('deviceMemory') at the next flush or read).
   */
  readonly maxTotalBufferBytes: number;
  /**
   * Bytes one storage binding may span. A buffer larger than this (up to maxBufferElements)
   * is bound as several bindings where the backend splits buffers (WebGPU: docs/kernels.md),
   * which count against maxBuffersPerKernel.
   */
  readonly maxStorageBufferBindingSize: number;
  /** Buffer parameters one kernel may have. */
  readonly maxBuffersPerKernel: number;
  /** Invocations in one workgroup (1-D). */
  readonly maxComputeInvocationsPerWorkgroup: number;
  /** Bytes of workgroup memory per workgroup; 0 without the 'workgroup' feature. */
  readonly maxComputeWorkgroupStorageSize: number;
  /** Workgroups along one grid dimension. */
  readonly maxComputeWorkgroupsPerDimension: number;
  /** Smallest and largest subgroup size; 0 without the 'subgroup' feature. */
  readonly minSubgroupSize: number;
  readonly maxSubgroupSize: number;
  /** Largest count an atomic add may reach exactly (2^32 - 1 for real atomics, 2^24 for blending). */
  readonly maxExactAtomicCount: number;
}

export interface DeviceCaps {
  readonly limits: DeviceLimits;
  readonly features: ReadonlySet<Feature>;
  readonly timerSource: TimerSource;
  /** A good default workgroup size for simple kernels. */
  readonly preferredWorkgroupSize: number;
  /**
   * Invocations the device runs at once, roughly (workers for the CPU backend,
   * resident threads for a GPU). Algorithms size grid-stride grids from it.
   */
  readonly concurrency: number;
  /**
   * Rough fixed cost of one dispatch (a WebGL2 pass, a CPU worker round trip), in
   * microseconds, as the backend estimates it for this device. Algorithms weigh
   * "fewer passes" against "less work per pass" with it; it is an order of
   * magnitude, not a measurement to report.
   */
  readonly dispatchCostMicros: number;
}

export interface DeviceInfo {
  readonly backend: BackendKind;
  /** The adapter, renderer or CPU, as the platform names it. */
  readonly adapter: string;
  /** True for software rasterisers (SwiftShader): slower than the CPU backend. */
  readonly software: boolean;
  /** Free-form details (driver, versions, worker count). */
  readonly details: Readonly<Record<string, string | number | boolean>>;
}
