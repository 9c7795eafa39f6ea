/**
 * The WebAssembly code generator (backend-cpu codegen/wasm-generator.ts) on its own, without the CPU
 * backend's workers: each kernel runs as its module and as the generated
 * JavaScript (js.ts, the reference the CPU backend held before) over the same
 * buffers in one shared memory, and every output must agree bit for bit. The
 * inputs are the edge values where WebAssembly and JavaScript differ unless the
 * generator keeps them together: division by zero, i32 MIN / -1, saturating
 * truncation, shift counts past 31, NaN, signed zeros, infinities, subnormals.
 */
import { generateJs, generateWasm } from '@trident/backend-cpu/internal';
import {
  abs,
  buffer,
  ceil,
  clamp,
  cos,
  countOneBits,
  defineKernel,
  exp,
  exp2,
  floor,
  fma,
  inverseSqrt,
  type Kernel,
  log,
  log2,
  max,
  min,
  pow,
  select,
  sin,
  sqrt,
  trunc,
  uniform,
  type Val,
  vec,
} from '@trident/core';
import { describe, expect, it } from 'vitest';
import { instantiateWasmKernel } from '../packages/backend-cpu/src/wasm-kernel.mjs';

type Data = Uint32Array | Int32Array | Float32Array;
type Run = (B: Record<string, Data>, U: Record<string, number>, s: number, e: number, n: number, G: readonly number[]) => void;

/** Runs `k` over copies of `inputs` (outputs: the entries of `outputs`, zeroed) as JavaScript and as WebAssembly. */
function runBoth(
  k: Kernel,
  inputs: Record<string, Data>,
  outputs: Record<string, Data>,
  uniforms: Record<string, number> = {},
  grid: readonly [number, number, number] = [1, 1, 1],
): { js: Record<string, Data>; wasm: Record<string, Data> } {
  const wasm = generateWasm(k);
  if (!wasm.bytes) throw new Error(`no module: ${wasm.reason}`);
  const memory = new WebAssembly.Memory({ initial: 2, maximum: 64, shared: true });
  // Garbage around the buffers: a module that read past a buffer's end would read it, not 0.
  new Uint8Array(memory.buffer).fill(0x5a);
  const nwg = grid[0] * grid[1] * grid[2];
  const lay = () => {
    const B: Record<string, Data> = {};
    // A nonzero first offset: a module that ignored a buffer's offset would read the wrong bytes.
    let offset = 48;
    for (const [name, data] of [...Object.entries(inputs), ...Object.entries(outputs)]) {
      const view = new (data.constructor as new (b: ArrayBufferLike, o: number, l: number) => Data)(memory.buffer, offset, data.length);
      view.set(name in inputs ? data : (new (data.constructor as new (l: number) => Data)(data.length) as never));
      B[name] = view;
      offset += Math.ceil((data.length * 4) / 16) * 16 + 16;
    }
    return B;
  };
  // Every buffer after the run: inputs too (read_write and atomic ones change).
  const take = (B: Record<string, Data>) => Object.fromEntries(Object.entries(B).map(([name, view]) => [name, view.slice()]));
  const jsRun = new Function(`"use strict"; return ${generateJs(k).source};`)() as Run;
  const bJs = lay();
  jsRun(bJs, uniforms, 0, nwg, nwg, grid);
  const js = take(bJs);
  const bWasm = lay();
  // The thread's private-array block: past the buffers, filled with garbage that the module must zero.
  const last = Object.values(bWasm).reduce((end, v) => Math.max(end, v.byteOffset + v.byteLength), 0);
  const scratch = Math.ceil(last / 16) * 16 + 16;
  new Uint8Array(memory.buffer, scratch, wasm.scratchBytes).fill(0xab);
  const module = new WebAssembly.Module(wasm.bytes as Uint8Array<ArrayBuffer>);
  const wasmRun = instantiateWasmKernel(module, memory, wasm.params, scratch) as Run;
  wasmRun(bWasm, uniforms, 0, nwg, nwg, grid);
  return { js, wasm: take(bWasm) };
}

