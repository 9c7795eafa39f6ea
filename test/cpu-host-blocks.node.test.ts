/**
 * The CPU backend past its WebAssembly memory: buffers the heap has no room for get
 * host blocks of their own (packages/backend-cpu/src/host-blocks.ts) and the kernels
 * given one run as JavaScript. A lowered `heapMaxBytes` sends small buffers there, so
 * every algorithm runs here with some of its buffers on the heap and some in host
 * blocks, against the sequential references; plus buffer operations across the two
 * kinds, the budget (`maxTotalBufferBytes`) and its LimitExceededError('hostMemory').
 */
import {
  compact,
  compactReference,
  histogram,
  histogramReference,
  mergeSort,
  radixSort,
  reduce,
  reduceReference,
  scan,
  scanReference,
  sortReference,
  zcopy,
} from '@trident/algorithms';
import { type CpuBackendOptions, cpuAdapter } from '@trident/backend-cpu';
import {
  type Buffer,
  buffer,
  type CompiledKernel,
  Device,
  defineKernel,
  KernelExecutionError,
  LimitExceededError,
  uniform,
} from '@trident/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CpuBuffer } from '../packages/backend-cpu/src/cpu-buffer.ts';
import { kernelPath } from '../packages/backend-cpu/src/dispatch-choice.ts';
import { SharedHeap } from '../packages/backend-cpu/src/heap.ts';
import { DeviceMemory, type HostBlock, OutOfHostMemory } from '../packages/backend-cpu/src/host-blocks.ts';
import { expectBitsEqual } from './alg-helpers.ts';
import { randomU32 } from './harness.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

/** Whether a buffer lies in a host block (outside the device's WebAssembly memory). */
function inHostBlock(b: Buffer): boolean {
  return (b.impl as CpuBuffer).block !== undefined;
}

async function cpuDevice(options: CpuBackendOptions): Promise<Device> {
  return new Device(await cpuAdapter.create({ workers: 2, ...options }));
}

