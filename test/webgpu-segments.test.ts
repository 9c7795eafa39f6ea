/**
 * WebGPU buffers larger than one storage binding, held as several GPUBuffers
 * ("segments") and bound one binding per segment. The device is told to behave as if
 * bindings held only 4 KiB (the adapter's `maxStorageBufferBindingSize` option), so
 * arrays of a few thousand elements span 3 to 5 segments: kernels' loads, stores,
 * vector views and atomics on both sides of each boundary, host reads, writes, copies
 * and fills across boundaries, the refusal of a kernel whose buffers need more
 * bindings than a kernel may have, and the algorithms against their references
 * (the sorts in webgpu-segments-sort.test.ts).
 */
/// <reference types="@webgpu/types" />

import {
  compact,
  compactInto,
  compactReference,
  gammaF32,
  histogram,
  histogramReference,
  reduce,
  reduceReference,
  reduceSumDepth,
  type ScanVariant,
  scan,
  scanReference,
  scanVariant,
  sumAbs,
  zcopy,
} from '@trident/algorithms';
import { compactTiles } from '@trident/algorithms/internal';
import { generateWgsl } from '@trident/backend-webgpu';
import { type Buffer, buffer, type Device, defineKernel, f32, LimitExceededError, uniform } from 'trident';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBitsEqual, manyInvocationsView } from './alg-helpers.ts';
import { randomU32 } from './harness.ts';
import { BINDING, S, segmentedDevice, segmentsOf, withHardwareView } from './webgpu-segments-helpers.ts';

/** Four segments: three whole ones and a short last one. */
const N = 3 * S + 29;

