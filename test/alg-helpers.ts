/**
 * Helpers for the algorithm conformance files (test/alg-*.test.ts).
 *
 * `formulations(device)` yields the device itself and, where the device runs
 * workgroup kernels, a *gather-only view* of it: the same backend behind caps that
 * list only what a WebGL2-class device has (gather, scatter, blended atomics; no
 * workgroup memory, no subgroups, no other atomics). Its compile step refuses any
 * kernel of another class, so the algorithms' gather formulations are exercised —
 * and proven to stay within those classes — on every backend that has workgroups.
 *
 * `foldedGridView(device, k)` caps grids at k workgroups per dimension, so larger
 * grids are folded and rounded up: kernels must ignore the extra workgroups.
 */

import { fewInvocations } from '@trident/algorithms';
import { WORKGROUP_MIN_CONCURRENCY } from '@trident/algorithms/internal';
import {
  type BackendBuffer,
  type BackendDevice,
  type BackendKind,
  Device,
  type DeviceCaps,
  type Feature,
  type Kernel,
  UnsupportedFeatureError,
} from 'trident';
import { expect } from 'vitest';

export { fewInvocations };

const GATHER_FEATURES: ReadonlySet<Feature> = new Set<Feature>(['gather', 'scatter', 'atomic', 'atomics-via-blending']);

const views = new WeakMap<Device, Map<string, Device>>();

/** A view of `device` under other caps; its compile step refuses kernels of classes the caps lack. */
function capsView(device: Device, name: string, transform: (caps: DeviceCaps) => DeviceCaps): Device {
  let byName = views.get(device);
  if (!byName) {
    byName = new Map();
    views.set(device, byName);
  }
  const cached = byName.get(name);
  if (cached) return cached;
  const impl = device.impl;
  const caps = transform(impl.caps);
  // Every call goes to the real backend (bound to it, so its state stays in one place).
  const wrapped: BackendDevice = {
    kind: impl.kind,
    info: impl.info,
    caps,
    createBuffer: (dtype, length) => impl.createBuffer(dtype, length),
    destroyBuffer: (b) => impl.destroyBuffer(b),
    write: (b, offset, data) => impl.write(b, offset, data),
    read: (b, offset, length) => impl.read(b, offset, length),
    copy: (src, so, dst, dO, length) => impl.copy(src, so, dst, dO, length),
    fill: (b, value, offset, length) => impl.fill(b, value, offset, length),
    ...(impl.segments ? { segments: (b: BackendBuffer) => impl.segments?.(b) ?? [b] } : {}),
    compile: (kernel: Kernel) => {
      for (const c of kernel.info.classes) {
        if (!caps.features.has(c)) throw new UnsupportedFeatureError(`${impl.kind}-${name}`, c, kernel.name);
      }
      return impl.compile(kernel);
    },
    dispatch: (kernel, grid, args) => impl.dispatch(kernel, grid, args),
    flush: () => impl.flush(),
    measure: (body) => impl.measure(body),
    lostReason: () => impl.lostReason(),
    destroy: async () => undefined,
  };
  const view = new Device(wrapped);
  byName.set(name, view);
  return view;
}

/**
 * `device` with the 'simd' feature added (what the CPU backend lists where it runs
 * vec4 values as SIMD registers): algorithms then choose their vec4 formulations,
 * which must give the same results wherever they run.
 */
export function simdView(device: Device): Device {
  return capsView(device, 'simd', (caps) => ({ ...caps, features: new Set([...caps.features, 'simd']) }));
}

/** A gather-only view of `device` (see the file comment). Destroying it leaves `device` alone. */
export function gatherOnlyView(device: Device): Device {
  return capsView(device, 'gather-only', (caps) => ({
    ...caps,
    features: new Set([...GATHER_FEATURES].filter((f) => caps.features.has(f) || f === 'atomics-via-blending')),
    limits: {
      ...caps.limits,
      maxComputeWorkgroupStorageSize: 0,
      minSubgroupSize: 0,
      maxSubgroupSize: 0,
      // Far below a real blending device (2^24), so that chunking for exact counts is exercised.
      maxTotalBufferBytes: 0,
      maxExactAtomicCount: 4096,
    },
  }));
}

/**
 * `device` with neither 'gather' nor 'workgroup' (no device lists such caps today):
 * for the refusals of algorithms that need one of them.
 */
export function noGatherView(device: Device): Device {
  return capsView(device, 'no-gather', (caps) => ({
    ...caps,
    features: new Set([...caps.features].filter((f) => f !== 'gather' && f !== 'workgroup')),
  }));
}

/**
 * The same device with at most `perDimension` workgroups per grid dimension: larger
 * grids are folded into y and z and rounded up, so kernels must ignore the extra
 * workgroups (the situation of grids beyond 65535 workgroups on WebGPU). Grids
 * beyond perDimension³ workgroups are refused, so tests size their inputs for it.
 */
