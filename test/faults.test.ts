/**
 * Faults survived with typed errors: a WebGPU device lost with work
 * and a read pending, a WebGL2 context lost mid-stream and restored, and
 * allocations beyond the limits. In each case the pending and later calls fail
 * with the typed error, and a new device works afterwards.
 */
/// <reference types="@webgpu/types" />
import type { WebGpuDevice } from '@trident/backend-webgpu';
import { buffer, createDevice, type Device, DeviceLostError, defineKernel, KernelExecutionError, LimitExceededError, u32 } from 'trident';
import { describe, expect, it } from 'vitest';
import { describeEachBackend, TEST_BACKENDS, TEST_DEVICE_OPTIONS } from './harness.ts';

const addOne = defineKernel({
  name: 'fault_add_one',
  workgroupSize: 64,
  params: { x: buffer('u32', 'read'), y: buffer('u32', 'write') },
  body: ({ x, y }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(y.length), () => {
      // Some work per element, so the dispatch is still running when the device goes.
      const acc = k.var('u32', x.load(i));
      k.for({ from: 0, to: 64 }, () => acc.set(acc.mul(1664525).add(1013904223)));
      y.store(i, acc.add(u32(1)));
    });
  },
});

/** Dispatches work and starts a read, without waiting: the state a loss must interrupt. */
function pendingWork(device: Device): { read: Promise<unknown> } {
  const n = 1 << 16;
  const x = device.createBuffer('u32', n);
  const y = device.createBuffer('u32', n);
  for (let r = 0; r < 4; r++) device.dispatch(addOne, { invocations: n }, { x, y });
  return { read: y.read() };
}

/** A fresh device of `kind` computes correctly. */
async function worksAgain(kind: Device['backend']): Promise<void> {
  const d = await createDevice({ backend: kind, options: TEST_DEVICE_OPTIONS });
  try {
    const x = d.createBuffer('u32', [1, 2, 3]);
    const y = d.createBuffer('u32', 3);
    d.dispatch(addOne, { invocations: 3 }, { x, y });
    const got = await y.read();
    const ref = [1, 2, 3].map((v) => {
      let acc = v;
      for (let r = 0; r < 64; r++) acc = (Math.imul(acc, 1664525) + 1013904223) >>> 0;
      return (acc + 1) >>> 0;
    });
    expect([...got]).toEqual(ref);
  } finally {
    await d.destroy();
  }
}

