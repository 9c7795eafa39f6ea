/**
 * The CPU backend's generated JavaScript holds a u32 local as its value's int32 bits and
 * pins every integer read (`(x >>> 0)`, `(x | 0)`: codegen/js.ts, `pinned`), so that V8's
 * code for a long loop compiled mid-call keeps loop-carried integers in registers. These
 * kernels put that at its boundaries: accumulators that start past 2^31 and wrap past 2^32,
 * read by every kind of operation that tells a u32 from its int32 bits (comparison, min and
 * max, division, remainder, logical shift, conversion to f32, select), in loops of
 * unrolled lanes with remainder loops of zero to three trips and loops that do not run;
 * vector locals; locals kept across a barrier; u32 uniforms past 2^31. Each runs on
 * buffers in host blocks (JavaScript), on the workers and inline, and on the heap
 * (WebAssembly), against a plain TypeScript reference.
 */
import { type CpuBackendOptions, cpuAdapter } from '@trident/backend-cpu';
import { type Buffer, buffer, Device, defineKernel, max, min, select, uniform, vec } from '@trident/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CpuBuffer } from '../packages/backend-cpu/src/cpu-buffer.ts';
import { expectBitsEqual } from './alg-helpers.ts';
import { randomU32 } from './harness.ts';

/** Outputs per invocation of `lanes`. */
const OUTS = 11;

/**
 * Invocation i folds x[i*m, i*m + len) with len = (7i) mod (m + 1): four u32 lanes
 * starting at `bias`, four loads a trip while four remain, then the first lane alone
 * (zero to three trips), counting the trips whose first lane passed 2^31.
 */
const lanes = defineKernel({
  name: 'js_u32_lanes',
  workgroupSize: 32,
  params: { x: buffer('u32', 'read'), out: buffer('u32', 'write'), n: uniform('u32'), m: uniform('u32'), bias: uniform('u32') },
  body: ({ x, out, n, m, bias }, k) => {
    const i = k.let(k.globalIndex, 'i');
    k.if(i.lt(n), () => {
      const start = k.let(i.mul(m), 'start');
      const end = k.let(start.add(i.mul(7).rem(m.add(1))), 'end');
      const a = [0, 1, 2, 3].map((l) => k.var('u32', bias, `a${l}`));
      const [a0, a1, a2, a3] = a as [(typeof a)[0], (typeof a)[0], (typeof a)[0], (typeof a)[0]];
      const over = k.var('u32', 0, 'over');
      const j = k.let(start, 'j');
      k.while(
        () => j.add(3).lt(end),
        () => {
          for (const [l, acc] of a.entries()) acc.set(acc.add(x.load(j.add(l))));
          over.set(over.add(select(a0.gt(0x80000000), 1, 0)));
          j.set(j.add(4));
        },
      );
      k.while(
        () => j.lt(end),
        () => {
          a0.set(a0.add(x.load(j)));
          j.set(j.add(1));
        },
      );
      const total = k.let(a0.add(a1).add(a2).add(a3), 'total');
      const o = k.let(i.mul(OUTS), 'o');
      const outs = [
        a0,
        min(a1, a2),
        max(a2, a3),
        total,
        total.div(7),
        total.rem(1000),
        total.shr(3),
        total.cast('f32').bitcast('u32'),
        over,
        select(total.ge(bias), total, bias),
        total.bitcast('i32').cast('f32').bitcast('u32'),
      ];
      for (const [c, v] of outs.entries()) out.store(o.add(c), v);
    });
  },
});

function lanesReference(x: Uint32Array, n: number, m: number, bias: number): Uint32Array {
  const out = new Uint32Array(n * OUTS);
  const f32 = new Float32Array(1);
  const bits = new Uint32Array(f32.buffer);
  const f32Bits = (v: number) => {
    f32[0] = v;
    return bits[0] as number;
  };
  for (let i = 0; i < n; i++) {
    const start = i * m;
    const end = start + ((7 * i) % (m + 1));
    const a = [bias, bias, bias, bias];
    let over = 0;
    let j = start;
    for (; j + 3 < end; j += 4) {
      for (let l = 0; l < 4; l++) a[l] = ((a[l] as number) + (x[j + l] as number)) >>> 0;
      if ((a[0] as number) > 0x80000000) over++;
    }
    for (; j < end; j++) a[0] = ((a[0] as number) + (x[j] as number)) >>> 0;
    const [a0, a1, a2, a3] = a as [number, number, number, number];
    const total = (a0 + a1 + a2 + a3) >>> 0;
    const row = [
      a0,
      Math.min(a1, a2),
      Math.max(a2, a3),
      total,
      Math.floor(total / 7),
      total % 1000,
      total >>> 3,
      f32Bits(total),
      over,
      Math.max(total, bias),
      f32Bits(total | 0),
    ];
    out.set(row, i * OUTS);
  }
  return out;
}

