/**
 * The CPU backend's WebAssembly path (backend-cpu codegen/wasm-generator.ts): the kernels it
 * takes, the ones it leaves to the generated JavaScript, and the rules where
 * WebAssembly and JavaScript differ, checked against the JavaScript path on the
 * same device kind (`wasm: false`) and against the fuzzer's reference interpreter.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cpuAdapter } from '@trident/backend-cpu';
import { generateWasm } from '@trident/backend-cpu/internal';
import { buffer, type CompiledKernel, Device, defineKernel, fma, type Kernel, max, min, uniform } from '@trident/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeapFull, SharedHeap, zeroShared } from '../packages/backend-cpu/src/heap.ts';
import { kernelOf, probeSubgroups, runCase } from './fuzz/differential.ts';
import { generateCase, optionsForSeed } from './fuzz/generate.ts';

let wasm: Device;
let js: Device;
beforeAll(async () => {
  wasm = new Device(await cpuAdapter.create({ workers: 2, wasm: true }));
  js = new Device(await cpuAdapter.create({ workers: 2, wasm: false }));
});
afterAll(async () => {
  await wasm.destroy();
  await js.destroy();
});

const pathOf = (d: Device, k: Kernel): string | undefined => (d.compile(k) as CompiledKernel & { path?: string }).path;

describe('differential fuzzing with the WebAssembly path', () => {
  it('runs most random kernels as WebAssembly, every one agreeing with the reference interpreter', async () => {
    const sub = await probeSubgroups(wasm);
    const tally = { wasm: 0, js: 0, pass: 0, other: [] as string[] };
    for (let seed = 1; seed <= 120; seed++) {
      const c = generateCase(seed, optionsForSeed(seed));
      const path = pathOf(wasm, kernelOf(c.ir));
      tally[path === 'wasm' ? 'wasm' : 'js']++;
      const outcome = await runCase(wasm, c, sub.size);
      if (outcome.status === 'pass') tally.pass++;
      else if (outcome.status !== 'undecidable') tally.other.push(`seed ${seed}: ${JSON.stringify(outcome)}`);
    }
    expect(tally.other).toEqual([]);
    // Not vacuous: the cases ran as WebAssembly, and were compared.
    expect(tally.wasm).toBeGreaterThan(90);
    expect(tally.pass).toBeGreaterThan(100);
  });

  it('the JavaScript path (wasm: false), which the default device now takes only for barrier kernels, agrees on the same seeds', async () => {
    const sub = await probeSubgroups(js);
    const failures: string[] = [];
    let pass = 0;
    for (let seed = 1; seed <= 120; seed++) {
      const c = generateCase(seed, optionsForSeed(seed));
      expect(pathOf(js, kernelOf(c.ir))).toBe('js');
      const outcome = await runCase(js, c, sub.size);
      if (outcome.status === 'pass') pass++;
      else if (outcome.status !== 'undecidable') failures.push(`seed ${seed}: ${JSON.stringify(outcome)}`);
    }
    expect(failures).toEqual([]);
    expect(pass).toBeGreaterThan(100);
  });
});

const I32_MIN = -0x80000000;

/** Runs a one-workgroup kernel on both devices and returns both outputs. */
async function both(
  k: Kernel,
  inputs: Record<string, Uint32Array | Int32Array | Float32Array>,
  outLength: number,
  outType: 'u32' | 'i32' | 'f32',
) {
  const results: Array<Uint32Array | Int32Array | Float32Array> = [];
  for (const d of [wasm, js]) {
    const args: Record<string, unknown> = {};
    for (const [name, data] of Object.entries(inputs))
      args[name] = d.createBuffer(data instanceof Float32Array ? 'f32' : data instanceof Int32Array ? 'i32' : 'u32', data);
    const out = d.createBuffer(outType, outLength);
    d.dispatch(k, { workgroups: 1 }, { ...args, out } as never);
    results.push(await out.read());
  }
  return results as [Uint32Array | Int32Array | Float32Array, Uint32Array | Int32Array | Float32Array];
}

