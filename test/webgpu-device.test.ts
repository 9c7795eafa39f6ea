/**
 * WebGPU-specific behaviour (the shared conformance specs cover the rest):
 * caps from the adapter's real limits, buffers larger than one binding, subgroup
 * sizes other than 32, timestamp timers, WebGPU errors as typed errors, destroy,
 * stream order across staged writes, and the generated WGSL computing exactly what
 * the JS reference (core's JS generator, the CPU backend's code) computes.
 */
/// <reference types="@webgpu/types" />

import { reduce, scan } from '@trident/algorithms';
import { generateJs } from '@trident/backend-cpu/internal';
import type { WebGpuDevice } from '@trident/backend-webgpu';
import {
  buffer,
  cos,
  createDevice,
  type Device,
  DeviceLostError,
  defineKernel,
  type Kernel,
  KernelBuildError,
  KernelExecutionError,
  LimitExceededError,
  select,
  sin,
  UnsupportedFeatureError,
  u32,
  uniform,
  vec,
} from 'trident';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomU32 } from './harness.ts';

const impl = (d: Device) => d.impl as WebGpuDevice;

/** Runs `kernel` sequentially through core's JS generator: the reference the CPU backend also runs. */
function jsReference(kernel: Kernel, workgroups: number, buffers: Record<string, Uint32Array>, uniforms: Record<string, number>): void {
  const run = new Function(`return ${generateJs(kernel).source};`)() as (
    b: Record<string, Uint32Array>,
    u: Record<string, number>,
    start: number,
    end: number,
    total: number,
  ) => void;
  run(buffers, uniforms, 0, workgroups, workgroups);
}

/** b[i] = a[i] + 1: a dispatch whose output shows which writes it saw. */
const COPY_PLUS = defineKernel({
  name: 'copy_plus',
  workgroupSize: 64,
  params: { a: buffer('u32', 'read'), b: buffer('u32', 'write') },
  body: ({ a, b }, k) => b.store(k.globalIndex, a.load(k.globalIndex).add(1)),
});