/** A running vec4<u32> sum seeded with `bias` in every lane, stored after each step (the vec4 scan's shape). */
const vecCarry = defineKernel({
  name: 'js_u32_vec_carry',
  workgroupSize: 1,
  params: { x: buffer('u32', 'read', { vector: 4 }), out: buffer('u32', 'write', { vector: 4 }), n: uniform('u32'), bias: uniform('u32') },
  body: ({ x, out, n, bias }, k) => {
    const carry = k.var('vec4<u32>', vec('u32', bias, bias.add(1), bias.mul(2), 0xffffffff), 'carry');
    k.for({ from: 0, to: n }, (i) => {
      carry.set(carry.add(x.load(i)));
      out.store(i, select(carry.x.lt(carry.y), carry, carry.add(vec('u32', 1, 2, 3, 4))));
    });
  },
});

function vecCarryReference(x: Uint32Array, bias: number): Uint32Array {
  const out = new Uint32Array(x.length);
  const c = [bias, (bias + 1) >>> 0, (bias * 2) >>> 0, 0xffffffff];
  for (let i = 0; i < x.length / 4; i++) {
    for (let l = 0; l < 4; l++) c[l] = ((c[l] as number) + (x[4 * i + l] as number)) >>> 0;
    const bump = (c[0] as number) < (c[1] as number) ? 0 : 1;
    for (let l = 0; l < 4; l++) out[4 * i + l] = ((c[l] as number) + bump * (l + 1)) >>> 0;
  }
  return out;
}

/** u32 locals kept across a barrier (per-invocation arrays in the JavaScript), past 2^31. */
const acrossBarrier = defineKernel({
  name: 'js_u32_across_barrier',
  workgroupSize: 64,
  params: { x: buffer('u32', 'read'), out: buffer('u32', 'write'), bias: uniform('u32') },
  body: ({ x, out, bias }, k) => {
    const shared = k.workgroupArray('u32', 64);
    const v = k.let(x.load(k.globalIndex).add(bias), 'v');
    shared.store(k.localIndex, v);
    k.workgroupBarrier();
    const w = k.let(shared.load(k.localIndex.add(1).rem(64)), 'w');
    const o = k.let(k.globalIndex.mul(3), 'o');
    out.store(o, max(v, w));
    out.store(o.add(1), v.div(3));
    out.store(o.add(2), select(v.gt(w), v.sub(w), w.sub(v)));
  },
});

function acrossBarrierReference(x: Uint32Array, bias: number): Uint32Array {
  const out = new Uint32Array(x.length * 3);
  const v = Uint32Array.from(x, (e) => (e + bias) >>> 0);
  for (let g = 0; g < x.length; g++) {
    const base = g - (g % 64);
    const a = v[g] as number;
    const b = v[base + ((g + 1) % 64)] as number;
    out.set([Math.max(a, b), Math.floor(a / 3), a > b ? a - b : b - a], 3 * g);
  }
  return out;
}

/** i32 lanes wrapping past ±2^31: signed comparison, division, arithmetic shift, conversion. */
const signed = defineKernel({
  name: 'js_i32_wrap',
  workgroupSize: 16,
  params: { x: buffer('i32', 'read'), out: buffer('i32', 'write'), n: uniform('u32'), m: uniform('u32'), bias: uniform('i32') },
  body: ({ x, out, n, m, bias }, k) => {
    const i = k.let(k.globalIndex, 'i');
    k.if(i.lt(n), () => {
      const acc = k.var('i32', bias, 'acc');
      const negatives = k.var('i32', 0, 'negatives');
      k.for({ from: i.mul(m), to: i.mul(m).add(m) }, (j) => {
        acc.set(acc.add(x.load(j)));
        negatives.set(negatives.add(select(acc.lt(0), 1, 0, 'i32')));
      });
      const o = k.let(i.mul(5), 'o');
      out.store(o, acc);
      out.store(o.add(1), acc.div(-7));
      out.store(o.add(2), acc.shr(5));
      out.store(o.add(3), acc.cast('f32').bitcast('i32'));
      out.store(o.add(4), negatives);
    });
  },
});

