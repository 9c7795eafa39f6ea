/**
 * The sorts on WebGPU buffers larger than one storage binding (see webgpu-segments.test.ts):
 * radix sort (the gather formulation of a software GPU, and the workgroup formulation a
 * hardware GPU runs) and merge sort, against the sequential reference. SwiftShader compiles
 * the workgroup radix sort's kernels slowly (tens of seconds): one size, keys with values.
 * A kernel's buffers may take as many bindings as the adapter allows a kernel (10 on
 * Chromium's SwiftShader, 12 through Dawn in Node): key-value pairs whose four arrays need
 * more bindings than that are sorted by passes that move (gather formulation) or scatter
 * (workgroup formulation) keys and values in two dispatches.
 */
import { mergeSort, radixSort, randomU32, sortReference } from '@trident/algorithms';
import { type Buffer, type Device, LimitExceededError } from 'trident';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBitsEqual } from './alg-helpers.ts';
import { S, segmentedDevice, segmentsOf, withHardwareView } from './webgpu-segments-helpers.ts';

describe('sorts on webgpu buffers past one binding (4 KiB bindings)', () => {
  let real: Device;
  /** The device, and its view that runs the formulations of a hardware GPU (those the H100 runs). */
  let devices: Array<{ label: string; device: Device }>;
  beforeAll(async () => {
    real = await segmentedDevice();
    devices = withHardwareView(real);
  });
  afterAll(async () => {
    await real?.destroy();
  });
  const device = (i: number) => (devices[i] as { device: Device }).device;
  /**
   * SwiftShader binds at most 10 storage buffers a kernel in Chromium, 12 through Dawn in Node (the
   * H100 16): the sorts' kernels bind up to four arrays beside small buffers, arrays of two segments.
   */
  const n2 = S + 50;
  const data = randomU32(n2, 11);
  const fdata = Float32Array.from(data, (x) => (x / 2 ** 32 - 0.5) * 1000);

  it('radix sort: keys (u32, f32) where the gather formulation binds them, and key-value pairs', async () => {
    const keys = device(0).createBuffer('u32', data);
    expect(segmentsOf(keys)).toHaveLength(2);
    // The gather formulation's keys move binds keys in and out (two segments each) and five small arrays: 9 bindings.
    if (real.caps.limits.maxBuffersPerKernel >= 9) {
      expectBitsEqual(await radixSort(real, keys).keys.read(), sortReference(data).keys, 'keys');
      const fkeys = real.createBuffer('f32', fdata);
      expectBitsEqual(await radixSort(real, fkeys).keys.read(), sortReference(fdata).keys, 'f32 keys');
    } else {
      let error: unknown;
      try {
        radixSort(real, keys);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(LimitExceededError);
      expect((error as LimitExceededError).limit).toBe('maxBuffersPerKernel');
      expect((error as LimitExceededError).message).toContain('radix_gather_move');
    }
    // The workgroup formulation's scatter binds keys and values in and out (9 bindings); many equal keys show stability.
    const many = device(1);
    const pairKeys = data.map((x) => x & 0xff);
    const values = Uint32Array.from({ length: n2 }, (_, i) => i);
    const pairs = radixSort(many, many.createBuffer('u32', pairKeys), { values: many.createBuffer('u32', values) });
    const want = sortReference(pairKeys, values);
    expectBitsEqual(await pairs.keys.read(), want.keys, 'many-invocations pair keys');
    expectBitsEqual(await (pairs.values as Buffer<'u32'>).read(), want.values as Uint32Array, 'many-invocations pair values');
  });

  it('radix sort pairs on the gather formulation whose arrays need more bindings than a kernel may have: keys and values move apart', async () => {
    // On SwiftShader (10 or 12 bindings a kernel): keys and values in and out of two segments each,
    // beside the search's five arrays (six bindings at this size), take 14 bindings; apart, 10 each.
    const pairKeys = data.map((x) => x & 0xff);
    const values = Float32Array.from({ length: n2 }, (_, i) => i);
    new Uint32Array(values.buffer)[3] = 0x7fc00123; // a NaN with a payload: values move as bits
    const keys = real.createBuffer('u32', pairKeys);
    expect(segmentsOf(keys)).toHaveLength(2);
    const pairs = radixSort(real, keys, { values: real.createBuffer('f32', values) });
    const want = sortReference(pairKeys, values);
    expectBitsEqual(await pairs.keys.read(), want.keys, 'gather pair keys');
    expectBitsEqual(await (pairs.values as Buffer<'f32'>).read(), want.values as Float32Array, 'gather pair values');
  });

  it('radix sort on the hardware formulation: one count and one scatter dispatch per segment of the input', async () => {
    // Keys alone and pairs in three segments: each pass binds one segment of its input at a time.
    const many = device(1);
    const nk = 2 * S + 700;
    const keys = randomU32(nk, 17);
    const keyBuffer = many.createBuffer('u32', keys);
    expect(segmentsOf(keyBuffer)).toHaveLength(3);
    expectBitsEqual(await radixSort(many, keyBuffer).keys.read(), sortReference(keys).keys, 'keys in three segments');
    const few = keys.map((x) => x & 0x1ff); // many equal keys: stability across the segments' tiles
    const values = Uint32Array.from({ length: nk }, (_, i) => i);
    const pairs = radixSort(many, many.createBuffer('u32', few), { values: many.createBuffer('u32', values) });
    const want = sortReference(few, values);
    expectBitsEqual(await pairs.keys.read(), want.keys, 'pair keys in three segments');
    expectBitsEqual(await (pairs.values as Buffer<'u32'>).read(), want.values as Uint32Array, 'pair values in three segments');
    // Arrays within one binding but longer than a segment, after those sorts left pooled temporaries
    // split into segments: a pass's tiles follow its own input.
    const nb = S + 2;
    const within = randomU32(nb, 19);
    const withinBuffer = many.createBuffer('u32', within);
    expect(segmentsOf(withinBuffer)).toHaveLength(1);
    expectBitsEqual(await radixSort(many, withinBuffer).keys.read(), sortReference(within).keys, 'keys within one binding');
    const withinValues = Uint32Array.from({ length: nb }, (_, i) => i);
    const small = radixSort(many, withinBuffer, { values: many.createBuffer('u32', withinValues) });
    const wantSmall = sortReference(within, withinValues);
    expectBitsEqual(await small.keys.read(), wantSmall.keys, 'pair keys within one binding');
    expectBitsEqual(await (small.values as Buffer<'u32'>).read(), wantSmall.values as Uint32Array, 'pair values within one binding');
  });

  it('radix sort pairs whose arrays need more bindings than a kernel may have: each pass scatters keys and values apart', async () => {
    // Enough segments an array that a segment of the keys and of the values in, both outputs whole and the
    // scanned counts take more bindings than this device allows (10 in Chromium's SwiftShader, 12 through
    // Dawn in Node, 16 on the H100: 4, 5 and 7 segments), while the split scatters still fit.
    const many = device(1);
    const limit = many.caps.limits.maxBuffersPerKernel;
    const k = Math.floor((limit - 3) / 2) + 1;
    expect(k + 4).toBeLessThanOrEqual(limit);
    const nk = (k - 1) * S + 50;
    const pairKeys = randomU32(nk, 13).map((x) => x & 0x3ff);
    // f32 values (their positions, and a NaN with a payload): the values kernel moves them as bits.
    const values = Float32Array.from({ length: nk }, (_, i) => i);
    new Uint32Array(values.buffer)[5] = 0x7fc00123;
    const keys = many.createBuffer('u32', pairKeys);
    expect(segmentsOf(keys)).toHaveLength(k);
    expect(2 * k + 3).toBeGreaterThan(limit);
    const pairs = radixSort(many, keys, { values: many.createBuffer('f32', values) });
    const want = sortReference(pairKeys, values);
    expectBitsEqual(await pairs.keys.read(), want.keys, 'split pass keys');
    expectBitsEqual(await (pairs.values as Buffer<'f32'>).read(), want.values as Float32Array, 'split pass values');
  });

  it('merge sort', async () => {
    for (const { label, device } of devices) {
      expectBitsEqual(
        await mergeSort(device, device.createBuffer('u32', data)).keys.read(),
        sortReference(data).keys,
        `${label} merge sort`,
      );
    }
  });
});