describe('DeviceMemory: heap first, host blocks past it, one budget', () => {
  it('places on the heap while it has room, then in host blocks; both zeroed', () => {
    const memory = new DeviceMemory(new SharedHeap(2 * 64 * KiB), 64 * MiB);
    const a = memory.place(100 * KiB);
    expect(a.block).toBeUndefined();
    // Past what is left of the 128 KiB heap: a block of its own, of the bytes asked (rounded to 16).
    const b = memory.place(100 * KiB + 4);
    expect(b.block?.bytes).toBe(100 * KiB + 16);
    expect(new Uint8Array(b.block?.buffer ?? new SharedArrayBuffer(0)).every((x) => x === 0)).toBe(true);
    expect(memory.heldBytes).toBe(100 * KiB + 100 * KiB + 16);
    // Small buffers still go on the heap.
    expect(memory.place(16).block).toBeUndefined();
  });

  it('refuses past the budget before allocating, keeps destroyed blocks for reuse (zeroed), drops them under pressure', () => {
    const dropped: HostBlock[] = [];
    const memory = new DeviceMemory(new SharedHeap(64 * KiB), 4 * MiB, (block) => dropped.push(block));
    const big = memory.place(3 * MiB);
    const block = big.block as HostBlock;
    expect(block).toBeDefined();
    new Uint32Array(block.buffer).fill(7);
    let err: unknown;
    try {
      memory.place(2 * MiB);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(OutOfHostMemory);
    expect((err as OutOfHostMemory).reason).toBe('budget');
    expect((err as OutOfHostMemory).allowed).toBe(MiB);
    expect(memory.heldBytes).toBe(3 * MiB);
    // Destroyed: kept, still charged; a buffer of about its size takes it back, zeroed.
    memory.release(big, 3 * MiB);
    expect(memory.keptBlocks).toBe(1);
    expect(memory.heldBytes).toBe(3 * MiB);
    const again = memory.place(3 * MiB - 64 * KiB);
    expect(again.block).toBe(block);
    expect(new Uint32Array(block.buffer).every((x) => x === 0)).toBe(true);
    memory.release(again, 3 * MiB - 64 * KiB);
    // A much smaller one does not take a kept block; one the kept block would not fit beside drops it.
    const small = memory.place(MiB);
    expect(small.block).not.toBe(block);
    expect(dropped).toEqual([]);
    memory.release(small, MiB);
    expect(memory.heldBytes).toBe(4 * MiB);
    const other = memory.place(2 * MiB);
    expect(dropped).toContain(block);
    expect(other.block?.bytes).toBe(2 * MiB);
    expect(memory.heldBytes).toBeLessThanOrEqual(4 * MiB);
  });

  it('the host refusing the heap its pages is a refusal, not a host block', () => {
    const memory = new DeviceMemory(new SharedHeap(4 * MiB), 64 * MiB);
    const grow = WebAssembly.Memory.prototype.grow;
    WebAssembly.Memory.prototype.grow = () => {
      throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
    };
    let err: unknown;
    try {
      memory.place(MiB);
    } catch (e) {
      err = e;
    } finally {
      WebAssembly.Memory.prototype.grow = grow;
    }
    expect(err).toBeInstanceOf(OutOfHostMemory);
    expect((err as OutOfHostMemory).reason).toBe('host');
    expect(memory.heldBytes).toBe(0);
  });

  it('kernelPath: WebAssembly only while every buffer is on the heap', () => {
    expect(kernelPath('wasm', false)).toBe('wasm');
    expect(kernelPath('wasm', true)).toBe('js');
    expect(kernelPath('js', false)).toBe('js');
    expect(kernelPath('js', true)).toBe('js');
  });
});

describe('caps and the budget on a device', () => {
  it('reports the budget as maxTotalBufferBytes and bounds one buffer by it', async () => {
    const d = await cpuDevice({ maxTotalBufferBytes: 4 * MiB, heapMaxBytes: 64 * KiB });
    try {
      expect(d.caps.limits.maxTotalBufferBytes).toBe(4 * MiB);
      expect(d.caps.limits.maxBufferElements).toBe(MiB);
      expect(d.caps.limits.maxStorageBufferBindingSize).toBe(4 * MiB);
      const a = d.createBuffer('u32', (3 * MiB) / 4);
      expect(inHostBlock(a)).toBe(true);
      let err: unknown;
      try {
        d.createBuffer('u32', (2 * MiB) / 4);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(LimitExceededError);
      expect((err as LimitExceededError).limit).toBe('hostMemory');
      // Nothing was taken by the refusal: what is left still fits.
      const b = d.createBuffer('u32', MiB / 4 - 64);
      b.write([5, 6, 7]);
      expect([...(await b.read({ length: 3 }))]).toEqual([5, 6, 7]);
    } finally {
      await d.destroy();
    }
  });

  it('defaults in Node: buffers past 4 GiB together, each up to 2^31 elements within the budget', async () => {
    const d = await cpuDevice({});
    try {
      const { maxTotalBufferBytes, maxBufferElements, maxStorageBufferBindingSize } = d.caps.limits;
      expect(maxTotalBufferBytes).toBeGreaterThan(0);
      expect(maxBufferElements).toBe(Math.min(2 ** 31, Math.floor(maxTotalBufferBytes / 4)));
      expect(maxStorageBufferBindingSize).toBe(maxBufferElements * 4);
    } finally {
      await d.destroy();
    }
  });

  it('refuses memory options that are not positive whole numbers of bytes', async () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      await expect(cpuAdapter.create({ workers: 1, maxTotalBufferBytes: bad })).rejects.toThrow(/maxTotalBufferBytes/);
      await expect(cpuAdapter.create({ workers: 1, heapMaxBytes: bad })).rejects.toThrow(/heapMaxBytes/);
    }
  });
});

/** out[i] = x[i] * 3 + 1: a kernel the device compiles to WebAssembly. */
const triple = defineKernel({
  name: 'host_block_triple',
  workgroupSize: 64,
  params: { x: buffer('u32', 'read'), out: buffer('u32', 'write'), n: uniform('u32') },
  body: ({ x, out, n }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(n), () => out.store(i, x.load(i).mul(3).add(1)));
  },
});

const paths = [
  { path: 'inline when small', inline: true },
  { path: 'workers only', inline: false },
] as const;

