/**
 * The kernel language as a new user meets it: misuse refused with a
 * message that says what to do, the forms that should just work, and the
 * features beyond 1-D kernels, on every backend.
 */
import type { BufferHandle, KernelBuilder } from 'trident';
import { buffer, defineKernel, f32, i32, KernelBuildError, select, UnsupportedFeatureError, u32, uniform, vec } from 'trident';
import { describe, expect, it } from 'vitest';
import { refusedWithout } from './alg-helpers.ts';
import { describeEachBackend } from './harness.ts';

function buildError(fn: () => unknown): KernelBuildError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(KernelBuildError);
    return e as KernelBuildError;
  }
  throw new Error('expected a KernelBuildError');
}

describe('misuse is refused when the kernel is built', () => {
  it('a barrier under a condition on localIndex, naming the kernel and the condition', () => {
    const e = buildError(() =>
      defineKernel({
        name: 'divergent_barrier',
        workgroupSize: 4,
        params: { out: buffer('u32', 'read_write') },
        body: ({ out }, k) => {
          const wg = k.workgroupArray('u32', 4);
          k.if(k.localIndex.lt(2), () => {
            wg.store(k.localIndex, 1);
            k.barrier();
            out.store(k.globalIndex, wg.load(3));
          });
        },
      }),
    );
    expect(e.kernel).toBe('divergent_barrier');
    expect(e.message).toMatch(/barrier\(\) under non-uniform control flow: an if whose condition depends on k\.localIndex/);
  });

  it('a barrier under a condition carried by a variable or a loop, or in a loop left by a divergent break', () => {
    const viaVar = buildError(() =>
      defineKernel({
        name: 'divergent_var',
        workgroupSize: 4,
        params: { x: buffer('u32', 'read_write') },
        body: ({ x }, k) => {
          const v = k.var('u32', 0, 'flag');
          v.set(x.load(k.globalIndex));
          k.if(v.eq(0), () => k.workgroupBarrier());
        },
      }),
    );
    expect(viaVar.message).toMatch(/an if whose condition depends on a load from writable buffer 'x'/);
    const viaLoop = buildError(() =>
      defineKernel({
        name: 'divergent_loop',
        workgroupSize: 4,
        params: { x: buffer('u32', 'read') },
        body: ({ x }, k) => {
          k.for({ from: 0, to: k.localIndex }, () => k.barrier());
          void x;
        },
      }),
    );
    expect(viaLoop.message).toMatch(/a loop whose condition depends on k\.localIndex/);
    const viaBreak = buildError(() =>
      defineKernel({
        name: 'divergent_break',
        workgroupSize: 4,
        params: { x: buffer('u32', 'read') },
        body: ({ x }, k) => {
          k.for({ from: 0, to: 8 }, (i) => {
            k.if(i.eq(k.localIndex), () => k.break());
            k.barrier();
          });
          void x;
        },
      }),
    );
    expect(viaBreak.message).toMatch(/a loop left by a break under an if whose condition depends on k\.localIndex/);
  });

  it('barrier uniformity knows the 3-D ids: localId and globalId vary, workgroupId does not', () => {
    const body =
      (cond: 'localId' | 'globalId' | 'workgroupId') =>
      ({ out }: { out: BufferHandle<'u32', 'write'> }, k: KernelBuilder) => {
        k.if(k[cond].y.lt(1), () => k.barrier());
        out.store(k.globalIndex, 1);
      };
    for (const cond of ['localId', 'globalId'] as const) {
      const e = buildError(() =>
        defineKernel({ name: `barrier_${cond}`, workgroupSize: [2, 2], params: { out: buffer('u32', 'write') }, body: body(cond) }),
      );
      expect(e.message).toMatch(new RegExp(`an if whose condition depends on k\\.${cond}`));
    }
    expect(() =>
      defineKernel({ name: 'barrier_wgid', workgroupSize: [2, 2], params: { out: buffer('u32', 'write') }, body: body('workgroupId') }),
    ).not.toThrow();
  });

  it('a range hint refuses barriers, subgroup operations, returns and jumps out of its body, and takes loops that keep theirs', () => {
    const hinted = (name: string, body: (k: KernelBuilder, i: ReturnType<KernelBuilder['let']>) => void) =>
      buildError(() =>
        defineKernel({
          name,
          workgroupSize: 32,
          params: { a: buffer('u32', 'read'), out: buffer('u32', 'write') },
          body: ({ a, out }, k) => {
            const i = k.let(k.globalIndex);
            k.for({ from: 0, to: 4 }, () => k.expectRange(a, i, i.add(3), () => body(k, i)));
            out.store(i, a.load(i));
          },
        }),
      );
    expect(hinted('hint_barrier', (k) => k.barrier()).message).toMatch(/expectRange\('a'\): its body may not hold a barrier/);
    expect(hinted('hint_subgroup', (k, i) => void k.let(k.subgroupAdd(i))).message).toMatch(/a subgroup operation/);
    expect(hinted('hint_return', (k) => k.return()).message).toMatch(/a return/);
    expect(hinted('hint_break', (k) => k.break()).message).toMatch(/a break out of it/);
    expect(hinted('hint_continue', (k, i) => k.if(i.eq(1), () => k.continue())).message).toMatch(/a continue out of it/);
    expect(() =>
      defineKernel({
        name: 'hint_inner_loop',
        workgroupSize: 32,
        params: { a: buffer('u32', 'read'), out: buffer('u32', 'write') },
        body: ({ a, out }, k) => {
          const i = k.let(k.globalIndex);
          const acc = k.var('u32', 0, 'acc');
          k.expectRange(a, i, i.add(3), () =>
            k.for({ from: 0, to: 4 }, (j) => {
              k.if(j.eq(2), () => k.break());
              acc.set(acc.add(a.load(i.add(j))));
            }),
          );
          out.store(i, acc);
        },
      }),
    ).not.toThrow();
  });

  it('f32 atomic buffers have atomicAdd, load and store only', () => {
    const e = buildError(() =>
      defineKernel({
        name: 'f32_atomic_max',
        workgroupSize: 1,
        params: { acc: buffer('f32', 'atomic') },
        body: ({ acc }) => void acc.atomicMax(0, 1),
      }),
    );
    expect(e.message).toMatch(/atomic max on f32 buffer 'acc': f32 atomic buffers have atomicAdd, load and store only/);
  });

  it('JavaScript operators on kernel values throw, naming the builder methods', () => {
    const misuse = (use: (v: ReturnType<typeof u32>) => unknown) =>
      buildError(() =>
        defineKernel({
          name: 'operator_misuse',
          workgroupSize: 1,
          params: { out: buffer('u32', 'write') },
          body: (_p, k) => {
            use(k.globalIndex);
          },
        }),
      );
    // @ts-expect-error: comparing a kernel value with < is what the user did wrong
    expect(misuse((v) => v < 3).message).toMatch(/JavaScript operator.*\.lt\/\.le\/\.gt\/\.ge/);
    // @ts-expect-error: so is +
    expect(misuse((v) => v + 1).message).toMatch(/\.add\/\.sub/);
    expect(misuse((v) => `${v}`).message).toMatch(/kernel 'operator_misuse'/);
    expect(() => u32(1).valueOf()).toThrow(KernelBuildError);
  });

  it('a value built in one kernel and used in another names both kernels', () => {
    let leaked: ReturnType<typeof u32> | undefined;
    defineKernel({
      name: 'first_kernel',
      workgroupSize: 1,
      params: { x: buffer('u32', 'read') },
      body: ({ x }) => {
        leaked = x.load(0).add(1);
      },
    });
    const e = buildError(() =>
      defineKernel({
        name: 'second_kernel',
        workgroupSize: 1,
        params: { y: buffer('u32', 'write') },
        body: ({ y }) => y.store(0, leaked as ReturnType<typeof u32>),
      }),
    );
    expect(e.kernel).toBe('second_kernel');
    expect(e.message).toMatch(/built in the body of kernel 'first_kernel'/);
  });
});

