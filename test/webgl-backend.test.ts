/**
 * WebGL2 specifics (browser only, by the `webgl-*.test.ts` rule in vitest.config.ts):
 * every kernel class WebGL2 claims runs and matches the CPU backend; every class it
 * refuses is refused at compile time with the typed error; ping-pong, MRT, scatter,
 * blending, limits, timers, context loss and destroy.
 */

import {
  buffer,
  countOneBits,
  createDevice,
  type Device,
  DeviceLostError,
  defineKernel,
  type Kernel,
  LimitExceededError,
  type ParamDecl,
  UnsupportedFeatureError,
  uniform,
  type Val,
  type ValueType,
  vec,
} from 'trident';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomU32, TEST_DEVICE_OPTIONS } from './harness.ts';

let gl2: Device;
let cpu: Device;

beforeAll(async () => {
  gl2 = await createDevice({ backend: 'webgl2', options: TEST_DEVICE_OPTIONS });
  cpu = await createDevice({ backend: 'cpu', options: TEST_DEVICE_OPTIONS });
});
afterAll(async () => {
  await gl2?.destroy();
  await cpu?.destroy();
});

type Data = Uint32Array | Int32Array | Float32Array;

/** Runs `kernel` on both devices with the same inputs and returns every buffer afterwards, by name. */
async function onBoth(
  kernel: Kernel,
  invocations: number,
  buffers: Record<string, Data>,
  uniforms: Record<string, number> = {},
  dispatches = 1,
): Promise<{ webgl2: Record<string, Data>; cpu: Record<string, Data> }> {
  const run = async (d: Device) => {
    const bound: Record<string, unknown> = { ...uniforms };
    for (const [name, data] of Object.entries(buffers)) {
      const dtype = data instanceof Uint32Array ? 'u32' : data instanceof Int32Array ? 'i32' : 'f32';
      bound[name] = d.createBuffer(dtype, data);
    }
    for (let i = 0; i < dispatches; i++) d.dispatch(kernel, { invocations }, bound as never);
    const out: Record<string, Data> = {};
    for (const name of Object.keys(buffers)) {
      const b = bound[name] as { read(): Promise<Data>; destroy(): void };
      out[name] = await b.read();
      b.destroy();
    }
    return out;
  };
  return { webgl2: await run(gl2), cpu: await run(cpu) };
}

