/**
 * The WebGL2 backend's planner and GLSL generator, without a GPU: runs in Node and in
 * the browser. What the shaders compute is checked against the CPU backend in
 * webgl-backend.test.ts; here: how kernels map to passes, what is refused, and the
 * shape of the generated source.
 */

import { generateGlsl, planKernel } from '@trident/backend-webgl';
import { buffer, defineKernel, f32, type Kernel, UnsupportedFeatureError, uniform } from 'trident';
import { describe, expect, it } from 'vitest';

const mixed = defineKernel({
  name: 'plan_mixed',
  workgroupSize: 32,
  params: {
    x: buffer('f32', 'read'),
    y: buffer('f32', 'write'),
    idx: buffer('u32', 'write'),
    hist: buffer('u32', 'atomic'),
    lo: buffer('i32', 'atomic'),
    n: uniform('u32'),
  },
  body: ({ x, y, idx, hist, lo, n }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(n), () => {
      const v = x.load(i);
      y.store(i, v.mul(2).rem(f32(3)));
      idx.store(n.sub(1).sub(i), i.div(3));
      hist.atomicAdd(v.cast('u32').rem(hist.length), 1);
      k.for({ from: 0, to: 4, type: 'u32' }, (j) => lo.atomicMin(j, v.cast('i32')));
    });
  },
});

