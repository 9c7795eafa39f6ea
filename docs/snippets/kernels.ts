/**
 * The snippets of docs/kernels.md. Each `#region` here is copied verbatim into the doc
 * (test/docs-snippets.node.test.ts checks they match), type-checked by `npm run check`,
 * and run on every backend by test/docs-snippets.test.ts, which asserts the results the
 * comments state.
 */
import { bool, buffer, type Device, defineKernel, f32, i32, max, min, select, sqrt, u32, uniform, vec } from 'trident';

// #region params
const axpy = defineKernel({
  name: 'axpy',
  workgroupSize: 64,
  params: {
    x: buffer('f32', 'read'), // loads only
    y: buffer('f32', 'read_write'), // loads and stores
    a: uniform('f32'), // a number passed at dispatch, the same for every invocation
  },
  body: ({ x, y, a }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(y.length), () => y.store(i, a.mul(x.load(i)).add(y.load(i))));
  },
});

export async function demoParams(device: Device): Promise<Float32Array> {
  const x = device.createBuffer('f32', [1, 2, 3]);
  const y = device.createBuffer('f32', [10, 20, 30]);
  device.dispatch(axpy, { invocations: 3 }, { x, y, a: 2 });
  return y.read(); // Float32Array [12, 24, 36]
}
// #endregion params

// #region atomic-access
// Kernel 1 counts with atomics: 'atomic' access.
const countEven = defineKernel({
  name: 'count_even',
  workgroupSize: 64,
  params: { values: buffer('u32', 'read'), counter: buffer('u32', 'atomic') },
  body: ({ values, counter }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(values.length).and(values.load(i).and(1).eq(0)), () => counter.atomicAdd(0, 1));
  },
});
// Kernel 2 only reads the count: 'read' access, a plain load. Declared 'atomic' here,
// `counter.load(0)` would be an atomic load, which WebGL2 refuses ('atomic-other').
const scaleByCount = defineKernel({
  name: 'scale_by_count',
  workgroupSize: 64,
  params: { counter: buffer('u32', 'read'), out: buffer('u32', 'write') },
  body: ({ counter, out }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(out.length), () => out.store(i, counter.load(0).mul(i)));
  },
});

export async function demoAtomicAccess(device: Device): Promise<Uint32Array> {
  const values = device.createBuffer('u32', [1, 2, 3, 4, 6, 9]);
  const counter = device.createBuffer('u32', 1); // new buffers are zeroed
  const out = device.createBuffer('u32', 4);
  device.dispatch(countEven, { invocations: 6 }, { values, counter });
  device.dispatch(scaleByCount, { invocations: 4 }, { counter, out }); // sees kernel 1's result: stream order
  return out.read(); // Uint32Array [0, 3, 6, 9]
}
// #endregion atomic-access

// #region variables
const variables = defineKernel({
  name: 'variables',
  workgroupSize: 64,
  params: { out: buffer('u32', 'write') },
  body: ({ out }, k) => {
    const i = k.let(k.globalIndex); // a variable initialised from a value
    const acc = k.var('u32'); // a variable of a type, 0 (false for bool) unless given
    const flag = k.var('bool', true);
    acc.set(i.mul(10)); // assignment: same type, or a number literal
    k.if(flag, () => acc.set(acc.add(1)));
    k.if(i.lt(out.length), () => out.store(i, acc));
  },
});

export async function demoVariables(device: Device): Promise<Uint32Array> {
  const out = device.createBuffer('u32', 3);
  device.dispatch(variables, { invocations: 3 }, { out });
  return out.read(); // Uint32Array [1, 11, 21]
}
// #endregion variables