// Forms that used to need a workaround.
const literals = defineKernel({
  name: 'literal_forms',
  workgroupSize: 4,
  params: { out: buffer('u32', 'write'), v: buffer('f32', 'write', { vector: 4 }), s: uniform('f32') },
  body: ({ out, v, s }, k) => {
    const i = k.globalIndex;
    const acc = k.var('u32');
    k.for({ from: 0, to: 16 }, (j) => acc.set(acc.add(j))); // two literal bounds: u32
    k.if(i.lt(out.length), () => out.store(i, acc.add(select(i.eq(0), 10, 20))));
    k.if(i.lt(v.length), () => v.store(i, vec('f32', 1, 2, 3, 4).mul(s).add(i.cast('f32')))); // vec4 * f32 broadcasts
  },
});

// A barrier under a uniform condition and a uniform break out of a barrier loop.
const uniformFlow = defineKernel({
  name: 'uniform_barrier_flow',
  workgroupSize: 8,
  params: { out: buffer('u32', 'write'), rounds: uniform('u32') },
  body: ({ out, rounds }, k) => {
    const wg = k.workgroupArray('u32', 8);
    const total = k.var('u32');
    k.if(k.workgroupIndex.lt(2), () => {
      k.for({ from: 0, to: 100 }, (r) => {
        k.if(r.ge(rounds), () => k.break()); // uniform: a uniform parameter
        wg.store(k.localIndex, k.localIndex.add(r));
        k.barrier();
        total.set(total.add(wg.load(k.localIndex.add(1).rem(8))));
        k.barrier();
      });
    });
    out.store(k.globalIndex, total);
  },
});

