/**
 * Level 2 of the conformance ladder: one small kernel per kernel class, each
 * against a sequential JS reference, on sizes that are not multiples of the
 * workgroup size. A backend without a class must refuse it with
 * UnsupportedFeatureError naming the feature, never run it wrongly.
 */
import { buffer, type Device, defineKernel, type KernelClass, select, UnsupportedFeatureError, u32, uniform } from 'trident';
import { expect, it } from 'vitest';
import { describeEachBackend, randomU32 } from './harness.ts';

const SIZES = [1, 63, 65, 1000, 4099];
const WG = 64;

/** Runs `body` if the device has `feature`; otherwise checks the typed refusal. */
async function withFeature(device: Device, feature: KernelClass, dispatch: () => void, check: () => Promise<void>): Promise<void> {
  if (device.caps.features.has(feature)) {
    dispatch();
    await check();
  } else {
    let error: unknown;
    try {
      dispatch();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnsupportedFeatureError);
    expect((error as UnsupportedFeatureError).feature).toBe(feature);
  }
}

const gather = defineKernel({
  name: 'class_gather',
  workgroupSize: WG,
  params: { x: buffer('u32', 'read'), y: buffer('u32', 'write'), a: uniform('u32'), n: uniform('u32') },
  body: ({ x, y, a, n }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(n), () => y.store(i, x.load(i).mul(a).add(1)));
  },
});

const saxpy = defineKernel({
  name: 'class_saxpy',
  workgroupSize: WG,
  params: { x: buffer('f32', 'read'), y: buffer('f32', 'read'), out: buffer('f32', 'write'), a: uniform('f32') },
  body: ({ x, y, out, a }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(out.length), () => out.store(i, a.mul(x.load(i)).add(y.load(i))));
  },
});

const permute = defineKernel({
  name: 'class_scatter',
  workgroupSize: WG,
  params: { x: buffer('u32', 'read'), perm: buffer('u32', 'read'), y: buffer('u32', 'write') },
  body: ({ x, perm, y }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(x.length), () => y.store(perm.load(i), x.load(i)));
  },
});

const histogram = defineKernel({
  name: 'class_atomic_histogram',
  workgroupSize: WG,
  params: { x: buffer('u32', 'read'), bins: buffer('u32', 'atomic'), lo: buffer('u32', 'atomic'), hi: buffer('u32', 'atomic') },
  body: ({ x, bins, lo, hi }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(x.length), () => {
      const v = x.load(i);
      const bin = v.rem(bins.length);
      bins.atomicAdd(bin, 1);
      lo.atomicMin(bin, v);
      hi.atomicMax(bin, v);
    });
  },
});

/** Tree reduction in workgroup memory with a barrier per level (the PRAM reduction of Dulle 2016). */
const treeReduce = defineKernel({
  name: 'class_workgroup_reduce',
  workgroupSize: WG,
  params: { x: buffer('u32', 'read'), partial: buffer('u32', 'write') },
  body: ({ x, partial }, k) => {
    const shared = k.workgroupArray('u32', WG);
    const lid = k.localIndex;
    shared.store(lid, x.load(k.globalIndex));
    k.barrier();
    k.for({ from: WG / 2, to: 0, type: 'u32' }, () => undefined); // empty loop: never runs, tests loop codegen
    const stride = k.var('u32', WG / 2, 'stride');
    k.while(
      () => stride.gt(0),
      () => {
        k.if(lid.lt(stride), () => shared.store(lid, shared.load(lid).add(shared.load(lid.add(stride)))));
        k.barrier();
        stride.set(stride.shr(1));
      },
    );
    k.if(lid.eq(0), () => partial.store(k.workgroupIndex, shared.load(0)));
  },
});

/**
 * Reverses each workgroup's slice through workgroup memory across a workgroup-only
 * barrier, in a kernel that also has a read_write buffer (where WGSL's plain barrier
 * adds a storage barrier): the workgroup-only one must still order workgroup memory.
 */
