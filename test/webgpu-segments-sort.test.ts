/**
 * The sorts on WebGPU buffers larger than one storage binding (see webgpu-segments.test.ts):
 * radix sort (the gather formulation of a software GPU, and the workgroup formulation a
 * hardware GPU runs) and merge sort, against the sequential reference. SwiftShader compiles
 * the workgroup radix sort's kernels slowly (tens of seconds): one size, keys with values.
 */
import { mergeSort, radixSort, randomU32, sortReference } from '@trident/algorithms';
import type { WebGpuBuffer } from '@trident/backend-webgpu';
import { type Buffer, createDevice, type Device } from 'trident';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBitsEqual, manyInvocationsView } from './alg-helpers.ts';

const BINDING = 4096;
/** Elements in a whole segment under 4 KiB bindings (webgpu-segments.test.ts). */
const S = Math.floor((BINDING - 16) / 48) * 12;
const segmentsOf = (b: Buffer) => (b.impl as unknown as WebGpuBuffer).segments;

describe('sorts on webgpu buffers past one binding (4 KiB bindings)', () => {
  let real: Device;
  /** The device, and its view that runs the formulations of a hardware GPU (those the H100 runs). */
  let devices: Array<{ label: string; device: Device }>;
  beforeAll(async () => {
    real = await createDevice({ backend: 'webgpu', options: { webgpu: { maxStorageBufferBindingSize: BINDING } } });
    devices = [
      { label: 'webgpu', device: real },
      { label: 'webgpu/many-invocations', device: manyInvocationsView(real) },
    ];
  });
  afterAll(async () => {
    await real?.destroy();
  });
  /**
   * SwiftShader binds at most 12 storage buffers a kernel (the H100 16): merge sort's kernels take
   * arrays of three segments (whose temporaries, padded to 2048 elements, have three too), radix
   * sort's arrays of two.
   */
  const n3 = 2 * S + 5;
  const n2 = S + 50;
  const data = randomU32(n3, 11);
  const fdata = Float32Array.from(data, (x) => (x / 2 ** 32 - 0.5) * 1000);

  it('radix sort: keys (u32, f32), and key-value pairs', async () => {
    // The gather formulation's 9-buffer move binds keys of two segments within 12 bindings.
    const keys = data.subarray(0, n2);
    expect(segmentsOf(real.createBuffer('u32', keys))).toHaveLength(2);
    expectBitsEqual(await radixSort(real, real.createBuffer('u32', keys)).keys.read(), sortReference(keys).keys, 'keys');
    const fkeys = fdata.subarray(0, n2);
    expectBitsEqual(await radixSort(real, real.createBuffer('f32', fkeys)).keys.read(), sortReference(fkeys).keys, 'f32 keys');
    // The workgroup formulation's 5-buffer scatter binds pairs of two segments; many equal keys show stability.
    const { label, device } = devices[1] as { label: string; device: Device };
    const pairKeys = keys.map((x) => x & 0xff);
    const values = Uint32Array.from({ length: n2 }, (_, i) => i);
    const pairs = radixSort(device, device.createBuffer('u32', pairKeys), { values: device.createBuffer('u32', values) });
    const want = sortReference(pairKeys, values);
    expectBitsEqual(await pairs.keys.read(), want.keys, `${label} pair keys`);
    expectBitsEqual(await (pairs.values as Buffer<'u32'>).read(), want.values as Uint32Array, `${label} pair values`);
  });

  it('merge sort', async () => {
    const keys = data;
    for (const { label, device } of devices) {
      expectBitsEqual(
        await mergeSort(device, device.createBuffer('u32', keys)).keys.read(),
        sortReference(keys).keys,
        `${label} merge sort`,
      );
    }
  });
});