describe('webgl2 device', () => {
  it('states its capabilities: gather, scatter, atomics by blending; no workgroups or subgroups', () => {
    const f = gl2.caps.features;
    expect(f.has('gather')).toBe(true);
    expect(f.has('scatter')).toBe(true);
    // SwiftShader and every desktop GPU have EXT_float_blend; without it 'atomic' would be absent.
    expect(f.has('atomic')).toBe(true);
    expect(f.has('atomics-via-blending')).toBe(true);
    for (const missing of ['atomic-other', 'workgroup', 'subgroup', 'host-memory'] as const) expect(f.has(missing)).toBe(false);
    expect(gl2.caps.limits.maxExactAtomicCount).toBe(2 ** 24);
    expect(gl2.caps.limits.maxComputeWorkgroupStorageSize).toBe(0);
    const maxTex = gl2.info.details.maxTextureSize as number;
    expect(maxTex).toBeGreaterThanOrEqual(2048);
    // Four elements a texel, textures of power-of-two width.
    expect(gl2.caps.limits.maxBufferElements).toBe(4 * 2 ** Math.floor(Math.log2(maxTex)) * maxTex);
    expect(gl2.info.software).toBe(/swiftshader/i.test(gl2.info.adapter));
    expect(gl2.caps.timerSource).toBe(f.has('timestamp') ? 'gpu-timestamp' : 'wall');
  });

  it('createDevice() ranks a software WebGL2 (SwiftShader) below the cpu backend, and says so', async () => {
    const d = await createDevice({ options: TEST_DEVICE_OPTIONS });
    try {
      if (gl2.info.software) {
        expect(d.backend).not.toBe('webgl2');
        const skip = d.skipped.find((s) => s.backend === 'webgl2');
        expect(skip?.reason).toMatch(/software adapter .* demoted below cpu/);
      }
      // Whatever was chosen is hardware, or the cpu backend when every GPU adapter is software.
      expect(d.info.software && d.backend !== 'cpu').toBe(false);
    } finally {
      await d.destroy();
    }
  });

  it('refuses buffers beyond MAX_TEXTURE_SIZE^2 elements with LimitExceededError', () => {
    const limit = gl2.caps.limits.maxBufferElements;
    expect(() => gl2.createBuffer('u32', limit + 1)).toThrow(LimitExceededError);
    // The backend itself holds the line too (for callers below the public Device).
    expect(() => gl2.impl.createBuffer('f32', limit + 1)).toThrow(LimitExceededError);
  });

  it('writes, fills, copies and reads sub-ranges across texture rows and inside texels', async () => {
    // Four elements a texel, rows of the widest power-of-two texture.
    const row = 4 * 2 ** Math.floor(Math.log2(gl2.info.details.maxTextureSize as number));
    const n = row * 2 + 123; // three texture rows, the last one partial
    const data = randomU32(n, 99);
    const a = gl2.createBuffer('u32', data);
    const b = gl2.createBuffer('u32', n);
    const expected = new Uint32Array(n);
    b.fill(7, { offset: row - 5, length: row + 10 });
    expected.fill(7, row - 5, row - 5 + row + 10);
    // Within one texel, and texel-aligned.
    b.fill(9, { offset: 1, length: 2 });
    expected.fill(9, 1, 3);
    b.fill(11, { offset: 8, length: 8 });
    expected.fill(11, 8, 16);
    // Source and destination offsets that differ mod 4, then agree mod 4.
    gl2.copyBuffer(a, b, { srcOffset: 17, dstOffset: row * 2 - 2, length: 100 });
    expected.set(data.subarray(17, 117), row * 2 - 2);
    gl2.copyBuffer(a, b, { srcOffset: 5, dstOffset: 21, length: 3 });
    expected.set(data.subarray(5, 8), 21);
    a.write([1, 2, 3], row - 1);
    data.set([1, 2, 3], row - 1);
    a.write([4, 5], 41);
    data.set([4, 5], 41);
    // A copy within one buffer (disjoint ranges): the texture cannot be sampled while drawn into.
    gl2.copyBuffer(a, a, { srcOffset: 0, dstOffset: row + 1, length: 50 });
    data.copyWithin(row + 1, 0, 50);
    expect(await b.read()).toEqual(expected);
    expect(await a.read()).toEqual(data);
    expect(await a.read({ offset: row - 2, length: 5 })).toEqual(data.slice(row - 2, row + 3));
    expect(await a.read({ offset: 42, length: 1 })).toEqual(data.slice(42, 43));
    a.destroy();
    b.destroy();
  });

  it('f32 and i32 buffers of every length mod 4 round-trip bit-exactly (NaN payloads, -0)', async () => {
    for (const n of [1, 2, 3, 5, 6, 7]) {
      const f = new Float32Array(n);
      new Uint32Array(f.buffer).set([0x7fa00001, 0x80000000, 0xff800000, 0x3f800000, 1, 0xffc12345, 0x00000001].slice(0, n));
      const i = Int32Array.from({ length: n }, (_, j) => (j % 2 ? -(2 ** 31) : 2 ** 31 - 1 - j));
      const fb = gl2.createBuffer('f32', f);
      const ib = gl2.createBuffer('i32', i);
      expect(new Uint32Array((await fb.read()).buffer)).toEqual(new Uint32Array(f.buffer));
      expect(await ib.read()).toEqual(i);
      fb.destroy();
      ib.destroy();
    }
  });
});

