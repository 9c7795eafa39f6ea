/**
 * Regression tests for what the differential fuzzer (test/fuzz) found, each
 * shrunk to a small kernel written with the builder, on every backend, against
 * values worked out by hand from the IR's semantics (packages/core/src/ir/nodes.ts).
 */
import { createDevice, type Device, type Expr, type Kernel, KernelBuildError } from 'trident';
import { expect, it } from 'vitest';
import { kernelOf, probeSubgroups, runCase } from './fuzz/differential.ts';
import { type FuzzCase, generateCase, optionsForSeed } from './fuzz/generate.ts';
import { interpret } from './fuzz/interpret.ts';
import { describeEachBackend, TEST_BACKENDS } from './harness.ts';

async function run(device: Device, kernel: Kernel, n: number, workgroups: number): Promise<number[]> {
  const out = device.createBuffer('i32', n);
  device.dispatch(kernel, { workgroups }, { out } as never);
  const got = [...(await out.read())];
  out.destroy();
  return got;
}

describeEachBackend('fuzzer regressions', (ctx) => {
  // Seed 85 (WebGPU): WGSL emits the workgroupSize built-in as a literal, yet the emitter took it for a run-time
  // value, so `i32 constant << (workgroupSize << 256)` was folded at shader creation, where an i32 shift that
  // changes the sign is an error: the shader was rejected. (The builder gives workgroupSize as a JS number;
  // the IR's 'workgroupSize' built-in is reachable from hand-made IR, as the fuzzer makes it.)
  it('shifting a constant by an expression of the workgroupSize built-in wraps at run time (seed 85)', async () => {
    const kernel = kernelOf({
      name: 'fuzz_shl_workgroup_size',
      workgroupSize: 16,
      workgroupShape: [16, 1, 1],
      privateArrays: [],
      params: [['out', { kind: 'buffer', dtype: 'i32', access: 'write', vector: 1 }]],
      workgroupArrays: [],
      vars: [],
      body: [
        {
          op: 'store',
          buffer: 'out',
          index: { op: 'builtin', type: 'u32', name: 'globalIndex' },
          value: {
            op: 'binary',
            type: 'i32',
            fn: 'shl',
            a: { op: 'const', type: 'i32', value: 0x7fffffff },
            b: {
              op: 'binary',
              type: 'u32',
              fn: 'shl',
              a: { op: 'builtin', type: 'u32', name: 'workgroupSize' },
              b: { op: 'const', type: 'u32', value: 256 },
            },
          },
        },
      ],
    });
    // 16 << (256 % 32) = 16; 0x7fffffff << 16 = 0xffff0000 (bits above 32 dropped) = -65536 as i32.
    expect(await run(ctx.device, kernel, 16, 1)).toEqual(new Array(16).fill(-65536));
  });

  // Fuzzer cases 40801 and 41139 (WebGPU, WebGL2 on SwiftShader): `(v0 - -0.25) + 16777216` gave 16777312 where the
  // written order gives 16777314, and `-((v8 + 2) - (0 - 0.3))` differed by one ulp: the shader compiler regrouped
  // the constants. WGSL ("Reassociation and Fusion") and GLSL ES ("Evaluation of Expressions") both allow that, so
  // the IR's semantics and the fuzzer's reference bound every grouping of an f32 add/sub chain (docs/kernels.md).
  const f = (x: number): Expr => ({ op: 'const', type: 'f32', value: x });
  const regroupCase: FuzzCase = {
    seed: 0,
    options: optionsForSeed(1),
    ir: {
      name: 'fuzz_regrouped_constants',
      workgroupSize: 4,
      workgroupShape: [4, 1, 1],
      privateArrays: [],
      params: [
        ['inF', { kind: 'buffer', dtype: 'f32', access: 'read', vector: 1 }],
        ['oF', { kind: 'buffer', dtype: 'f32', access: 'write', vector: 1 }],
      ],
      workgroupArrays: [],
      vars: [{ id: 0, type: 'f32', name: 'v0' }],
      body: [
        {
          op: 'let',
          id: 0,
          type: 'f32',
          init: { op: 'load', type: 'f32', buffer: 'inF', index: { op: 'builtin', type: 'u32', name: 'globalIndex' } },
        },
        {
          op: 'store',
          buffer: 'oF',
          index: { op: 'builtin', type: 'u32', name: 'globalIndex' },
          value: {
            op: 'binary',
            type: 'f32',
            fn: 'add',
            a: { op: 'binary', type: 'f32', fn: 'sub', a: { op: 'var', type: 'f32', id: 0 }, b: f(-0.25) },
            b: f(16777216),
          },
        },
      ],
    },
    inputs: [{ name: 'inF', dtype: 'f32', data: new Float32Array([96.9, 96.9, 1, 3]) }],
    outputs: [{ name: 'oF', dtype: 'f32', length: 4 }],
    uniforms: {},
    workgroups: 1,
  };

  it('an f32 add chain may be regrouped: (x - -0.25) + 2^24 is 16777314 in order, 16777312 regrouped (fuzzer cases 40801, 41139)', async () => {
    const out = ctx.device.createBuffer('f32', 4);
    const input = ctx.device.createBuffer('f32', regroupCase.inputs[0]?.data as Float32Array);
    ctx.device.dispatch(kernelOf(regroupCase.ir), { workgroups: 1 }, { inF: input, oF: out } as never);
    const got = [...(await out.read())];
    input.destroy();
    out.destroy();
    // Either grouping, rounded either way (WGSL leaves the rounding mode open); 1 + 0.25 + 2^24 and 3 + 0.25 + 2^24
    // lie between the same two floats in every grouping.
    expect([16777312, 16777314]).toContain(got[0]);
    expect(got[1]).toBe(got[0]);
    expect([16777216, 16777218]).toContain(got[2]);
    expect([16777218, 16777220]).toContain(got[3]);
    // The reference's bound holds both groupings, and this backend's answer.
    const want = interpret(regroupCase, 1).oF?.[0];
    expect(want && Math.abs(16777312 - want.v) <= want.e && Math.abs(16777314 - want.v) <= want.e).toBe(true);
    expect(await runCase(ctx.device, regroupCase, 1)).toMatchObject({ status: 'pass' });
  });

  it('the generated kernels of fuzzer cases 40801 and 41139 agree with the reference', async () => {
    const sub = await probeSubgroups(ctx.device);
    for (const seed of [40801, 41139]) {
      const outcome = await runCase(ctx.device, generateCase(seed, optionsForSeed(seed)), sub.size);
      // WebGL2 refuses 41139's atomic or (class atomic-other), as it must: the device does not list the class.
      if (outcome.status === 'refused') expect(outcome.expected, `fuzzer case ${seed}: ${outcome.feature}`).toBe(true);
      else expect(outcome, `fuzzer case ${seed}`).toMatchObject({ status: 'pass' });
    }
  });
});

