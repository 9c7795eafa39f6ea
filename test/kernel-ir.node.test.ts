/** The kernel builder and JS code generation, without running anything. */
import { generateJs } from '@trident/backend-cpu/internal';
import {
  buffer,
  defineKernel,
  f32,
  i32,
  type Kernel,
  KernelBuildError,
  type KernelIR,
  type KernelSpec,
  select,
  u32,
  uniform,
  type Val,
  vec,
} from '@trident/core';
import { expect, it } from 'vitest';

const params = { x: buffer('u32', 'read_write'), f: buffer('f32', 'read'), n: uniform('u32') };
const build = (body: KernelSpec<typeof params>['body']) => defineKernel({ name: 'probe', workgroupSize: 8, params, body });

it('rejects mixed operand types, with the kernel named', () => {
  expect(() => build(({ x, f }) => void x.load(0).add(f.load(0) as never))).toThrow(KernelBuildError);
  expect(() => build(({ x, f }) => void x.load(0).add(f.load(0) as never))).toThrow(/kernel 'probe'.*operand types differ/);
});

it('rejects constants that do not fit their type', () => {
  expect(() => u32(-1)).toThrow(/out of range/);
  expect(() => u32(1.5)).toThrow(/integer/);
  expect(() => i32(2 ** 31)).toThrow(/out of range/);
  expect(() => build(({ x }) => void x.load(0).add(-2))).toThrow(KernelBuildError);
  expect(f32(0.1).node).toEqual({ op: 'const', type: 'f32', value: Math.fround(0.1) });
});

it('rejects stores to read-only buffers, atomics on plain buffers, bad names and sizes', () => {
  expect(() => build(({ f }) => f.store(0, 1))).toThrow(/read-only/);
  expect(() => build(({ x }) => void x.atomicAdd(0, 1))).toThrow(/needs access 'atomic'/);
  expect(() => defineKernel({ name: '1bad', workgroupSize: 8, params: {}, body: () => undefined })).toThrow(KernelBuildError);
  expect(() => defineKernel({ name: 'ok', workgroupSize: 0, params: {}, body: () => undefined })).toThrow(/workgroupSize/);
  expect(() => build((_, k) => k.break())).toThrow(/break outside a loop/);
  expect(() => build(({ x }) => void x.load(0).neg())).toThrow(/neg is not defined on u32/);
  // The types already forbid this; the builder must refuse it at run time too (plain JS callers).
  expect(() => build(({ f }) => void (f.load(0) as unknown as Val<'u32'>).shl(1))).toThrow(/integer/);
});

it('takes loads at the point of the call, so later stores do not change them', () => {
  const k = build(({ x }, k) => {
    const before = x.load(0);
    x.store(0, before.add(1));
    x.store(1, before);
    k.return();
  });
  const src = generateJs(k).source;
  // The load is bound to a variable before the first store.
  expect(src.indexOf('tmp_0 = (b_x[0] ?? 0)')).toBeGreaterThan(-1);
  expect(src.indexOf('tmp_0 = (b_x[0] ?? 0)')).toBeLessThan(src.indexOf('b_x[0] = '));
  expect(src).toContain('b_x[1] = tmp_0');
});

it('infers gather only for stores at globalIndex', () => {
  const gather = build(({ x, n }, k) => {
    const i = k.let(k.globalIndex);
    k.if(i.lt(n), () => x.store(i, 1));
  });
  const scatter = build(({ x }, k) => x.store(k.globalIndex.add(1), 1));
  expect([...gather.info.classes]).toEqual(['gather']);
  expect([...scatter.info.classes]).toEqual(['scatter']);
  expect([...gather.info.writes]).toEqual(['x']);
});

it('generates vector code and select', () => {
  const k = defineKernel({
    name: 'vecs',
    workgroupSize: 4,
    params: { x: buffer('f32', 'read', { vector: 4 }), y: buffer('f32', 'write', { vector: 4 }) },
    body: ({ x, y }, k) => {
      const v = x.load(k.globalIndex);
      const w = v.mul(vec('f32', 2, 2, 2, 2)).add(1);
      y.store(k.globalIndex, select(v.x.gt(0), w, v));
    },
  });
  const src = generateJs(k).source;
  // Scalarised: no vector arrays; the load reads its four elements after one bounds check.
  expect(src).not.toMatch(/\$ldv|\$stv|new Array/);
  expect(src).toMatch(/< len_x \? \(\$t\d+ = \$t\d+ \* 4, \$t\d+ = b_x\[\$t\d+\], (\$t\d+ = b_x\[\$t\d+ \+ [123]\](, )?){3}\)/);
  expect(k.info.classes.has('gather')).toBe(true);
  // And it computes what the kernel says: both arms of the select, zeros past the input.
  const run = new Function(`return ${src};`)() as (b: Record<string, Float32Array>, u: object, s: number, e: number, n: number) => void;
  const x = Float32Array.from([1, 2, 3, 4, -1, 5, 6, 7]);
  const y = new Float32Array(12).fill(9);
  run({ x, y }, {}, 0, 1, 1);
  expect([...y]).toEqual([3, 5, 7, 9, -1, 5, 6, 7, 0, 0, 0, 0]);
});

it('scalarised vectors keep effects in order and once: impure components left to right, splats once, select only its arm', () => {
  // IR by hand (the builder would bind each atomic to a variable first): out[0..3] = the
  // construct's four atomicAdd results, in order; out[4..7] = a select whose false arm
  // holds an atomic that must not run; then the counter itself.
  const u32 = 'u32' as const;
  const c = (value: number) => ({ op: 'const', type: u32, value }) as const;
  const bump = { op: 'atomic', type: u32, fn: 'add', buffer: 'a', index: c(0), value: c(1) } as const;
  const v4 = 'vec4<u32>' as const;
  const ir: KernelIR = {
    name: 'vec_effects',
    workgroupSize: 1,
    params: [
      ['a', { kind: 'buffer', dtype: 'u32', access: 'atomic', vector: 1 }],
      ['out', { kind: 'buffer', dtype: 'u32', access: 'write', vector: 4 }],
    ],
    workgroupArrays: [],
    vars: [],
    body: [
      { op: 'store', buffer: 'out', index: c(0), value: { op: 'construct', type: v4, args: [bump, bump, bump, bump] } },
      {
        op: 'store',
        buffer: 'out',
        index: c(1),
        value: {
          op: 'select',
          type: v4,
          cond: { op: 'const', type: 'bool', value: true },
          ifTrue: {
            op: 'binary',
            type: v4,
            fn: 'add',
            a: { op: 'const', type: v4, value: [10, 20, 30, 40] },
            b: { op: 'construct', type: v4, args: [c(5), c(5), c(5), c(5)] },
          },
          ifFalse: { op: 'construct', type: v4, args: [bump, c(0), c(0), c(0)] },
        },
      },
    ],
  };
  const src = generateJs({ ir } as unknown as Kernel).source;
  const run = new Function(`return ${src};`)() as (b: Record<string, Uint32Array>, u: object, s: number, e: number, n: number) => void;
  const a = new Uint32Array(1);
  const out = new Uint32Array(8);
  run({ a, out }, {}, 0, 1, 1);
  expect([...out]).toEqual([0, 1, 2, 3, 15, 25, 35, 45]);
  expect(a[0]).toBe(4);
});
