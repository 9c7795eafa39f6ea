/**
 * Regression tests for what the differential fuzzer (test/fuzz) found, each
 * shrunk to a small kernel written with the builder, on every backend, against
 * values worked out by hand from the IR's semantics (packages/core/src/ir/nodes.ts).
 */
import { createDevice, type Device, type Kernel, KernelBuildError } from 'trident';
import { expect, it } from 'vitest';
import { kernelOf } from './fuzz/differential.ts';
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
