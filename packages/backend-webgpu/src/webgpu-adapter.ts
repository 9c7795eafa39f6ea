/// <reference types="@webgpu/types" preserve="true" />
import { type BackendAdapter, type BackendDevice, BackendUnavailableError } from '@trident/core';
import { type GpuEnvironment, gpuEnvironment, noAdapterReason } from './gpu-environment.ts';
import { WebGpuDevice } from './webgpu-device.ts';
import type { RangeHints, SegmentLoads, SegmentStores } from './wgsl.ts';

export interface WebGpuBackendOptions {
  /** A `GPU` to use instead of `navigator.gpu` or a fresh Dawn instance (e.g. from a bundle's own `create()`). */
  readonly gpu?: GPU;
  readonly powerPreference?: GPUPowerPreference;
  /** Features not to request even where the adapter has them (tests of the fallbacks). */
  readonly disableFeatures?: ReadonlyArray<'subgroups' | 'timestamp-query'>;
  /**
   * Behave as if the adapter's binding limit were this low (bytes, a multiple of
   * 256): tests of buffers larger than one binding on adapters whose buffers and
   * bindings share one limit.
   */
  readonly maxStorageBufferBindingSize?: number;
  /** How kernels load from buffers split over bindings (diagnosis: bench/h100/segment-probe.ts); default 'switch'. */
  readonly segmentLoads?: SegmentLoads;
  /** How kernels store to buffers split over bindings (diagnosis: bench/h100/flat-probe.ts); default 'switch'. */
  readonly segmentStores?: SegmentStores;
  /** 'ignore': kernels' range hints do not shape their WGSL (diagnosis: bench/h100/segment-probe.ts); default 'use'. */
  readonly rangeHints?: RangeHints;
}

declare module '@trident/core' {
  interface BackendOptionsMap {
    webgpu: WebGpuBackendOptions;
  }
}

/** Limits requested at the adapter's real values rather than WebGPU's defaults. */
const REQUESTED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

const WANTED_FEATURES: readonly GPUFeatureName[] = ['timestamp-query', 'subgroups'];

export const webgpuAdapter: BackendAdapter<'webgpu'> = {
  kind: 'webgpu',
  async create(options?: WebGpuBackendOptions): Promise<BackendDevice> {
    const env: GpuEnvironment = options?.gpu ? { gpu: options.gpu, runtime: 'provided', keepAlive: options.gpu } : await gpuEnvironment();
    let adapter: GPUAdapter | null;
    try {
      adapter = await env.gpu.requestAdapter(options?.powerPreference ? { powerPreference: options.powerPreference } : undefined);
    } catch (err) {
      throw new BackendUnavailableError('webgpu', `requestAdapter() failed: ${String(err)}`, { cause: err });
    }
    if (!adapter) throw new BackendUnavailableError('webgpu', noAdapterReason(env.runtime));
    const disabled = new Set<string>(options?.disableFeatures ?? []);
    const requiredFeatures = WANTED_FEATURES.filter((f) => adapter.features.has(f) && !disabled.has(f));
    const requiredLimits: Record<string, number> = {};
    for (const name of REQUESTED_LIMITS) requiredLimits[name] = adapter.limits[name];
    let device: GPUDevice;
    try {
      device = await adapter.requestDevice({ requiredFeatures, requiredLimits });
    } catch (err) {
      throw new BackendUnavailableError('webgpu', `requestDevice() failed: ${String(err)}`, { cause: err });
    }
    const info = adapter.info as GPUAdapterInfo | undefined;
    const fallback =
      (info as { isFallbackAdapter?: boolean } | undefined)?.isFallbackAdapter ??
      (adapter as { isFallbackAdapter?: boolean }).isFallbackAdapter ??
      false;
    return new WebGpuDevice({
      device,
      adapterInfo: info,
      isFallbackAdapter: fallback,
      runtime: env.runtime,
      keepAlive: env.keepAlive,
      ...(options?.maxStorageBufferBindingSize ? { maxStorageBufferBindingSize: options.maxStorageBufferBindingSize } : {}),
      ...(options?.segmentLoads ? { segmentLoads: options.segmentLoads } : {}),
      ...(options?.segmentStores ? { segmentStores: options.segmentStores } : {}),
      ...(options?.rangeHints ? { rangeHints: options.rangeHints } : {}),
    });
  },
};