// 2-D ids: a 6 x 5 image over 4 x 2 workgroups (a 2 x 3 grid, the last row half outside).
const W2 = 6;
const H2 = 5;
const ids2d = defineKernel({
  name: 'ids_2d',
  workgroupSize: [4, 2],
  params: { pos: buffer('u32', 'write'), local: buffer('u32', 'write'), group: buffer('u32', 'write') },
  body: ({ pos, local, group }, k) => {
    const g = k.globalId;
    k.if(g.x.lt(W2).and(g.y.lt(H2)), () => {
      const at = g.y.mul(W2).add(g.x);
      pos.store(at, g.x.add(g.y.mul(10)));
      local.store(at, k.localId.x.add(k.localId.y.mul(10)).add(k.localIndex.mul(100)));
      const c = k.workgroupCount;
      group.store(at, k.workgroupId.x.add(k.workgroupId.y.mul(10)).add(c.x.mul(100)).add(c.y.mul(1000)).add(k.workgroupIndex.mul(10000)));
    });
  },
});

// 3-D ids, written at globalIndex (a gather on WebGL2): 2 x 2 x 2 workgroups in a 2 x 1 x 2 grid.
const ids3d = defineKernel({
  name: 'ids_3d',
  workgroupSize: [2, 2, 2],
  params: { out: buffer('u32', 'write') },
  body: ({ out }, k) => {
    const g = k.globalId;
    out.store(k.globalIndex, g.x.add(g.y.mul(10)).add(g.z.mul(100)).add(k.workgroupId.z.mul(1000)).add(k.localId.z.mul(10000)));
  },
});

/** What ids_2d writes at (x, y), computed from the definitions. */
function expectedIds2d(x: number, y: number): [number, number, number] {
  const [wx, wy, lx, ly] = [Math.floor(x / 4), Math.floor(y / 2), x % 4, y % 2];
  return [x + 10 * y, lx + 10 * ly + 100 * (lx + 4 * ly), wx + 10 * wy + 100 * 2 + 1000 * 3 + 10000 * (wx + 2 * wy)];
}

// Private arrays: each invocation sorts 6 of its own values (insertion sort), and shows
// the out-of-range rules (a store at 6 is dropped, loads at 6 and -1 give 0).
const PRIV = 6;
const privateSort = defineKernel({
  name: 'private_sort',
  workgroupSize: 4,
  params: { input: buffer('f32', 'read'), out: buffer('f32', 'write') },
  body: ({ input, out }, k) => {
    const t = k.globalIndex;
    k.if(t.mul(PRIV).lt(input.length), () => {
      const a = k.privateArray('f32', PRIV);
      k.for({ from: 0, to: PRIV }, (i) => a.store(i, input.load(t.mul(PRIV).add(i))));
      a.store(PRIV, 99); // dropped
      k.for({ from: 1, to: PRIV }, (i) => {
        const x = k.let(a.load(i));
        const j = k.let(i.cast('i32'));
        k.while(
          () => j.gt(0).and(a.load(j.sub(1)).gt(x)),
          () => {
            a.store(j, a.load(j.sub(1)));
            j.set(j.sub(1));
          },
        );
        a.store(j, x);
      });
      k.for({ from: 0, to: PRIV }, (i) => out.store(t.mul(PRIV + 1).add(i), a.load(i)));
      out.store(t.mul(PRIV + 1).add(PRIV), a.load(PRIV).add(a.load(i32(-1))));
    });
  },
});