/** Bits of each element (f32 NaNs as one pattern: neither path fixes a NaN's payload). */
function bits(d: Data): number[] {
  if (!(d instanceof Float32Array)) return [...new Uint32Array(d.buffer, d.byteOffset, d.length)];
  return [...d].map((x) => (Number.isNaN(x) ? 0x7fc00000 : (new Uint32Array(new Float32Array([x]).buffer)[0] as number)));
}

function expectSame(r: { js: Record<string, Data>; wasm: Record<string, Data> }): void {
  for (const name of Object.keys(r.js)) expect(bits(r.wasm[name] as Data), name).toEqual(bits(r.js[name] as Data));
}

const U32_EDGES = [0, 1, 2, 3, 31, 32, 33, 0x7fffffff, 0x80000000, 0x80000001, 0xfffffffe, 0xffffffff];
const I32_EDGES = [0, 1, -1, 2, -2, 31, 33, 0x7fffffff, -0x80000000, -0x7fffffff, 1000000007, -1000000007];
const F32_EDGES = new Float32Array([
  0,
  -0,
  1,
  -1,
  0.5,
  -2.5,
  3.75,
  1e-45,
  -1e-40,
  1.17549435e-38,
  3.4028235e38,
  -3.4028235e38,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.NaN,
  4294967296,
  2147483648,
  -2147483904,
  16777217,
  0.1,
]);

/** Every ordered pair of `edges`, as two arrays. */
function pairs<T extends Data>(edges: ArrayLike<number>, make: (n: number) => T): [T, T] {
  const n = edges.length;
  const a = make(n * n);
  const b = make(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      a[i * n + j] = edges[i] as number;
      b[i * n + j] = edges[j] as number;
    }
  return [a, b];
}

describe('encoding', () => {
  it('writes constants across LEB128 boundaries and f32 bit patterns exactly', () => {
    const ints = [0, 63, 64, -64, -65, 127, 128, 8191, 8192, -8193, 0x7fffffff, -0x80000000, 123456789, -123456789];
    const uints = [0x80000000, 0xffffffff, 0xfffffffe, 1 << 28, 2 ** 32 - 2 ** 20];
    const floats = [0.1, -0, 1e-45, 3.4028235e38, Number.NEGATIVE_INFINITY];
    const k = defineKernel({
      name: 'wasm_constants',
      workgroupSize: 1,
      params: { i: buffer('i32', 'write'), u: buffer('u32', 'write'), f: buffer('f32', 'write') },
      body: ({ i, u, f }) => {
        for (const [j, v] of ints.entries()) i.store(j, v);
        for (const [j, v] of uints.entries()) u.store(j, v);
        for (const [j, v] of floats.entries()) f.store(j, v);
      },
    });
    const r = runBoth(k, {}, { i: new Int32Array(ints.length), u: new Uint32Array(uints.length), f: new Float32Array(floats.length) });
    expectSame(r);
    expect([...(r.wasm.i as Int32Array)]).toEqual(ints);
    expect([...(r.wasm.u as Uint32Array)]).toEqual(uints);
    expect(Object.is((r.wasm.f as Float32Array)[1], -0)).toBe(true);
  });

  it('passes buffers by offset and length, uniforms by type, in parameter order', () => {
    const k = defineKernel({
      name: 'wasm_params',
      workgroupSize: 4,
      params: { a: buffer('u32', 'read'), s: uniform('f32'), out: buffer('f32', 'write'), t: uniform('i32'), b: buffer('i32', 'read') },
      body: ({ a, s, out, t, b }, k) => {
        const i = k.let(k.localIndex);
        out.store(i, a.load(i).cast('f32').mul(s).add(b.load(i).add(t).cast('f32')));
        out.store(i.add(4), a.length.cast('f32'));
      },
    });
    const r = runBoth(
      k,
      { a: new Uint32Array([1, 2, 3, 4]), b: new Int32Array([-1, -2, -3]) },
      { out: new Float32Array(8) },
      { s: 0.5, t: -10 },
    );
    expectSame(r);
    expect([...(r.wasm.out as Float32Array)]).toEqual([-10.5, -11, -11.5, -8, 4, 4, 4, 4]);
  });
});

