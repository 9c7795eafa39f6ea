/**
 * The kernel language as a new user meets it (issue 14): misuse refused with a
 * message that says what to do, the forms that should just work, and the
 * features beyond 1-D kernels, on every backend.
 */
import { buffer, defineKernel, f32, KernelBuildError, select, u32, uniform, vec } from 'trident';
import { describe, expect, it } from 'vitest';
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

describeEachBackend('kernel language', (ctx) => {
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
    if (!device.caps.features.has('workgroup')) return; // refusal covered by kernel-classes
    const out = device.createBuffer('u32', 24);
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