async function rejection(p: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('device loss', () => {
  if (TEST_BACKENDS.includes('webgpu'))
    it('webgpu: GPUDevice destroyed with dispatches and a read pending → DeviceLostError now and later; a new device works', async () => {
      const device = await createDevice({ backend: 'webgpu' });
      const { read } = pendingWork(device);
      (device.impl as unknown as WebGpuDevice).gpu.destroy();
      const pending = await rejection(read);
      expect(pending, String(pending)).toBeInstanceOf(DeviceLostError);
      expect((pending as DeviceLostError).backend).toBe('webgpu');
      expect(await rejection(() => device.createBuffer('u32', 4))).toBeInstanceOf(DeviceLostError);
      expect(
        await rejection(() =>
          device.dispatch(addOne, { invocations: 1 }, { x: device.createBuffer('u32', 1), y: device.createBuffer('u32', 1) }),
        ),
      ).toBeInstanceOf(DeviceLostError);
      expect(await rejection(device.flush())).toBeInstanceOf(DeviceLostError);
      await device.destroy(); // still allowed, and quiet
      await worksAgain('webgpu');
    });

  if (TEST_BACKENDS.includes('webgl2'))
    it('webgl2: context lost mid-stream (WEBGL_lose_context) → DeviceLostError now and later; after restoreContext a new device works', async () => {
      const device = await createDevice({ backend: 'webgl2' });
      const gl = (device.impl as unknown as { gl: WebGL2RenderingContext }).gl;
      const ext = gl.getExtension('WEBGL_lose_context');
      expect(ext).not.toBeNull();
      const { read } = pendingWork(device);
      ext?.loseContext();
      const pending = await rejection(read);
      expect(pending, String(pending)).toBeInstanceOf(DeviceLostError);
      expect(await rejection(() => device.createBuffer('u32', 4))).toBeInstanceOf(DeviceLostError);
      expect(await rejection(device.flush())).toBeInstanceOf(DeviceLostError);
      ext?.restoreContext();
      // The lost device stays lost (its textures are gone); a new device is the way on.
      expect(await rejection(() => device.createBuffer('u32', 4))).toBeInstanceOf(DeviceLostError);
      await device.destroy();
      await worksAgain('webgl2');
    });
});

describeEachBackend('allocations beyond the limits', (ctx) => {
  it('a buffer past maxBufferElements → LimitExceededError; the device goes on', async () => {
    const { device } = ctx;
    const max = device.caps.limits.maxBufferElements;
    const err = await rejection(() => device.createBuffer('f32', max + 1));
    expect(err).toBeInstanceOf(LimitExceededError);
    expect((err as LimitExceededError).limit).toBe('maxBufferElements');
    const b = device.createBuffer('u32', [7]);
    expect([...(await b.read())]).toEqual([7]);
    b.destroy();
  });
});

if (TEST_BACKENDS.includes('cpu')) {
  it('cpu: a buffer the host cannot allocate → LimitExceededError (hostMemory), not a crash; the device goes on', async () => {
    const device = await createDevice({ backend: 'cpu', options: TEST_DEVICE_OPTIONS });
    // Stand-in for a host out of memory: the device's WebAssembly.Memory cannot grow (V8 throws this RangeError).
    const realGrow = WebAssembly.Memory.prototype.grow;
    WebAssembly.Memory.prototype.grow = function (this: WebAssembly.Memory, pages: number) {
      if (pages > 16) throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
      return realGrow.call(this, pages);
    };
    let err: unknown;
    try {
      device.createBuffer('u32', 1 << 20);
    } catch (e) {
      err = e;
    } finally {
      WebAssembly.Memory.prototype.grow = realGrow;
    }
    try {
      expect(err).toBeInstanceOf(LimitExceededError);
      expect((err as LimitExceededError).limit).toBe('hostMemory');
      expect((err as Error).message).toMatch(/4194304 requested, not available/);
      const b = device.createBuffer('u32', [3]);
      expect([...(await b.read())]).toEqual([3]);
    } finally {
      await device.destroy();
    }
  });
}

/**
 * Runs `body` while `gpu`'s error scopes answer as `answer` says: each scope is still pushed and
 * popped on the device, and where `answer(filter)` gives an error, the pop resolves to it instead.
 */
async function withScopeAnswers<T>(
  gpu: GPUDevice,
  answer: (filter: GPUErrorFilter) => GPUError | undefined,
  body: () => T,
): Promise<Awaited<T>> {
  const push = gpu.pushErrorScope.bind(gpu);
  const pop = gpu.popErrorScope.bind(gpu);
  const open: GPUErrorFilter[] = [];
  gpu.pushErrorScope = (filter: GPUErrorFilter) => {
    open.push(filter);
    push(filter);
  };
  gpu.popErrorScope = () => {
    const real = pop();
    const simulated = answer(open.pop() as GPUErrorFilter);
    return simulated ? real.then(() => simulated) : real;
  };
  try {
    return await body();
  } finally {
    gpu.pushErrorScope = push;
    gpu.popErrorScope = pop;
  }
}

if (TEST_BACKENDS.includes('webgpu')) {
  it('webgpu: a buffer the GPU cannot hold (out-of-memory, simulated) → LimitExceededError (deviceMemory) at the next flush; the device goes on', async () => {
    const device = await createDevice({ backend: 'webgpu' });
    try {
      const gpu = (device.impl as unknown as WebGpuDevice).gpu;
      // A real out-of-memory would take the machine's memory: the error scope answers as the device would.
      const big = await withScopeAnswers(
        gpu,
        (filter) => (filter === 'out-of-memory' ? new GPUOutOfMemoryError('simulated: out of memory') : undefined),
        () => device.createBuffer('u32', 1 << 20),
      );
      expect(big).toBeDefined();
      const err = await rejection(device.flush());
      expect(err, String(err)).toBeInstanceOf(LimitExceededError);
      expect((err as LimitExceededError).limit).toBe('deviceMemory');
      // The allocation asked for: the buffer, its spare element and the padding to 16 bytes (webgpu-buffer.ts).
      expect((err as LimitExceededError).requested).toBe((4 << 20) + 16);
      const b = device.createBuffer('u32', [11]);
      expect([...(await b.read())]).toEqual([11]);
    } finally {
      await device.destroy();
    }
  });

  it('webgpu: a write to a buffer the device could not make is reported at the next flush, not as an uncaptured error', async () => {
    const device = await createDevice({ backend: 'webgpu' });
    try {
      const gpu = (device.impl as unknown as WebGpuDevice).gpu;
      // A GPUBuffer the device refused (an invalid usage; its own error consumed here), standing in for one
      // whose memory ran out: writes to it fail validation as "invalid due to a previous error".
      gpu.pushErrorScope('validation');
      const invalid = gpu.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });
      expect(await gpu.popErrorScope()).not.toBeNull();
      const b = device.createBuffer('u32', 4);
      Object.defineProperty(b.impl, 'gpu', { value: invalid });
      Object.defineProperty(b.impl, 'segments', { value: [{ gpu: invalid, id: -1 }] });
      b.write([1, 2, 3, 4]);
      const err = await rejection(device.flush());
      expect(err, String(err)).toBeInstanceOf(KernelExecutionError);
      // The write's own scope holds it (an uncaptured error would name '(device)').
      expect((err as KernelExecutionError).kernel).toBe('(write)');
      const ok = device.createBuffer('u32', [5]);
      expect([...(await ok.read())]).toEqual([5]);
    } finally {
      await device.destroy();
    }
  });

  it('webgpu: a buffer the device refuses (simulated) is the error reported, not the bind groups that use it', async () => {
    const device = await createDevice({ backend: 'webgpu' });
    try {
      const gpu = (device.impl as unknown as WebGpuDevice).gpu;
      const k = defineKernel({
        name: 'refused_buffer',
        workgroupSize: 1,
        params: { out: buffer('u32', 'write') },
        body: ({ out }) => out.store(0, 7),
      });
      device.compile(k);
      await device.flush();
      let validations = 0;
      const err = await withScopeAnswers(
        gpu,
        (filter) => {
          if (filter !== 'validation') return undefined;
          // The first validation scope closed is the buffer's; the batch's then holds what the invalid buffer caused.
          const message = validations++ === 0 ? 'buffer refused' : 'Invalid BindGroup "refused_buffer" due to a previous error';
          return new GPUValidationError(`simulated: ${message}`);
        },
        () => {
          const out = device.createBuffer('u32', 1);
          device.dispatch(k, { invocations: 1 }, { out });
          return rejection(device.flush());
        },
      );
      expect(err, String(err)).toBeInstanceOf(KernelExecutionError);
      expect((err as Error).message).toMatch(/a buffer of \d+ bytes.*simulated: buffer refused/);
    } finally {
      await device.destroy();
    }
  });
}