describe('integer rules', () => {
  for (const [dtype, edges] of [
    ['u32', U32_EDGES],
    ['i32', I32_EDGES],
  ] as const) {
    it(`${dtype}: arithmetic, division, shifts, comparisons, min/max/clamp/abs/countOneBits agree on edge pairs`, () => {
      const make = (n: number) => (dtype === 'u32' ? new Uint32Array(n) : new Int32Array(n));
      const [a, b] = pairs(edges, make);
      const OPS = 20;
      const k = defineKernel({
        name: `wasm_int_${dtype}`,
        workgroupSize: 16,
        params: { a: buffer(dtype, 'read'), b: buffer(dtype, 'read'), out: buffer('u32', 'write'), n: uniform('u32') },
        body: ({ a: ba, b: bb, out, n }, k) => {
          const i = k.let(k.globalIndex);
          k.if(i.lt(n), () => {
            const x = k.let(ba.load(i) as Val<'u32'>);
            const y = k.let(bb.load(i) as Val<'u32'>);
            // Shift counts are u32 whatever the shifted type.
            const count = dtype === 'u32' ? y : (y as unknown as Val<'i32'>).bitcast('u32');
            const results: Array<Val<'u32'>> = [
              x.add(y),
              x.sub(y),
              x.mul(y),
              x.div(y),
              x.rem(y),
              x.and(y),
              x.or(y),
              x.xor(y),
              x.shl(count),
              x.shr(count),
              x.bitnot(),
              min(x, y),
              max(x, y),
              clamp(x, y, 1000),
              abs(x),
              countOneBits(x),
              select(x.lt(y), 1, 0),
              select(x.le(y), 1, 0),
              select(x.gt(y).and(x.ne(y)), 1, 0),
              select(x.ge(y).or(x.eq(y)), 1, 0),
            ];
            for (const [j, v] of results.entries())
              out.store(i.mul(OPS).add(j), dtype === 'u32' ? v : (v as unknown as Val<'i32'>).bitcast('u32'));
          });
        },
      });
      const r = runBoth(k, { a, b }, { out: new Uint32Array(a.length * OPS) }, { n: a.length }, [Math.ceil(a.length / 16), 1, 1]);
      expectSame(r);
    });
  }
});

describe('f32 rules', () => {
  it('arithmetic, math built-ins, conversions and comparisons agree on edge pairs (NaN, ±0, ±Inf, subnormals)', () => {
    const [a, b] = pairs(F32_EDGES, (n) => new Float32Array(n));
    const OPS = 30;
    const k = defineKernel({
      name: 'wasm_f32',
      workgroupSize: 16,
      params: { a: buffer('f32', 'read'), b: buffer('f32', 'read'), out: buffer('u32', 'write'), n: uniform('u32') },
      body: ({ a: ba, b: bb, out, n }, k) => {
        const i = k.let(k.globalIndex);
        k.if(i.lt(n), () => {
          const x = k.let(ba.load(i));
          const y = k.let(bb.load(i));
          const f: Array<Val<'f32'>> = [
            x.add(y),
            x.sub(y),
            x.mul(y),
            x.div(y),
            x.rem(y),
            min(x, y),
            max(x, y),
            clamp(x, y, 2),
            fma(x, y, x),
            sqrt(x),
            inverseSqrt(x),
            floor(x),
            ceil(x),
            trunc(x),
            abs(x),
            x.neg(),
            exp(x),
            exp2(x),
            log(x),
            log2(x),
            pow(x, y),
            sin(x),
            cos(x),
            select(x.lt(y), x, y),
          ];
          for (const [j, v] of f.entries()) out.store(i.mul(OPS).add(j), v.bitcast('u32'));
          out.store(i.mul(OPS).add(24), x.cast('u32'));
          out.store(i.mul(OPS).add(25), x.cast('i32').bitcast('u32'));
          out.store(i.mul(OPS).add(26), select(x.eq(y).or(x.ne(y).and(x.le(y))), 1, 0));
          out.store(i.mul(OPS).add(27), select(x.ge(y), 1, 0).add(select(x.gt(y), 2, 0)));
          out.store(i.mul(OPS).add(28), x.bitcast('u32').cast('f32').bitcast('u32'));
          out.store(i.mul(OPS).add(29), x.bitcast('i32').cast('f32').bitcast('u32'));
        });
      },
    });
    const r = runBoth(k, { a, b }, { out: new Uint32Array(a.length * OPS) }, { n: a.length }, [Math.ceil(a.length / 16), 1, 1]);
    // Compare through f32 so that NaN payloads (unfixed by the IR) compare as one NaN.
    const asF32 = (d: Data) => new Float32Array((d as Uint32Array).buffer, (d as Uint32Array).byteOffset, d.length);
    expect(bits(asF32(r.wasm.out as Data))).toEqual(bits(asF32(r.js.out as Data)));
  });
});