describe('webgpu backend', () => {
  let device: Device;
  beforeAll(async () => {
    device = await createDevice({ backend: 'webgpu' });
  });
  afterAll(async () => {
    await device?.destroy();
  });

  it('reports the limits and features it requested from the adapter', () => {
    const gpu = impl(device).gpu;
    const { limits, features, timerSource } = device.caps;
    // One element of every binding is kept for the buffer's spare element (webgpu-buffer.ts).
    expect(limits.maxStorageBufferBindingSize).toBe(
      gpu.limits.maxStorageBufferBindingSize - (gpu.limits.maxStorageBufferBindingSize % 4) - 4,
    );
    expect(limits.maxComputeWorkgroupStorageSize).toBe(gpu.limits.maxComputeWorkgroupStorageSize);
    expect(limits.maxComputeWorkgroupsPerDimension).toBe(gpu.limits.maxComputeWorkgroupsPerDimension);
    expect(limits.maxBuffersPerKernel).toBe(gpu.limits.maxStorageBuffersPerShaderStage);
    // Buffers past one binding (or past maxBufferSize) are held as several GPUBuffers, up to 2^31 elements.
    expect(limits.maxBufferElements).toBe(2 ** 31);
    // Real limits, not WebGPU's defaults (128 MiB bindings, 16 KiB workgroup memory).
    expect(limits.maxStorageBufferBindingSize).toBeGreaterThan(128 * 2 ** 20);
    expect(limits.maxComputeWorkgroupStorageSize).toBeGreaterThan(16384);
    expect(features.has('subgroup')).toBe(gpu.features.has('subgroups'));
    expect(features.has('timestamp')).toBe(gpu.features.has('timestamp-query'));
    expect(timerSource).toBe(gpu.features.has('timestamp-query') ? 'gpu-timestamp' : 'wall');
    for (const f of ['gather', 'scatter', 'atomic', 'atomic-other', 'workgroup'] as const) expect(features.has(f)).toBe(true);
    if (/swiftshader/i.test(device.info.adapter)) expect(device.info.software).toBe(true);
  });

  it('keeps stream order when a write follows recorded dispatches (staged write)', async () => {
    const n = 300;
    const a = device.createBuffer('u32', n);
    const b1 = device.createBuffer('u32', n);
    const b2 = device.createBuffer('u32', n);
    a.write(Uint32Array.from({ length: n }, (_, i) => i));
    device.dispatch(COPY_PLUS, { invocations: n }, { a, b: b1 });
    a.write(Uint32Array.from({ length: n }, (_, i) => 1000 + i)); // recorded after the dispatch
    device.dispatch(COPY_PLUS, { invocations: n }, { a, b: b2 });
    a.fill(5, { offset: 10, length: 3 });
    const [r1, r2, ra] = await Promise.all([b1.read(), b2.read(), a.read({ offset: 9, length: 5 })]);
    expect(r1[7]).toBe(8);
    expect(r1[n - 1]).toBe(n);
    expect(r2[7]).toBe(1008);
    expect(r2[n - 1]).toBe(1000 + n);
    expect([...ra]).toEqual([1009, 5, 5, 5, 1013]);
    for (const b of [a, b1, b2]) b.destroy();
  });

  it('takes data from views of shared memory (Dawn in Node crashed on them), whole and in part', async () => {
    const n = 5000;
    const shared = new Uint32Array(new SharedArrayBuffer(4 * (n + 8)), 16, n);
    for (let i = 0; i < n; i++) shared[i] = 3 * i + 1;
    const b = device.createBuffer('u32', shared);
    expect([...(await b.read())]).toEqual([...shared]);
    b.write(shared.subarray(100, 200), 7);
    const got = await b.read({ offset: 7, length: 100 });
    expect([...got]).toEqual([...shared.subarray(100, 200)]);
    b.destroy();
  });

  it('zero fills between dispatches keep stream order: small ones (a fill kernel in the open pass) and large ones (clearBuffer)', async () => {
    // 2^18 u32 = 1 MiB: a whole-buffer fill reaches clearBuffer's threshold; 3 elements stay below it.
    for (const [n, offset, length] of [
      [300, 10, 3],
      [1 << 18, 0, 1 << 18],
    ] as const) {
      const a = device.createBuffer(
        'u32',
        Uint32Array.from({ length: n }, (_, i) => i),
      );
      const b = device.createBuffer('u32', n);
      const c = device.createBuffer('u32', n);
      device.dispatch(COPY_PLUS, { invocations: n }, { a, b }); // b = i + 1
      b.fill(0, { offset, length }); // recorded after the dispatch that wrote b, before the one that reads it
      device.dispatch(COPY_PLUS, { invocations: n }, { a: b, b: c });
      const got = await c.read();
      const want = Uint32Array.from({ length: n }, (_, i) => (i >= offset && i < offset + length ? 1 : i + 2));
      expect(got).toEqual(want);
      for (const x of [a, b, c]) x.destroy();
    }
  });

  it('zeroes pooled buffers on reuse and copies within one buffer', async () => {
    const a = device.createBuffer('f32', 1000);
    a.fill(2.5);
    expect((await a.read({ offset: 999 }))[0]).toBe(2.5);
    a.destroy();
    const b = device.createBuffer('f32', 1000); // same size: comes from the pool
    expect((await b.read()).every((v) => v === 0)).toBe(true);
    b.write(
      Float32Array.from({ length: 10 }, (_, i) => i),
      0,
    );
    device.copyBuffer(b, b, { srcOffset: 0, dstOffset: 500, length: 10 });
    expect([...(await b.read({ offset: 498, length: 13 }))]).toEqual([0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0]);
    const empty = device.createBuffer('u32', 0);
    expect((await empty.read()).length).toBe(0);
    b.destroy();
    empty.destroy();
  });

  it('linearises 3-D grids: globalIndex covers 0..n-1 once, numWorkgroups is the product', async () => {
    const k = defineKernel({
      name: 'grid_ids',
      workgroupSize: 16,
      params: { out: buffer('u32', 'write'), nwg: buffer('u32', 'write') },
      body: ({ out, nwg }, k) => {
        out.store(k.globalIndex, k.globalIndex.add(1));
        k.if(k.globalIndex.eq(0), () => nwg.store(0, k.numWorkgroups));
      },
    });
    const out = device.createBuffer('u32', 3 * 2 * 5 * 16);
    const nwg = device.createBuffer('u32', 1);
    device.dispatch(k, { workgroups: [3, 2, 5] }, { out, nwg });
    const got = await out.read();
    expect(got.every((v, i) => v === i + 1)).toBe(true);
    expect((await nwg.read())[0]).toBe(30);
  });

  it('runs subgroup kernels at the adapter subgroup size (4 on SwiftShader), not an assumed 32', async () => {
    if (!device.caps.features.has('subgroup')) {
      expect(device.caps.limits.maxSubgroupSize).toBe(0);
      return;
    }
    const wg = 32;
    const k = defineKernel({
      name: 'sg_probe',
      workgroupSize: wg,
      params: { size: buffer('u32', 'write'), sum: buffer('u32', 'write'), incl: buffer('u32', 'write'), excl: buffer('u32', 'write') },
      body: ({ size, sum, incl, excl }, k) => {
        const i = k.globalIndex;
        size.store(i, k.subgroupSize);
        sum.store(i, k.subgroupAdd(u32(1)));
        incl.store(i, k.subgroupInclusiveAdd(k.subgroupInvocation.add(1)));
        excl.store(i, k.subgroupExclusiveAdd(u32(1)));
      },
    });
    const n = wg * 2;
    const bufs = {
      size: device.createBuffer('u32', n),
      sum: device.createBuffer('u32', n),
      incl: device.createBuffer('u32', n),
      excl: device.createBuffer('u32', n),
    };
    device.dispatch(k, { invocations: n }, bufs);
    const [size, sum, incl, excl] = await Promise.all([bufs.size.read(), bufs.sum.read(), bufs.incl.read(), bufs.excl.read()]);
    const s = size[0] as number;
    expect(s).toBeGreaterThanOrEqual(device.caps.limits.minSubgroupSize);
    expect(s).toBeLessThanOrEqual(device.caps.limits.maxSubgroupSize);
    if (/swiftshader/i.test(device.info.adapter)) expect(s).toBe(4);
    for (let i = 0; i < n; i++) {
      const lane = (i % wg) % s; // workgroups split into whole subgroups along the local index
      expect(size[i]).toBe(s);
      expect(sum[i]).toBe(s);
      expect(incl[i]).toBe(((lane + 1) * (lane + 2)) / 2);
      expect(excl[i]).toBe(lane);
    }
  });

  it('reduces a block with subgroupAdd and workgroup memory, whatever the subgroup size', async () => {
    if (!device.caps.features.has('subgroup')) {
      expect(device.caps.limits.maxSubgroupSize).toBe(0); // as in the test above
      return;
    }
    const wg = 64;
    const k = defineKernel({
      name: 'sg_block_sum',
      workgroupSize: wg,
      params: { x: buffer('u32', 'read'), out: buffer('u32', 'atomic') },
      body: ({ x, out }, k) => {
        const partial = k.workgroupArray('u32', wg);
        const s = k.subgroupAdd(x.load(k.globalIndex));
        k.if(k.subgroupInvocation.eq(0), () => partial.store(k.localIndex.div(k.subgroupSize), s));
        k.barrier();
        k.if(k.localIndex.eq(0), () => {
          const acc = k.var('u32', 0, 'acc');
          k.for({ from: 0, to: u32(wg).div(k.subgroupSize) }, (j) => acc.set(acc.add(partial.load(j))));
          out.atomicAdd(0, acc);
        });
      },
    });
    const n = 1000;
    const data = randomU32(n, 7).map((v) => v & 0xffff);
    const x = device.createBuffer('u32', data);
    const out = device.createBuffer('u32', 1);
    device.dispatch(k, { invocations: n }, { x, out });
    const want = data.reduce((a, v) => (a + v) >>> 0, 0);
    expect((await out.read())[0]).toBe(want);
  });

  it('times work with GPU timestamps and labels the source', async () => {
    const k = defineKernel({
      name: 'busy',
      workgroupSize: 64,
      params: { x: buffer('f32', 'read_write') },
      body: ({ x }, k) => x.store(k.globalIndex, x.load(k.globalIndex).mul(1.0001).add(1)),
    });
    const x = device.createBuffer('f32', 4096);
    const t = await device.time('busy', () => {
      for (let i = 0; i < 4; i++) device.dispatch(k, { invocations: 4096 }, { x });
    });
    expect(t.source).toBe(device.caps.features.has('timestamp') ? 'gpu-timestamp' : 'wall');
    expect(t.ms).toBeGreaterThan(0);
    expect(t.ms).toBeLessThan(10_000);
    expect((await x.read({ length: 1 }))[0]).toBeCloseTo(4.0006, 3);
  });

  it('a read costs one submit and one map round trip, reuses its staging buffer and waits on the queue no further', async () => {
    const a = device.createBuffer(
      'u32',
      Uint32Array.from({ length: 5000 }, (_, i) => i * 3),
    );
    const counters = impl(device).counters;
    for (const [offset, length] of [
      [0, 5000],
      [4000, 1000],
      [17, 3],
    ] as const) {
      await a.read({ offset, length }); // may create the staging buffer of this size class
      const before = { ...counters };
      const got = await a.read({ offset, length });
      expect(got[0]).toBe(offset * 3);
      expect(got[length - 1]).toBe((offset + length - 1) * 3);
      expect({
        submits: counters.submits - before.submits,
        maps: counters.maps - before.maps,
        buffersCreated: counters.buffersCreated - before.buffersCreated,
        waits: counters.waits - before.waits,
      }).toEqual({ submits: 1, maps: 1, buffersCreated: 0, waits: 0 });
    }
    a.destroy();
  });

  it('a warmed-up reduce or scan awaited end to end: one submit, one map round trip, no GPU buffer created, no queue wait', async () => {
    const n = 3000;
    const x = device.createBuffer('u32', randomU32(n, 5));
    const out = device.createBuffer('u32', n);
    const counters = impl(device).counters;
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['reduce', () => reduce(device, x, { op: 'sum' })],
      ['scan', () => scan(device, x, { output: out }).read()],
    ];
    for (const [name, call] of calls) {
      await call(); // compiles, sizes the temporaries and the staging buffer
      const before = { ...counters };
      await call();
      const cost = Object.fromEntries(Object.entries(counters).map(([k, v]) => [k, v - (before[k as keyof typeof before] ?? 0)]));
      expect(cost, name).toEqual({ submits: 1, maps: 1, buffersCreated: 0, waits: 0 });
    }
    const data = randomU32(n, 5);
    let run = 0;
    const want = data.map((v) => {
      run = (run + v) >>> 0;
      return run;
    });
    expect([...(await out.read())]).toEqual([...want]);
    x.destroy();
    out.destroy();
  });

  it('turns an uncaptured WebGPU validation error into a typed error on the next call, once', async () => {
    const gpu = impl(device).gpu;
    // Invalid on purpose: MAP_READ may only be combined with COPY_DST.
    gpu.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });
    // Errors arrive asynchronously: the first call after their arrival reports them.
    let caught: unknown;
    for (let i = 0; i < 40 && caught === undefined; i++) {
      try {
        await device.flush();
        device.createBuffer('u32', 1).destroy();
      } catch (err) {
        caught = err;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(caught).toBeInstanceOf(KernelExecutionError);
    expect(String(caught)).toMatch(/uncaptured WebGPU error: .*MapRead/);
    // Reported once: the device goes on.
    const b = device.createBuffer('u32', 4);
    expect([...(await b.read())]).toEqual([0, 0, 0, 0]);
  });

  it('refuses a barrier under non-uniform control flow with a KernelBuildError naming the kernel; the device goes on', async () => {
    // WGSL's uniformity rules would reject this; the IR's own analysis refuses it
    // first, when the kernel is defined, so no invalid WGSL reaches the adapter.
    let err: unknown;
    try {
      defineKernel({
        name: 'bad_barrier',
        workgroupSize: 8,
        params: { out: buffer('u32', 'write') },
        body: ({ out }, k) => {
          k.if(k.localIndex.lt(4), () => k.barrier());
          out.store(k.globalIndex, 1);
        },
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KernelBuildError);
    expect((err as KernelBuildError).kernel).toBe('bad_barrier');
    await device.flush();
  });

  it('refuses kernels beyond the workgroup limits with LimitExceededError naming the limit', () => {
    const big = defineKernel({
      name: 'too_wide',
      workgroupSize: device.caps.limits.maxComputeInvocationsPerWorkgroup * 2,
      params: { out: buffer('u32', 'write') },
      body: ({ out }, k) => out.store(k.globalIndex, 1),
    });
    expect(() => device.compile(big)).toThrow(LimitExceededError);
    const words = device.caps.limits.maxComputeWorkgroupStorageSize / 4 + 1;
    const shared = defineKernel({
      name: 'too_much_shared',
      workgroupSize: 64,
      params: { out: buffer('u32', 'write') },
      body: ({ out }, k) => {
        const a = k.workgroupArray('u32', words);
        a.store(k.localIndex, 1);
        out.store(k.globalIndex, a.load(0));
      },
    });
    try {
      device.compile(shared);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(LimitExceededError);
      expect((err as LimitExceededError).limit).toBe('maxComputeWorkgroupStorageSize');
    }
    // A 3-D workgroup within the invocation limit but past the device's z extent (64 by default).
    const zMax = impl(device).gpu.limits.maxComputeWorkgroupSizeZ;
    const deep = defineKernel({
      name: 'too_deep',
      workgroupSize: [1, 1, zMax * 2],
      params: { out: buffer('u32', 'write') },
      body: ({ out }, k) => out.store(k.globalIndex, 1),
    });
    if (zMax * 2 <= device.caps.limits.maxComputeInvocationsPerWorkgroup) {
      expect(() => device.compile(deep)).toThrow(/maxComputeWorkgroupSizeZ/);
    }
  });

  it('computes exactly what the JS reference computes on integer and conversion ops', async () => {
    const n = 512;
    const k = defineKernel({
      name: 'mixed_ops',
      workgroupSize: 64,
      params: { a: buffer('u32', 'read'), b: buffer('u32', 'read'), o: buffer('u32', 'write'), s: uniform('u32') },
      body: ({ a, b, o, s }, k) => {
        const i = k.let(k.globalIndex, 'i');
        const x = a.load(i);
        const y = b.load(i);
        const xi = x.bitcast('i32');
        const yi = y.bitcast('i32').shr(u32(28));
        const f = x.bitcast('f32');
        const base = i.mul(8);
        o.store(base, x.div(y.shr(s)).add(x.rem(y.and(15))));
        o.store(base.add(1), xi.div(yi).bitcast('u32'));
        o.store(base.add(2), xi.rem(yi).bitcast('u32'));
        o.store(base.add(3), x.shl(y).xor(x.shr(y)).xor(xi.shr(y).bitcast('u32')));
        o.store(base.add(4), f.cast('u32').add(f.cast('i32').bitcast('u32')));
        o.store(base.add(5), select(x.lt(y), x.mul(y), xi.mul(yi).bitcast('u32')));
        o.store(base.add(6), x.cast('f32').cast('u32').add(xi.cast('f32').cast('i32').bitcast('u32')));
        // The vector forms of the conversions (helpers per width).
        const v = vec('u32', x, y, x.xor(y), x.shr(u32(9)));
        const vf = v.bitcast('vec4<f32>');
        const vc = v.cast('vec4<f32>').cast('vec4<u32>').add(vf.cast('vec4<u32>')).add(vf.cast('vec4<i32>').bitcast('vec4<u32>'));
        o.store(base.add(7), a.load(i.add(n)).add(b.load(xi)).add(vc.x.add(vc.y).add(vc.z).add(vc.w)));
      },
    });
    const av = randomU32(n, 99);
    const bv = randomU32(n, 1234);
    // Extremes the semantics single out: zero divisors, INT_MIN, -1, NaN and infinity bits.
    av.set([0x80000000, 0x7fc00000, 0x7f800000, 0xff800000, 0xffffffff, 0, 1, 0x4f800000]);
    bv.set([0xffffffff, 0, 0xf0000000, 16, 31, 32, 33, 0]);
    const a = device.createBuffer('u32', av);
    const b = device.createBuffer('u32', bv);
    const o = device.createBuffer('u32', n * 8);
    device.dispatch(k, { invocations: n }, { a, b, o, s: 3 });
    const gpu = await o.read();
    const ref = new Uint32Array(n * 8);
    jsReference(k, n / 64, { a: av, b: bv, o: ref }, { s: 3 });
    const bad = [...gpu.keys()].filter((i) => gpu[i] !== ref[i]).slice(0, 5);
    expect(bad.map((i) => `o[${i}] (element ${i >> 3}, op ${i & 7}): webgpu ${gpu[i]} reference ${ref[i]}`)).toEqual([]);
  });

  it('computes sin and cos to within 2 ulp of Math.sin / Math.cos on |x| <= 600 (WGSL alone promises 2^-11 absolute)', async () => {
    const k = defineKernel({
      name: 'trig_accuracy',
      workgroupSize: 64,
      params: { x: buffer('f32', 'read'), s: buffer('f32', 'write'), c: buffer('f32', 'write') },
      body: ({ x, s, c }, k) => {
        const v = x.load(k.globalIndex);
        s.store(k.globalIndex, sin(v));
        c.store(k.globalIndex, cos(v));
      },
    });
    const xs = Float32Array.from({ length: 4096 }, (_, i) => (i - 2048) * 0.2931 + (i % 5) * 1e-3);
    xs.set([0, -0, 1e-30, 0.015625, Math.PI, Number.NaN, Number.POSITIVE_INFINITY]);
    const x = device.createBuffer('f32', xs);
    const sb = device.createBuffer('f32', xs.length);
    const cb = device.createBuffer('f32', xs.length);
    device.dispatch(k, { invocations: xs.length }, { x, s: sb, c: cb });
    const [gs, gc] = [await sb.read(), await cb.read()];
    const ulp = (v: number) => 2 ** (Math.floor(Math.log2(Math.max(Math.abs(v), 2 ** -126))) - 23);
    for (let i = 0; i < xs.length; i++) {
      const v = xs[i] as number;
      if (!Number.isFinite(v)) {
        expect(Number.isNaN(gs[i] as number) && Number.isNaN(gc[i] as number), `sin/cos(${v})`).toBe(true);
        continue;
      }
      expect(Math.abs((gs[i] as number) - Math.sin(v)), `sin(${v})`).toBeLessThanOrEqual(2 * ulp(Math.sin(v)));
      expect(Math.abs((gc[i] as number) - Math.cos(v)), `cos(${v})`).toBeLessThanOrEqual(2 * ulp(Math.cos(v)));
    }
    expect(Object.is(gs[1], -0)).toBe(true);
  });

  it('matches the JS reference on a kernel that returns early before barriers', async () => {
    const k = defineKernel({
      name: 'early_exit_scan',
      workgroupSize: 32,
      params: { x: buffer('u32', 'read'), out: buffer('u32', 'write'), n: uniform('u32') },
      body: ({ x, out, n }, k) => {
        const sh = k.workgroupArray('u32', 32);
        sh.store(k.localIndex, x.load(k.globalIndex));
        k.barrier();
        k.if(k.globalIndex.ge(n), () => k.return());
        const acc = k.var('u32', 0, 'acc');
        k.for({ from: 0, to: k.localIndex.add(1) }, (j) => acc.set(acc.add(sh.load(j))));
        k.barrier();
        sh.store(k.localIndex, acc);
        k.barrier();
        out.store(k.globalIndex, sh.load(k.localIndex).add(sh.load(0)));
      },
    });
    const n = 70;
    const data = randomU32(96, 5).map((v) => v & 0xff);
    const x = device.createBuffer('u32', data);
    const out = device.createBuffer('u32', 96);
    device.dispatch(k, { invocations: 96 }, { x, out, n });
    const ref = new Uint32Array(96);
    jsReference(k, 3, { x: data, out: ref }, { n });
    expect([...(await out.read())]).toEqual([...ref]);
  });
});

describe('webgpu backend options', () => {
  it('treats buffers larger than one binding: read, write, copy and fill work, and kernels bind them', async () => {
    const binding = 64 * 1024;
    const d = await createDevice({ backend: 'webgpu', options: { webgpu: { maxStorageBufferBindingSize: binding } } });
    try {
      expect(d.caps.limits.maxStorageBufferBindingSize).toBe(binding - 4); // the spare element's room
      const n = (binding / 4) * 2 + 1000; // beyond two bindings
      const big = d.createBuffer('u32', n);
      big.fill(7, { offset: 100, length: n - 200 }); // windows of one binding each
      big.write(new Uint32Array([1, 2, 3]), n - 3);
      const other = d.createBuffer('u32', n);
      d.copyBuffer(big, other);
      const got = await other.read();
      expect(got[99]).toBe(0);
      expect(got[100]).toBe(7);
      expect(got[binding / 4]).toBe(7);
      expect(got[n - 101]).toBe(7);
      expect(got[n - 100]).toBe(0);
      expect([...got.subarray(n - 3)]).toEqual([1, 2, 3]);
      let count = 0;
      for (const v of got) if (v === 7) count++;
      expect(count).toBe(n - 200);
      const k = defineKernel({
        name: 'touch',
        workgroupSize: 64,
        params: { x: buffer('u32', 'read_write') },
        body: ({ x }, k) => x.store(k.globalIndex, 1),
      });
      // Each binding-sized part is a binding of its own (webgpu-segments.test.ts has the rest).
      d.dispatch(k, { invocations: n }, { x: big });
      expect([...(await big.read())].every((v) => v === 1)).toBe(true);
      expect(() => d.createBuffer('u32', d.caps.limits.maxBufferElements + 1)).toThrow(LimitExceededError);
    } finally {
      await d.destroy();
    }
  });

  it('without subgroups and timestamps: subgroup kernels are refused at compile, timers say wall', async () => {
    const d = await createDevice({ backend: 'webgpu', options: { webgpu: { disableFeatures: ['subgroups', 'timestamp-query'] } } });
    try {
      expect(d.caps.features.has('subgroup')).toBe(false);
      expect(d.caps.limits.maxSubgroupSize).toBe(0);
      expect(d.caps.timerSource).toBe('wall');
      const k = defineKernel({
        name: 'needs_sg',
        workgroupSize: 32,
        params: { out: buffer('u32', 'write') },
        body: ({ out }, k) => out.store(k.globalIndex, k.subgroupAdd(u32(1))),
      });
      try {
        d.compile(k);
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(UnsupportedFeatureError);
        expect((err as UnsupportedFeatureError).feature).toBe('subgroup');
      }
      const t = await d.time('nothing', () => undefined);
      expect(t.source).toBe('wall');
    } finally {
      await d.destroy();
    }
  });

  it('destroy releases the GPU device; later calls throw DeviceLostError', async () => {
    const d = await createDevice({ backend: 'webgpu' });
    const gpu = impl(d).gpu;
    const b = d.createBuffer('u32', 16);
    b.fill(3);
    await d.destroy();
    const info = await gpu.lost;
    expect(info.reason).toBe('destroyed');
    expect(d.impl.lostReason()).toMatch(/destroyed/);
    expect(() => d.createBuffer('u32', 4)).toThrow(DeviceLostError);
    await expect(b.read()).rejects.toThrow();
  });
});