describe('rules where WebAssembly and JavaScript differ', () => {
  it('integer division and remainder by zero, and i32 MIN / -1', async () => {
    const k = defineKernel({
      name: 'wasm_divrem',
      workgroupSize: 8,
      params: {
        a: buffer('i32', 'read'),
        b: buffer('i32', 'read'),
        ua: buffer('u32', 'read'),
        ub: buffer('u32', 'read'),
        out: buffer('u32', 'write'),
      },
      body: ({ a, b, ua, ub, out }, k) => {
        const i = k.let(k.localIndex);
        out.store(i.mul(4), a.load(i).div(b.load(i)).bitcast('u32'));
        out.store(i.mul(4).add(1), a.load(i).rem(b.load(i)).bitcast('u32'));
        out.store(i.mul(4).add(2), ua.load(i).div(ub.load(i)));
        out.store(i.mul(4).add(3), ua.load(i).rem(ub.load(i)));
      },
    });
    expect(pathOf(wasm, k)).toBe('wasm');
    const a = new Int32Array([7, -7, I32_MIN, I32_MIN, 5, 0, -1, 123456789]);
    const b = new Int32Array([0, 2, -1, 1, -3, 0, 0, -10]);
    const ua = new Uint32Array([7, 0xffffffff, 0x80000000, 0, 5, 9, 1, 100]);
    const ub = new Uint32Array([0, 2, 0xffffffff, 0, 0, 3, 1, 7]);
    const [w, j] = await both(k, { a, b, ua, ub }, 32, 'u32');
    expect([...w]).toEqual([...j]);
    // The IR's rules, spelled out: x / 0 = x, x % 0 = 0, MIN / -1 = MIN, MIN % -1 = 0.
    expect([w[0], w[1], w[2], w[3]]).toEqual([7, 0, 7, 0]);
    expect(w[8]).toBe(0x80000000);
    expect(w[9]).toBe(0);
  });

  it('f32 -> u32/i32 truncate and saturate, NaN -> 0; bit casts keep bits', async () => {
    const k = defineKernel({
      name: 'wasm_convert',
      workgroupSize: 8,
      params: { x: buffer('f32', 'read'), out: buffer('u32', 'write') },
      body: ({ x, out }, k) => {
        const i = k.let(k.localIndex);
        const v = k.let(x.load(i));
        out.store(i.mul(3), v.cast('u32'));
        out.store(i.mul(3).add(1), v.cast('i32').bitcast('u32'));
        out.store(i.mul(3).add(2), v.bitcast('u32'));
      },
    });
    expect(pathOf(wasm, k)).toBe('wasm');
    const x = new Float32Array([Number.NaN, -1.5, 3.9, 5e9, -5e9, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0]);
    const [w, j] = await both(k, { x }, 24, 'u32');
    expect([...w]).toEqual([...j]);
    expect([w[0], w[1]]).toEqual([0, 0]);
    expect([w[9], w[10]]).toEqual([0xffffffff, 0x7fffffff]);
    expect([w[12], w[13]]).toEqual([0, 0x80000000]);
  });

  it('out-of-range loads give 0 and stores there do nothing (negative i32 indices included)', async () => {
    const k = defineKernel({
      name: 'wasm_oob',
      workgroupSize: 8,
      params: { x: buffer('u32', 'read'), out: buffer('u32', 'write'), off: uniform('i32') },
      body: ({ x, out, off }, k) => {
        const i = k.let(k.localIndex.cast('i32').add(off));
        out.store(k.localIndex, x.load(i) as never);
        out.store(i.add(100), 77);
      },
    });
    expect(pathOf(wasm, k)).toBe('wasm');
    for (const d of [wasm, js]) {
      const x = d.createBuffer('u32', [10, 11, 12, 13]);
      const out = d.createBuffer('u32', 8);
      d.dispatch(k, { workgroups: 1 }, { x, out, off: -2 });
      expect([...(await out.read())]).toEqual([0, 0, 10, 11, 12, 13, 0, 0]);
    }
  });

  it('f32 min/max propagate NaN and order -0 below +0, as Math.min/Math.max; fma rounds once from f64', async () => {
    const k = defineKernel({
      name: 'wasm_minmax',
      workgroupSize: 6,
      params: { a: buffer('f32', 'read'), b: buffer('f32', 'read'), out: buffer('f32', 'write') },
      body: ({ a, b, out }, k) => {
        const i = k.let(k.localIndex);
        const x = k.let(a.load(i));
        const y = k.let(b.load(i));
        out.store(i.mul(3), min(x, y));
        out.store(i.mul(3).add(1), max(x, y));
        out.store(i.mul(3).add(2), fma(x, y, x));
      },
    });
    expect(pathOf(wasm, k)).toBe('wasm');
    const a = new Float32Array([Number.NaN, 1, -0, 0, 1.0000001, 3]);
    const b = new Float32Array([1, Number.NaN, 0, -0, 0.9999999, 1e-8]);
    const [w, j] = await both(k, { a, b }, 18, 'f32');
    expect([...w].map((v) => (Object.is(v, -0) ? '-0' : String(v)))).toEqual([...j].map((v) => (Object.is(v, -0) ? '-0' : String(v))));
    expect(Number.isNaN(w[0])).toBe(true);
    expect(Number.isNaN(w[4])).toBe(true);
    expect(Object.is(w[6], -0)).toBe(true);
    expect(Object.is(w[7], 0)).toBe(true);
    expect(Object.is(w[9], -0)).toBe(true);
    expect(Object.is(w[10], 0)).toBe(true);
  });
});