describe('webgl2 gather kernels (fragment passes)', () => {
  it('several outputs of different dtypes in one pass (MRT), more outputs than MAX_DRAW_BUFFERS', async () => {
    const outputs = (gl2.info.details.maxDrawBuffers as number) + 1;
    const params: Record<string, ParamDecl> = { x: buffer('u32', 'read') };
    for (let j = 0; j < outputs; j++) params[`o${j}`] = buffer(j % 3 === 0 ? 'u32' : j % 3 === 1 ? 'i32' : 'f32', 'write');
    const k = defineKernel({
      name: 'webgl_mrt',
      workgroupSize: 16,
      params,
      body: (p, k) => {
        const i = k.globalIndex;
        // Parameters built in a loop: their handles are typed by hand.
        const x = p.x as unknown as { load(i: Val<'u32'>): Val<'u32'>; length: Val<'u32'> };
        k.if(i.lt(x.length), () => {
          const v = x.load(i);
          for (let j = 0; j < outputs; j++) {
            const o = p[`o${j}`] as unknown as { store(i: Val<'u32'>, v: Val<ValueType>): void };
            // Exact operations only (GLSL division need not be correctly rounded).
            const w = v.mul(j + 1).add(j);
            o.store(i, j % 3 === 0 ? w : j % 3 === 1 ? w.cast('i32').neg() : w.cast('f32').mul(0.5));
          }
        });
      },
    });
    const n = 1000;
    const buffers: Record<string, Data> = { x: randomU32(n, 5) };
    for (let j = 0; j < outputs; j++)
      buffers[`o${j}`] = j % 3 === 0 ? new Uint32Array(n) : j % 3 === 1 ? new Int32Array(n) : new Float32Array(n);
    const r = await onBoth(k as Kernel, n, buffers);
    expect(r.webgl2).toEqual(r.cpu);
  });

  it('texels no invocation stores keep their values (partial grids, conditional stores)', async () => {
    const k = defineKernel({
      name: 'webgl_partial',
      workgroupSize: 8,
      params: { y: buffer('u32', 'write') },
      body: ({ y }, k) => {
        const i = k.globalIndex;
        k.if(i.rem(3).ne(0), () => y.store(i, i.mul(10)));
      },
    });
    const init = randomU32(500, 1);
    const r = await onBoth(k as Kernel, 301, { y: init });
    expect(r.webgl2.y).toEqual(r.cpu.y);
    expect(r.webgl2.y?.[3]).toBe(init[3]);
    expect(r.webgl2.y?.[400]).toBe(init[400]);
  });

  it('rows past the last texel a dispatch reaches are copied through (u32, i32 and f32 storage, MRT)', async () => {
    const k = defineKernel({
      name: 'webgl_short_dispatch',
      workgroupSize: 8,
      params: { a: buffer('i32', 'write'), b: buffer('f32', 'write'), c: buffer('u32', 'write') },
      body: ({ a, b, c }, k) => {
        const i = k.globalIndex;
        a.store(i, i.bitcast('i32').sub(7));
        b.store(i, i.cast('f32').mul(0.5));
        c.store(i, i.add(1));
      },
    });
    // 2^14 elements (64 x 64 texels); 24 invocations reach the first row only.
    const n = 2 ** 14;
    const r = await onBoth(k as Kernel, 24, {
      a: Int32Array.from(randomU32(n, 3), (v) => v | 0),
      b: Float32Array.from(randomU32(n, 4), (v) => v / 2 ** 10),
      c: randomU32(n, 5),
    });
    expect(r.webgl2).toEqual(r.cpu);
  });

  it('vec4 outputs: each texel takes its component of the invocation that owns it', async () => {
    const k = defineKernel({
      name: 'webgl_vec4_out',
      workgroupSize: 8,
      params: { x: buffer('f32', 'read', { vector: 4 }), y: buffer('f32', 'write', { vector: 4 }) },
      body: ({ x, y }, k) => {
        const i = k.globalIndex;
        k.if(i.lt(x.length), () => {
          const v = x.load(i);
          y.store(i, vec('f32', v.w, v.z.mul(2), v.y, v.x.add(1)));
        });
      },
    });
    const xs = Float32Array.from(randomU32(4 * 257, 2), (v) => v / 2 ** 20);
    const r = await onBoth(k as Kernel, 257, { x: xs, y: new Float32Array(4 * 257) });
    expect(r.webgl2.y).toEqual(r.cpu.y);
  });
});

