/**
 * Level 1 of the conformance ladder: the IR's arithmetic semantics (ir/nodes.ts)
 * on every backend. Expected values come from independent references (BigInt for
 * integer wrap-around), not from any code generator.
 */
import {
  abs,
  type BufferDType,
  buffer,
  clamp,
  defineKernel,
  exp2,
  f32,
  floor,
  fma,
  InvalidArgumentError,
  inverseSqrt,
  log2,
  type ParamDecl,
  select,
  sin,
  sqrt,
  UnsupportedFeatureError,
  type Val,
  vec,
} from 'trident';
import { expect, it } from 'vitest';
import { describeEachBackend } from './harness.ts';

const INT_MIN = -0x80000000;
const INT_MAX = 0x7fffffff;
const U32_SAMPLES = [0, 1, 2, 3, 7, 31, 32, 33, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 12345678];
const I32_SAMPLES = [0, 1, -1, 3, -3, 7, -7, 31, 32, INT_MIN, INT_MAX, -12345678, 123456789];
// Rounded to f32 first: the buffers hold f32, so the references must start from the same values.
const F32_SAMPLES = [0, -0, 1, -1.5, 3.25, 0.1, 1e30, -1e-30, 16777216, 16777217, 5e-3, -7].map(Math.fround);

type Op = 'add' | 'sub' | 'mul' | 'div' | 'rem' | 'and' | 'or' | 'xor' | 'shl' | 'shr' | 'lt' | 'eq';

/** Every pair of samples, flattened into two input columns. */
function pairs(samples: number[]): [number[], number[]] {
  const a: number[] = [];
  const b: number[] = [];
  for (const x of samples) {
    for (const y of samples) {
      a.push(x);
      b.push(y);
    }
  }
  return [a, b];
}

const u32Ref: Record<Op, (a: number, b: number) => number> = {
  add: (a, b) => Number(BigInt.asUintN(32, BigInt(a) + BigInt(b))),
  sub: (a, b) => Number(BigInt.asUintN(32, BigInt(a) - BigInt(b))),
  mul: (a, b) => Number(BigInt.asUintN(32, BigInt(a) * BigInt(b))),
  div: (a, b) => (b === 0 ? a : Math.floor(a / b)),
  rem: (a, b) => (b === 0 ? 0 : a - b * Math.floor(a / b)),
  and: (a, b) => Number(BigInt(a) & BigInt(b)),
  or: (a, b) => Number(BigInt(a) | BigInt(b)),
  xor: (a, b) => Number(BigInt(a) ^ BigInt(b)),
  shl: (a, b) => Number(BigInt.asUintN(32, BigInt(a) << BigInt(b % 32))),
  shr: (a, b) => Math.floor(a / 2 ** (b % 32)),
  lt: (a, b) => (a < b ? 1 : 0),
  eq: (a, b) => (a === b ? 1 : 0),
};

const i32Ref: Record<Op, (a: number, b: number) => number> = {
  add: (a, b) => Number(BigInt.asIntN(32, BigInt(a) + BigInt(b))),
  sub: (a, b) => Number(BigInt.asIntN(32, BigInt(a) - BigInt(b))),
  mul: (a, b) => Number(BigInt.asIntN(32, BigInt(a) * BigInt(b))),
  div: (a, b) => (b === 0 || (a === INT_MIN && b === -1) ? a : Math.trunc(a / b)),
  rem: (a, b) => (b === 0 || (a === INT_MIN && b === -1) ? 0 : a - b * Math.trunc(a / b)),
  and: (a, b) => Number(BigInt.asIntN(32, BigInt(a) & BigInt(b))),
  or: (a, b) => Number(BigInt.asIntN(32, BigInt(a) | BigInt(b))),
  xor: (a, b) => Number(BigInt.asIntN(32, BigInt(a) ^ BigInt(b))),
  shl: (a, b) => Number(BigInt.asIntN(32, BigInt(a) << BigInt(b % 32))),
  shr: (a, b) => Math.floor(a / 2 ** (b % 32)),
  lt: (a, b) => (a < b ? 1 : 0),
  eq: (a, b) => (a === b ? 1 : 0),
};