describe('webgl2 planner', () => {
  it('maps stores at globalIndex to gather outputs, other stores to point targets, atomics to blend targets', () => {
    const plan = planKernel(mixed as unknown as Kernel, true);
    expect(plan.gatherOutputs).toEqual(['y']);
    expect(plan.pointTargets).toEqual([
      { buffer: 'idx', mode: 'store', staticOps: 1, inLoop: false },
      { buffer: 'hist', mode: 'add', staticOps: 1, inLoop: false },
      { buffer: 'lo', mode: 'min', staticOps: 1, inLoop: true },
    ]);
    expect([...plan.sampled]).toEqual(['x']);
  });

  it('refuses atomics without float blending, naming the feature and the extension', () => {
    expect(() => planKernel(mixed as unknown as Kernel, false)).toThrow(UnsupportedFeatureError);
    expect(() => planKernel(mixed as unknown as Kernel, false)).toThrow(/EXT_float_blend/);
  });

  it('refuses kernels with atomics on workgroup memory as workgroup kernels', () => {
    const k = defineKernel({
      name: 'plan_wg_atomic',
      workgroupSize: 8,
      params: { out: buffer('u32', 'write') },
      body: ({ out }, k) => {
        const h = k.workgroupArray('u32', 4, { atomic: true });
        out.store(k.globalIndex, h.atomicAdd(0, 1));
      },
    });
    expect(k.info.classes.has('atomic')).toBe(false);
    let err: unknown;
    try {
      planKernel(k as unknown as Kernel, true);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UnsupportedFeatureError);
    expect((err as UnsupportedFeatureError).feature).toBe('workgroup');
    expect((err as UnsupportedFeatureError).message).toContain('plan_wg_atomic');
  });

  it('refuses two blend equations on one buffer and atomics mixed with stores', () => {
    const twoOps = defineKernel({
      name: 'plan_two_ops',
      workgroupSize: 8,
      params: { h: buffer('u32', 'atomic') },
      body: ({ h }, k) => {
        h.atomicAdd(0, k.globalIndex);
        h.atomicMax(1, k.globalIndex);
      },
    });
    const withStore = defineKernel({
      name: 'plan_store_and_add',
      workgroupSize: 8,
      params: { h: buffer('u32', 'atomic') },
      body: ({ h }, k) => {
        h.atomicAdd(0, 1);
        h.store(k.globalIndex, 5);
      },
    });
    for (const kernel of [twoOps, withStore]) {
      const err = (() => {
        try {
          planKernel(kernel as unknown as Kernel, true);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(UnsupportedFeatureError);
      expect((err as UnsupportedFeatureError).feature).toBe('atomic-other');
      expect((err as UnsupportedFeatureError).message).toContain(kernel.name);
    }
  });
});

describe('webgl2 GLSL generator', () => {
  const plan = planKernel(mixed as unknown as Kernel, true);

  it('emits a GLSL ES 3.00 fragment pass for gather outputs, f32 stored as bits, only the helpers used', () => {
    const { vs, fs } = generateGlsl(mixed as unknown as Kernel, plan, { kind: 'gather', outputs: ['y'] });
    expect(vs.startsWith('#version 300 es')).toBe(true);
    expect(fs.startsWith('#version 300 es')).toBe(true);
    // Four elements a texel: one fragment runs the four invocations of its texel, a load picks a component.
    expect(fs).toContain('layout(location = 0) out highp uvec4 out_0;');
    expect(fs).toContain('uint g0 = t * 4u;');
    expect(fs).toContain('uint g1 = min(g0 + 4u, t_total);');
    expect(fs).toContain('if (w_y) { uint e_ = floatBitsToUint(o_y); r_0 = uvec4(j == 0 ? e_ : r_0.x, j == 1 ? e_ : r_0.y');
    expect(fs).toContain('uvec4 q = texelFetch(tex_x, t_at(s >> 2u, ts_x), 0);');
    // Lanes are picked by selects, never by dynamic indexing (which hung SwiftShader's compiler).
    expect(fs).not.toMatch(/\[int\(/);
    expect(fs).toContain('float t_frem(float a, float b)');
    // Unused helpers stay out; atomics and scatter stores are no-ops in this pass.
    expect(fs).not.toContain('t_popcnt');
    expect(fs).not.toContain('s_n');
  });

  it('emits a gl.POINTS vertex pass per point target, with slots and a counting variant', () => {
    const target = plan.pointTargets.find((t) => t.buffer === 'lo');
    if (!target) throw new Error('no target lo');
    const p = generateGlsl(mixed as unknown as Kernel, plan, { kind: 'points', target });
    expect(p.vs).toContain('gl_PointSize = 1.0;');
    expect(p.vs).toContain('if (s_n == t_slot)');
    // Blended atomics carry the value in the element's component and the identity (here +Inf for min) elsewhere.
    expect(p.vs).toContain('s_val = vec4(c_ == 0u ? f_ : uintBitsToFloat(0x7f800000u), c_ == 1u ? f_ : uintBitsToFloat(0x7f800000u)');
    // The IR loop's `continue` must still run the update: the body sits in a do/while(false).
    expect(p.vs).toMatch(/do \{[\s\S]*\} while \(false\);/);
    expect(p.fs).toContain('out highp vec4 o;');
    expect(p.countFs).toContain('p_cnt');
  });

  it('vec4 views are one texel: one invocation a fragment, one fetch a load; scalar scatter draws by part', () => {
    const k = defineKernel({
      name: 'glsl_vec4',
      workgroupSize: 8,
      params: { x: buffer('f32', 'read', { vector: 4 }), y: buffer('f32', 'write', { vector: 4 }), s: buffer('u32', 'write') },
      body: ({ x, y, s }, k) => {
        y.store(k.globalIndex, x.load(k.globalIndex.add(1)));
        s.store(k.globalIndex.mul(3), 1);
      },
    });
    const p = planKernel(k as unknown as Kernel, true);
    const { fs } = generateGlsl(k as unknown as Kernel, p, { kind: 'gather', outputs: ['y'] });
    expect(fs).toContain('uint g1 = min(g0 + 1u, t_total);');
    expect(fs).toContain('return uintBitsToFloat(texelFetch(tex_x, t_at(i, ts_x), 0));');
    const target = p.pointTargets[0];
    if (!target) throw new Error('no point target');
    const { vs } = generateGlsl(k as unknown as Kernel, p, { kind: 'points', target });
    expect(vs).toContain('uniform uint t_part;');
    expect(vs).toContain('(s_idx & 3u) == t_part');
    expect(vs).toContain('ivec2 at = t_at((s_idx >> 2u), ts_s);');
  });

  it('writes constants exactly: NaN, infinities and -0 as bit patterns, i32 MIN without overflow', () => {
    const k = defineKernel({
      name: 'glsl_consts',
      workgroupSize: 1,
      params: { y: buffer('f32', 'write'), z: buffer('i32', 'write') },
      body: ({ y, z }, k) => {
        y.store(k.globalIndex, f32(Number.NaN).add(Number.NEGATIVE_INFINITY).add(-0).add(0.1));
        z.store(k.globalIndex, -2147483648);
      },
    });
    const { fs } = generateGlsl(k as unknown as Kernel, planKernel(k as unknown as Kernel, true), { kind: 'gather', outputs: ['y', 'z'] });
    expect(fs).toContain('uintBitsToFloat(0x7fc00000u)');
    expect(fs).toContain('uintBitsToFloat(0xff800000u)');
    expect(fs).toContain('uintBitsToFloat(0x80000000u)');
    expect(fs).toContain('0.10000000149011612');
    expect(fs).toContain('int(0x80000000u)');
  });
});