// Found while shrinking seed 85: the rejected pipeline stayed cached, and the second dispatch of the
// same kernel failed as a KernelExecutionError on an "invalid pipeline" instead of the KernelBuildError.
if (TEST_BACKENDS.includes('webgpu'))
  it('a kernel whose pipeline WebGPU rejected fails the same way when dispatched again', async () => {
    const device = await createDevice({ backend: 'webgpu' });
    try {
      // Hand-made IR that WGSL cannot type: a u32 variable initialised with an f32.
      const bad = kernelOf({
        name: 'fuzz_rejected_twice',
        workgroupSize: 1,
        workgroupShape: [1, 1, 1],
        privateArrays: [],
        params: [['out', { kind: 'buffer', dtype: 'u32', access: 'write', vector: 1 }]],
        workgroupArrays: [],
        vars: [{ id: 0, type: 'u32', name: 'v_0' }],
        body: [{ op: 'let', id: 0, type: 'u32', init: { op: 'const', type: 'f32', value: 1.5 } }],
      });
      const out = device.createBuffer('u32', 1);
      for (let attempt = 0; attempt < 2; attempt++) {
        let err: unknown;
        try {
          device.dispatch(bad, { workgroups: 1 }, { out } as never);
          await device.flush();
        } catch (e) {
          err = e;
        }
        expect(err, `attempt ${attempt}`).toBeInstanceOf(KernelBuildError);
      }
      // The device goes on.
      await expect(out.read()).resolves.toHaveLength(1);
    } finally {
      await device.destroy();
    }
  });