const reverseInWorkgroup = defineKernel({
  name: 'class_workgroup_reverse',
  workgroupSize: WG,
  params: { x: buffer('u32', 'read'), y: buffer('u32', 'read_write') },
  body: ({ x, y }, k) => {
    const shared = k.workgroupArray('u32', WG);
    const lid = k.localIndex;
    shared.store(lid, x.load(k.globalIndex));
    k.workgroupBarrier();
    y.store(k.globalIndex, shared.load(u32(WG - 1).sub(lid)).add(y.load(k.globalIndex)));
  },
});

/** Inclusive Hillis–Steele scan inside each workgroup, double-buffered in workgroup memory. */
const blockScan = defineKernel({
  name: 'class_workgroup_scan',
  workgroupSize: WG,
  params: { x: buffer('u32', 'read'), y: buffer('u32', 'write') },
  body: ({ x, y }, k) => {
    const a = k.workgroupArray('u32', WG);
    const b = k.workgroupArray('u32', WG);
    const lid = k.localIndex;
    const gid = k.globalIndex;
    a.store(lid, x.load(gid));
    k.barrier();
    const offset = k.var('u32', 1, 'offset');
    const ping = k.var('bool', false, 'ping');
    k.while(
      () => offset.lt(WG),
      () => {
        // ping == false: read a, write b; else read b, write a.
        const mine = select(ping, b.load(lid), a.load(lid));
        const left = select(ping, b.load(lid.sub(offset)), a.load(lid.sub(offset)));
        const sum = select(lid.ge(offset), mine.add(left), mine);
        k.if(
          ping,
          () => a.store(lid, sum),
          () => b.store(lid, sum),
        );
        k.barrier();
        ping.set(ping.not());
        offset.set(offset.shl(1));
      },
    );
    k.if(gid.lt(x.length), () => y.store(gid, select(ping, b.load(lid), a.load(lid))));
  },
});

/** Each invocation claims the first free slot of a small table by compare-exchange. */
const claim = defineKernel({
  name: 'class_atomic_other',
  workgroupSize: WG,
  params: { table: buffer('u32', 'atomic'), owner: buffer('u32', 'write'), n: uniform('u32') },
  body: ({ table, owner, n }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(n), () => {
      const slot = k.var('u32', 0, 'slot');
      const won = k.var('bool', false, 'won');
      k.while(
        () => won.not().and(slot.lt(table.length)),
        () => {
          const old = table.atomicCompareExchange(slot, 0, i.add(1));
          k.if(
            old.eq(0),
            () => won.set(true),
            () => slot.set(slot.add(1)),
          );
        },
      );
      owner.store(i, select(won, slot, 0xffffffff));
    });
  },
});

const subgroups = defineKernel({
  name: 'class_subgroup',
  workgroupSize: WG,
  params: { size: buffer('u32', 'write'), sum: buffer('u32', 'write'), prefix: buffer('u32', 'write'), lane: buffer('u32', 'write') },
  body: (p, k) => {
    const i = k.globalIndex;
    const total = k.subgroupAdd(k.var('u32', 1));
    const before = k.subgroupExclusiveAdd(k.var('u32', 1));
    k.if(i.lt(p.size.length), () => {
      p.size.store(i, k.subgroupSize);
      p.sum.store(i, total);
      p.prefix.store(i, before);
      p.lane.store(i, k.subgroupInvocation);
    });
  },
});

/** Predicate of invocation i for the ballot test: a pattern that differs between neighbouring lanes. */
const ballotPredicate = (i: number) => (i * 7) % 5 < 2;