describe('webgpu buffers past one binding (4 KiB bindings)', () => {
  let device: Device;
  beforeAll(async () => {
    device = await segmentedDevice();
  });
  afterAll(async () => {
    await device?.destroy();
  });

  it('caps: the binding limit is the lowered one, buffers go past it; a buffer that fits a binding is one GPUBuffer', () => {
    const { limits } = device.caps;
    expect(limits.maxStorageBufferBindingSize).toBe(BINDING - 4);
    expect(limits.maxBufferElements).toBe(2 ** 31);
    const fits = device.createBuffer('u32', (BINDING - 4) / 4);
    expect(segmentsOf(fits)).toHaveLength(1);
    const past = device.createBuffer('u32', (BINDING - 4) / 4 + 1);
    expect(segmentsOf(past)).toHaveLength(2);
    const big = device.createBuffer('u32', N);
    const segs = segmentsOf(big);
    expect(segs).toHaveLength(4);
    // Whole segments of S elements, the last with the rest; each with a spare element and padding to 16 bytes.
    expect(segs.map((s) => s.gpu.size)).toEqual([4 * S + 16, 4 * S + 16, 4 * S + 16, Math.ceil((4 * (N - 3 * S + 1)) / 16) * 16]);
    for (const s of segs) expect(s.gpu.size).toBeLessThanOrEqual(BINDING);
    for (const b of [fits, past, big]) b.destroy();
  });

  it('scalar loads and stores cross every boundary', async () => {
    const k = defineKernel({
      name: 'seg_plus',
      workgroupSize: 64,
      params: { a: buffer('u32', 'read'), b: buffer('u32', 'write') },
      // b[i] = a[n - 1 - i] + i: reads and writes meet different segments in one invocation.
      body: ({ a, b }, k) => {
        const i = k.let(k.globalIndex);
        b.store(i, a.load(a.length.sub(1).sub(i)).add(i));
      },
    });
    const data = randomU32(N, 1);
    const a = device.createBuffer('u32', data);
    const b = device.createBuffer('u32', N);
    device.dispatch(k, { invocations: N + 100 }, { a, b });
    const want = Uint32Array.from(data, (_, i) => ((data[N - 1 - i] as number) + i) >>> 0);
    expectBitsEqual(await b.read(), want, 'b');
    // Out-of-range loads read 0 and out-of-range stores are dropped (the IR's rule), segmented or not.
    const oob = defineKernel({
      name: 'seg_oob',
      workgroupSize: 64,
      params: { a: buffer('u32', 'read'), b: buffer('u32', 'read_write'), at: uniform('u32') },
      body: ({ a, b, at }, k) => {
        k.if(k.globalIndex.eq(0), () => {
          b.store(at, 5);
          b.store(0, a.load(at).add(b.load(at)).add(7));
        });
      },
    });
    for (const at of [N, N + 1, 4 * S, 0xffffffff]) device.dispatch(oob, { invocations: 1 }, { a, b, at });
    const got = await b.read();
    expect(got[0]).toBe(7);
    expectBitsEqual(got.subarray(1), want.subarray(1), 'b after out-of-range accesses');
  });

  it('range hints: blocks inside one segment, across a boundary and past the end, with accesses outside the hint', async () => {
    const B = 7; // does not divide the segment size: some blocks straddle a boundary
    const k = defineKernel({
      name: 'seg_hint',
      workgroupSize: 64,
      params: { a: buffer('u32', 'read'), b: buffer('u32', 'write') },
      body: ({ a, b }, k) => {
        const base = k.let(k.globalIndex.mul(B));
        const acc = k.var('u32', 0, 'acc');
        k.expectRange(a, base, base.add(B - 1), () => {
          for (let j = 0; j < B; j++) acc.set(acc.add(a.load(base.add(j)).mul(j + 1)));
          // Outside the hint: another segment for most blocks.
          acc.set(acc.add(a.load(a.length.sub(1).sub(base))));
        });
        k.expectRange(b, base, base.add(B - 1), () => {
          for (let j = 0; j < B; j++) b.store(base.add(j), acc.add(j));
        });
      },
    });
    // The WGSL the device makes for these buffers: each hint's body once per segment, reaching it directly.
    const segments = { a: { count: 4, size: S }, b: { count: 4, size: S } };
    const hinted = generateWgsl(k, { subgroups: false, segments }).source;
    for (const helper of ['ld_a_in0', 'ld_a_in3', 'st_b_in1']) expect(hinted).toContain(`fn ${helper}(`);
    expect(generateWgsl(k, { subgroups: false, segments, rangeHints: 'ignore' }).source).not.toContain('ld_a_in');
    const data = randomU32(N, 3);
    const at = (i: number) => (i >= 0 && i < N ? (data[i] as number) : 0);
    const want = new Uint32Array(N);
    for (let base = 0; base < N; base += B) {
      let acc = 0;
      for (let j = 0; j < B; j++) acc = (acc + Math.imul(at(base + j), j + 1)) >>> 0;
      acc = (acc + at(N - 1 - base)) >>> 0;
      for (let j = 0; j < B && base + j < N; j++) want[base + j] = (acc + j) >>> 0;
    }
    const a = device.createBuffer('u32', data);
    const b = device.createBuffer('u32', N);
    device.dispatch(k, { invocations: Math.ceil(N / B) + 3 }, { a, b });
    expectBitsEqual(await b.read(), want, 'b');
  });

  it('range hints over vec3 and vec4 views: each element whole, on both sides of every boundary', async () => {
    for (const width of [3, 4] as const) {
      const k = defineKernel({
        name: `seg_hint_v${width}`,
        workgroupSize: 64,
        params: { a: buffer('u32', 'read', { vector: width }), b: buffer('u32', 'write', { vector: width }) },
        // Two vectors an invocation, under hints that cross a boundary now and then.
        body: ({ a, b }, k) => {
          const v = k.let(k.globalIndex.mul(2));
          const x = k.var(a.type, undefined, 'x');
          const y = k.var(a.type, undefined, 'y');
          k.expectRange(a, v, v.add(1), () => {
            x.set(a.load(v));
            y.set(a.load(v.add(1)));
          });
          k.expectRange(b, v, v.add(1), () => {
            b.store(v, y);
            b.store(v.add(1), x);
          });
        },
      });
      const length = N - (N % (2 * width));
      const data = randomU32(length, 17);
      const a = device.createBuffer('u32', data);
      const b = device.createBuffer('u32', length);
      device.dispatch(k, { invocations: length / (2 * width) + 2 }, { a, b });
      // Each pair of vectors swapped.
      const want = new Uint32Array(length);
      for (let v = 0; v < length / width; v += 2) {
        want.set(data.subarray((v + 1) * width, (v + 2) * width), v * width);
        want.set(data.subarray(v * width, (v + 1) * width), (v + 1) * width);
      }
      expectBitsEqual(await b.read(), want, `vec${width}`);
    }
  });

  it('vec2, vec3 and vec4 views never straddle a segment', async () => {
    for (const width of [2, 3, 4] as const) {
      const k = defineKernel({
        name: `seg_vec${width}`,
        workgroupSize: 64,
        params: { a: buffer('f32', 'read', { vector: width }), b: buffer('f32', 'write', { vector: width }) },
        body: ({ a, b }, k) => {
          const i = k.let(k.globalIndex);
          b.store(i, a.load(i).mul(2));
        },
      });
      const n = width * Math.floor(N / width);
      const data = Float32Array.from(randomU32(n, width), (x) => x / 2 ** 20);
      const a = device.createBuffer('f32', data);
      const b = device.createBuffer('f32', n);
      device.dispatch(k, { invocations: n / width }, { a, b });
      expectBitsEqual(
        await b.read(),
        data.map((x) => x * 2),
        `vec${width}`,
      );
      a.destroy();
      b.destroy();
    }
  });

  it('atomics on both sides of each boundary: u32 and i32 read-modify-writes, f32 add, compare-exchange, load and store', async () => {
    // Counters of three segments each: the kernels' buffers then take at most 10 bindings, the least
    // an adapter here has (Chromium's WebGPU on SwiftShader; Dawn in Node has 12, the H100 16).
    const len = 2 * S + 29;
    const spots = [0, S - 1, S, S + 1, 2 * S - 1, 2 * S, len - 1];
    const m = spots.length;
    const hits = 64;
    const cu = device.createBuffer('u32', len);
    const ci = device.createBuffer('i32', len);
    const cf = device.createBuffer('f32', len);
    expect(segmentsOf(cu)).toHaveLength(3);
    const at = device.createBuffer('u32', spots);
    // Invocation i works on spots[i % m]; out-of-range atomics are dropped and return 0.
    const add = defineKernel({
      name: 'seg_atomic_add',
      workgroupSize: 64,
      params: {
        spots: buffer('u32', 'read'),
        cu: buffer('u32', 'atomic'),
        ci: buffer('i32', 'atomic'),
        cf: buffer('f32', 'atomic'),
        m: uniform('u32'),
      },
      body: ({ spots, cu, ci, cf, m }, k) => {
        const i = k.let(k.globalIndex);
        const p = k.let(spots.load(i.rem(m)));
        cu.atomicAdd(p, 1);
        ci.atomicSub(p, 3);
        cf.atomicAdd(p, f32(0.5));
        cu.atomicAdd(cu.length.add(i), 1);
        ci.atomicSub(ci.length.add(i), 1);
        cf.atomicAdd(cf.length.add(3), f32(1));
        cu.store(cu.length, 9);
      },
    });
    device.dispatch(add, { invocations: hits * m }, { spots: at, cu, ci, cf, m });
    const wantU = new Uint32Array(len);
    const wantI = new Int32Array(len);
    const wantF = new Float32Array(len);
    for (const p of spots) {
      wantU[p] = hits;
      wantI[p] = -3 * hits;
      wantF[p] = 0.5 * hits;
    }
    expectBitsEqual(await cu.read(), wantU, 'u32 add');
    expectBitsEqual(await ci.read(), wantI, 'i32 sub');
    expectBitsEqual(await cf.read(), wantF, 'f32 add');

    // Compare-exchange: of the invocations on a spot, exactly one finds `hits` there and claims it.
    // Max on the i32 counters (all negative) sets each spot to 5; out-of-range ones return 0.
    const claim = defineKernel({
      name: 'seg_atomic_claim',
      workgroupSize: 64,
      params: {
        spots: buffer('u32', 'read'),
        cu: buffer('u32', 'atomic'),
        ci: buffer('i32', 'atomic'),
        old: buffer('u32', 'write'),
        m: uniform('u32'),
      },
      body: ({ spots, cu, ci, old, m }, k) => {
        const i = k.let(k.globalIndex);
        const p = k.let(spots.load(i.rem(m)));
        const seen = k.let(cu.atomicCompareExchange(p, hits, i.add(1000)));
        const past = k.let(cu.atomicCompareExchange(cu.length.add(1), 0, 1));
        const max = k.let(ci.atomicMax(p, 5).add(ci.atomicMax(ci.length, 5)));
        old.store(i, seen.add(past).add(max.bitcast('u32')));
      },
    });
    const old = device.createBuffer('u32', hits * m);
    device.dispatch(claim, { invocations: hits * m }, { spots: at, cu, ci, old, m });
    const u = await cu.read();
    const o = await old.read();
    const i32 = await ci.read();
    for (const [j, p] of spots.entries()) {
      const claimer = (u[p] as number) - 1000;
      expect(claimer % m, `claimer of ${p}`).toBe(j);
      // Old values: the claimer saw `hits`, the others 1000 + the claimer; each saw the i32 counter's -3 * hits or 5.
      for (let inv = j; inv < hits * m; inv += m) {
        const sawMax = (o[inv] as number) - (inv === claimer ? hits : 1000 + claimer);
        expect([(-3 * hits) >>> 0, 5], `invocation ${inv}`).toContain(sawMax >>> 0);
      }
      expect(i32[p]).toBe(5);
    }
    for (let p = 0; p < len; p++) if (!spots.includes(p)) expect(u[p], `element ${p}`).toBe(0);

    // Loads through the atomic helpers (the clamped form) see the same values, and 0 out of range.
    const load = defineKernel({
      name: 'seg_atomic_load',
      workgroupSize: 64,
      params: { cu: buffer('u32', 'atomic'), out: buffer('u32', 'write') },
      body: ({ cu, out }, k) => out.store(k.globalIndex, cu.load(k.globalIndex)),
    });
    const loadF = defineKernel({
      name: 'seg_atomic_load_f32',
      workgroupSize: 64,
      params: { cf: buffer('f32', 'atomic'), out: buffer('f32', 'write') },
      body: ({ cf, out }, k) => out.store(k.globalIndex, cf.load(k.globalIndex)),
    });
    const out = device.createBuffer('u32', len + 40);
    const outf = device.createBuffer('f32', len + 40);
    out.fill(77);
    outf.fill(77);
    device.dispatch(load, { invocations: len + 40 }, { cu, out });
    device.dispatch(loadF, { invocations: len + 40 }, { cf, out: outf });
    const lu = await out.read();
    expectBitsEqual(lu.subarray(0, len), u, 'atomic loads');
    expect([...lu.subarray(len)].every((v) => v === 0)).toBe(true);
    expectBitsEqual((await outf.read()).subarray(0, len), wantF, 'f32 atomic loads');
    // Atomic stores to every element (and past the end: dropped).
    const store = defineKernel({
      name: 'seg_atomic_store',
      workgroupSize: 64,
      params: { cu: buffer('u32', 'atomic'), cf: buffer('f32', 'atomic') },
      body: ({ cu, cf }, k) => {
        const i = k.let(k.globalIndex);
        cu.store(i, i.mul(3));
        cf.store(i, f32(-1.5));
      },
    });
    device.dispatch(store, { invocations: len + 64 }, { cu, cf });
    expectBitsEqual(
      await cu.read(),
      Uint32Array.from({ length: len }, (_, j) => j * 3),
      'atomic stores',
    );
    expectBitsEqual(await cf.read(), new Float32Array(len).fill(-1.5), 'f32 atomic stores');
    for (const b of [cu, ci, cf, at, old, out, outf]) b.destroy();
  });

  it('segment views (device.segments): one buffer a segment, sharing the memory and its lifetime', async () => {
    const fits = device.createBuffer('u32', 100);
    expect(device.segments(fits)).toEqual([fits]);
    const data = randomU32(N, 3);
    const big = device.createBuffer('u32', data);
    const views = device.segments(big);
    expect(device.segments(big)).toBe(views);
    expect(views.map((v) => v.length)).toEqual([S, S, S, N - 3 * S]);
    expect(views.map((v) => v.parentOffset)).toEqual([0, S, 2 * S, 3 * S]);
    for (const v of views) {
      expect(v.parent).toBe(big);
      expect(segmentsOf(v)).toHaveLength(1);
      expect(device.segments(v)).toEqual([v]);
    }
    for (const [k, v] of views.entries()) expectBitsEqual(await v.read(), data.subarray(k * S, k * S + v.length), `view ${k}`);
    // A write through a view is a write to the buffer; a kernel bound to a view sees that segment alone.
    (views[2] as Buffer<'u32'>).write([7, 8, 9], S - 3);
    const want = data.slice();
    want.set([7, 8, 9], 3 * S - 3);
    expectBitsEqual(await big.read(), want, 'buffer after a write through a view');
    expectBitsEqual(await zcopy(device, views[2] as Buffer<'u32'>).read(), want.subarray(2 * S, 3 * S), 'zcopy of a view');
    // Aliases: a kernel that writes must not see the buffer and one of its views, nor a copy overlap them.
    const copy = defineKernel({
      name: 'seg_view_copy',
      workgroupSize: 64,
      params: { a: buffer('u32', 'read'), b: buffer('u32', 'write') },
      body: ({ a, b }, k) => b.store(k.globalIndex, a.load(k.globalIndex)),
    });
    expect(() => device.dispatch(copy, { invocations: 64 }, { a: big, b: views[1] as Buffer<'u32'> })).toThrow(/same buffer/);
    expect(() => device.dispatch(copy, { invocations: 64 }, { a: views[0] as Buffer<'u32'>, b: big })).toThrow(/same buffer/);
    device.dispatch(copy, { invocations: 64 }, { a: views[0] as Buffer<'u32'>, b: views[1] as Buffer<'u32'> });
    want.copyWithin(S, 0, 64);
    expect(() => device.copyBuffer(big, views[1] as Buffer<'u32'>, { srcOffset: S + 5, length: 10 })).toThrow(/overlap/);
    device.copyBuffer(big, views[1] as Buffer<'u32'>, { srcOffset: 0, dstOffset: 100, length: 10 });
    want.copyWithin(S + 100, 0, 10);
    expectBitsEqual(await big.read(), want, 'buffer after a dispatch and a copy on views');
    // A view owns nothing: destroying it does nothing; destroying the buffer destroys its views.
    (views[0] as Buffer<'u32'>).destroy();
    expect(views[0]?.destroyed).toBe(false);
    expectBitsEqual(await big.read({ length: 10 }), want.subarray(0, 10), 'buffer after destroying a view');
    big.destroy();
    for (const v of views) expect(v.destroyed).toBe(true);
    await expect(async () => (views[1] as Buffer<'u32'>).read()).rejects.toThrow(/destroyed/);
    fits.destroy();
  });

  it('read, write, copy and fill ranges that cross segment boundaries', async () => {
    const data = randomU32(N, 2);
    const a = device.createBuffer('u32', N);
    a.write(data.subarray(0, S - 3));
    a.write(data.subarray(S - 3), S - 3); // from inside the first segment to the end
    expectBitsEqual(await a.read(), data, 'write');
    expectBitsEqual(await a.read({ offset: S - 5, length: 2 * S + 10 }), data.subarray(S - 5, 3 * S + 5), 'read range');
    const into = new Uint32Array(S + 20).fill(1);
    await a.read({ offset: 2 * S - 10, length: 20, into });
    expectBitsEqual(into.subarray(0, 20), data.subarray(2 * S - 10, 2 * S + 10), 'read into');
    expect(into[20]).toBe(1);

    // Copies whose boundaries do not line up on either side, into a segmented and a one-binding buffer.
    const b = device.createBuffer('u32', N + 500);
    device.copyBuffer(a, b, { srcOffset: 7, dstOffset: 400, length: N - 7 });
    const gotB = await b.read();
    expectBitsEqual(gotB.subarray(400, 400 + N - 7), data.subarray(7), 'copy');
    expect([...gotB.subarray(0, 400)].every((v) => v === 0)).toBe(true);
    const small = device.createBuffer('u32', 300);
    device.copyBuffer(a, small, { srcOffset: S - 150, length: 300 });
    expectBitsEqual(await small.read(), data.subarray(S - 150, S + 150), 'copy to one binding');
    device.copyBuffer(small, a, { dstOffset: 2 * S - 100, length: 300 });
    const want = data.slice();
    want.set(data.subarray(S - 150, S + 150), 2 * S - 100);
    expectBitsEqual(await a.read(), want, 'copy from one binding');
    // Within one buffer: from the first segment into the third and last (ranges apart).
    device.copyBuffer(a, a, { srcOffset: 10, dstOffset: 3 * S - 20, length: 40 });
    want.copyWithin(3 * S - 20, 10, 50);
    expectBitsEqual(await a.read(), want, 'copy within');

    // Fills: a value (the fill kernel), zero with nothing recorded (clearBuffer), zero after a
    // dispatch (the fill kernel again, inside the open pass).
    a.fill(5, { offset: S - 1, length: S + 2 });
    want.fill(5, S - 1, 2 * S + 1);
    expectBitsEqual(await a.read(), want, 'fill');
    await device.flush();
    a.fill(0, { offset: 2 * S - 4, length: S + 8 });
    want.fill(0, 2 * S - 4, 3 * S + 4);
    expectBitsEqual(await a.read(), want, 'clear');
    const f = device.createBuffer('f32', N);
    zcopy(device, device.createBuffer('u32', 4));
    f.fill(-0.25);
    a.fill(0, { offset: 1, length: N - 2 });
    expectBitsEqual(await f.read(), new Float32Array(N).fill(-0.25), 'f32 fill');
    want.fill(0, 1, N - 1);
    expectBitsEqual(await a.read(), want, 'zero fill in a pass');
  });

  it('refuses a kernel whose buffers span more bindings than a kernel may have, naming it', async () => {
    // Two buffers of p and q segments, p + q one more than a kernel may bind.
    const limit = device.caps.limits.maxBuffersPerKernel;
    const p = Math.ceil((limit + 1) / 2);
    const q = limit + 1 - p;
    const k = defineKernel({
      name: 'seg_too_many',
      workgroupSize: 64,
      params: { a: buffer('u32', 'read'), b: buffer('u32', 'write') },
      body: ({ a, b }, k) => b.store(k.globalIndex, a.load(k.globalIndex)),
    });
    const a = device.createBuffer('u32', (p - 1) * S + 1);
    const b = device.createBuffer('u32', (q - 1) * S + 1);
    expect(segmentsOf(a)).toHaveLength(p);
    expect(segmentsOf(b)).toHaveLength(q);
    let error: unknown;
    try {
      device.dispatch(k, { invocations: 64 }, { a, b });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LimitExceededError);
    const e = error as LimitExceededError;
    expect(e.limit).toBe('maxBuffersPerKernel');
    expect(e.requested).toBe(limit + 1);
    expect(e.allowed).toBe(limit);
    expect(e.message).toContain("'seg_too_many'");
    expect(e.message).toContain(`span ${limit + 1} bindings`);
    // One segment fewer fits exactly, and runs.
    const c = device.createBuffer(
      'u32',
      Uint32Array.from({ length: (p - 2) * S + 1 }, (_, i) => i),
    );
    device.dispatch(k, { invocations: (q - 1) * S + 1 }, { a: c, b });
    const got = await b.read();
    expectBitsEqual(got.subarray(0, c.length), await c.read(), 'copied');
    expect([...got.subarray(c.length)].every((v) => v === 0)).toBe(true);
    for (const x of [a, b, c]) x.destroy();
  });
});

