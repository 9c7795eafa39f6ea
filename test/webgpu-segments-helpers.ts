/**
 * What the specs of WebGPU buffers past one binding share (webgpu-segments.test.ts,
 * webgpu-segments-sort.test.ts): a device told to behave as if bindings held 4 KiB, its
 * segment size, and the view that runs a hardware GPU's formulations on it.
 */
import type { WebGpuBuffer } from '@trident/backend-webgpu';
import { type Buffer, createDevice, type Device } from 'trident';
import { manyInvocationsView } from './alg-helpers.ts';

export const BINDING = 4096;
/** What the device makes of a 4 KiB binding: the largest multiple of 12 elements leaving 16 bytes (spare element, padding). */
export const S = Math.floor((BINDING - 16) / 48) * 12;

export const segmentsOf = (b: Buffer) => (b.impl as unknown as WebGpuBuffer).segments;

/** A WebGPU device with 4 KiB bindings. */
export function segmentedDevice(): Promise<Device> {
  return createDevice({ backend: 'webgpu', options: { webgpu: { maxStorageBufferBindingSize: BINDING } } });
}

/** The device, and its view that runs the formulations of a hardware GPU (those the H100 runs). */
export function withHardwareView(real: Device): Array<{ label: string; device: Device }> {
  return [
    { label: 'webgpu', device: real },
    { label: 'webgpu/many-invocations', device: manyInvocationsView(real) },
  ];
}
