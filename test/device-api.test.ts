/**
 * The device interface on every backend: buffers, stream order, timers and the
 * typed errors for bad input (which must change nothing).
 */
import {
  Buffer,
  buffer,
  createDevice,
  DeviceLostError,
  defineKernel,
  InvalidArgumentError,
  LimitExceededError,
  TridentError,
  uniform,
} from 'trident';
import { expect, it } from 'vitest';
import { describeEachBackend, TEST_DEVICE_OPTIONS } from './harness.ts';

const addScalar = defineKernel({
  name: 'api_add_scalar',
  workgroupSize: 32,
  params: { x: buffer('u32', 'read'), y: buffer('u32', 'write'), v: uniform('u32') },
  body: ({ x, y, v }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(y.length), () => y.store(i, x.load(i).add(v)));
  },
});

/** out[0] = the grid's workgroup count as kernels see it. */
const countWorkgroups = defineKernel({
  name: 'api_count_workgroups',
  workgroupSize: 32,
  params: { out: buffer('u32', 'write') },
  body: ({ out }, k) => {
    k.if(k.globalIndex.eq(0), () => out.store(0, k.numWorkgroups));
  },
});

describeEachBackend('device API', (ctx) => {
  it('reports caps and info', () => {
    const { caps, info } = ctx.device;
    expect(info.backend).toBe(ctx.kind);
    expect(caps.limits.maxBufferElements).toBeGreaterThan(0);
    expect(caps.limits.maxComputeInvocationsPerWorkgroup).toBeGreaterThanOrEqual(64);
    expect(caps.features.has('gather')).toBe(true);
    expect(['gpu-timestamp', 'wall']).toContain(caps.timerSource);
  });

  it('creates buffers from lengths and data, reads ranges back, writes at offsets', async () => {
    const d = ctx.device;
    const a = d.createBuffer('i32', [5, -6, 7, -8, 9]);
    expect(a.length).toBe(5);
    expect(a.byteLength).toBe(20);
    expect(Array.from(await a.read())).toEqual([5, -6, 7, -8, 9]);
    expect(Array.from(await a.read({ offset: 1, length: 3 }))).toEqual([-6, 7, -8]);
    a.write(new Int32Array([100, 200]), 3);
    expect(Array.from(await a.read())).toEqual([5, -6, 7, 100, 200]);
    const z = d.createBuffer('f32', 3);
    expect(Array.from(await z.read())).toEqual([0, 0, 0]);
    const empty = d.createBuffer('u32', 0);
    expect((await empty.read()).length).toBe(0);
  });

  it('reads into a caller-owned array: the range lands at its start, the rest is untouched, the same array comes back', async () => {
    const d = ctx.device;
    const f = d.createBuffer('f32', [1.5, -0, Number.NaN, -Infinity, 3e-39]);
    const into = new Float32Array(7).fill(42);
    const got = await f.read({ offset: 1, length: 4, into });
    expect(got).toBe(into);
    // Bit patterns survive (negative zero, NaN, a subnormal).
    expect(Array.from(new Uint32Array(into.buffer))).toEqual([
      ...new Uint32Array(new Float32Array([-0, Number.NaN, -Infinity, 3e-39]).buffer),
      ...new Uint32Array(new Float32Array([42, 42, 42]).buffer),
    ]);
    // A view into a larger array: only its own elements change.
    const backing = new Int32Array(6).fill(-1);
    const i = d.createBuffer('i32', [7, -8, 9]);
    expect(await i.read({ into: backing.subarray(2, 5) })).toEqual(new Int32Array([7, -8, 9]));
    expect(Array.from(backing)).toEqual([-1, -1, 7, -8, 9, -1]);
    // Stream order holds: the read sees the write enqueued before it.
    const u = d.createBuffer('u32', 3);
    u.write([4, 5, 6]);
    const reused = new Uint32Array(3);
    await u.read({ into: reused });
    u.write([7], 1);
    await u.read({ into: reused });
    expect(Array.from(reused)).toEqual([4, 7, 6]);
    expect(await u.read({ length: 0, into: reused })).toBe(reused);
    // Wrong type or too short: a typed error, and the target is left as it was.
    const short = new Uint32Array(2).fill(9);
    for (const [into, message] of [
      [new Int32Array(3), /Uint32Array for a u32 buffer, got a Int32Array/],
      [[0, 0, 0], /Uint32Array for a u32 buffer, got a Array/],
      [short, /has 2 elements, the read needs 3/],
    ] as const) {
      const err = await u.read({ into: into as Uint32Array }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).argument).toBe('into');
      expect(String(err)).toMatch(message);
    }
    expect(Array.from(short)).toEqual([9, 9]);
  });

  it('fills and copies ranges in stream order', async () => {
    const d = ctx.device;
    const a = d.createBuffer('u32', 10);
    a.fill(7);
    a.fill(9, { offset: 2, length: 3 });
    const b = d.createBuffer('u32', 6);
    d.copyBuffer(a, b, { srcOffset: 1, dstOffset: 2, length: 4 });
    expect(Array.from(await a.read())).toEqual([7, 7, 9, 9, 9, 7, 7, 7, 7, 7]);
    expect(Array.from(await b.read())).toEqual([0, 0, 7, 9, 9, 9]);
  });

  it('segments: a buffer within one binding is its own only segment', () => {
    const d = ctx.device;
    const a = d.createBuffer('u32', 1000);
    expect(d.segments(a)).toEqual([a]);
    expect(a.parent).toBeUndefined();
    expect(a.parentOffset).toBe(0);
    a.destroy();
    expect(() => d.segments(a)).toThrow(InvalidArgumentError);
  });

  it('keeps stream order between writes and dispatches (each sees every earlier one)', async () => {
    const d = ctx.device;
    const n = 100;
    const x = d.createBuffer('u32', n);
    const y = d.createBuffer('u32', n);
    const z = d.createBuffer('u32', n);
    x.write(new Uint32Array(n).fill(1));
    d.dispatch(addScalar, { invocations: n }, { x, y, v: 10 }); // y = 11
    x.write(new Uint32Array(n).fill(100)); // must not affect the dispatch above
    d.dispatch(addScalar, { invocations: n }, { x: y, y: z, v: 1 }); // z = 12
    d.dispatch(addScalar, { invocations: n }, { x, y, v: 5 }); // y = 105
    expect((await z.read()).every((v) => v === 12)).toBe(true);
    expect((await y.read()).every((v) => v === 105)).toBe(true);
  });

  it('write copies the caller data at the call (the caller may reuse its array)', async () => {
    const d = ctx.device;
    const x = d.createBuffer('u32', 4);
    const y = d.createBuffer('u32', 4);
    const host = new Uint32Array([1, 2, 3, 4]);
    d.dispatch(addScalar, { invocations: 4 }, { x, y, v: 0 });
    x.write(host);
    host.fill(0);
    expect(Array.from(await x.read())).toEqual([1, 2, 3, 4]);
  });

  it('times work and says where the time comes from', async () => {
    const d = ctx.device;
    const x = d.createBuffer('u32', 1000);
    const y = d.createBuffer('u32', 1000);
    const t = await d.time('add', () => d.dispatch(addScalar, { invocations: 1000 }, { x, y, v: 3 }));
    expect(t.label).toBe('add');
    expect(t.source).toBe(d.caps.timerSource);
    expect(t.ms).toBeGreaterThanOrEqual(0);
    expect((await y.read()).every((v) => v === 3)).toBe(true);
  });

  it('rejects bad buffer arguments with InvalidArgumentError naming the argument', () => {
    const d = ctx.device;
    const named = (fn: () => unknown, argument: string) => {
      try {
        fn();
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidArgumentError);
        expect((e as InvalidArgumentError).argument).toBe(argument);
        return;
      }
      throw new Error(`expected InvalidArgumentError for '${argument}'`);
    };
    named(() => d.createBuffer('u64' as 'u32', 4), 'dtype');
    named(() => d.createBuffer('u32', -1), 'length');
    named(() => d.createBuffer('u32', 2.5), 'length');
    named(() => d.createBuffer('u32', new Float32Array(3) as unknown as Uint32Array), 'data');
    named(() => d.createBuffer('u32', [1, -1]), 'data[1]');
    named(() => d.createBuffer('i32', [2 ** 31]), 'data[0]');
    const b = d.createBuffer('u32', [1, 2, 3]);
    named(() => b.write([1, 2], 2), 'data');
    named(() => b.write([1], -1), 'offset');
    named(() => b.fill(-5), 'value');
    named(() => b.fill(1, { offset: 2, length: 2 }), 'range');
    named(() => d.copyBuffer(b, d.createBuffer('f32', 3)), 'dst');
    named(() => d.copyBuffer(b, b, { srcOffset: 0, dstOffset: 1, length: 2 }), 'dst');
  });

  it('rejects bad dispatches before recording anything', async () => {
    const d = ctx.device;
    const x = d.createBuffer('u32', [1, 2, 3, 4]);
    const y = d.createBuffer('u32', [9, 9, 9, 9]);
    const f = d.createBuffer('f32', 4);
    const bad: Array<[string, () => void]> = [
      ['v', () => d.dispatch(addScalar, { invocations: 4 }, { x, y } as never)],
      ['x', () => d.dispatch(addScalar, { invocations: 4 }, { x: f, y, v: 1 } as never)],
      ['w', () => d.dispatch(addScalar, { invocations: 4 }, { x, y, v: 1, w: 2 } as never)],
      ['v', () => d.dispatch(addScalar, { invocations: 4 }, { x, y, v: -3 })],
      ['y', () => d.dispatch(addScalar, { invocations: 4 }, { x, y: x, v: 1 })],
      ['grid.invocations', () => d.dispatch(addScalar, { invocations: -4 }, { x, y, v: 1 })],
      ['grid', () => d.dispatch(addScalar, {} as never, { x, y, v: 1 })],
    ];
    for (const [argument, call] of bad) {
      expect(call, argument).toThrow(InvalidArgumentError);
      try {
        call();
      } catch (e) {
        expect((e as InvalidArgumentError).argument).toBe(argument);
      }
    }
    expect(Array.from(await y.read())).toEqual([9, 9, 9, 9]);
  });

  it('rejects sizes beyond the limits with LimitExceededError naming the limit', () => {
    const d = ctx.device;
    const max = d.caps.limits.maxBufferElements;
    try {
      d.createBuffer('u32', max + 1);
      throw new Error('expected LimitExceededError');
    } catch (e) {
      expect(e).toBeInstanceOf(LimitExceededError);
      expect((e as LimitExceededError).limit).toBe('maxBufferElements');
    }
    const maxWg = d.caps.limits.maxComputeInvocationsPerWorkgroup;
    const tooWide = defineKernel({
      name: 'api_too_wide',
      workgroupSize: maxWg + 1,
      params: { y: buffer('u32', 'write') },
      body: ({ y }, k) => y.store(k.globalIndex, 1),
    });
    const y = d.createBuffer('u32', 4);
    try {
      d.dispatch(tooWide, { invocations: 4 }, { y });
      throw new Error('expected LimitExceededError');
    } catch (e) {
      expect(e).toBeInstanceOf(LimitExceededError);
      expect((e as LimitExceededError).limit).toBe('maxComputeInvocationsPerWorkgroup');
    }
    expect(() => d.compile(tooWide)).toThrow(LimitExceededError);
    const perDim = d.caps.limits.maxComputeWorkgroupsPerDimension;
    const x = d.createBuffer('u32', 1);
    expect(() => d.dispatch(addScalar, { workgroups: perDim + 1 }, { x, y: d.createBuffer('u32', 1), v: 0 })).toThrow(LimitExceededError);
  });

  it('folds grids larger than one dimension allows and keeps globalIndex linear', async () => {
    const d = ctx.device;
    const perDim = d.caps.limits.maxComputeWorkgroupsPerDimension;
    // Just past 65535 workgroups of 32: folded into y wherever the limit is WebGPU's default.
    const n = Math.min(perDim, 65535) * 32 + 5;
    const x = d.createBuffer('u32', n);
    const y = d.createBuffer('u32', n);
    d.dispatch(addScalar, { invocations: n }, { x, y, v: 1 });
    const r = await y.read();
    expect(r.length).toBe(n);
    expect(r.every((v) => v === 1)).toBe(true);
    // The fold adds fewer surplus workgroups than it has rows (kernels guard them, but they still run).
    const total = Math.ceil(n / 32);
    const rows = Math.ceil(total / perDim);
    const count = d.createBuffer('u32', 1);
    d.dispatch(countWorkgroups, { invocations: n }, { out: count });
    const launched = (await count.read())[0] as number;
    expect(launched).toBeGreaterThanOrEqual(total);
    expect(launched - total).toBeLessThan(rows);
  });

  it('makes destroyed buffers and devices fail with typed errors', async () => {
    const device = await createDevice({ backend: ctx.kind, options: TEST_DEVICE_OPTIONS });
    const b = device.createBuffer('u32', [1, 2]);
    b.destroy();
    b.destroy(); // harmless
    expect(b.destroyed).toBe(true);
    expect(() => b.fill(0)).toThrow(InvalidArgumentError);
    await expect(b.read()).rejects.toBeInstanceOf(InvalidArgumentError);
    const other = device.createBuffer('u32', 2);
    expect(() => ctx.device.copyBuffer(other, ctx.device.createBuffer('u32', 2))).toThrow(/another device/);
    await device.destroy();
    expect(other.destroyed).toBe(true);
    expect(() => device.createBuffer('u32', 1)).toThrow(DeviceLostError);
    await expect(device.flush()).rejects.toBeInstanceOf(DeviceLostError);
    const e = (() => {
      try {
        device.createBuffer('u32', 1);
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(TridentError);
    expect((e as TridentError).code).toBe('DEVICE_LOST');
    expect(b).toBeInstanceOf(Buffer);
  });
});