describe('algorithms on webgpu buffers past one binding (4 KiB bindings)', () => {
  let real: Device;
  /**
   * The device, and its view that runs the formulations of a hardware GPU (those the H100
   * runs). SwiftShader compiles the latter's large workgroup kernels slowly, once per segment
   * count: they run where they differ from the device's own, on one size each.
   */
  let devices: Array<{ label: string; device: Device }>;
  beforeAll(async () => {
    real = await segmentedDevice();
    devices = withHardwareView(real);
  });
  afterAll(async () => {
    await real?.destroy();
  });
  const n = N;
  const data = randomU32(n, 11);
  const fdata = Float32Array.from(data, (x) => (x / 2 ** 32 - 0.5) * 1000);
  /**
   * SwiftShader binds at most 10 storage buffers a kernel in Chromium, 12 through Dawn in Node (the
   * H100 16): compact's scatter, with three large buffers beside small ones, gets arrays of two segments.
   */
  const n2 = S + 50;

  it('zcopy', async () => {
    for (const { label, device } of devices) {
      const input = device.createBuffer('u32', data);
      expect(segmentsOf(input)).toHaveLength(4);
      expectBitsEqual(await zcopy(device, input).read(), data, `${label} zcopy`);
      const f = device.createBuffer('f32', fdata);
      expectBitsEqual(await zcopy(device, f).read(), fdata, `${label} zcopy f32`);
    }
  });

  it('reduce: sum, min, max of u32 and f32', async () => {
    for (const { label, device } of devices) {
      const u = device.createBuffer('u32', data);
      const f = device.createBuffer('f32', fdata);
      for (const op of ['sum', 'min', 'max'] as const) {
        expect(await reduce(device, u, { op }), `${label} u32 ${op}`).toBe(reduceReference(data, op));
        const got = await reduce(device, f, { op });
        const want = reduceReference(fdata, op);
        // The documented bound of a pairwise sum of that depth (as alg-reduce.test.ts checks it).
        const depth = reduceSumDepth(device, n);
        const bound = gammaF32(depth) * sumAbs(fdata) + (n + depth) * 2 ** -126;
        if (op === 'sum') expect(Math.abs(got - want), `${label} f32 sum`).toBeLessThanOrEqual(bound);
        else expect(got, `${label} f32 ${op}`).toBe(want);
      }
    }
  });

  it('scan: inclusive and exclusive, u32 and f32', async () => {
    for (const { label, device } of devices) {
      const u = device.createBuffer('u32', data);
      const small = Float32Array.from(data, (x) => x & 7); // exact f32 sums: any order gives the reference
      const f = device.createBuffer('f32', small);
      for (const exclusive of [false, true]) {
        const want = scanReference(data, exclusive) as Uint32Array;
        expectBitsEqual(await scan(device, u, { exclusive }).read(), want, `${label} scan exclusive=${exclusive}`);
        const wantF = Float32Array.from(scanReference(small, exclusive));
        expectBitsEqual(await scan(device, f, { exclusive }).read(), wantF, `${label} f32 scan exclusive=${exclusive}`);
      }
    }
  });

  it('scan: the single pass over segments, one dispatch each (small tiles, partial tiles at segment ends, the fallback)', async () => {
    const small = Float32Array.from(data, (x) => (x & 7) - 3); // exact f32 sums
    const variants: Array<[string, ScanVariant]> = [
      ['blocked', { formulation: 'single-pass', lookback: { wg: 16, vecs: 1, layout: 'blocked' } }],
      ['subgroup, workgroup ids', { formulation: 'single-pass', lookback: { wg: 32, vecs: 2, layout: 'subgroup', ids: 'workgroup' } }],
      ['fallback', { formulation: 'single-pass', lookback: { wg: 16, vecs: 1, layout: 'blocked', spinLimit: 0, forceFallback: true } }],
    ];
    for (const [name, variant] of variants) {
      const u = real.createBuffer('u32', data);
      const f = real.createBuffer('f32', small);
      for (const exclusive of [false, true]) {
        const what = `${name} exclusive=${exclusive}`;
        expectBitsEqual(await scanVariant(real, u, { exclusive }, variant).read(), scanReference(data, exclusive) as Uint32Array, what);
        const wantF = Float32Array.from(scanReference(small, exclusive));
        expectBitsEqual(await scanVariant(real, f, { exclusive }, variant).read(), wantF, `f32 ${what}`);
      }
      u.destroy();
      f.destroy();
    }
  });

  it('histogram: values past one binding, and bins past one binding', async () => {
    const values = data.map((x) => x % 300);
    for (const { label, device } of devices) {
      const out = histogram(device, device.createBuffer('u32', values), { bins: 300 });
      expectBitsEqual(await out.read(), histogramReference(values, 300), `${label} histogram`);
    }
    const bins = 2 * S + 5;
    const wide = data.map((x) => x % bins);
    const outWide = histogram(real, real.createBuffer('u32', wide), { bins });
    expect(segmentsOf(outWide)).toHaveLength(3);
    expectBitsEqual(await outWide.read(), histogramReference(wide, bins), 'histogram, wide');
  });

  it('compact', async () => {
    const flags = data.subarray(0, n2).map((x) => (x >>> 7) & 1);
    const input = fdata.subarray(0, n2);
    const want = compactReference(input, flags);
    for (const { label, device } of devices) {
      const { count, output } = await compact(device, device.createBuffer('f32', input), device.createBuffer('u32', flags));
      expect(count, label).toBe(want.length);
      expectBitsEqual(await output.read(), want, `${label} compact`);
    }
  });

  it('compact: tiles one segment of the input and flags a dispatch (tiles numbered across segments, partial tiles at segment ends)', async () => {
    // Tiles of 64 x 4 elements: three whole ones and a partial one each segment of 1020.
    const shape = { wg: 64, items: 4 };
    for (const length of [N, N + 3]) {
      const values = data.subarray(0, length);
      const flags = values.map((x) => (x >>> 9) & 1);
      const input = real.createBuffer('u32', values);
      const flagBuffer = real.createBuffer('u32', flags);
      expect(segmentsOf(input)).toHaveLength(4);
      const want = compactReference(values, flags);
      const { count, output } = await compactTiles(real, input, flagBuffer, shape);
      expect(count, `n=${length}`).toBe(want.length);
      expectBitsEqual(await output.read(), want, `compactTiles n=${length}`);
      for (const b of [input, flagBuffer, output]) b.destroy();
    }
    // compactInto as a hardware GPU runs it (its tile shape), into an output of four segments.
    const view = manyInvocationsView(real);
    const values = data.subarray(0, N);
    const flags = values.map((x) => (x >>> 3) & 1);
    const output = view.createBuffer('u32', N);
    const count = view.createBuffer('u32', 1);
    await compactInto(view, view.createBuffer('u32', values), view.createBuffer('u32', flags), { output, count });
    const want = compactReference(values, flags);
    expect((await count.read())[0]).toBe(want.length);
    expectBitsEqual((await output.read()).subarray(0, want.length), want, 'compactInto, hardware view');
  });

  it('compact: flags and input read as vec4s (a length that divides by 4), all kept and half kept', async () => {
    const n4 = S + 52;
    const values = data.subarray(0, n4);
    const patterns = { all: new Uint32Array(n4).fill(1), half: values.map((x) => (x >>> 5) & 1) };
    for (const { label, device } of devices) {
      const input = device.createBuffer('u32', values);
      expect(segmentsOf(input), label).toHaveLength(2);
      for (const [pattern, flags] of Object.entries(patterns)) {
        const want = compactReference(values, flags);
        const { count, output } = await compact(device, input, device.createBuffer('u32', flags));
        expect(count, `${label} ${pattern}`).toBe(want.length);
        expectBitsEqual(await output.read(), want, `${label} compact ${pattern}`);
      }
    }
  });
});