describe.each(paths)('buffers across the heap and host blocks ($path)', ({ inline }) => {
  let d: Device;
  /** Larger than the heap: a host block, written by the tests that need another one. */
  let ballast: Buffer;
  beforeAll(async () => {
    d = await cpuDevice({ inline, heapMaxBytes: 4 * 64 * KiB });
  });
  afterAll(() => d.destroy());

  it('a WebAssembly kernel given a host block runs its JavaScript, with the same results', async () => {
    const n = 20_000;
    const data = randomU32(n, 11);
    const onHeap = d.createBuffer('u32', data);
    const outHeap = d.createBuffer('u32', n);
    // Three of these fill most of the 256 KiB heap: the fourth gets a host block.
    const filler = d.createBuffer('u32', n);
    const outHost = d.createBuffer('u32', n);
    expect([onHeap, outHeap, filler, outHost].map(inHostBlock)).toEqual([false, false, false, true]);
    ballast = d.createBuffer('u32', 64 * KiB);
    expect(inHostBlock(ballast)).toBe(true);
    expect((d.compile(triple) as CompiledKernel & { path?: string }).path).toBe('wasm');
    d.dispatch(triple, { invocations: n }, { x: onHeap, out: outHeap, n });
    d.dispatch(triple, { invocations: n }, { x: onHeap, out: outHost, n });
    const want = data.map((v) => (v * 3 + 1) >>> 0);
    expectBitsEqual(await outHeap.read(), want, 'heap -> heap (wasm)');
    expectBitsEqual(await outHost.read(), want, 'heap -> host block (js)');
    // The same kernel back on heap buffers runs its WebAssembly again.
    d.dispatch(triple, { invocations: n }, { x: outHeap, out: onHeap, n });
    expectBitsEqual(
      await onHeap.read(),
      Uint32Array.from(want, (v) => (v * 3 + 1) >>> 0),
      'heap -> heap again',
    );
    for (const b of [onHeap, outHeap, filler, outHost]) b.destroy();
  });

  it('write, read, copy and fill within and between the two kinds, in stream order', async () => {
    const n = 5000;
    const heapBuf = d.createBuffer('u32', n);
    const hostA = d.createBuffer('u32', 70_000);
    const hostB = d.createBuffer('u32', 70_000);
    expect([inHostBlock(heapBuf), inHostBlock(hostA), inHostBlock(hostB)]).toEqual([false, true, true]);
    const data = randomU32(n, 5);
    heapBuf.write(data);
    d.copyBuffer(heapBuf, hostA, { dstOffset: 100 });
    d.copyBuffer(hostA, hostB, { srcOffset: 100, dstOffset: 60_000, length: n });
    hostA.fill(9, { offset: 1000, length: 10 });
    d.copyBuffer(hostA, heapBuf, { srcOffset: 995, length: 20 });
    // A write recorded behind pending commands applies after them.
    d.dispatch(triple, { invocations: 1 }, { x: hostB, out: hostA, n: 1 });
    hostA.write([42], 1);
    const a = await hostA.read({ offset: 0, length: n + 200 });
    const b = await hostB.read({ offset: 60_000, length: n });
    const h = await heapBuf.read();
    expect(a[0]).toBe(1);
    expect(a[1]).toBe(42);
    expect(a[99]).toBe(0);
    expect(a[100]).toBe(data[0]);
    expect(a[1005]).toBe(9);
    expect(a[1010]).toBe(data[910]);
    expectBitsEqual(b, data, 'host -> host copy');
    const wantHeap = data.slice();
    for (let i = 0; i < 20; i++) wantHeap[i] = i >= 5 && i < 15 ? 9 : (data[i + 895] as number);
    expectBitsEqual(h, wantHeap, 'host -> heap copy');
    const into = new Uint32Array(4);
    await hostB.read({ offset: 60_000, length: 4, into });
    expectBitsEqual(into, data.subarray(0, 4), 'read into');
    for (const x of [heapBuf, hostA, hostB]) x.destroy();
  });

  it('a destroyed host block is reused zeroed by the next buffer of its size', async () => {
    const a = d.createBuffer('u32', 80_000);
    a.fill(0xabcdef);
    d.dispatch(triple, { invocations: 64 * KiB }, { x: a, out: ballast, n: 64 * KiB });
    expect((await ballast.read({ length: 1 }))[0]).toBe((0xabcdef * 3 + 1) >>> 0);
    const block = (a.impl as CpuBuffer).block;
    expect(block).toBeDefined();
    a.destroy();
    const b = d.createBuffer('u32', 80_000);
    expect((b.impl as CpuBuffer).block).toBe(block);
    expect((await b.read()).every((x) => x === 0)).toBe(true);
    // The workers see the new buffer in the block they already hold.
    b.fill(2);
    d.dispatch(triple, { invocations: 64 * KiB }, { x: b, out: ballast, n: 64 * KiB });
    expect((await ballast.read({ offset: 64 * KiB - 1, length: 1 }))[0]).toBe(7);
    b.destroy();
  });
});

