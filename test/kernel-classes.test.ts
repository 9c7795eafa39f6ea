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

/** Tree reduction in workgroup memory with a barrier per level (seed 000's reduction). */
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

describeEachBackend('kernel classes', (ctx) => {
  it('infers the classes of each kernel from its body', () => {
    expect([...gather.info.classes]).toEqual(['gather']);
    expect([...permute.info.classes]).toEqual(['scatter']);
    expect([...histogram.info.classes].sort()).toEqual(['atomic']);
    // partial[workgroupIndex] is not the invocation's own element: a scatter store.
    expect([...treeReduce.info.classes].sort()).toEqual(['scatter', 'workgroup']);
    expect([...claim.info.classes].sort()).toEqual(['atomic-other', 'gather']);
    expect([...subgroups.info.classes].sort()).toEqual(['gather', 'subgroup']);
    expect([...blockScan.info.classes].sort()).toEqual(['gather', 'workgroup']);
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
});