/** out[i] = op(a[i], b[i]); shift amounts are u32 in the IR, so b is u32 for shl/shr. */
function binaryKernel(dtype: 'u32' | 'i32', op: Op) {
  const shift = op === 'shl' || op === 'shr';
  return defineKernel({
    name: `sem_${dtype}_${op}`,
    workgroupSize: 64,
    params: { a: buffer(dtype, 'read'), b: buffer(shift ? 'u32' : dtype, 'read'), out: buffer('u32', 'write') },
    body: ({ a, b, out }, k) => {
      const i = k.globalIndex;
      k.if(i.lt(out.length), () => {
        const x = a.load(i) as Val<'u32'>;
        const y = b.load(i) as Val<'u32'>;
        let r: Val<'u32'>;
        if (op === 'lt') r = x.lt(y).cast('u32');
        else if (op === 'eq') r = x.eq(y).cast('u32');
        else if (op === 'shl' || op === 'shr') r = x[op](y);
        else r = x[op](y);
        // i32 results travel as their bit pattern.
        out.store(i, r.bitcast('u32'));
      });
    },
  });
}

async function runBinary(device: import('trident').Device, dtype: 'u32' | 'i32', op: Op, a: number[], b: number[]): Promise<Uint32Array> {
  const shift = op === 'shl' || op === 'shr';
  const ba = device.createBuffer(dtype, a);
  const bb = device.createBuffer(shift ? 'u32' : dtype, b);
  const out = device.createBuffer('u32', a.length);
  device.dispatch(binaryKernel(dtype, op), { invocations: a.length }, { a: ba, b: bb, out });
  const r = await out.read();
  for (const b of [ba, bb, out]) b.destroy();
  return r;
}

function f32Bits(values: ArrayLike<number>): number[] {
  const f = Float32Array.from(values);
  return Array.from(new Uint32Array(f.buffer));
}

