/** CPU-backend specifics: worker pool behaviour, failures inside workers, phase splitting limits. */
import { cpuAdapter } from '@trident/backend-cpu';
import { generateJs } from '@trident/backend-cpu/internal';
import { buffer, type CompiledKernel, Device, defineKernel, KernelExecutionError, uniform } from '@trident/core';
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

// Both paths: dispatches small enough run on the calling thread; `inline: false` sends all to the workers.
const paths = [
  { path: 'inline when small', inline: true },
  { path: 'workers only', inline: false },
] as const;

it.each(paths)('surfaces a failure inside a kernel as KernelExecutionError and stays usable ($path)', async ({ inline }) => {
  const d = new Device(await cpuAdapter.create({ workers: 2, inline }));
  const x = d.createBuffer('u32', [1, 2, 3]);
  const out = d.createBuffer('u32', 1);
  const good = d.compile(sum);
  // A kernel whose generated code throws: only reachable through the backend interface.
  const broken: CompiledKernel & { id: number } = { kernel: sum, source: '(() => { throw new Error("boom"); })()', id: -1 };
  d.impl.dispatch(broken, [2, 1, 1], new Map<string, never>());
  const err = await d.flush().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(KernelExecutionError);
  expect((err as KernelExecutionError).kernel).toBe('cpu_sum_chunks');
  expect((err as Error).message).toContain('boom');
  d.dispatch(sum, { workgroups: 1 }, { x, out, perInvocation: 1 });
  expect((await out.read())[0]).toBe(6);
  expect(good.source).toContain('cpu_sum_chunks');
  await d.destroy();
});

const neighbours = defineKernel({
  name: 'cpu_neighbours',
  workgroupSize: 64,
  params: { src: buffer('u32', 'read'), dst: buffer('u32', 'write'), n: uniform('u32') },
  body: ({ src, dst, n }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(n), () => dst.store(i, src.load(i).add(src.load(i.add(1).rem(n)))));
  },
});

it.each(paths)('keeps stream order across a flushed batch of dependent dispatches ($path)', async ({ inline }) => {
  // Each dispatch reads its neighbour's element written by the previous one, in another worker's slice:
  // a missing join between dispatches changes the result.
  const d = new Device(await cpuAdapter.create({ workers: 2, inline }));
  const n = 1000;
  const init = randomU32(n, 7);
  const a = d.createBuffer('u32', init);
  const b = d.createBuffer('u32', n);
  const steps = 40;
  for (let s = 0; s < steps; s++)
    d.dispatch(neighbours, { workgroups: Math.ceil(n / 64) }, s % 2 ? { src: b, dst: a, n } : { src: a, dst: b, n });
  const got = await (steps % 2 ? b : a).read();
  let want = Uint32Array.from(init);
  for (let s = 0; s < steps; s++) want = want.map((v, i) => (v + (want[(i + 1) % n] as number)) >>> 0);
  expect(Array.from(got)).toEqual(Array.from(want));
  await d.destroy();
});

it('stops a worker batch at the first failing dispatch: later ones do not run', async () => {
  const d = new Device(await cpuAdapter.create({ workers: 2, inline: false }));
  const x = d.createBuffer('u32', [5]);
  const out = d.createBuffer('u32', [0]);
  const broken: CompiledKernel & { id: number } = { kernel: sum, source: '(() => () => { throw new Error("mid-batch"); })()', id: -2 };
  d.dispatch(sum, { workgroups: 1 }, { x, out, perInvocation: 1 });
  d.impl.dispatch(broken, [4, 1, 1], new Map<string, never>());
  d.dispatch(sum, { workgroups: 1 }, { x, out, perInvocation: 1 });
  const err = await d.flush().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(KernelExecutionError);
  expect((err as Error).message).toContain('mid-batch');
  // The first sum ran, the one after the failure did not.
  expect((await out.read())[0]).toBe(5);
  await d.destroy();
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

it('turns a worker that dies mid-dispatch into KernelExecutionError and replaces the pool', async () => {
  const d = new Device(await cpuAdapter.create({ workers: 2, inline: false }));
  const x = d.createBuffer('u32', [2, 3]);
  const out = d.createBuffer('u32', [0]);
  // Ends the worker thread that runs it (not the process): as if the worker were killed.
  const dying: CompiledKernel & { id: number } = { kernel: sum, source: '(() => () => { process.exit(3); })()', id: -3 };
  d.impl.dispatch(dying, [2, 1, 1], new Map<string, never>());
  const err = await d.flush().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(KernelExecutionError);
  expect((err as Error).message).toContain('died');
  // Fresh workers run the next dispatches (the buffers and kernels are registered with them again).
  d.dispatch(sum, { workgroups: 2 }, { x, out, perInvocation: 1 });
  expect((await out.read())[0]).toBe(5);
  await d.destroy();
});

it('stops a kernel that never ends at the time limit with KernelExecutionError, and stays usable', async () => {
  const forever = defineKernel({
    name: 'cpu_forever',
    workgroupSize: 4,
    params: { flag: buffer('u32', 'read'), y: buffer('u32', 'write') },
    body: ({ flag, y }, k) => {
      const i = k.var('u32', 0, 'i');
      k.while(
        () => flag.load(0).eq(0),
        () => i.set(i.add(1)),
      );
      y.store(k.globalIndex, i);
    },
  });
  const d = new Device(await cpuAdapter.create({ workers: 2, timeLimitMs: 300 }));
  try {
    const flag = d.createBuffer('u32', [0]);
    const y = d.createBuffer('u32', 8);
    const started = performance.now();
    d.dispatch(forever, { workgroups: 2 }, { flag, y });
    const err = await d.flush().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KernelExecutionError);
    expect((err as KernelExecutionError).kernel).toBe('cpu_forever');
    expect((err as Error).message).toMatch(/time limit of 300 ms/);
    expect(performance.now() - started).toBeLessThan(30_000);
    // Fresh workers take over: the same buffers, a kernel that ends.
    const x = d.createBuffer('u32', [1, 2, 3, 4]);
    const out = d.createBuffer('u32', 1);
    d.dispatch(sum, { workgroups: 1 }, { x, out, perInvocation: 1 });
    expect((await out.read())[0]).toBe(10);
  } finally {
    await d.destroy();
  }
  await expect(cpuAdapter.create({ workers: 2, timeLimitMs: -1 })).rejects.toThrow(/timeLimitMs/);
});