describe('webgl2 vector views (four elements a texel)', () => {
  it('vec2 and vec3 gather outputs: a texel takes components from every invocation whose element lies in it', async () => {
    const k = defineKernel({
      name: 'webgl_vec23_out',
      workgroupSize: 8,
      params: { a: buffer('u32', 'write', { vector: 2 }), b: buffer('i32', 'write', { vector: 3 }) },
      body: ({ a, b }, k) => {
        const i = k.globalIndex;
        // Odd invocations skip a: their elements keep the old values.
        k.if(i.rem(2).eq(0), () => a.store(i, vec('u32', i, i.mul(7))));
        b.store(i, vec('i32', i.cast('i32'), i.cast('i32').neg(), i.cast('i32').add(1000)));
      },
    });
    // 37 invocations over 37 vec2 / 37 vec3 elements (111 scalars: the last texel partial).
    const r = await onBoth(k as Kernel, 37, { a: randomU32(74, 3), b: new Int32Array(111).fill(-9) });
    expect(r.webgl2).toEqual(r.cpu);
  });

  it('vec3 and vec4 scatter stores: vec3 scalar by scalar across texels, vec4 one texel a point', async () => {
    const k = defineKernel({
      name: 'webgl_vec34_scatter',
      workgroupSize: 8,
      params: { t: buffer('f32', 'write', { vector: 3 }), q: buffer('u32', 'write', { vector: 4 }), n: uniform('u32') },
      body: ({ t, q, n }, k) => {
        const i = k.globalIndex;
        const j = k.let(n.sub(1).sub(i), 'j');
        t.store(j, vec('f32', i.cast('f32'), i.cast('f32').mul(0.5), -1));
        q.store(j, vec('u32', i, j, i.add(j), 77));
      },
    });
    const n = 29;
    // One vec3 element more than the invocations store: it keeps its value.
    const r = await onBoth(k as Kernel, n, { t: new Float32Array(3 * n + 3).fill(5), q: randomU32(4 * n, 4) }, { n });
    expect(r.webgl2).toEqual(r.cpu);
  });
});

describe('webgl2 GLSL helpers on vectors (generated overloads)', () => {
  it('vec4 integer division, remainder, shifts, popcount and u32 -> f32 agree with the CPU backend', async () => {
    const k = defineKernel({
      name: 'webgl_vec_helpers',
      workgroupSize: 8,
      params: {
        a: buffer('u32', 'read', { vector: 4 }),
        b: buffer('i32', 'read', { vector: 4 }),
        q: buffer('u32', 'write', { vector: 4 }),
        r: buffer('i32', 'write', { vector: 4 }),
        f: buffer('f32', 'write', { vector: 4 }),
      },
      body: ({ a, b, q, r, f }, k) => {
        const i = k.globalIndex;
        k.if(i.ge(a.length), () => k.return());
        const x = a.load(i);
        const y = b.load(i);
        const d = vec('u32', x.y.rem(7), x.z.rem(3), 0, 1);
        q.store(i, x.div(d).add(x.rem(d)).add(x.shl(d)).add(countOneBits(x)));
        const e = vec('i32', y.y.rem(5), -1, 0, y.w.rem(9));
        r.store(i, y.div(e).add(y.rem(e)).add(y.shr(d)).add(countOneBits(y)));
        // f32 % is a - b * trunc(a / b) on GPUs (as WGSL defines it): exact for moderate quotients.
        const small = y.rem(vec('i32', 1000, 1000, 1000, 1000)).cast('vec4<f32>');
        f.store(i, x.cast('vec4<f32>').add(small.rem(vec('f32', 3, -3, 0.5, 7))));
      },
    });
    const n = 300;
    const a = randomU32(4 * n, 41);
    const b = new Int32Array(randomU32(4 * n, 42).buffer);
    b[0] = -2147483648; // INT_MIN / -1 in component y of invocation 0
    const r = await onBoth(k as Kernel, n + 5, {
      a,
      b,
      q: new Uint32Array(4 * n),
      r: new Int32Array(4 * n),
      f: new Float32Array(4 * n),
    });
    expect(r.webgl2.q).toEqual(r.cpu.q);
    expect(r.webgl2.r).toEqual(r.cpu.r);
    expect(r.webgl2.f).toEqual(r.cpu.f);
  });
});