// A private array that lives across barriers (the CPU backend splits phases there).
const privateBarrier = defineKernel({
  name: 'private_barrier',
  workgroupSize: 8,
  params: { out: buffer('u32', 'write') },
  body: ({ out }, k) => {
    const mine = k.privateArray('u32', 3);
    const wg = k.workgroupArray('u32', 8);
    mine.store(0, k.localIndex);
    mine.store(2, k.globalIndex.mul(3));
    wg.store(k.localIndex, k.localIndex.mul(k.localIndex));
    k.barrier();
    mine.store(1, wg.load(k.localIndex.add(1).rem(8)));
    k.barrier();
    out.store(k.globalIndex, mine.load(0).add(mine.load(1).mul(100)).add(mine.load(2).mul(10000)));
  },
});

// f32 atomic add: every invocation adds a multiple of 1/4 (sums exact in any order) into
// one of three elements; the fourth (-0) is never touched; an out-of-range add is dropped.
const f32AtomicAdd = defineKernel({
  name: 'f32_atomic_add',
  workgroupSize: 64,
  params: { acc: buffer('f32', 'atomic'), n: uniform('u32') },
  body: ({ acc, n }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(n), () => {
      acc.atomicAdd(i.rem(3), i.rem(8).cast('f32').mul(0.25).sub(0.75));
      acc.atomicAdd(acc.length, 1); // dropped
    });
  },
});

// The old value an f32 atomicAdd returns: adding 1 each, the olds are 0, 1, ..., n - 1 in some order.
const f32AtomicOld = defineKernel({
  name: 'f32_atomic_old',
  workgroupSize: 64,
  params: { acc: buffer('f32', 'atomic'), old: buffer('f32', 'write') },
  body: ({ acc, old }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(old.length), () => old.store(i, acc.atomicAdd(0, 1)));
  },
});