// #region loops
const loops = defineKernel({
  name: 'loops',
  workgroupSize: 64,
  params: { out: buffer('u32', 'write'), n: uniform('u32') },
  body: ({ out, n }, k) => {
    const i = k.let(k.globalIndex);
    k.if(i.lt(n), () => {
      // for: `to` and `step` are evaluated once; counts up.
      const sum = k.var('u32');
      k.for({ from: 0, to: i.add(1) }, (j) => sum.set(sum.add(j))); // 0 + 1 + … + i
      // while: the condition is re-evaluated (loads included) before every iteration.
      const steps = k.var('u32');
      const x = k.let(i.add(1));
      k.while(
        () => x.ne(1),
        () => {
          x.set(select(x.and(1).eq(0), x.div(2), x.mul(3).add(1))); // Collatz
          steps.set(steps.add(1));
        },
      );
      // loop(cond, body, update): `continue` runs `update`; `break` leaves.
      const odd = k.var('u32');
      const j = k.var('u32');
      k.loop(
        () => bool(true),
        () => {
          k.if(j.ge(10), () => k.break());
          k.if(j.and(1).eq(0), () => k.continue());
          odd.set(odd.add(1));
        },
        () => j.set(j.add(1)),
      );
      out.store(i.mul(3), sum);
      out.store(i.mul(3).add(1), steps);
      out.store(i.mul(3).add(2), odd);
    });
  },
});

export async function demoLoops(device: Device): Promise<Uint32Array> {
  const out = device.createBuffer('u32', 9);
  device.dispatch(loops, { invocations: 3 }, { out, n: 3 });
  return out.read(); // Uint32Array [0, 0, 5,  1, 1, 5,  3, 7, 5]
}
// #endregion loops

// #region select
const clampToZero = defineKernel({
  name: 'select_demo',
  workgroupSize: 64,
  params: { x: buffer('i32', 'read'), out: buffer('i32', 'write'), sign: buffer('i32', 'write') },
  body: ({ x, out, sign }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(x.length), () => {
      const v = k.let(x.load(i));
      out.store(i, select(v.lt(0), 0, v)); // v < 0 ? 0 : v (a number takes the other side's type)
      sign.store(i, select(v.lt(0), -1, 1, 'i32')); // two numbers: name the type (default u32)
    });
  },
});

export async function demoSelect(device: Device): Promise<[Int32Array, Int32Array]> {
  const x = device.createBuffer('i32', [-5, 0, 7]);
  const out = device.createBuffer('i32', 3);
  const sign = device.createBuffer('i32', 3);
  device.dispatch(clampToZero, { invocations: 3 }, { x, out, sign });
  return [await out.read(), await sign.read()]; // [Int32Array [0, 0, 7], Int32Array [-1, 1, 1]]
}
// #endregion select

// #region casts
const casts = defineKernel({
  name: 'casts',
  workgroupSize: 1,
  params: { out: buffer('u32', 'write'), f: buffer('f32', 'write') },
  body: ({ out, f }) => {
    out.store(0, f32(-2.7).cast('i32').cast('u32')); // f32 -> i32 truncates (-2); i32 -> u32 keeps the bits: 2^32 - 2
    out.store(1, f32(1e10).cast('u32')); // f32 -> u32 saturates: 4294967295
    out.store(2, f32(1).bitcast('u32')); // the bits of 1.0f: 0x3f800000 = 1065353216
    out.store(3, bool(true).cast('u32')); // 1
    f.store(0, u32(7).cast('f32').div(2)); // 3.5
    f.store(1, i32(-3).cast('f32')); // -3
  },
});

export async function demoCasts(device: Device): Promise<[Uint32Array, Float32Array]> {
  const out = device.createBuffer('u32', 4);
  const f = device.createBuffer('f32', 2);
  device.dispatch(casts, { workgroups: 1 }, { out, f });
  return [await out.read(), await f.read()]; // [Uint32Array [4294967294, 4294967295, 1065353216, 1], Float32Array [3.5, -3]]
}
// #endregion casts

// #region vectors
const vectors = defineKernel({
  name: 'vectors',
  workgroupSize: 64,
  // vector: 4 views the buffer as vec4<f32> elements: length and indices count vec4s.
  params: { p: buffer('f32', 'read', { vector: 4 }), out: buffer('f32', 'write', { vector: 4 }), s: uniform('f32') },
  body: ({ p, out, s }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(p.length), () => {
      const v = k.let(p.load(i));
      const scaled = v.mul(s); // a scalar operand is used in every component
      const length = sqrt(v.x.mul(v.x).add(v.y.mul(v.y)).add(v.z.mul(v.z))); // components .x .y .z .w
      out.store(i, vec('f32', scaled.x, scaled.y, scaled.z, length));
    });
  },
});