describe('kernels outside the WebAssembly subset run as JavaScript', () => {
  it('a kernel with a barrier and workgroup memory', async () => {
    const k = defineKernel({
      name: 'wasm_fallback_barrier',
      workgroupSize: 4,
      params: { x: buffer('u32', 'read'), out: buffer('u32', 'write') },
      body: ({ x, out }, k) => {
        const tile = k.workgroupArray('u32', 4);
        tile.store(k.localIndex, x.load(k.globalIndex));
        k.barrier();
        out.store(k.globalIndex, tile.load(k.localIndex.xor(1)));
      },
    });
    const compiled = wasm.compile(k) as CompiledKernel & { path?: string; fallback?: string };
    expect(compiled.path).toBe('js');
    expect(compiled.fallback).toMatch(/barrier/);
    expect(generateWasm(k).reason).toMatch(/barrier/);
    const x = wasm.createBuffer('u32', [1, 2, 3, 4, 5, 6, 7, 8]);
    const out = wasm.createBuffer('u32', 8);
    wasm.dispatch(k, { workgroups: 2 }, { x, out });
    expect([...(await out.read())]).toEqual([2, 1, 4, 3, 6, 5, 8, 7]);
  });

  it('every kernel when the option says wasm: false', () => {
    const k = defineKernel({
      name: 'wasm_off',
      workgroupSize: 1,
      params: { out: buffer('u32', 'write') },
      body: ({ out }) => out.store(0, 1),
    });
    expect(pathOf(js, k)).toBe('js');
    expect(pathOf(wasm, k)).toBe('wasm');
    expect(js.info.details.wasm).toBe(false);
    expect(wasm.info.details.wasm).toBe(true);
  });
});

describe("the device's memory (heap.ts)", () => {
  it('allocates 16-byte aligned blocks, reuses freed ones zeroed, and coalesces neighbours', () => {
    const heap = new SharedHeap(2 ** 28);
    const a = heap.alloc(4);
    const b = heap.alloc(100);
    const c = heap.alloc(64);
    for (const o of [a, b, c]) expect(o % 16).toBe(0);
    expect(b - a).toBe(16);
    expect(c - b).toBe(112);
    new Uint8Array(heap.memory.buffer, b, 100).fill(7);
    heap.release(b, 100);
    // First fit: the freed block, zeroed again.
    const d = heap.alloc(50);
    expect(d).toBe(b);
    expect(new Uint8Array(heap.memory.buffer, d, 64).every((x) => x === 0)).toBe(true);
    heap.release(d, 50);
    heap.release(a, 4);
    // a and b's block coalesced: 128 bytes at a.
    expect(heap.alloc(128)).toBe(a);
    heap.release(a, 128);
    heap.release(c, 64);
    // Everything free: the next block starts at 0 again.
    expect(heap.alloc(16)).toBe(0);
  });

  it('zeroShared zeroes exactly its range, eight bytes a store where aligned, byte by byte elsewhere', () => {
    const memory = new SharedArrayBuffer(256);
    const bytes = new Uint8Array(memory);
    for (const [offset, length] of [
      [16, 64],
      [3, 29],
      [8, 1],
    ] as const) {
      bytes.fill(0xab);
      zeroShared(memory, offset, length);
      for (let i = 0; i < bytes.length; i++)
        expect(bytes[i], `byte ${i} of [${offset}, +${length})`).toBe(i >= offset && i < offset + length ? 0 : 0xab);
    }
  });

  it('grows the memory for new blocks and throws HeapFull past its maximum', () => {
    const heap = new SharedHeap(2 ** 28);
    expect(heap.maxBytes).toBe(2 ** 28);
    const big = heap.alloc(2 ** 27);
    expect(heap.byteLength).toBeGreaterThanOrEqual(big + 2 ** 27);
    let err: unknown;
    try {
      heap.alloc(2 ** 27 + 16);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HeapFull);
    expect((err as HeapFull).hostRefused).toBe(false);
    expect((err as HeapFull).available).toBe(2 ** 28 - 2 ** 27);
  });

  it('views made before a growth stay valid; buffers made after it are reachable by workers', async () => {
    const d = new Device(await cpuAdapter.create({ workers: 2, inline: false }));
    const k = defineKernel({
      name: 'wasm_grow_copy',
      workgroupSize: 64,
      params: { x: buffer('u32', 'read'), y: buffer('u32', 'write') },
      body: ({ x, y }, k) => y.store(k.globalIndex, x.load(k.globalIndex).add(1)),
    });
    const small = d.createBuffer('u32', [1, 2, 3, 4]);
    const out1 = d.createBuffer('u32', 4);
    d.dispatch(k, { invocations: 4 }, { x: small, y: out1 });
    await d.flush();
    // Past the first pages: the memory grows, the workers must see the new bytes.
    const n = 1 << 20;
    const big = d.createBuffer(
      'u32',
      new Uint32Array(n).map((_, i) => i),
    );
    const out2 = d.createBuffer('u32', n);
    d.dispatch(k, { invocations: n }, { x: big, y: out2 });
    d.dispatch(k, { invocations: 4 }, { x: small, y: out1 });
    const r = await out2.read();
    expect(r[0]).toBe(1);
    expect(r[n - 1]).toBe(n);
    expect([...(await out1.read())]).toEqual([2, 3, 4, 5]);
    await d.destroy();
  });
});