describe('vectors', () => {
  it('vec4 SIMD arithmetic and the lane-by-lane rules (division, shifts by vectors) agree with the JavaScript', () => {
    const k = defineKernel({
      name: 'wasm_vec4',
      workgroupSize: 4,
      params: {
        a: buffer('u32', 'read', { vector: 4 }),
        b: buffer('i32', 'read', { vector: 4 }),
        f: buffer('f32', 'read', { vector: 4 }),
        ou: buffer('u32', 'write', { vector: 4 }),
        oi: buffer('i32', 'write', { vector: 4 }),
        of: buffer('f32', 'write', { vector: 4 }),
      },
      body: ({ a, b, f, ou, oi, of }, k) => {
        const i = k.let(k.localIndex);
        const x = k.let(a.load(i));
        const y = k.let(b.load(i));
        const z = k.let(f.load(i));
        ou.store(i.mul(6), x.add(x.mul(3)));
        ou.store(i.mul(6).add(1), x.div(a.load(i.add(1))));
        ou.store(i.mul(6).add(2), x.shl(a.load(i.add(1))));
        ou.store(i.mul(6).add(3), min(x, a.load(i.add(1))).xor(x.shr(3)));
        ou.store(i.mul(6).add(4), z.cast('vec4<u32>'));
        ou.store(i.mul(6).add(5), vec('u32', x.w, x.z, x.y.add(1), countOneBits(x.x)));
        oi.store(i.mul(4), y.rem(b.load(i.add(1))).sub(y.neg()));
        oi.store(i.mul(4).add(1), max(y, b.load(i.add(1))).shr(b.load(i.add(1)).bitcast('vec4<u32>')));
        oi.store(i.mul(4).add(2), abs(y).add(z.cast('vec4<i32>')));
        oi.store(i.mul(4).add(3), select(y.x.lt(0), y, y.bitnot()));
        of.store(
          i.mul(3),
          z
            .mul(z)
            .add(z)
            .div(f.load(i.add(1))),
        );
        of.store(i.mul(3).add(1), min(z, f.load(i.add(1))).sub(sqrt(abs(z))));
        of.store(i.mul(3).add(2), floor(z).add(x.cast('vec4<f32>')).add(y.cast('vec4<f32>')).add(exp(z)));
      },
    });
    const u = new Uint32Array(U32_EDGES.slice(0, 12)).subarray(0, 12);
    const a = new Uint32Array(16);
    a.set(u);
    a.set([5, 0, 33, 7], 12);
    const b = new Int32Array(16);
    b.set(I32_EDGES.slice(0, 12));
    b.set([-1, 0, 40, -7], 12);
    const f = new Float32Array(16);
    f.set(F32_EDGES.subarray(0, 16));
    const r = runBoth(k, { a, b, f }, { ou: new Uint32Array(96), oi: new Int32Array(64), of: new Float32Array(48) });
    expectSame(r);
  });

  it('vec2 and vec3 buffers load and store lane by lane, out-of-range elements read 0', () => {
    const k = defineKernel({
      name: 'wasm_vec23',
      workgroupSize: 4,
      params: {
        a: buffer('f32', 'read', { vector: 3 }),
        b: buffer('u32', 'read_write', { vector: 2 }),
        out: buffer('f32', 'write', { vector: 3 }),
      },
      body: ({ a, b, out }, k) => {
        const i = k.let(k.localIndex);
        const v = k.let(a.load(i));
        out.store(i, v.add(vec('f32', 1, 2, 3)));
        const w = k.let(b.load(i.add(1)));
        b.store(i, vec('u32', w.y, w.x.add(a.length)));
      },
    });
    const a = new Float32Array([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const b = new Uint32Array([1, 2, 3, 4, 5, 6, 7, 8]);
    const r = runBoth(k, { a, b }, { out: new Float32Array(12) });
    expectSame(r);
    expect([...(r.wasm.out as Float32Array)]).toEqual([2, 4, 6, 5, 7, 9, 8, 10, 12, 1, 2, 3]);
  });

  it('vectors built from lanes of one vector variable and zeros (shuffles) keep every lane and bit pattern', () => {
    const k = defineKernel({
      name: 'wasm_shuffles',
      workgroupSize: 4,
      params: {
        u: buffer('u32', 'read', { vector: 4 }),
        f: buffer('f32', 'read', { vector: 4 }),
        outU: buffer('u32', 'write', { vector: 4 }),
        outF: buffer('f32', 'write', { vector: 4 }),
        out2: buffer('u32', 'write', { vector: 2 }),
      },
      body: ({ u, f, outU, outF, out2 }, k) => {
        const i = k.let(k.localIndex);
        const x = k.let(u.load(i));
        const y = k.let(f.load(i));
        // A lane shift, a broadcast, a reversal with a zero, and lanes of two variables (no shuffle: per lane).
        const shifted = k.let(vec('u32', 0, x.x, x.y, x.z));
        const broadcast = k.let(vec('u32', x.w, x.w, x.w, x.w));
        outU.store(
          i,
          shifted
            .add(broadcast.mul(3))
            .add(vec('u32', x.w, 0, x.y, x.x))
            .add(vec('u32', x.x, shifted.y, 0, x.w)),
        );
        // f32: +0 lanes from the zero vector; -0 is not a zero lane (built per lane); NaNs and -0 moved as bits.
        outF.store(i.mul(2), vec('f32', 0, y.x, y.y, y.z));
        outF.store(i.mul(2).add(1), vec('f32', y.w, -0, y.x, y.w));
        out2.store(i, vec('u32', x.z, x.w));
      },
    });
    const u = Uint32Array.from({ length: 16 }, (_, t) => (t * 2654435761) >>> 0);
    const f = new Float32Array([
      -0,
      Number.NaN,
      1.5,
      -2,
      Number.POSITIVE_INFINITY,
      1e-45,
      -0,
      3,
      0,
      -1,
      Number.NEGATIVE_INFINITY,
      7,
      8,
      -0,
      2,
      1,
    ]);
    const r = runBoth(k, { u, f }, { outU: new Uint32Array(16), outF: new Float32Array(32), out2: new Uint32Array(8) });
    expectSame(r);
    const [a, b, c, d] = [...u.subarray(4, 8)] as [number, number, number, number];
    const want = [0 + d * 3 + d + a, a + d * 3 + 0 + a, b + d * 3 + b + 0, c + d * 3 + a + d].map((v) => v >>> 0);
    expect([...(r.wasm.outU as Uint32Array).subarray(4, 8)]).toEqual(want);
    expect(Object.is((r.wasm.outF as Float32Array)[1], -0)).toBe(true);
    expect(Object.is((r.wasm.outF as Float32Array)[5], -0)).toBe(true);
  });
});

describe('control flow, ids and effects', () => {
  it('loops with break and continue, early return, and 2-D ids over a 2-D grid', () => {
    const k = defineKernel({
      name: 'wasm_control',
      workgroupSize: [4, 2],
      params: { out: buffer('u32', 'write'), ids: buffer('u32', 'write') },
      body: ({ out, ids }, k) => {
        const g = k.let(k.globalIndex);
        const id = k.globalId;
        ids.store(g.mul(4), id.x);
        ids.store(g.mul(4).add(1), id.y);
        ids.store(g.mul(4).add(2), k.workgroupId.y.mul(100).add(k.localId.y));
        ids.store(g.mul(4).add(3), k.workgroupCount.x.add(k.workgroupCount.y.mul(10)));
        k.if(g.rem(5).eq(4), () => k.return());
        const acc = k.var('u32', 0, 'acc');
        k.for({ from: 0, to: 50 }, (j) => {
          k.if(j.rem(3).eq(0), () => k.continue());
          k.if(acc.gt(g.mul(7).add(20)), () => k.break());
          acc.set(acc.add(j));
        });
        out.store(g, acc);
      },
    });
    const r = runBoth(k, {}, { out: new Uint32Array(48), ids: new Uint32Array(192) }, {}, [3, 2, 1]);
    expectSame(r);
    expect((r.wasm.out as Uint32Array)[4]).toBe(0);
    expect((r.wasm.out as Uint32Array)[0]).toBeGreaterThan(0);
  });

  it('loops whose accesses are checked once (bound within the buffers, i + K not wrapping) agree wherever the bound or i leave the buffers', () => {
    // A chunked fold (loads at i..i+3 under i + 3 < end), a scan-like copy (load and store at i under i < end),
    // and accesses after the body moved i (those keep their checks): end from a uniform, within or past the buffers.
    const k = defineKernel({
      name: 'wasm_checked_once',
      workgroupSize: 1,
      params: {
        x: buffer('u32', 'read'),
        v: buffer('u32', 'read', { vector: 4 }),
        w: buffer('f32', 'read', { vector: 2 }),
        y: buffer('u32', 'write'),
        z: buffer('u32', 'write'),
        out: buffer('u32', 'write'),
        start: uniform('u32'),
        end: uniform('u32'),
      },
      body: ({ x, v, w, y, z, out, start, end }, k) => {
        const a = k.var('u32', 0, 'a');
        const i = k.var('u32', start, 'i');
        k.while(
          () => i.add(3).lt(end),
          () => {
            a.set(
              a
                .add(x.load(i))
                .add(x.load(i.add(1)))
                .add(x.load(i.add(2)))
                .add(x.load(i.add(3))),
            );
            // Offsets past the loop variable as the instructions' static offsets: a vec2 lane by lane, a store.
            const pair = k.let(w.load(i.add(1)));
            z.store(i.add(2), a.add(pair.x.add(pair.y).cast('u32')));
            i.set(i.add(4));
            // i moved: past the end of x here, this load must still read 0.
            a.set(a.add(x.load(i).mul(7)));
          },
        );
        out.store(0, a);
        const b = k.var('vec4<u32>', 0, 'b');
        const j = k.var('u32', start, 'j');
        k.while(
          () => j.add(1).lt(end),
          () => {
            b.set(b.add(v.load(j)).add(v.load(j.add(1)).mul(vec('u32', 3, 5, 7, 11))));
            j.set(j.add(2));
          },
        );
        out.store(1, b.x.add(b.y).add(b.z).add(b.w));
        const carry = k.var('u32', 0, 'carry');
        k.for({ from: start, to: end }, (t) => {
          carry.set(carry.add(x.load(t)));
          y.store(t, carry);
          // Past i: not covered by the loop's condition, checked.
          y.store(t.add(1), carry.mul(3));
        });
        out.store(2, carry);
      },
    });
    const x = Uint32Array.from({ length: 37 }, (_, t) => (t * 2654435761) >>> 0);
    const v = Uint32Array.from({ length: 40 }, (_, t) => t * 3 + 1);
    const w = Float32Array.from({ length: 80 }, (_, t) => t * 0.5);
    for (const [start, end] of [
      [0, 37],
      [1, 37],
      [0, 36],
      [5, 30],
      [0, 38],
      [0, 1000],
      [3, 9],
      [9, 3],
      [0xfffffffe, 41],
      [0xfffffffd, 6],
      [0xffffffff, 2],
    ] as const) {
      const r = runBoth(k, { x, v, w }, { y: new Uint32Array(37), z: new Uint32Array(37), out: new Uint32Array(3) }, { start, end });
      expectSame(r);
    }
    // Within bounds the fold is the sum it should be (the checked-once copy computes, not only agrees).
    const r = runBoth(k, { x, v, w }, { y: new Uint32Array(37), z: new Uint32Array(37), out: new Uint32Array(3) }, { start: 0, end: 36 });
    let sum = 0;
    for (let t = 0; t < 36; t++) sum = (sum + (x[t] as number) + (t % 4 === 3 && t + 1 < 37 ? 7 * (x[t + 1] as number) : 0)) >>> 0;
    expect((r.wasm.out as Uint32Array)[0]).toBe(sum);
  });

  it('private arrays: per invocation, zeroed per workgroup, 0 out of range, stores out of range dropped', () => {
    const k = defineKernel({
      name: 'wasm_private',
      workgroupSize: 4,
      params: {
        x: buffer('u32', 'read'),
        c: buffer('u32', 'atomic'),
        out: buffer('u32', 'write'),
        vout: buffer('f32', 'write', { vector: 4 }),
      },
      body: ({ x, c, out, vout }, k) => {
        const g = k.let(k.globalIndex);
        const hist = k.privateArray('u32', 8);
        const acc = k.privateArray('vec4<f32>', 2);
        k.for({ from: 0, to: 6 }, (j) => {
          const bin = k.let(x.load(g.add(j)).and(7));
          hist.store(bin, hist.load(bin).add(1));
          acc.store(j.and(1), acc.load(j.and(1)).add(vec('f32', 1, 0.5, 0.25, 2)));
        });
        // Out of range: the load gives 0 and the store is dropped (the builder binds the atomic before it: it runs).
        hist.store(g.add(100), c.atomicAdd(0, 1));
        for (let b = 0; b < 8; b++) out.store(g.mul(9).add(b), hist.load(b));
        out.store(g.mul(9).add(8), hist.load(g.add(8)));
        vout.store(g, acc.load(0).add(acc.load(1)));
      },
    });
    const x = new Uint32Array(64).map((_, i) => (i * 2654435761) >>> 0);
    const r = runBoth(k, { x, c: new Uint32Array(1) }, { out: new Uint32Array(8 * 9), vout: new Float32Array(32) }, {}, [2, 1, 1]);
    expectSame(r);
    expect((r.wasm.c as Uint32Array)[0]).toBe(8);
    const out = r.wasm.out as Uint32Array;
    for (let g = 0; g < 8; g++) expect(out.subarray(g * 9, g * 9 + 8).reduce((a, v) => a + v, 0)).toBe(6);
    expect([...(r.wasm.vout as Float32Array).subarray(0, 4)]).toEqual([6, 3, 1.5, 12]);
  });

  it('an atomic in a select arm or the right of and/or runs only when JavaScript would run it', () => {
    const k = defineKernel({
      name: 'wasm_effects',
      workgroupSize: 8,
      params: { c: buffer('u32', 'atomic'), out: buffer('u32', 'write') },
      body: ({ c, out }, k) => {
        const i = k.let(k.localIndex);
        const odd = k.let(i.and(1).eq(1));
        out.store(i, select(odd, c.atomicAdd(0, 1), c.atomicAdd(1, 1)));
        const both = k.let(odd.and(c.atomicAdd(2, 1).lt(100)));
        const either = k.let(odd.or(c.atomicAdd(3, 1).lt(100)));
        out.store(i.add(8), select(both, 1, 0).add(select(either, 2, 0)));
        out.store(i.add(16), c.atomicMax(4, i.mul(3)).add(c.atomicMin(5, i)));
        out.store(i.add(24), c.atomicCompareExchange(6, i, i.add(1)));
      },
    });
    const r = runBoth(k, { c: new Uint32Array([0, 0, 0, 0, 0, 99, 0, 0]) }, { out: new Uint32Array(32) });
    expectSame(r);
  });
});