function signedReference(x: Int32Array, n: number, m: number, bias: number): Int32Array {
  const out = new Int32Array(n * 5);
  const f32 = new Float32Array(1);
  const bits = new Int32Array(f32.buffer);
  for (let i = 0; i < n; i++) {
    let acc = bias;
    let negatives = 0;
    for (let j = i * m; j < i * m + m; j++) {
      acc = (acc + (x[j] as number)) | 0;
      if (acc < 0) negatives++;
    }
    f32[0] = acc;
    out.set([acc, Math.trunc(acc / -7) | 0, acc >> 5, bits[0] as number, negatives], i * 5);
  }
  return out;
}

const KiB = 1024;

const devices = [
  { where: 'host blocks, JavaScript on the workers', options: { heapMaxBytes: 64 * KiB, inline: false }, hostBlocks: true },
  { where: 'host blocks, JavaScript inline when small', options: { heapMaxBytes: 64 * KiB, inline: true }, hostBlocks: true },
  { where: 'the heap, WebAssembly', options: {}, hostBlocks: false },
] as const satisfies ReadonlyArray<{ where: string; options: CpuBackendOptions; hostBlocks: boolean }>;

describe.each(devices)('u32 and i32 locals at their boundaries ($where)', ({ options, hostBlocks }) => {
  let d: Device;
  beforeAll(async () => {
    d = new Device(await cpuAdapter.create({ workers: 2, ...options }));
  });
  afterAll(() => d.destroy());

  /** Output buffers past the 64 KiB heap: every dispatch below is given a host block there. */
  function output<T extends 'u32' | 'i32'>(dtype: T, length: number): Buffer<T> {
    const b = d.createBuffer(dtype, Math.max(length, 32 * KiB));
    expect((b.impl as CpuBuffer).block !== undefined).toBe(hostBlocks);
    return b;
  }

  it('four lanes and a remainder loop, from past 2^31 and wrapping past 2^32, read by every u32 operation', async () => {
    const n = 300;
    const m = 37;
    const data = randomU32(n * m, 3);
    const x = d.createBuffer('u32', data);
    const out = output('u32', n * OUTS);
    for (const bias of [0x80000000, 0xfffffff0, 0x7fffffff]) {
      d.dispatch(lanes, { invocations: n }, { x, out, n, m, bias });
      const got = (await out.read()).subarray(0, n * OUTS);
      expectBitsEqual(got, lanesReference(data, n, m, bias), `bias ${bias.toString(16)}`);
    }
  });

  it('a vec4<u32> local carried through a loop, compared and stored each trip', async () => {
    const vectors = 4096;
    const data = randomU32(4 * vectors, 5);
    const x = d.createBuffer('u32', data);
    const out = output('u32', 4 * vectors);
    d.dispatch(vecCarry, { invocations: 1 }, { x, out, n: vectors, bias: 0xc0000000 });
    expectBitsEqual((await out.read()).subarray(0, 4 * vectors), vecCarryReference(data, 0xc0000000), 'vec4 carry');
  });

  it('u32 locals kept across a barrier', async () => {
    const n = 64 * 40;
    const data = randomU32(n, 9);
    const x = d.createBuffer('u32', data);
    const out = output('u32', 3 * n);
    d.dispatch(acrossBarrier, { invocations: n }, { x, out, bias: 0x9e3779b9 });
    expectBitsEqual((await out.read()).subarray(0, 3 * n), acrossBarrierReference(data, 0x9e3779b9), 'across a barrier');
  });

  it('i32 lanes wrapping past -2^31 and 2^31 - 1', async () => {
    const n = 200;
    const m = 50;
    const data = Int32Array.from(randomU32(n * m, 13), (v) => v | 0);
    const x = d.createBuffer('i32', data);
    const out = output('i32', 5 * n);
    for (const bias of [-0x80000000, 0x7ffffff0]) {
      d.dispatch(signed, { invocations: n }, { x, out, n, m, bias });
      expectBitsEqual((await out.read()).subarray(0, 5 * n), signedReference(data, n, m, bias), `bias ${bias}`);
    }
  });
});