export function foldedGridView(device: Device, perDimension: number): Device {
  return capsView(device, `folded-grid-${perDimension}`, (caps) => ({
    ...caps,
    limits: { ...caps.limits, maxComputeWorkgroupsPerDimension: perDimension },
  }));
}

/**
 * The same device with buffers of at most `elements` (and bindings of as many): algorithms
 * must size each temporary against it (and refuse one that does not fit before recording).
 */
export function bufferLimitView(device: Device, elements: number): Device {
  return capsView(device, `buffer-limit-${elements}`, (caps) => ({
    ...caps,
    limits: {
      ...caps.limits,
      maxBufferElements: elements,
      maxStorageBufferBindingSize: Math.min(caps.limits.maxStorageBufferBindingSize, 4 * elements),
    },
  }));
}

export interface Formulation {
  readonly label: string;
  readonly device: Device;
}

/**
 * The same device claiming as many invocations at once as a hardware GPU's threshold:
 * where the device itself runs few (a software GPU, whose algorithms then default to
 * gather formulations), this view runs their workgroup formulations.
 */
export function manyInvocationsView(device: Device): Device {
  return capsView(device, 'many-invocations', (caps) => ({
    ...caps,
    concurrency: Math.max(caps.concurrency, WORKGROUP_MIN_CONCURRENCY.value),
  }));
}

/**
 * The device as it is, plus its gather-only view where the device has workgroups,
 * plus its many-invocations view where it defaults to gather formulations
 * (fewInvocations), so that every formulation runs on every backend.
 */
export function formulations(device: Device, kind: BackendKind): Formulation[] {
  const out: Formulation[] = [{ label: kind, device }];
  if (device.caps.features.has('workgroup')) out.push({ label: `${kind}/gather-only`, device: gatherOnlyView(device) });
  if (device.caps.features.has('workgroup') && fewInvocations(device.caps))
    out.push({ label: `${kind}/many-invocations`, device: manyInvocationsView(device) });
  return out;
}

/** Sizes every algorithm is checked on (2^k ± 1 around workgroup and tile sizes). */
export const EDGE_SIZES = [0, 1, 2, 3, 4, 5, 31, 33, 255, 257, 1023, 1025, 4097];

/** A prime above 10^6, for the cheaper algorithms. */
export const BIG_PRIME = 1_000_003;

/** Bit patterns of a typed array, so NaN payloads and -0 compare exactly. */
export function bits(a: Uint32Array | Int32Array | Float32Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

/** Asserts two arrays are bit-identical, reporting the first difference. */
export function expectBitsEqual(
  actual: Uint32Array | Int32Array | Float32Array,
  expected: Uint32Array | Int32Array | Float32Array,
  what: string,
): void {
  expect(actual.length, `${what}: length`).toBe(expected.length);
  const a = bits(actual);
  const e = bits(expected);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== e[i]) {
      expect.fail(`${what}: element ${i} is ${actual[i]} (0x${a[i]?.toString(16)}), expected ${expected[i]} (0x${e[i]?.toString(16)})`);
    }
  }
}

/** Value patterns for u32 data of length n. */
export function u32Patterns(n: number, random: Uint32Array): Record<string, Uint32Array> {
  const sorted = random.slice().sort();
  return {
    random,
    equal: new Uint32Array(n).fill(0xdeadbeef),
    sorted,
    reversed: sorted.slice().reverse(),
    extremes: Uint32Array.from({ length: n }, (_, i) => [0, 0xffffffff, 1, 0x80000000, 0x7fffffff][i % 5] as number),
  };
}

/** Edge sizes for the costlier algorithms on software rasterisers (slower than the CPU backend). */
export const SLOW_EDGE_SIZES = [0, 1, 2, 3, 5, 33, 255, 257, 1025];

/** True on software rasterisers (SwiftShader): tests there use the cheaper size lists. */
export function isSlow(device: Device): boolean {
  return device.info.software;
}

/**
 * The per-dimension limit for a folded-grid test: `workgroupLimit` on devices that
 * run workgroup kernels (their grids are small: tiles, grid-stride), 16 on
 * gather-only devices, whose one-invocation-per-element grids are larger.
 */
export function foldLimit(device: Device, workgroupLimit: number): number {
  // Gather formulations (gather-only devices, and by default those with few invocations) use more workgroups.
  return device.caps.features.has('workgroup') && !fewInvocations(device.caps) ? workgroupLimit : 16;
}

/**
 * For a test that needs `feature`: where `device` lacks it, checks that `attempt` is
 * refused with an UnsupportedFeatureError naming it, and returns true (the test then
 * ends, having asserted the refusal); returns false, running nothing, where it has it.
 */
export async function refusedWithout(device: Device, feature: Feature, attempt: () => unknown): Promise<boolean> {
  if (device.caps.features.has(feature)) return false;
  let error: unknown;
  try {
    await attempt();
  } catch (e) {
    error = e;
  }
  expect(error, `without '${feature}'`).toBeInstanceOf(UnsupportedFeatureError);
  expect((error as UnsupportedFeatureError).feature).toBe(feature);
  return true;
}