describe('webgl2 ping-pong: a dispatch that reads the buffer it writes', () => {
  const inPlace = defineKernel({
    name: 'webgl_in_place',
    workgroupSize: 32,
    params: { a: buffer('u32', 'read_write'), b: buffer('u32', 'read'), s: uniform('u32') },
    body: ({ a, b, s }, k) => {
      const i = k.globalIndex;
      k.if(i.lt(a.length), () => {
        const v = a.load(i);
        a.store(i, v.mul(2654435761).add(b.load(i)).xor(s));
        // Reading back what this invocation just stored sees the new value, as on every backend.
        const again = a.load(i);
        a.store(i, again.add(1));
      });
    },
  });

  it('matches the CPU backend after one dispatch and after twenty in stream order', async () => {
    const n = 4099;
    const a = randomU32(n, 11);
    const b = randomU32(n, 12);
    const once = await onBoth(inPlace as Kernel, n, { a, b }, { s: 0x9e3779b9 });
    expect(once.webgl2.a).toEqual(once.cpu.a);
    expect(once.webgl2.a).not.toEqual(a);
    const many = await onBoth(inPlace as Kernel, n, { a, b }, { s: 12345 }, 20);
    expect(many.webgl2.a).toEqual(many.cpu.a);
  });

  it('a gather that reads neighbours of the buffer it writes sees the values from before the dispatch', async () => {
    // y[i] = y[i] + y[i + 1] is racy on a GPU, so it is only well defined as a double-buffered step:
    // compare with the sequential definition over a snapshot.
    const k = defineKernel({
      name: 'webgl_neighbours',
      workgroupSize: 16,
      params: { y: buffer('i32', 'read_write') },
      body: ({ y }, k) => {
        const i = k.globalIndex;
        k.if(i.lt(y.length), () => y.store(i, y.load(i).add(y.load(i.add(1)))));
      },
    });
    const init = Int32Array.from(randomU32(777, 4), (v) => (v % 1000) - 500);
    const y = gl2.createBuffer('i32', init);
    gl2.dispatch(k, { invocations: 777 }, { y });
    const expected = init.map((v, i) => v + (init[i + 1] ?? 0));
    expect(await y.read()).toEqual(expected);
    y.destroy();
  });
});