const ballots = defineKernel({
  name: 'class_ballot',
  workgroupSize: WG,
  params: { size: buffer('u32', 'write'), mask: buffer('u32', 'write') },
  body: (p, k) => {
    const i = k.globalIndex;
    const m = k.subgroupBallot(i.mul(7).rem(5).lt(2)); // ballotPredicate(i)
    k.if(i.lt(p.size.length), () => {
      p.size.store(i, k.subgroupSize);
      [m.x, m.y, m.z, m.w].forEach((w, c) => {
        p.mask.store(i.mul(4).add(c), w);
      });
    });
  },
});

/** Per-workgroup histogram with per-bin signed extremes, all in atomic workgroup arrays. */
const WG_BINS = 13;
const WG_ITEMS = 4;
const wgHistogram = defineKernel({
  name: 'class_workgroup_atomic_histogram',
  workgroupSize: WG,
  params: { x: buffer('u32', 'read'), counts: buffer('u32', 'write'), lo: buffer('i32', 'write'), hi: buffer('i32', 'write') },
  body: ({ x, counts, lo, hi }, k) => {
    const count = k.workgroupArray('u32', WG_BINS, { atomic: true });
    const least = k.workgroupArray('i32', WG_BINS, { atomic: true });
    const most = k.workgroupArray('i32', WG_BINS, { atomic: true });
    const lid = k.localIndex;
    k.if(lid.lt(WG_BINS), () => {
      least.store(lid, 2147483647);
      most.store(lid, -2147483648);
    });
    k.barrier();
    const base = k.let(k.workgroupIndex.mul(WG * WG_ITEMS), 'base');
    k.for({ from: 0, to: WG_ITEMS, type: 'u32' }, (j) => {
      const i = k.let(base.add(j.mul(WG)).add(lid), 'i');
      k.if(i.lt(x.length), () => {
        const v = x.load(i);
        const bin = v.rem(WG_BINS);
        count.atomicAdd(bin, 1);
        least.atomicMin(bin, v.bitcast('i32'));
        most.atomicMax(bin, v.bitcast('i32'));
      });
    });
    k.barrier();
    k.if(lid.lt(WG_BINS), () => {
      const o = k.let(k.workgroupIndex.mul(WG_BINS).add(lid), 'o');
      counts.store(o, count.load(lid));
      lo.store(o, least.load(lid));
      hi.store(o, most.load(lid));
    });
  },
});

/** Compare-exchange, exchange, and/or/xor/sub on workgroup memory; words: the 5 accumulators then the table. */
const WG_SLOTS = 40;
const WG_WORDS = 5 + WG_SLOTS;
const wgOther = defineKernel({
  name: 'class_workgroup_atomic_other',
  workgroupSize: WG,
  params: { slot: buffer('u32', 'write'), swapped: buffer('u32', 'write'), words: buffer('u32', 'write') },
  body: ({ slot, swapped, words }, k) => {
    const table = k.workgroupArray('u32', WG_SLOTS, { atomic: true });
    const acc = k.workgroupArray('u32', 5, { atomic: true });
    const lid = k.localIndex;
    const gid = k.globalIndex;
    k.if(lid.eq(0), () => {
      acc.store(2, 0xffffffff);
      acc.store(3, 1000000);
    });
    k.barrier();
    const s = k.var('u32', 0, 's');
    const won = k.var('bool', false, 'won');
    k.while(
      () => won.not().and(s.lt(WG_SLOTS)),
      () => {
        const old = table.atomicCompareExchange(s, 0, lid.add(1));
        k.if(
          old.eq(0),
          () => won.set(true),
          () => s.set(s.add(1)),
        );
      },
    );
    slot.store(gid, select(won, s, 0xffffffff));
    swapped.store(gid, acc.atomicExchange(4, lid.add(1)));
    const bit = k.let(k.var('u32', 1).shl(lid.and(31)), 'bit');
    acc.atomicOr(0, bit);
    acc.atomicXor(1, lid.mul(2654435761));
    acc.atomicAnd(2, bit.xor(0xffffffff));
    acc.atomicSub(3, lid);
    k.barrier();
    const base = k.let(k.workgroupIndex.mul(WG_WORDS), 'base');
    k.if(lid.lt(5), () => words.store(base.add(lid), acc.load(lid)));
    k.if(lid.lt(WG_SLOTS), () => words.store(base.add(5).add(lid), table.load(lid)));
  },
});

