/**
 * Whether a kernel may bind as many storage buffers as the device's maxBuffersPerKernel says
 * (the H100's radix pairs at 2^31 failed with an invalid bind group in a values scatter that
 * binds exactly that many): the raw WebGPU limits, kernels binding limit - 1 and limit plain
 * buffers, and a key-value radix sort on 4 KiB bindings whose split values scatter binds
 * exactly the limit (five segments an array on the H100's 16), checked against the reference.
 *
 *   node .gpu/binding-check.mjs   (after bash bench/h100/run.sh pack)
 */
import { radixSort, sortReference } from '@trident/algorithms';
import type { WebGpuDevice } from '@trident/backend-webgpu';
import { buffer, createDevice, type Device, defineKernel, type ParamDecl } from 'trident';

const report = (what: string, result: unknown) => console.log(JSON.stringify({ what, result }));
const attempt = async (what: string, run: () => Promise<unknown>) => {
  try {
    report(what, await run());
  } catch (e) {
    report(what, `${(e as Error).name}: ${(e as Error).message}`.slice(0, 600));
  }
};

const device = await createDevice({ backend: 'webgpu' });
const limits = (device.impl as unknown as WebGpuDevice).gpu.limits;
const limit = device.caps.limits.maxBuffersPerKernel;
report('limits', {
  maxBuffersPerKernel: limit,
  maxStorageBuffersPerShaderStage: limits.maxStorageBuffersPerShaderStage,
  maxStorageBuffersInComputeStage: (limits as unknown as Record<string, unknown>).maxStorageBuffersInComputeStage,
  maxBindingsPerBindGroup: limits.maxBindingsPerBindGroup,
  maxUniformBuffersPerShaderStage: limits.maxUniformBuffersPerShaderStage,
});
for (const m of [limit - 1, limit]) {
  await attempt(`a kernel binding ${m} buffers`, async () => {
    const params: Record<string, ParamDecl> = {};
    for (let b = 0; b < m; b++) params[`b${b}`] = buffer('u32', 'read_write');
    const k = defineKernel({
      name: `bind_${m}`,
      workgroupSize: 1,
      params,
      body: (p, k) => {
        for (let b = 0; b < m; b++) (p as Record<string, { store(i: number, v: number): void }>)[`b${b}`]?.store(0, b + 1);
        void k;
      },
    });
    const bufs = Object.fromEntries(Array.from({ length: m }, (_, b) => [`b${b}`, device.createBuffer('u32', 1)]));
    device.dispatch(k, { invocations: 1 }, bufs as never);
    const got = await Promise.all(Object.values(bufs).map(async (b) => (await b.read())[0]));
    return got.every((v, b) => v === b + 1) ? 'ok' : `wrong: ${got.join(',')}`;
  });
}
await device.destroy();

const small: Device = await createDevice({ backend: 'webgpu', options: { webgpu: { maxStorageBufferBindingSize: 4096 } } });
const S = Math.floor((4096 - 16) / 48) * 12;
const k = Math.floor((limit - 1) / 3);
const n = (k - 1) * S + 50;
await attempt(`radix pairs, ${k} segments an array (values scatter: ${3 * k + 1} bindings)`, async () => {
  const keys = Uint32Array.from({ length: n }, (_, i) => (Math.imul(i, 2654435761) >>> 7) & 0x3ff);
  const values = Uint32Array.from({ length: n }, (_, i) => i);
  const out = radixSort(small, small.createBuffer('u32', keys), { values: small.createBuffer('u32', values) });
  const want = sortReference(keys, values);
  const gotKeys = await out.keys.read();
  const gotValues = await (out.values as NonNullable<typeof out.values>).read();
  const same = (a: ArrayLike<number>, b: ArrayLike<number>) => a.length === b.length && Array.from(a).every((x, i) => x === b[i]);
  return same(gotKeys, want.keys) && same(gotValues, want.values as Uint32Array) ? 'ok' : 'wrong result';
});
await small.destroy();
process.exit(0);