describe('webgl2 scatter kernels (point passes)', () => {
  it('reverses with computed indices; stores outside [0, length) are dropped, negative i32 indices too', async () => {
    const k = defineKernel({
      name: 'webgl_scatter_reverse',
      workgroupSize: 8,
      params: { x: buffer('f32', 'read'), y: buffer('f32', 'write'), shift: uniform('i32') },
      body: ({ x, y, shift }, k) => {
        const i = k.globalIndex;
        k.if(i.lt(x.length), () => {
          const j = x.length.sub(1).sub(i).cast('i32').add(shift);
          y.store(j, x.load(i));
        });
      },
    });
    const xs = Float32Array.from(randomU32(1001, 8), (v) => v / 1000);
    for (const shift of [0, 5, -5]) {
      const r = await onBoth(k as Kernel, 1001, { x: xs, y: new Float32Array(1001).fill(-1) }, { shift });
      expect(r.webgl2.y).toEqual(r.cpu.y);
    }
  });

  it('several writes per invocation, inside a loop (bounded by a counting pass), vec2 stores', async () => {
    const k = defineKernel({
      name: 'webgl_scatter_loop',
      workgroupSize: 4,
      params: { y: buffer('u32', 'write', { vector: 2 }), reps: uniform('u32') },
      body: ({ y, reps }, k) => {
        const i = k.globalIndex;
        // Invocation i writes (i % reps) + 1 pairs: the counting pass must find the largest count.
        k.for({ from: 0, to: i.rem(reps).add(1) }, (j) => {
          y.store(i.mul(reps).add(j), vec('u32', i, j.add(100)));
        });
      },
    });
    const n = 50;
    const r = await onBoth(k as Kernel, n, { y: new Uint32Array(2 * n * 6) }, { reps: 6 });
    expect(r.webgl2.y).toEqual(r.cpu.y);
  });

  it('a scatter into a buffer it also reads works on a copy (ping-pong)', async () => {
    const k = defineKernel({
      name: 'webgl_scatter_rotate',
      workgroupSize: 8,
      params: { a: buffer('u32', 'read_write') },
      body: ({ a }, k) => {
        const i = k.globalIndex;
        const n = a.length;
        // Only even invocations move: each reads its own element and writes it one place right.
        k.if(i.lt(n).and(i.rem(2).eq(0)), () => a.store(i.add(1).rem(n), a.load(i)));
      },
    });
    // An even length: with an odd one the last invocation writes a[0], which invocation 0 reads,
    // a race whose outcome the CPU reference does not fix.
    const data = randomU32(334, 21);
    const r = await onBoth(k as Kernel, 334, { a: data });
    expect(r.webgl2.a).toEqual(r.cpu.a);
  });
});

describe('webgl2 atomics by blending', () => {
  it('add, min and max on u32 and i32 match the CPU backend, grid-stride loops included', async () => {
    const k = defineKernel({
      name: 'webgl_atomics',
      workgroupSize: 16,
      params: {
        x: buffer('i32', 'read'),
        sum: buffer('i32', 'atomic'),
        count: buffer('u32', 'atomic'),
        lo: buffer('i32', 'atomic'),
        hi: buffer('u32', 'atomic'),
      },
      body: ({ x, sum, count, lo, hi }, k) => {
        const stride = k.numInvocations;
        k.for({ from: k.globalIndex, to: x.length, step: stride }, (i) => {
          const v = x.load(i);
          const bin = v.cast('u32').rem(sum.length);
          sum.atomicAdd(bin, v);
          count.atomicAdd(bin, 1);
          lo.atomicMin(bin, v);
          hi.atomicMax(bin, v.cast('u32').shr(8));
        });
      },
    });
    const n = 5000;
    const nb = 13;
    const x = Int32Array.from(randomU32(n, 31), (v) => (v % 20001) - 10000);
    const r = await onBoth(k as Kernel, 640, {
      x,
      sum: new Int32Array(nb).fill(5),
      count: new Uint32Array(nb),
      lo: new Int32Array(nb).fill(2 ** 31 - 1),
      hi: new Uint32Array(nb),
    });
    expect(r.webgl2).toEqual(r.cpu);
  });

  it('stays exact past the blending limit by folding chunks (atomicChunk = 1000)', async () => {
    const small = await createDevice({ backend: 'webgl2', options: { webgl2: { atomicChunk: 1000 } } });
    try {
      const k = defineKernel({
        name: 'webgl_count_chunks',
        workgroupSize: 64,
        params: { bins: buffer('u32', 'atomic'), n: uniform('u32') },
        body: ({ bins, n }, k) => {
          const i = k.globalIndex;
          k.if(i.lt(n), () => bins.atomicAdd(i.rem(3).eq(0).cast('u32'), 3));
        },
      });
      const bins = small.createBuffer('u32', [1, 2]);
      small.dispatch(k, { invocations: 10_001 }, { bins, n: 10_001 });
      expect(await bins.read()).toEqual(new Uint32Array([1 + 3 * 6667, 2 + 3 * 3334]));
    } finally {
      await small.destroy();
    }
  });
});