describeEachBackend('IR semantics', (ctx) => {
  const ops: Op[] = ['add', 'sub', 'mul', 'div', 'rem', 'and', 'or', 'xor', 'shl', 'shr', 'lt', 'eq'];
  for (const op of ops) {
    it(`u32 ${op} wraps modulo 2^32 and follows the division-by-zero rules`, async () => {
      const [a, b] = pairs(U32_SAMPLES);
      const got = await runBinary(ctx.device, 'u32', op, a, b);
      expect(Array.from(got)).toEqual(a.map((x, i) => u32Ref[op](x, b[i] as number)));
    });
    it(`i32 ${op} wraps and follows the INT_MIN / -1 and division-by-zero rules`, async () => {
      const [a, b0] = pairs(I32_SAMPLES);
      const shift = op === 'shl' || op === 'shr';
      const b = shift ? b0.map((x) => x >>> 0) : b0;
      const got = await runBinary(ctx.device, 'i32', op, a, b);
      const expected = a.map((x, i) => i32Ref[op](x, b[i] as number) >>> 0);
      expect(Array.from(got)).toEqual(expected);
    });
  }

  it('f32 add, sub and mul round to binary32 after every operation', async () => {
    const [a, b] = pairs(F32_SAMPLES);
    const k = defineKernel({
      name: 'sem_f32_arith',
      workgroupSize: 64,
      params: { a: buffer('f32', 'read'), b: buffer('f32', 'read'), out: buffer('f32', 'write') },
      body: ({ a, b, out }, k) => {
        const i = k.globalIndex;
        const n = a.length;
        k.if(i.lt(n), () => {
          const x = a.load(i);
          const y = b.load(i);
          out.store(i, x.add(y));
        });
      },
    });
    const device = ctx.device;
    const ba = device.createBuffer('f32', a);
    const bb = device.createBuffer('f32', b);
    const out = device.createBuffer('f32', a.length);
    device.dispatch(k, { invocations: a.length }, { a: ba, b: bb, out });
    const got = await out.read();
    expect(f32Bits(got)).toEqual(f32Bits(a.map((x, i) => Math.fround(x + (b[i] as number)))));
    // Rounding after every step: ((x + y) - y) * x differs from x * x wherever x + y was inexact.
    const chained = defineKernel({
      name: 'sem_f32_chain',
      workgroupSize: 64,
      params: { a: buffer('f32', 'read'), b: buffer('f32', 'read'), out: buffer('f32', 'write') },
      body: ({ a, b, out }, k) => {
        const i = k.globalIndex;
        k.if(i.lt(a.length), () => out.store(i, a.load(i).add(b.load(i)).sub(b.load(i)).mul(a.load(i))));
      },
    });
    device.dispatch(chained, { invocations: a.length }, { a: ba, b: bb, out });
    const got2 = await out.read();
    const ref = a.map((x, i) => {
      const y = b[i] as number;
      return Math.fround(Math.fround(Math.fround(x + y) - y) * x);
    });
    // GPUs may flush subnormal results to zero; compare only normal or zero results exactly.
    const normal = (v: number) => v === 0 || !Number.isFinite(v) || Math.abs(v) >= 1.1754943508222875e-38;
    const idx = ref.map((_, i) => i).filter((i) => normal(ref[i] as number));
    expect(idx.map((i) => f32Bits([got2[i] as number])[0])).toEqual(idx.map((i) => f32Bits([ref[i] as number])[0]));
  });

  it('conversions truncate, saturate, map NaN to 0 and reinterpret u32 <-> i32', async () => {
    const floats = [-1, 1.9, -1.9, 3.5, 4294967296, 1e10, -1e10, 2147483520, -2147483904, 0.5];
    const ints = [0, 1, -1, INT_MIN, INT_MAX, 16777217, -16777217, 7];
    const uints = [0, 1, 0xffffffff, 0x80000000, 16777217, 7];
    const k = defineKernel({
      name: 'sem_convert',
      workgroupSize: 32,
      params: {
        f: buffer('f32', 'read'),
        s: buffer('i32', 'read'),
        u: buffer('u32', 'read'),
        f2u: buffer('u32', 'write'),
        f2i: buffer('i32', 'write'),
        s2u: buffer('u32', 'write'),
        s2f: buffer('f32', 'write'),
        u2s: buffer('i32', 'write'),
        u2f: buffer('f32', 'write'),
      },
      body: (p, k) => {
        const i = k.globalIndex;
        k.if(i.lt(p.f.length), () => {
          const x = p.f.load(i);
          p.f2u.store(i, x.cast('u32'));
          p.f2i.store(i, x.cast('i32'));
        });
        k.if(i.lt(p.s.length), () => {
          const x = p.s.load(i);
          p.s2u.store(i, x.cast('u32'));
          p.s2f.store(i, x.cast('f32'));
        });
        k.if(i.lt(p.u.length), () => {
          const x = p.u.load(i);
          p.u2s.store(i, x.cast('i32'));
          p.u2f.store(i, x.cast('f32'));
        });
      },
    });
    const d = ctx.device;
    const bufs = {
      f: d.createBuffer('f32', floats),
      s: d.createBuffer('i32', ints),
      u: d.createBuffer('u32', uints),
      f2u: d.createBuffer('u32', floats.length),
      f2i: d.createBuffer('i32', floats.length),
      s2u: d.createBuffer('u32', ints.length),
      s2f: d.createBuffer('f32', ints.length),
      u2s: d.createBuffer('i32', uints.length),
      u2f: d.createBuffer('f32', uints.length),
    };
    d.dispatch(k, { invocations: floats.length }, bufs);
    const f32 = (x: number) => Math.fround(x);
    const sat = (x: number, lo: number, hi: number) => (x <= lo ? lo : x >= hi ? hi : Math.trunc(x));
    expect(Array.from(await bufs.f2u.read())).toEqual(floats.map((x) => sat(f32(x), 0, 0xffffffff)));
    expect(Array.from(await bufs.f2i.read())).toEqual(floats.map((x) => sat(f32(x), INT_MIN, INT_MAX)));
    expect(Array.from(await bufs.s2u.read())).toEqual(ints.map((x) => x >>> 0));
    expect(Array.from(await bufs.s2f.read())).toEqual(ints.map(f32));
    expect(Array.from(await bufs.u2s.read())).toEqual(uints.map((x) => x | 0));
    expect(Array.from(await bufs.u2f.read())).toEqual(uints.map(f32));
  });

  it('bitcast reinterprets f32 bits', async () => {
    const values = [1, -0, 0, -2.5, 1e-3, 3.4028234663852886e38];
    const k = defineKernel({
      name: 'sem_bitcast',
      workgroupSize: 32,
      params: { x: buffer('f32', 'read'), bits: buffer('u32', 'write'), back: buffer('f32', 'write') },
      body: ({ x, bits, back }, k) => {
        const i = k.globalIndex;
        k.if(i.lt(x.length), () => {
          const b = x.load(i).bitcast('u32');
          bits.store(i, b);
          back.store(i, b.bitcast('i32').bitcast('f32'));
        });
      },
    });
    const d = ctx.device;
    const x = d.createBuffer('f32', values);
    const bits = d.createBuffer('u32', values.length);
    const back = d.createBuffer('f32', values.length);
    d.dispatch(k, { invocations: values.length }, { x, bits, back });
    expect(Array.from(await bits.read())).toEqual(f32Bits(values));
    expect(f32Bits(await back.read())).toEqual(f32Bits(values));
  });

  it('loads out of range return 0 and stores out of range are dropped', async () => {
    const k = defineKernel({
      name: 'sem_oob',
      workgroupSize: 16,
      params: { x: buffer('u32', 'read'), y: buffer('u32', 'read_write'), z: buffer('u32', 'write') },
      body: ({ x, y, z }, k) => {
        const i = k.globalIndex;
        k.if(i.lt(z.length), () => {
          // Reads past x's end (x has 4 elements, z 8) and at a negative i32 index.
          const past = x.load(i.add(2));
          const negative = x.load(i.cast('i32').sub(2));
          z.store(i, past.add(negative.mul(1000)));
          // Writes past y's end must not touch anything.
          y.store(i.add(y.length), 0xdead);
        });
      },
    });
    const d = ctx.device;
    const x = d.createBuffer('u32', [1, 2, 3, 4]);
    const y = d.createBuffer('u32', [9, 9, 9]);
    const z = d.createBuffer('u32', 8);
    d.dispatch(k, { invocations: 8 }, { x, y, z });
    const xs = [1, 2, 3, 4];
    const expected = Array.from({ length: 8 }, (_, i) => (xs[i + 2] ?? 0) + (i - 2 >= 0 ? (xs[i - 2] ?? 0) : 0) * 1000);
    expect(Array.from(await z.read())).toEqual(expected);
    expect(Array.from(await y.read())).toEqual([9, 9, 9]);
    expect(Array.from(await x.read())).toEqual(xs);
  });

  it('rejects uniforms that do not fit their dtype before running anything', () => {
    const k = defineKernel({
      name: 'sem_uniform',
      workgroupSize: 8,
      params: { out: buffer('u32', 'write'), v: { kind: 'uniform', dtype: 'u32' } as ParamDecl },
      body: (p, k) => {
        const v = p.v as unknown as Val<'u32'>;
        k.if(k.globalIndex.lt(p.out.length), () => p.out.store(k.globalIndex, v));
      },
    });
    const out = ctx.device.createBuffer('u32', 4);
    for (const bad of [-1, 1.5, 2 ** 32, Number.NaN]) {
      expect(() => ctx.device.dispatch(k, { invocations: 4 }, { out, v: bad } as never)).toThrow(InvalidArgumentError);
    }
  });
});