describeEachBackend('kernel language', (ctx) => {
  it('f32 atomic add: exact sums, an untouched -0 kept, out-of-range adds dropped', async () => {
    const { device } = ctx;
    const n = 1000;
    const acc = device.createBuffer('f32', [1.5, -2, 0.25, -0]);
    let sum = [1.5, -2, 0.25];
    const run = () => device.dispatch(f32AtomicAdd, { invocations: n }, { acc, n });
    if (!device.caps.features.has('atomic')) {
      // A device that cannot combine into buffers says so, naming the feature.
      expect(run).toThrow(UnsupportedFeatureError);
      return;
    }
    run();
    for (let i = 0; i < n; i++) sum[i % 3] = (sum[i % 3] as number) + (i % 8) * 0.25 - 0.75;
    sum = [...sum, -0];
    const got = [...(await acc.read())];
    expect(got).toEqual(sum);
    expect(Object.is(got[3], -0)).toBe(true);
  });

  it('f32 atomic add returns the old value where the backend can (a typed refusal where it cannot)', async () => {
    const { device } = ctx;
    const n = 200;
    const acc = device.createBuffer('f32', 1);
    const old = device.createBuffer('f32', n);
    let refused: unknown;
    try {
      device.dispatch(f32AtomicOld, { invocations: n }, { acc, old });
    } catch (e) {
      refused = e;
    }
    if (refused !== undefined) {
      // WebGL2 blends: the value before the add does not exist there.
      expect(refused).toBeInstanceOf(UnsupportedFeatureError);
      expect((refused as UnsupportedFeatureError).feature).toBe('atomic-other');
      expect(device.caps.features.has('atomic-other')).toBe(false);
      return;
    }
    expect([...(await acc.read())]).toEqual([n]);
    expect([...(await old.read())].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it('2-D ids: globalId, localId, workgroupId and workgroupCount over { invocations: [w, h] }', async () => {
    const { device } = ctx;
    const pos = device.createBuffer('u32', W2 * H2);
    const local = device.createBuffer('u32', W2 * H2);
    const group = device.createBuffer('u32', W2 * H2);
    device.dispatch(ids2d, { invocations: [W2, H2] }, { pos, local, group });
    const expected = Array.from({ length: W2 * H2 }, (_, i) => expectedIds2d(i % W2, Math.floor(i / W2)));
    expect([...(await pos.read())]).toEqual(expected.map((e) => e[0]));
    expect([...(await local.read())]).toEqual(expected.map((e) => e[1]));
    expect([...(await group.read())]).toEqual(expected.map((e) => e[2]));
  });

  it('3-D ids over { workgroups: [2, 1, 2] }, consistent with globalIndex', async () => {
    const { device } = ctx;
    const out = device.createBuffer('u32', 32);
    device.dispatch(ids3d, { workgroups: [2, 1, 2] }, { out });
    const expected = Array.from({ length: 32 }, (_, gi) => {
      const [wgi, li] = [Math.floor(gi / 8), gi % 8];
      const [wx, wz] = [wgi % 2, Math.floor(wgi / 2)];
      const [lx, ly, lz] = [li % 2, Math.floor(li / 2) % 2, Math.floor(li / 4)];
      return wx * 2 + lx + 10 * ly + 100 * (wz * 2 + lz) + 1000 * wz + 10000 * lz;
    });
    expect([...(await out.read())]).toEqual(expected);
  });

  it('private arrays: a per-invocation insertion sort, out-of-range loads 0 and stores dropped', async () => {
    const { device } = ctx;
    const n = 5;
    const values = Array.from({ length: n * PRIV }, (_, i) => ((i * 7919) % 23) - 11.5);
    const input = device.createBuffer('f32', values);
    const out = device.createBuffer('f32', n * (PRIV + 1));
    device.dispatch(privateSort, { invocations: n }, { input, out });
    const expected = Array.from({ length: n }, (_, t) => [...values.slice(t * PRIV, (t + 1) * PRIV).sort((a, b) => a - b), 0]).flat();
    expect([...(await out.read())]).toEqual(expected);
  });

  it('private arrays live across barriers', async () => {
    const { device } = ctx;
    const out = device.createBuffer('u32', 16);
    if (await refusedWithout(device, 'workgroup', () => device.dispatch(privateBarrier, { workgroups: 2 }, { out }))) return;
    device.dispatch(privateBarrier, { workgroups: 2 }, { out });
    const expected = Array.from({ length: 16 }, (_, g) => {
      const l = g % 8;
      const next = (l + 1) % 8;
      return l + next * next * 100 + g * 3 * 10000;
    });
    expect([...(await out.read())]).toEqual(expected);
  });

  it('literal loop bounds, select of two numbers and vector-scalar broadcast', async () => {
    const { device } = ctx;
    const out = device.createBuffer('u32', 5);
    const v = device.createBuffer('f32', 12);
    device.dispatch(literals, { invocations: 5 }, { out, v, s: 2 });
    expect([...(await out.read())]).toEqual([130, 140, 140, 140, 140]);
    expect([...(await v.read())]).toEqual([2, 4, 6, 8, 3, 5, 7, 9, 4, 6, 8, 10]);
  });

  it('a barrier under a uniform condition, and break out of a barrier loop', async () => {
    const { device } = ctx;
    const out = device.createBuffer('u32', 24);
    if (await refusedWithout(device, 'workgroup', () => device.dispatch(uniformFlow, { workgroups: 3 }, { out, rounds: 5 }))) return;
    device.dispatch(uniformFlow, { workgroups: 3 }, { out, rounds: 5 });
    const expected = Array.from({ length: 24 }, (_, g) => {
      if (g >= 16) return 0;
      const lid = g % 8;
      let t = 0;
      for (let r = 0; r < 5; r++) t += ((lid + 1) % 8) + r;
      return t;
    });
    expect([...(await out.read())]).toEqual(expected);
  });
});

void f32;
