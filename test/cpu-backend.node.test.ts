/** CPU-backend specifics: worker pool behaviour, failures inside workers, phase splitting limits. */
import { cpuAdapter } from '@trident/backend-cpu';
import { buffer, type CompiledKernel, Device, defineKernel, generateJs, KernelExecutionError, uniform } from '@trident/core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomU32 } from './harness.ts';

let device: Device;
beforeAll(async () => {
  device = new Device(await cpuAdapter.create({ workers: 2 }));
});
afterAll(() => device.destroy());

const sum = defineKernel({
  name: 'cpu_sum_chunks',
  workgroupSize: 4,
  params: { x: buffer('u32', 'read'), out: buffer('u32', 'atomic'), perInvocation: uniform('u32') },
  body: ({ x, out, perInvocation }, k) => {
    const acc = k.var('u32', 0, 'acc');
    const start = k.let(k.globalIndex.mul(perInvocation));
    k.for({ from: start, to: start.add(perInvocation) }, (i) => acc.set(acc.add(x.load(i))));
    out.atomicAdd(0, acc);
  },
});

it('gives bit-identical integer results for 1 and 2 workers and the sequential sum', async () => {
  const data = randomU32(100_003, 1);
  const expected = data.reduce((a, v) => (a + v) >>> 0, 0);
  const one = new Device(await cpuAdapter.create({ workers: 1 }));
  for (const d of [one, device]) {
    const x = d.createBuffer('u32', data);
    const out = d.createBuffer('u32', 1);
    d.dispatch(sum, { workgroups: 25 }, { x, out, perInvocation: 1001 });
    expect((await out.read())[0]).toBe(expected);
  }
  expect(one.caps.concurrency).toBe(1);
  expect(device.caps.concurrency).toBe(2);
  await one.destroy();
});

it('surfaces a failure inside a worker as KernelExecutionError and stays usable', async () => {
  const x = device.createBuffer('u32', [1, 2, 3]);
  const out = device.createBuffer('u32', 1);
  const good = device.compile(sum);
  // A kernel whose generated code throws: only reachable through the backend interface.
  const broken: CompiledKernel & { id: string } = { kernel: sum, source: '(() => { throw new Error("boom"); })()', id: 'broken#1' };
  device.impl.dispatch(broken, [2, 1, 1], new Map<string, never>());
  const err = await device.flush().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(KernelExecutionError);
  expect((err as KernelExecutionError).kernel).toBe('cpu_sum_chunks');
  expect((err as Error).message).toContain('boom');
  device.dispatch(sum, { workgroups: 1 }, { x, out, perInvocation: 1 });
  expect((await out.read())[0]).toBe(6);
  expect(good.source).toContain('cpu_sum_chunks');
});

it('phase-splits a loop with a barrier that continue and break leave under uniform conditions', async () => {
  // The break condition reads a read-only buffer at a uniform index: uniform, so allowed.
  const k = defineKernel({
    name: 'cpu_break_barrier',
    workgroupSize: 8,
    params: { stop: buffer('u32', 'read'), y: buffer('u32', 'write') },
    body: ({ stop, y }, k) => {
      const shared = k.workgroupArray('u32', 8);
      const i = k.var('u32', 0);
      const total = k.var('u32', 0);
      k.while(
        () => i.lt(100),
        () => {
          i.set(i.add(1));
          k.if(i.eq(2), () => k.continue());
          shared.store(k.localIndex, k.localIndex.mul(i));
          k.barrier();
          total.set(total.add(shared.load(k.localIndex.add(1).rem(8))));
          k.barrier();
          k.if(i.ge(stop.load(0)), () => k.break());
        },
      );
      y.store(k.globalIndex, total);
    },
  });
  const stop = device.createBuffer('u32', [4]);
  const y = device.createBuffer('u32', 16);
  device.dispatch(k, { workgroups: 2 }, { stop, y });
  const want = Array.from({ length: 16 }, (_, g) => {
    const next = ((g % 8) + 1) % 8;
    return [1, 3, 4].reduce((t, i) => t + next * i, 0);
  });
  expect([...(await y.read())]).toEqual(want);
  expect(generateJs(k).source).toContain('cpu_break_barrier');
});

it('keeps per-invocation state across barriers and honours early return', async () => {
  // Invocations with odd index return before the barrier; the rest still synchronise.
  const k = defineKernel({
    name: 'cpu_return_barrier',
    workgroupSize: 16,
    params: { y: buffer('u32', 'write') },
    body: ({ y }, k) => {
      const shared = k.workgroupArray('u32', 16);
      const lid = k.localIndex;
      const mine = k.let(lid.mul(10));
      shared.store(lid, mine);
      k.barrier();
      k.if(lid.rem(2).eq(1), () => k.return());
      k.barrier();
      y.store(k.globalIndex, shared.load(lid.add(1).rem(16)).add(mine));
    },
  });
  const y = device.createBuffer('u32', new Uint32Array(32).fill(99));
  device.dispatch(k, { workgroups: 2 }, { y });
  const expected = Array.from({ length: 32 }, (_, g) => {
    const lid = g % 16;
    return lid % 2 === 1 ? 99 : ((lid + 1) % 16) * 10 + lid * 10;
  });
  expect(Array.from(await y.read())).toEqual(expected);
});