describe('the algorithms with buffers on the heap and in host blocks', () => {
  let d: Device;
  // Inputs of 1.2 MB pass a 1 MiB heap; their temporaries (chunk partials, histograms) stay on it.
  const n = 300_007;
  beforeAll(async () => {
    d = await cpuDevice({ heapMaxBytes: 16 * 64 * KiB });
  });
  afterAll(() => d.destroy());

  it('zcopy', async () => {
    const data = randomU32(n, 1);
    const x = d.createBuffer('u32', data);
    expect(inHostBlock(x)).toBe(true);
    const y = zcopy(d, x);
    expectBitsEqual(await y.read(), data, 'zcopy');
    x.destroy();
    y.destroy();
  });

  it('reduce (sum, min, max of u32 and i32)', async () => {
    const raw = randomU32(n, 2);
    for (const data of [raw, new Int32Array(raw.buffer.slice(0))]) {
      const x = d.createBuffer(data instanceof Int32Array ? 'i32' : 'u32', data);
      expect(inHostBlock(x)).toBe(true);
      for (const op of ['sum', 'min', 'max'] as const) expect(await reduce(d, x, { op }), op).toBe(reduceReference(data, op));
      x.destroy();
    }
  });

  it('scan (inclusive and exclusive)', async () => {
    const data = randomU32(n, 3);
    const x = d.createBuffer('u32', data);
    for (const exclusive of [false, true]) {
      const y = scan(d, x, { exclusive });
      expect(inHostBlock(y)).toBe(true);
      expectBitsEqual(await y.read(), scanReference(data, exclusive) as Uint32Array, `scan exclusive=${exclusive}`);
      y.destroy();
    }
    x.destroy();
  });

  it('histogram', async () => {
    const bins = 1000;
    const data = randomU32(n, 4).map((v) => v % (bins + 50));
    const x = d.createBuffer('u32', data);
    const h = histogram(d, x, { bins });
    expect(inHostBlock(h)).toBe(false);
    expectBitsEqual(await h.read(), histogramReference(data, bins), 'histogram');
    x.destroy();
    h.destroy();
  });

  it('compact', async () => {
    const data = randomU32(n, 5);
    const flags = randomU32(n, 6).map((v) => v & 1);
    const x = d.createBuffer('u32', data);
    const f = d.createBuffer('u32', flags);
    const { count, output } = await compact(d, x, f);
    const want = compactReference(data, flags);
    expect(count).toBe(want.length);
    expectBitsEqual(await output.read(), want, 'compact');
    for (const b of [x, f, output]) b.destroy();
  });

  it('radix sort (u32 keys; f32 keys with u32 values)', async () => {
    const keys = randomU32(n, 7);
    const k = d.createBuffer('u32', keys);
    const sorted = radixSort(d, k);
    expectBitsEqual(await sorted.keys.read(), sortReference(keys).keys, 'radix keys');
    const fkeys = Float32Array.from(randomU32(n, 8), (v) => (v / 2 ** 32 - 0.5) * 1e6);
    fkeys[17] = -0;
    fkeys[18] = Number.NaN;
    const values = randomU32(n, 9);
    const fk = d.createBuffer('f32', fkeys);
    const v = d.createBuffer('u32', values);
    const pairs = radixSort(d, fk, { values: v });
    const want = sortReference(fkeys, values);
    expectBitsEqual(await pairs.keys.read(), want.keys, 'radix f32 keys');
    expectBitsEqual(await (pairs.values as Buffer<'u32'>).read(), want.values as Uint32Array, 'radix values');
    for (const b of [k, sorted.keys, fk, v, pairs.keys, pairs.values as Buffer]) b.destroy();
  });

  it('merge sort (u32 keys)', async () => {
    const m = 70_001;
    const keys = randomU32(m, 10);
    const k = d.createBuffer('u32', keys);
    const sorted = mergeSort(d, k);
    expect(inHostBlock(sorted.keys)).toBe(false);
    expectBitsEqual(await sorted.keys.read(), sortReference(keys).keys, 'merge sort');
    k.destroy();
    sorted.keys.destroy();
  });
});

describe('workers replaced mid-run get the host blocks again', () => {
  it('a batch stopped by the time limit, then a kernel over a host block on the new workers', async () => {
    const d = await cpuDevice({ inline: false, timeLimitMs: 300, heapMaxBytes: 64 * KiB });
    try {
      const n = 40_000;
      const data = randomU32(n, 12);
      const x = d.createBuffer('u32', data);
      const y = d.createBuffer('u32', n);
      expect(inHostBlock(x) && inHostBlock(y)).toBe(true);
      d.dispatch(triple, { invocations: n }, { x, out: y, n });
      await d.flush();
      const spin = defineKernel({
        name: 'host_block_spin',
        workgroupSize: 1,
        params: { z: buffer('u32', 'read_write') },
        body: ({ z }, k) =>
          k.while(
            () => z.load(0).eq(z.load(0)),
            () => z.store(1, z.load(1).add(1)),
          ),
      });
      // Its own host block: the stopped workers may still write it while they are being terminated.
      const z = d.createBuffer('u32', 20_000);
      expect(inHostBlock(z)).toBe(true);
      d.dispatch(spin, { workgroups: 2 }, { z });
      await expect(d.flush()).rejects.toBeInstanceOf(KernelExecutionError);
      y.fill(0);
      d.dispatch(triple, { invocations: n }, { x, out: y, n });
      expectBitsEqual(
        await y.read(),
        Uint32Array.from(data, (v) => (v * 3 + 1) >>> 0),
        'after the restart',
      );
    } finally {
      await d.destroy();
    }
  });
});