/** Atomics, loads and stores past either end of atomic workgroup arrays: dropped, returning 0. */
const wgBounds = defineKernel({
  name: 'class_workgroup_atomic_bounds',
  workgroupSize: WG,
  params: { got: buffer('u32', 'write'), gotSigned: buffer('i32', 'write') },
  body: ({ got, gotSigned }, k) => {
    const a = k.workgroupArray('u32', 8, { atomic: true });
    const b = k.workgroupArray('i32', 8, { atomic: true });
    const lid = k.localIndex;
    const gid = k.globalIndex;
    k.if(lid.lt(8), () => {
      a.store(lid, lid.add(100));
      b.store(lid, 7);
    });
    k.barrier();
    const past = k.let(lid.add(8), 'past');
    const before = k.let(lid.bitcast('i32').neg().sub(1), 'before'); // -1 - lid
    const r1 = a.atomicAdd(past, 5);
    const r2 = a.atomicCompareExchange(past, 0, 9);
    const r3 = a.load(past);
    a.store(past, 77);
    const r4 = b.atomicMax(before, 50);
    const r5 = b.atomicExchange(before, 3);
    b.store(before, 99);
    k.barrier();
    const o = k.let(gid.mul(4), 'o');
    got.store(o, r1);
    got.store(o.add(1), r2);
    got.store(o.add(2), r3);
    got.store(o.add(3), a.load(lid.and(7)));
    gotSigned.store(gid.mul(3), r4);
    gotSigned.store(gid.mul(3).add(1), r5);
    gotSigned.store(gid.mul(3).add(2), b.load(lid.and(7)));
  },
});

/**
 * Every atomic on a buffer, out of range (past the end, and a negative i32 index), with
 * the buffers' lengths just past and on a multiple of four elements: nothing changes
 * and every result is 0 (the WebGPU backend sends these to a spare element instead of
 * branching: wgsl.ts).
 */
const bufferBounds = defineKernel({
  name: 'class_atomic_buffer_bounds',
  workgroupSize: WG,
  params: { a: buffer('u32', 'atomic'), b: buffer('i32', 'atomic'), got: buffer('u32', 'write'), n: uniform('u32') },
  body: ({ a, b, got, n }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(n), () => {
      const past = k.let(a.length.add(i), 'past');
      const before = k.let(i.bitcast('i32').neg().sub(1), 'before'); // -1 - i
      const results = [
        a.atomicAdd(past, 5),
        a.atomicSub(past, 1),
        a.atomicMin(past, 0),
        a.atomicMax(past, 0xffffffff),
        a.atomicAnd(past, 0),
        a.atomicOr(past, 0xffffffff),
        a.atomicXor(past, 0xffffffff),
        a.atomicExchange(past, 9),
        a.atomicCompareExchange(past, 0, 9),
        a.load(past),
        b.atomicAdd(before, 5).bitcast('u32'),
        b.atomicMin(b.length.add(i), -50).bitcast('u32'),
        b.atomicExchange(before, 3).bitcast('u32'),
      ];
      a.store(past, 77);
      b.store(before, 99);
      b.store(b.length.add(i), 98);
      const o = k.let(i.mul(results.length), 'o');
      for (const [j, r] of results.entries()) got.store(o.add(j), r);
    });
  },
});
const BUFFER_BOUNDS_RESULTS = 13;