export async function demoVectors(device: Device): Promise<Float32Array> {
  const p = device.createBuffer('f32', [3, 0, 4, 0, 0, 1, 0, 0]); // two vec4s
  const out = device.createBuffer('f32', 8);
  device.dispatch(vectors, { invocations: 2 }, { p, out, s: 10 });
  return out.read(); // Float32Array [30, 0, 40, 5,  0, 10, 0, 1]
}
// #endregion vectors

// #region workgroup
const WG = 64;
/** Sums of each block of 64 elements: one workgroup per block, a tree in workgroup memory. */
const blockSums = defineKernel({
  name: 'block_sums',
  workgroupSize: WG,
  params: { x: buffer('u32', 'read'), sums: buffer('u32', 'write') },
  body: ({ x, sums }, k) => {
    const shared = k.workgroupArray('u32', WG); // one per workgroup, zeroed at its start
    shared.store(k.localIndex, x.load(k.globalIndex)); // out of range loads give 0
    k.workgroupBarrier(); // every store above is visible to the whole workgroup below
    k.for({ from: 0, to: 6 }, (level) => {
      const stride = k.let(u32(1).shl(level));
      k.if(k.localIndex.and(stride.mul(2).sub(1)).eq(0), () =>
        shared.store(k.localIndex, shared.load(k.localIndex).add(shared.load(k.localIndex.add(stride)))),
      );
      k.workgroupBarrier(); // under the loop, whose bounds are uniform: allowed
    });
    k.if(k.localIndex.eq(0), () => sums.store(k.workgroupIndex, shared.load(0)));
  },
});

export async function demoWorkgroup(device: Device): Promise<Uint32Array> {
  const x = device.createBuffer('u32', 200);
  x.fill(1);
  const sums = device.createBuffer('u32', 4);
  device.dispatch(blockSums, { workgroups: 4 }, { x, sums });
  return sums.read(); // Uint32Array [64, 64, 64, 8]
}
// #endregion workgroup

// #region uniformity
export function defineNonUniformBarrier() {
  return defineKernel({
    name: 'bad_barrier',
    workgroupSize: 64,
    params: { out: buffer('u32', 'write') },
    body: ({ out }, k) => {
      k.if(k.localIndex.lt(2), () => {
        k.barrier(); // only invocations 0 and 1 would reach it
        out.store(k.globalIndex, 1);
      });
    },
  });
}
// defineNonUniformBarrier() throws KernelBuildError:
//   kernel 'bad_barrier': barrier() under non-uniform control flow: an if whose condition
//   depends on k.localIndex. Every invocation of a workgroup must reach the same barriers; …
// #endregion uniformity

// #region subgroups
const subgroupSums = defineKernel({
  name: 'subgroup_sums',
  workgroupSize: 64,
  params: { x: buffer('u32', 'read'), out: buffer('u32', 'write'), width: buffer('u32', 'write') },
  body: ({ x, out, width }, k) => {
    const i = k.let(k.globalIndex);
    const total = k.subgroupAdd(x.load(i)); // the sum over this invocation's subgroup
    k.if(i.lt(out.length), () => out.store(i, total));
    k.if(i.eq(0), () => width.store(0, k.subgroupSize));
  },
});

export async function demoSubgroups(device: Device): Promise<{ sums: Uint32Array; width: number }> {
  const x = device.createBuffer('u32', 64);
  x.fill(1);
  const out = device.createBuffer('u32', 64);
  const width = device.createBuffer('u32', 1);
  device.dispatch(subgroupSums, { workgroups: 1 }, { x, out, width });
  // Every element is the subgroup width: 1 on cpu, 4 on SwiftShader, 32 on NVIDIA GPUs.
  return { sums: await out.read(), width: (await width.read())[0] ?? 0 };
}
// #endregion subgroups