describe('webgl2 refuses what it cannot run, at compile time, with the typed error', () => {
  const cases: Array<[string, string, Kernel]> = [
    [
      'workgroup memory',
      'workgroup',
      defineKernel({
        name: 'webgl_refuse_wg',
        workgroupSize: 8,
        params: { y: buffer('u32', 'write') },
        body: ({ y }, k) => {
          const s = k.workgroupArray('u32', 8);
          s.store(k.localIndex, k.globalIndex);
          y.store(k.globalIndex, s.load(0));
        },
      }) as Kernel,
    ],
    [
      'a barrier',
      'workgroup',
      defineKernel({
        name: 'webgl_refuse_barrier',
        workgroupSize: 8,
        params: { y: buffer('u32', 'write') },
        body: ({ y }, k) => {
          k.barrier();
          y.store(k.globalIndex, 1);
        },
      }) as Kernel,
    ],
    [
      'a workgroup-only barrier',
      'workgroup',
      defineKernel({
        name: 'webgl_refuse_wg_barrier',
        workgroupSize: 8,
        params: { y: buffer('u32', 'write') },
        body: ({ y }, k) => {
          k.workgroupBarrier();
          y.store(k.globalIndex, 1);
        },
      }) as Kernel,
    ],
    [
      'subgroups',
      'subgroup',
      defineKernel({
        name: 'webgl_refuse_subgroup',
        workgroupSize: 8,
        params: { y: buffer('u32', 'write') },
        body: ({ y }, k) => y.store(k.globalIndex, k.subgroupAdd(k.globalIndex)),
      }) as Kernel,
    ],
    [
      'compare-exchange',
      'atomic-other',
      defineKernel({
        name: 'webgl_refuse_cas',
        workgroupSize: 8,
        params: { y: buffer('u32', 'atomic') },
        body: ({ y }, k) => void y.atomicCompareExchange(0, 0, k.globalIndex),
      }) as Kernel,
    ],
    [
      'atomic exchange / and / or / xor / sub',
      'atomic-other',
      defineKernel({
        name: 'webgl_refuse_xor',
        workgroupSize: 8,
        params: { y: buffer('u32', 'atomic') },
        body: ({ y }, k) => void y.atomicXor(0, k.globalIndex),
      }) as Kernel,
    ],
    [
      'the old value an atomic add returns',
      'atomic-other',
      defineKernel({
        name: 'webgl_refuse_old',
        workgroupSize: 8,
        params: { y: buffer('u32', 'atomic'), z: buffer('u32', 'write') },
        body: ({ y, z }, k) => z.store(k.globalIndex, y.atomicAdd(0, 1)),
      }) as Kernel,
    ],
  ];
  for (const [what, feature, kernel] of cases) {
    it(`${what} -> UnsupportedFeatureError('${feature}')`, () => {
      let err: unknown;
      try {
        gl2.compile(kernel);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UnsupportedFeatureError);
      const u = err as UnsupportedFeatureError;
      expect(u.feature).toBe(feature);
      expect(u.backend).toBe('webgl2');
      expect(u.kernel).toBe(kernel.name);
      expect(u.message).toContain(kernel.name);
      // The CPU backend runs every one of them: the refusal is WebGL2's, not the kernel's.
      expect(() => cpu.compile(kernel)).not.toThrow();
    });
  }
});