describe('private arrays on the WebAssembly path', () => {
  it('each worker and the calling thread use their own block: results equal the JavaScript path', async () => {
    const k = defineKernel({
      name: 'wasm_private_workers',
      workgroupSize: 16,
      params: { x: buffer('u32', 'read'), out: buffer('u32', 'write'), n: uniform('u32') },
      body: ({ x, out, n }, k) => {
        const g = k.let(k.globalIndex);
        const bins = k.privateArray('u32', 16);
        k.for({ from: 0, to: 32 }, (j) => {
          const b = k.let(x.load(g.add(j).rem(n)).and(15));
          bins.store(b, bins.load(b).add(j));
        });
        const acc = k.var('u32', 0, 'acc');
        k.for({ from: 0, to: 16 }, (b) => acc.set(acc.mul(31).add(bins.load(b))));
        out.store(g, acc);
      },
    });
    expect(pathOf(wasm, k)).toBe('wasm');
    const n = 4096;
    const data = new Uint32Array(n).map((_, i) => Math.imul(i, 2654435761) >>> 0);
    const results: Uint32Array[] = [];
    for (const d of [wasm, js]) {
      const x = d.createBuffer('u32', data);
      const out = d.createBuffer('u32', n);
      // Twice: the second run may go inline (the calling thread's block), the first runs on the workers.
      d.dispatch(k, { invocations: n }, { x, out, n });
      await d.flush();
      d.dispatch(k, { invocations: n }, { x, out, n });
      results.push(await out.read());
    }
    expect([...(results[0] as Uint32Array)]).toEqual([...(results[1] as Uint32Array)]);
  });
});

describe('buffer cycles', () => {
  it("destroyed buffers' blocks are reused: 2000 create/write/read/destroy cycles do not grow the device's memory", async () => {
    const d = new Device(await cpuAdapter.create({ workers: 2 }));
    const memoryBytes = (b: { impl: unknown }) => (b.impl as { view: Uint32Array }).view.buffer.byteLength;
    const first = d.createBuffer('u32', 1024);
    const start = memoryBytes(first);
    first.destroy();
    let last = start;
    for (let i = 0; i < 2000; i++) {
      const b = d.createBuffer('u32', new Uint32Array(1024).fill(i));
      // A reused block holds what was written to it.
      if (i % 500 === 0) expect((await b.read())[1023]).toBe(i);
      last = memoryBytes(b);
      b.destroy();
    }
    // 2000 leaked 4 KiB blocks would have grown it by about 8 MiB.
    expect(last - start).toBeLessThan(64 * 1024);
    await d.destroy();
  });
});

describe('WebAssembly kernels where generated JavaScript is refused', () => {
  it('run through the wrapper without generated code (a CSP with wasm-unsafe-eval but not unsafe-eval)', () => {
    const script = fileURLToPath(new URL('./fixtures/cpu/wasm-without-eval.ts', import.meta.url));
    const r = spawnSync(
      process.execPath,
      ['--disallow-code-generation-from-strings', '--import', 'tsx', '--conditions=trident-source', script],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() as string) as { evalAllowed: boolean; partials: number[] };
    expect(out.evalAllowed).toBe(false);
    // Sums of 0..499 and 500..999.
    expect(out.partials).toEqual([124750, 374750]);
  });
});