// #region ids
const ids = defineKernel({
  name: 'ids',
  workgroupSize: 4,
  params: { out: buffer('u32', 'write') },
  body: ({ out }, k) => {
    const i = k.globalIndex; // workgroupIndex * workgroupSize + localIndex
    k.if(i.lt(out.length.div(4)), () => {
      out.store(i.mul(4), k.localIndex); // 0 .. workgroupSize - 1
      out.store(i.mul(4).add(1), k.workgroupIndex); // 0 .. numWorkgroups - 1
      out.store(i.mul(4).add(2), k.numWorkgroups);
      out.store(i.mul(4).add(3), k.numInvocations); // numWorkgroups * workgroupSize
    });
  },
});

export async function demoIds(device: Device): Promise<Uint32Array> {
  const out = device.createBuffer('u32', 4 * 6);
  device.dispatch(ids, { invocations: 6 }, { out }); // 2 workgroups of 4; invocations 6 and 7 are surplus
  return out.read();
  // Uint32Array [0, 0, 2, 8,  1, 0, 2, 8,  2, 0, 2, 8,  3, 0, 2, 8,  0, 1, 2, 8,  1, 1, 2, 8]
}
// #endregion ids

// #region grids
const gridStride = defineKernel({
  name: 'grid_stride',
  workgroupSize: 64,
  params: { x: buffer('f32', 'read_write'), n: uniform('u32') },
  body: ({ x, n }, k) => {
    // Each invocation handles i, i + numInvocations, …: any n, whatever the grid.
    k.for({ from: k.globalIndex, to: n, step: k.numInvocations }, (i) => x.store(i, x.load(i).mul(2)));
  },
});

export async function demoGrids(device: Device): Promise<Float32Array> {
  const x = device.createBuffer('f32', 1000);
  x.fill(1);
  // { invocations }: enough workgroups to cover 1000 invocations (16 of 64; the last 24 are surplus).
  // { workgroups }: exactly that many workgroups (a number, or [x, y, z] whose product is numWorkgroups).
  device.dispatch(gridStride, { workgroups: 3 }, { x, n: 1000 }); // 192 invocations, about 5 elements each
  device.dispatch(gridStride, { invocations: 1000 }, { x, n: 1000 });
  return x.read(); // every element 4
}
// #endregion grids

// #region ids-2d
const transpose = defineKernel({
  name: 'transpose',
  workgroupSize: [8, 8], // 64 invocations as an 8 x 8 tile: localId.x and localId.y run 0 .. 7
  params: { src: buffer('f32', 'read'), dst: buffer('f32', 'write'), w: uniform('u32'), h: uniform('u32') },
  body: ({ src, dst, w, h }, k) => {
    const x = k.globalId.x; // workgroupId.x * 8 + localId.x
    const y = k.globalId.y;
    k.if(x.lt(w).and(y.lt(h)), () => dst.store(x.mul(h).add(y), src.load(y.mul(w).add(x))));
  },
});

export async function demoIds2d(device: Device): Promise<Float32Array> {
  const src = device.createBuffer('f32', [1, 2, 3, 4, 5, 6]); // 2 rows of 3
  const dst = device.createBuffer('f32', 6);
  // { invocations: [w, h] }: a ceil(3 / 8) x ceil(2 / 8) grid of 8 x 8 workgroups; guard x < w, y < h.
  device.dispatch(transpose, { invocations: [3, 2] }, { src, dst, w: 3, h: 2 });
  return dst.read(); // Float32Array [1, 4, 2, 5, 3, 6]: 3 rows of 2
}
// #endregion ids-2d

// #region private
const medianOf5 = defineKernel({
  name: 'median_of_5',
  workgroupSize: 64,
  params: { x: buffer('f32', 'read'), out: buffer('f32', 'write') },
  body: ({ x, out }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(out.length), () => {
      const win = k.privateArray('f32', 5); // this invocation's own 5 values, zeroed at its start
      k.for({ from: 0, to: 5 }, (j) => win.store(j, x.load(i.add(j))));
      // Selection sort, 3 rounds: win[2] is then the median.
      k.for({ from: 0, to: 3 }, (a) => {
        k.for({ from: a.add(1), to: 5 }, (b) => {
          const lo = k.let(win.load(a));
          const hi = k.let(win.load(b));
          win.store(a, min(lo, hi));
          win.store(b, max(lo, hi));
        });
      });
      out.store(i, win.load(2));
    });
  },
});