describe('webgl2 timers, readback order, context loss and destroy', () => {
  it('times work with EXT_disjoint_timer_query_webgl2 when present, labelled', async () => {
    const k = defineKernel({
      name: 'webgl_timed',
      workgroupSize: 64,
      params: { y: buffer('f32', 'write') },
      body: ({ y }, k) => y.store(k.globalIndex, k.globalIndex.cast('f32').mul(0.5)),
    });
    const y = gl2.createBuffer('f32', 1 << 16);
    const t = await gl2.time('fill', () => gl2.dispatch(k, { invocations: 1 << 16 }, { y }));
    expect(t.source).toBe(gl2.caps.timerSource);
    expect(t.ms).toBeGreaterThanOrEqual(0);
    expect((await y.read({ offset: 1000, length: 1 }))[0]).toBe(500);
    y.destroy();
  });

  it('a read resolves to the data as of its call, whatever is enqueued after it', async () => {
    const a = gl2.createBuffer('u32', [1, 2, 3]);
    const first = a.read();
    a.write([7, 8, 9]);
    const second = a.read();
    expect(await first).toEqual(new Uint32Array([1, 2, 3]));
    expect(await second).toEqual(new Uint32Array([7, 8, 9]));
    a.destroy();
  });

  it('destroying a buffer deletes its texture; destroying the device frees the context', async () => {
    const canvas = new OffscreenCanvas(1, 1);
    const d = await createDevice({ backend: 'webgl2', options: { webgl2: { canvas } } });
    const gl = canvas.getContext('webgl2') as WebGL2RenderingContext;
    const b = d.createBuffer('u32', 10);
    const tex = (b.impl as unknown as { texture: WebGLTexture }).texture;
    expect(gl.isTexture(tex)).toBe(true);
    b.destroy();
    expect(gl.isTexture(tex)).toBe(false);
    await d.destroy();
    expect(gl.isContextLost()).toBe(true);
    expect(() => d.createBuffer('u32', 1)).toThrow(DeviceLostError);
  });

  it.each([0, 64])('reads with blockingReadBytes = %i return the elements asked for, in stream order', async (blockingReadBytes) => {
    const blocking = await createDevice({ backend: 'webgl2', options: { webgl2: { blockingReadBytes } } });
    try {
      // 2^16 + 3 elements: several texture rows; reads inside one row and up to 16 texels block, the rest poll.
      const host = randomU32(2 ** 16 + 3, 11);
      for (const dtype of ['u32', 'i32', 'f32'] as const) {
        const data = dtype === 'u32' ? host : dtype === 'i32' ? new Int32Array(host.buffer) : new Float32Array(host.map((v) => v % 1000));
        const b = blocking.createBuffer(dtype, data as never);
        for (const [offset, length] of [
          [0, 1],
          [5, 3],
          [6, 16],
          [2 ** 16, 3],
          [100, 1000],
          [0, 2 ** 16 + 3],
        ] as const) {
          expect(Array.from(await b.read({ offset, length }))).toEqual(Array.from(data.subarray(offset, offset + length)));
        }
        // A blocking read sees the work issued before it.
        b.fill(7, { offset: 9, length: 2 });
        expect(Array.from(await b.read({ offset: 8, length: 4 }))).toEqual([data[8], 7, 7, data[11]]);
        b.destroy();
      }
    } finally {
      await blocking.destroy();
    }
  });

  it('refuses a blockingReadBytes that is not a count of bytes', async () => {
    await expect(createDevice({ backend: 'webgl2', options: { webgl2: { blockingReadBytes: -1 } } })).rejects.toThrow(/blockingReadBytes/);
  });

  it('context loss becomes DeviceLostError on every later call', async () => {
    const canvas = new OffscreenCanvas(1, 1);
    const d = await createDevice({ backend: 'webgl2', options: { webgl2: { canvas } } });
    const b = d.createBuffer('u32', [1, 2, 3]);
    const gl = canvas.getContext('webgl2') as WebGL2RenderingContext;
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    expect(() => d.createBuffer('u32', 4)).toThrow(DeviceLostError);
    await expect(b.read()).rejects.toBeInstanceOf(DeviceLostError);
    await expect(d.flush()).rejects.toBeInstanceOf(DeviceLostError);
    await d.destroy();
  });
});