describeEachBackend('kernel classes', (ctx) => {
  it('infers the classes of each kernel from its body', () => {
    expect([...gather.info.classes]).toEqual(['gather']);
    expect([...permute.info.classes]).toEqual(['scatter']);
    expect([...histogram.info.classes].sort()).toEqual(['atomic']);
    // partial[workgroupIndex] is not the invocation's own element: a scatter store.
    expect([...treeReduce.info.classes].sort()).toEqual(['scatter', 'workgroup']);
    expect([...claim.info.classes].sort()).toEqual(['atomic-other', 'gather']);
    expect([...subgroups.info.classes].sort()).toEqual(['gather', 'subgroup']);
    expect([...ballots.info.classes].sort()).toEqual(['gather', 'scatter', 'subgroup']);
    expect([...blockScan.info.classes].sort()).toEqual(['gather', 'workgroup']);
    // Atomics on workgroup memory are 'workgroup', not 'atomic' / 'atomic-other'.
    expect([...wgHistogram.info.classes].sort()).toEqual(['scatter', 'workgroup']);
    expect([...wgOther.info.classes].sort()).toEqual(['gather', 'scatter', 'workgroup']);
    expect(wgHistogram.ir.workgroupArrays.map((a) => [a.type, a.length, a.atomic])).toEqual([
      ['u32', WG_BINS, true],
      ['i32', WG_BINS, true],
      ['i32', WG_BINS, true],
    ]);
    expect(treeReduce.ir.workgroupArrays[0]?.atomic).toBeUndefined();
  });

  for (const n of SIZES) {
    it(`gather: y[i] = 2654435761 * x[i] + 1 (wrapping), n = ${n}`, async () => {
      const d = ctx.device;
      const data = randomU32(n, n);
      const x = d.createBuffer('u32', data);
      const y = d.createBuffer('u32', n);
      d.dispatch(gather, { invocations: n }, { x, y, a: 2654435761, n });
      const expected = data.map((v) => Number(BigInt.asUintN(32, BigInt(v) * 2654435761n + 1n)));
      expect(await y.read()).toEqual(expected);
    });

    it(`gather f32: saxpy rounds like the reference, n = ${n}`, async () => {
      const d = ctx.device;
      const xs = Float32Array.from(randomU32(n, 7), (v) => v / 2 ** 32 - 0.5);
      const ys = Float32Array.from(randomU32(n, 8), (v) => v / 2 ** 24);
      const x = d.createBuffer('f32', xs);
      const y = d.createBuffer('f32', ys);
      const out = d.createBuffer('f32', n);
      d.dispatch(saxpy, { invocations: n }, { x, y, out, a: 1.5 });
      const expected = xs.map((v, i) => Math.fround(Math.fround(1.5 * v) + (ys[i] as number)));
      // Backends may fuse a*x+y into one rounding: allow one ulp of the result.
      const got = await out.read();
      for (let i = 0; i < n; i++) {
        const e = expected[i] as number;
        expect(Math.abs((got[i] as number) - e)).toBeLessThanOrEqual(Math.abs(e) * 2 ** -23 + 1e-30);
      }
    });

    it(`scatter: a permutation moves every element, n = ${n}`, async () => {
      const d = ctx.device;
      const data = randomU32(n, 3 * n);
      const perm = Array.from({ length: n }, (_, i) => i);
      const r = randomU32(n, 99);
      for (let i = n - 1; i > 0; i--) {
        const j = (r[i] as number) % (i + 1);
        [perm[i], perm[j]] = [perm[j] as number, perm[i] as number];
      }
      const x = d.createBuffer('u32', data);
      const p = d.createBuffer('u32', perm);
      const y = d.createBuffer('u32', n);
      await withFeature(
        d,
        'scatter',
        () => d.dispatch(permute, { invocations: n }, { x, perm: p, y }),
        async () => {
          const expected = new Uint32Array(n);
          perm.forEach((t, i) => {
            expected[t] = data[i] as number;
          });
          expect(await y.read()).toEqual(expected);
        },
      );
    });

    it(`atomic add/min/max: a histogram with per-bin extremes, n = ${n}`, async () => {
      const d = ctx.device;
      const nb = 37;
      const data = randomU32(n, 5 * n).map((v) => v % 100000);
      const x = d.createBuffer('u32', data);
      const bins = d.createBuffer('u32', nb);
      const lo = d.createBuffer('u32', new Uint32Array(nb).fill(0xffffffff));
      const hi = d.createBuffer('u32', nb);
      await withFeature(
        d,
        'atomic',
        () => d.dispatch(histogram, { invocations: n }, { x, bins, lo, hi }),
        async () => {
          const count = new Uint32Array(nb);
          const min = new Uint32Array(nb).fill(0xffffffff);
          const max = new Uint32Array(nb);
          for (const v of data) {
            const b = v % nb;
            count[b] = (count[b] as number) + 1;
            min[b] = Math.min(min[b] as number, v);
            max[b] = Math.max(max[b] as number, v);
          }
          expect(await bins.read()).toEqual(count);
          expect(await lo.read()).toEqual(min);
          expect(await hi.read()).toEqual(max);
        },
      );
    });

    it(`workgroup: tree reduction with barriers per workgroup, n = ${n}`, async () => {
      const d = ctx.device;
      const data = randomU32(n, 11 * n);
      const groups = Math.ceil(n / WG);
      const x = d.createBuffer('u32', data);
      const partial = d.createBuffer('u32', groups);
      await withFeature(
        d,
        'workgroup',
        () => d.dispatch(treeReduce, { workgroups: groups }, { x, partial }),
        async () => {
          const expected = new Uint32Array(groups);
          data.forEach((v, i) => {
            const g = Math.floor(i / WG);
            expected[g] = ((expected[g] as number) + v) >>> 0;
          });
          expect(await partial.read()).toEqual(expected);
        },
      );
    });

    it(`workgroup: a workgroup-only barrier orders workgroup memory, n = ${n}`, async () => {
      const d = ctx.device;
      const groups = Math.ceil(n / WG);
      const data = randomU32(groups * WG, 17 * n);
      const x = d.createBuffer('u32', data);
      const y = d.createBuffer('u32', groups * WG);
      y.fill(1);
      await withFeature(
        d,
        'workgroup',
        () => d.dispatch(reverseInWorkgroup, { workgroups: groups }, { x, y }),
        async () => {
          const expected = data.map((_, i) => {
            const base = i - (i % WG);
            return ((data[base + WG - 1 - (i % WG)] as number) + 1) >>> 0;
          });
          expect(await y.read()).toEqual(expected);
        },
      );
    });

    it(`workgroup: inclusive block scan with barriers, n = ${n}`, async () => {
      const d = ctx.device;
      const data = randomU32(n, 13 * n).map((v) => v & 0xffff);
      const x = d.createBuffer('u32', data);
      const y = d.createBuffer('u32', n);
      await withFeature(
        d,
        'workgroup',
        () => d.dispatch(blockScan, { invocations: n }, { x, y }),
        async () => {
          const expected = new Uint32Array(n);
          let acc = 0;
          data.forEach((v, i) => {
            acc = i % WG === 0 ? v : (acc + v) >>> 0;
            expected[i] = acc;
          });
          expect(await y.read()).toEqual(expected);
        },
      );
    });
  }

  for (const [label, n, allEqual] of [
    ['n = 1', 1, false],
    ['n = 1000', 1000, false],
    ['n = 4099', 4099, false],
    ['all equal (one bin takes every add), n = 1025', 1025, true],
  ] as const) {
    it(`workgroup atomics: per-workgroup histogram with i32 min/max, ${label}`, async () => {
      const d = ctx.device;
      const data = allEqual ? new Uint32Array(n).fill(0x9abcdef1) : randomU32(n, 17 * n);
      const groups = Math.ceil(n / (WG * WG_ITEMS));
      const x = d.createBuffer('u32', data);
      const counts = d.createBuffer('u32', groups * WG_BINS);
      const lo = d.createBuffer('i32', groups * WG_BINS);
      const hi = d.createBuffer('i32', groups * WG_BINS);
      await withFeature(
        d,
        'workgroup',
        () => d.dispatch(wgHistogram, { workgroups: groups }, { x, counts, lo, hi }),
        async () => {
          const count = new Uint32Array(groups * WG_BINS);
          const min = new Int32Array(groups * WG_BINS).fill(2147483647);
          const max = new Int32Array(groups * WG_BINS).fill(-2147483648);
          data.forEach((v, i) => {
            const o = Math.floor(i / (WG * WG_ITEMS)) * WG_BINS + (v % WG_BINS);
            count[o] = (count[o] as number) + 1;
            min[o] = Math.min(min[o] as number, v | 0);
            max[o] = Math.max(max[o] as number, v | 0);
          });
          expect(await counts.read()).toEqual(count);
          expect(await lo.read()).toEqual(min);
          expect(await hi.read()).toEqual(max);
        },
      );
    });
  }

  it('workgroup atomics: compare-exchange, exchange, and/or/xor/sub inside each workgroup', async () => {
    const d = ctx.device;
    const groups = 3;
    const n = groups * WG;
    const slot = d.createBuffer('u32', n);
    const swapped = d.createBuffer('u32', n);
    const words = d.createBuffer('u32', groups * WG_WORDS);
    await withFeature(
      d,
      'workgroup',
      () => d.dispatch(wgOther, { workgroups: groups }, { slot, swapped, words }),
      async () => {
        const s = await slot.read();
        const sw = await swapped.read();
        const w = await words.read();
        let xor = 0;
        for (let l = 0; l < WG; l++) xor = (xor ^ Number(BigInt.asUintN(32, BigInt(l) * 2654435761n))) >>> 0;
        for (let g = 0; g < groups; g++) {
          const acc = Array.from(w.subarray(g * WG_WORDS, g * WG_WORDS + 5));
          const table = w.subarray(g * WG_WORDS + 5, (g + 1) * WG_WORDS);
          expect(acc.slice(0, 4), `group ${g} or/xor/and/sub`).toEqual([0xffffffff, xor, 0, 1000000 - (WG * (WG - 1)) / 2]);
          // Exchange: the old values seen and the last value form 0..WG, each once.
          const seen = [...Array.from(sw.subarray(g * WG, (g + 1) * WG)), acc[4] as number].sort((a, b) => a - b);
          expect(seen, `group ${g} exchange`).toEqual(Array.from({ length: WG + 1 }, (_, i) => i));
          // Compare-exchange: every slot has one owner, who knows it; the others got none.
          for (let l = 0; l < WG; l++) {
            const mine = s[g * WG + l] as number;
            if (mine !== 0xffffffff) expect(table[mine], `group ${g} lane ${l}`).toBe(l + 1);
          }
          expect(new Set(table).size).toBe(WG_SLOTS);
          expect(Array.from(s.subarray(g * WG, (g + 1) * WG)).filter((v) => v === 0xffffffff).length).toBe(WG - WG_SLOTS);
        }
      },
    );
  });

  it('workgroup atomics: out-of-range indices (past the end, negative) are dropped and return 0', async () => {
    const d = ctx.device;
    const groups = 2;
    const n = groups * WG;
    const got = d.createBuffer('u32', 4 * n);
    const gotSigned = d.createBuffer('i32', 3 * n);
    await withFeature(
      d,
      'workgroup',
      () => d.dispatch(wgBounds, { workgroups: groups }, { got, gotSigned }),
      async () => {
        const u = Array.from({ length: n }, (_, i) => [0, 0, 0, 100 + ((i % WG) & 7)]).flat();
        const i = Array.from({ length: n }, () => [0, 0, 7]).flat();
        expect(Array.from(await got.read())).toEqual(u);
        expect(Array.from(await gotSigned.read())).toEqual(i);
      },
    );
  });

  it('buffer atomics: out-of-range indices (past the end, negative) change nothing and return 0', async () => {
    const d = ctx.device;
    const n = 100;
    const aData = Uint32Array.from({ length: 5 }, (_, i) => 1000 + i);
    const bData = Int32Array.from({ length: 8 }, (_, i) => -i);
    const a = d.createBuffer('u32', aData);
    const b = d.createBuffer('i32', bData);
    const got = d.createBuffer('u32', BUFFER_BOUNDS_RESULTS * n);
    got.fill(0xdead);
    await withFeature(
      d,
      'atomic-other',
      () => d.dispatch(bufferBounds, { invocations: n }, { a, b, got, n }),
      async () => {
        expect(Array.from(await got.read()).every((v) => v === 0)).toBe(true);
        expect(Array.from(await a.read())).toEqual(Array.from(aData));
        expect(Array.from(await b.read())).toEqual(Array.from(bData));
      },
    );
  });

  it('atomic-other: compare-exchange gives every slot exactly one owner', async () => {
    const d = ctx.device;
    const n = 300;
    const slots = 200;
    const table = d.createBuffer('u32', slots);
    const owner = d.createBuffer('u32', n);
    await withFeature(
      d,
      'atomic-other',
      () => d.dispatch(claim, { invocations: n }, { table, owner, n }),
      async () => {
        const t = await table.read();
        const o = await owner.read();
        // Every slot is taken by exactly one invocation, and that invocation knows it.
        expect(new Set(t).size).toBe(slots);
        expect(Array.from(t).every((v) => v >= 1 && v <= n)).toBe(true);
        for (const [slot, who] of t.entries()) expect(o[who - 1]).toBe(slot);
        expect(Array.from(o).filter((s) => s === 0xffffffff).length).toBe(n - slots);
      },
    );
  });

  it('subgroup: sizes, reductions and exclusive scans agree with the subgroup size', async () => {
    const d = ctx.device;
    const n = 130;
    const size = d.createBuffer('u32', n);
    const sum = d.createBuffer('u32', n);
    const prefix = d.createBuffer('u32', n);
    const lane = d.createBuffer('u32', n);
    await withFeature(
      d,
      'subgroup',
      () => d.dispatch(subgroups, { workgroups: 3 }, { size, sum, prefix, lane }),
      async () => {
        const s = await size.read();
        const sg = s[0] as number;
        expect(sg).toBeGreaterThanOrEqual(d.caps.limits.minSubgroupSize);
        expect(sg).toBeLessThanOrEqual(d.caps.limits.maxSubgroupSize);
        expect(s.every((v) => v === sg)).toBe(true);
        // All invocations are active, so each subgroup is full: sum == size, prefix == lane.
        expect((await sum.read()).every((v) => v === sg)).toBe(true);
        expect(await prefix.read()).toEqual(await lane.read());
      },
    );
  });

  it('subgroup: ballot sets bit l exactly for the lanes l whose predicate holds', async () => {
    const d = ctx.device;
    const n = 3 * WG;
    const size = d.createBuffer('u32', n);
    const mask = d.createBuffer('u32', 4 * n);
    await withFeature(
      d,
      'subgroup',
      () => d.dispatch(ballots, { workgroups: 3 }, { size, mask }),
      async () => {
        const sg = (await size.read())[0] as number;
        const got = await mask.read();
        for (let i = 0; i < n; i++) {
          // Subgroups are consecutive runs of sg invocations (1-D workgroups of a multiple of sg).
          const first = i - (i % sg);
          const want = [0, 0, 0, 0];
          for (let l = 0; l < sg; l++) if (ballotPredicate(first + l)) want[l >> 5] = ((want[l >> 5] as number) | (1 << (l & 31))) >>> 0;
          expect([...got.subarray(4 * i, 4 * i + 4)], `invocation ${i} (subgroup size ${sg})`).toEqual(want);
        }
      },
    );
  });
});