export async function demoPrivate(device: Device): Promise<Float32Array> {
  const x = device.createBuffer('f32', [5, 1, 4, 2, 3, 9, 0]);
  const out = device.createBuffer('f32', 3);
  device.dispatch(medianOf5, { invocations: 3 }, { x, out });
  return out.read(); // Float32Array [3, 3, 3]: medians of [5 1 4 2 3], [1 4 2 3 9], [4 2 3 9 0]
}
// #endregion private

// #region atomics
const atomics = defineKernel({
  name: 'atomics',
  workgroupSize: 64,
  params: { values: buffer('i32', 'read'), stats: buffer('i32', 'atomic'), first: buffer('i32', 'atomic') },
  body: ({ values, stats, first }, k) => {
    const i = k.let(k.globalIndex);
    k.if(i.lt(values.length), () => {
      const v = k.let(values.load(i));
      stats.atomicAdd(0, v); // 'atomic' class: every backend (WebGL2 by blending)
      stats.atomicMin(1, v);
      stats.atomicMax(2, v);
      // The rest are 'atomic-other' (webgpu, cpu): sub, and/or/xor, exchange, compare-exchange, atomic loads.
      first.atomicCompareExchange(0, -1, i.cast('i32')); // only the first invocation to get there stores
    });
  },
});

export async function demoAtomics(device: Device): Promise<{ stats: Int32Array; first: number }> {
  const values = device.createBuffer('i32', [4, -2, 9, 1]);
  const stats = device.createBuffer('i32', [0, 2 ** 31 - 1, -(2 ** 31)]); // identities of add, min, max
  const first = device.createBuffer('i32', [-1]);
  device.dispatch(atomics, { invocations: 4 }, { values, stats, first });
  return { stats: await stats.read(), first: (await first.read())[0] ?? -1 }; // stats Int32Array [12, -2, 9]; first one of 0..3
}
// #endregion atomics

// #region atomics-f32
const sumByKey = defineKernel({
  name: 'sum_by_key',
  workgroupSize: 64,
  params: { keys: buffer('u32', 'read'), values: buffer('f32', 'read'), sums: buffer('f32', 'atomic') },
  body: ({ keys, values, sums }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(keys.length), () => sums.atomicAdd(keys.load(i), values.load(i))); // 'atomic' class
  },
});

export async function demoAtomicsF32(device: Device): Promise<Float32Array> {
  const keys = device.createBuffer('u32', [0, 1, 0, 2, 1]);
  const values = device.createBuffer('f32', [0.5, 1, 0.25, 2, -3]);
  const sums = device.createBuffer('f32', 3);
  device.dispatch(sumByKey, { invocations: 5 }, { keys, values, sums });
  return sums.read(); // Float32Array [0.75, -2, 2]
}
// #endregion atomics-f32

// #region math
const math = defineKernel({
  name: 'math',
  workgroupSize: 1,
  params: { out: buffer('f32', 'write'), n: buffer('u32', 'write') },
  body: ({ out, n }, k) => {
    const x = k.let(f32(2.5));
    out.store(0, min(x, 1)); // 1; also max, clamp, abs
    out.store(1, max(x.neg(), -1)); // -1
    out.store(2, sqrt(f32(16))); // 4; also inverseSqrt, exp, exp2, log, log2, pow, sin, cos, floor, ceil, trunc, fma
    n.store(0, u32(0xff).shr(4).xor(1)); // 14; shl/shr take the amount modulo 32, shr is arithmetic on i32
  },
});

export async function demoMath(device: Device): Promise<[Float32Array, Uint32Array]> {
  const out = device.createBuffer('f32', 3);
  const n = device.createBuffer('u32', 1);
  device.dispatch(math, { workgroups: 1 }, { out, n });
  return [await out.read(), await n.read()]; // [Float32Array [1, -1, 4], Uint32Array [14]]
}
// #endregion math