export type { BufferDType };

describeEachBackend('IR built-ins, vectors and control flow', (ctx) => {
  it('math built-ins agree with Math within the documented tolerances', async () => {
    const xs = [0.25, 0.5, 1, 2, 3.5, 10, 100, 1e4].map(Math.fround);
    type Fn = (v: Val<'f32'>) => Val<'f32'>;
    // [name, kernel op, reference, relative tolerance, absolute tolerance], from WGSL's accuracy
    // table, the loosest of the backends: sqrt is inherited from 1 / inverseSqrt (4.5 ulp), sin is
    // bounded only absolutely (2^-11 on [-pi, pi]). ulps(n) is relative and covers n ulp.
    const ulps = (n: number) => n * 2 ** -22;
    const cases: Array<[string, Fn, (v: number) => number, number, number]> = [
      ['sqrt', (v) => sqrt(v), Math.sqrt, ulps(4.5), 0],
      ['inverseSqrt', (v) => inverseSqrt(v), (v) => 1 / Math.sqrt(v), ulps(2), 0],
      // exp2 within 3 + 2|x| ulp; |x| < 10 here.
      ['exp2', (v) => exp2(v.div(1024)), (v) => 2 ** Math.fround(v / 1024), ulps(23), 0],
      // log2 within 2^-21 absolute on [0.5, 2], 3 ulp elsewhere.
      ['log2', (v) => log2(v), Math.log2, ulps(3), 2 ** -21],
      ['sin', (v) => sin(v.div(4096)), (v) => Math.sin(Math.fround(v / 4096)), 0, 2 ** -11],
      ['div', (v) => f32(1).div(v), (v) => 1 / v, ulps(2.5), 0],
      // fma may round once (fused) or twice.
      ['fma', (v) => fma(v, v, f32(1)), (v) => v * v + 1, ulps(2), 0],
      ['floor', (v) => floor(v.mul(0.3)), (v) => Math.floor(Math.fround(v * 0.3)), 0, 0],
      ['clamp', (v) => clamp(v, 1, 50), (v) => Math.min(Math.max(v, 1), 50), 0, 0],
      ['abs', (v) => abs(v.neg()), Math.abs, 0, 0],
    ];

    const d = ctx.device;
    const x = d.createBuffer('f32', xs);
    const y = d.createBuffer('f32', xs.length);
    for (const [name, op, ref, rel, absTol] of cases) {
      const k = defineKernel({
        name: `math_${name}`,
        workgroupSize: 8,
        params: { x: buffer('f32', 'read'), y: buffer('f32', 'write') },
        body: ({ x, y }, k) => {
          const i = k.globalIndex;
          k.if(i.lt(x.length), () => y.store(i, op(x.load(i))));
        },
      });
      d.dispatch(k, { invocations: xs.length }, { x, y });
      const got = await y.read();
      xs.forEach((v, i) => {
        const expected = ref(v);
        expect(Math.abs((got[i] as number) - expected), `${name}(${v})`).toBeLessThanOrEqual(Math.abs(expected) * rel + absTol);
      });
    }
  });

  it('vec4 views load, compute and store four elements per invocation', async () => {
    const k = defineKernel({
      name: 'vec4_ops',
      workgroupSize: 16,
      params: { x: buffer('u32', 'read', { vector: 4 }), y: buffer('u32', 'write', { vector: 4 }), s: buffer('u32', 'write') },
      body: ({ x, y, s }, k) => {
        const i = k.globalIndex;
        k.if(i.lt(x.length), () => {
          const v = x.load(i);
          y.store(i, v.mul(vec('u32', 1, 2, 3, 4)).add(1));
          s.store(i, v.x.add(v.y).add(v.z).add(v.w));
        });
      },
    });
    const n = 4 * 37;
    const data = Array.from({ length: n }, (_, i) => (i * 7919) % 1000);
    const d = ctx.device;
    const x = d.createBuffer('u32', data);
    const y = d.createBuffer('u32', n);
    const s = d.createBuffer('u32', n / 4);
    d.dispatch(k, { invocations: n / 4 }, { x, y, s });
    expect(Array.from(await y.read())).toEqual(data.map((v, i) => v * ((i % 4) + 1) + 1));
    expect(Array.from(await s.read())).toEqual(
      Array.from({ length: n / 4 }, (_, i) => data.slice(4 * i, 4 * i + 4).reduce((a, b) => a + b)),
    );
  });

  it('vector variables swap components through themselves; vector select picks one arm; vector loads out of range give zeros', async () => {
    const k = defineKernel({
      name: 'vec_values',
      workgroupSize: 16,
      params: { x: buffer('u32', 'read', { vector: 4 }), y: buffer('u32', 'write', { vector: 4 }) },
      body: ({ x, y }, k) => {
        const i = k.globalIndex;
        k.if(i.lt(y.length), () => {
          const v = k.var('vec4<u32>', x.load(i), 'v');
          v.set(vec('u32', v.y, v.x, v.w, v.z)); // each component reads the old value
          const past = x.load(i.add(x.length)); // out of range: (0, 0, 0, 0)
          const below = x.load(i.cast('i32').sub(1000)); // negative: (0, 0, 0, 0)
          const pick = select(i.and(1).eq(0), v, v.mul(2).add(vec('u32', 0, 1, 2, 3)));
          y.store(i, pick.add(past).add(below).add(i));
        });
      },
    });
    const n = 4 * 21;
    const data = Array.from({ length: n }, (_, e) => (e * 7919) % 1000);
    const d = ctx.device;
    const x = d.createBuffer('u32', data);
    const y = d.createBuffer('u32', n);
    d.dispatch(k, { invocations: n / 4 }, { x, y });
    const want = data.map((_, e) => {
      const i = e >> 2;
      const c = e & 3;
      const swapped = data[4 * i + (c ^ 1)] as number;
      return (i % 2 === 0 ? swapped : 2 * swapped + c) + i;
    });
    expect(Array.from(await y.read())).toEqual(want);
  });

  it('vec4 workgroup and private arrays and vector variables live across a barrier', async () => {
    const wg = 8;
    const k = defineKernel({
      name: 'vec_workgroup',
      workgroupSize: wg,
      params: { x: buffer('f32', 'read', { vector: 4 }), y: buffer('f32', 'write', { vector: 4 }) },
      body: ({ x, y }, k) => {
        const tile = k.workgroupArray('vec4<f32>', wg);
        const own = k.privateArray('vec4<f32>', 2);
        const i = k.let(k.globalIndex, 'i');
        const v = k.var('vec4<f32>', x.load(i), 'v');
        tile.store(k.localIndex, v);
        own.store(1, v.mul(0.5));
        own.store(7, v); // out of range: dropped
        k.barrier();
        v.set(v.add(tile.load(k.localIndex.add(1).and(wg - 1))));
        const far = tile.load(k.localIndex.add(wg)); // out of range: zeros
        y.store(i, v.add(own.load(1)).add(own.load(0)).add(far).add(own.load(5)));
      },
    });
    const n = 4 * wg * 3;
    const data = Array.from({ length: n }, (_, e) => ((e * 37) % 101) / 4);
    const d = ctx.device;
    const x = d.createBuffer('f32', data);
    const y = d.createBuffer('f32', n);
    if (!d.caps.features.has('workgroup')) {
      // Gather-only devices refuse the kernel, naming the class.
      expect(() => d.dispatch(k, { invocations: n / 4 }, { x, y })).toThrow(UnsupportedFeatureError);
      return;
    }
    d.dispatch(k, { invocations: n / 4 }, { x, y });
    const want = data.map((value, e) => {
      const i = e >> 2;
      const next = (i & ~(wg - 1)) + (((i % wg) + 1) % wg);
      return value + (data[4 * next + (e & 3)] as number) + value * 0.5;
    });
    const got = await y.read();
    for (let e = 0; e < n; e++) expect(got[e], `y[${e}]`).toBeCloseTo(want[e] as number, 4);
  });

  it('loops with break and continue, nested ifs and select follow the sequential program', async () => {
    // For each x: sum of odd j in [0, x) until the sum exceeds 50, i.e. a small loop with both exits.
    const k = defineKernel({
      name: 'control_flow',
      workgroupSize: 8,
      params: { x: buffer('u32', 'read'), y: buffer('u32', 'write') },
      body: ({ x, y }, k) => {
        const i = k.globalIndex;
        k.if(i.lt(x.length), () => {
          const acc = k.var('u32', 0, 'acc');
          k.for({ from: 0, to: x.load(i) }, (j) => {
            k.if(j.rem(2).eq(0), () => k.continue());
            acc.set(acc.add(j));
            k.if(acc.gt(50), () => k.break());
          });
          y.store(i, select(acc.gt(50), acc.add(1000), acc));
        });
      },
    });
    const xs = [0, 1, 2, 5, 10, 14, 15, 16, 100];
    const ref = xs.map((n) => {
      let acc = 0;
      for (let j = 0; j < n; j++) {
        if (j % 2 === 0) continue;
        acc += j;
        if (acc > 50) break;
      }
      return acc > 50 ? acc + 1000 : acc;
    });
    const d = ctx.device;
    const x = d.createBuffer('u32', xs);
    const y = d.createBuffer('u32', xs.length);
    d.dispatch(k, { invocations: xs.length }, { x, y });
    expect(Array.from(await y.read())).toEqual(ref);
  });
  it('a range hint runs its body as written, accesses outside the hinted range included', async () => {
    // y[i] = x[i] + x[i + 1] + x[0] + (a loop over x[i .. i + 2] with break and continue), the
    // range hinted as [i, i + 1]: x[0] and x[i + 2] lie outside it for most i, and the last
    // invocations read past the end (0).
    const k = defineKernel({
      name: 'range_hint',
      workgroupSize: 8,
      params: { x: buffer('u32', 'read'), y: buffer('u32', 'write') },
      body: ({ x, y }, k) => {
        const i = k.let(k.globalIndex);
        const acc = k.var('u32', 0, 'acc');
        k.expectRange(x, i, i.add(1), () => {
          acc.set(
            x
              .load(i)
              .add(x.load(i.add(1)))
              .add(x.load(0)),
          );
          k.for({ from: i, to: i.add(3) }, (j) => {
            k.if(x.load(j).eq(7), () => k.continue());
            acc.set(acc.add(x.load(j).mul(100)));
            k.if(j.eq(5), () => k.break());
          });
        });
        k.expectRange(y, i, i, () => y.store(i, acc));
      },
    });
    const xs = [3, 7, 1, 9, 7, 4, 2, 8, 5, 6, 11];
    const at = (j: number) => (j < xs.length ? (xs[j] as number) : 0);
    const ref = xs.map((_, i) => {
      let acc = at(i) + at(i + 1) + at(0);
      for (let j = i; j < i + 3; j++) {
        if (at(j) === 7) continue;
        acc += at(j) * 100;
        if (j === 5) break;
      }
      return acc;
    });
    const d = ctx.device;
    const x = d.createBuffer('u32', xs);
    const y = d.createBuffer('u32', xs.length);
    d.dispatch(k, { invocations: xs.length }, { x, y });
    expect(Array.from(await y.read())).toEqual(ref);
  });
});
