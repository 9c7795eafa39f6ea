/** Backend selection: preference order, reasons for skipped backends, software demotion. */

import { cpuAdapter } from '@trident/backend-cpu';
import {
  type BackendAdapter,
  type BackendDevice,
  BackendUnavailableError,
  createDevice,
  InvalidArgumentError,
  NoBackendAvailableError,
  registerBackend,
} from '@trident/core';
import { expect, it } from 'vitest';

/** A stand-in adapter wrapping the CPU backend, to play webgpu/webgl2 in selection tests. */
function fakeAdapter(kind: 'webgpu' | 'webgl2', behaviour: { fail?: string; software?: boolean }): BackendAdapter {
  return {
    kind,
    async create(): Promise<BackendDevice> {
      if (behaviour.fail) throw new BackendUnavailableError(kind, behaviour.fail);
      const inner = await cpuAdapter.create({ workers: 1 });
      return Object.assign(Object.create(inner) as BackendDevice, {
        kind,
        info: { ...inner.info, backend: kind, adapter: behaviour.software ? 'SwiftShader' : 'fake', software: !!behaviour.software },
        destroy: () => inner.destroy(),
      });
    },
  };
}

it('walks the default order and says why each backend was skipped', async () => {
  registerBackend(cpuAdapter);
  registerBackend(fakeAdapter('webgpu', { fail: 'no adapter' }));
  const device = await createDevice({ options: { cpu: { workers: 1 } } });
  expect(device.backend).toBe('cpu');
  expect(device.skipped).toEqual([
    { backend: 'webgpu', reason: 'no adapter' },
    { backend: 'webgl2', reason: expect.stringContaining('not registered') },
  ]);
  await device.destroy();
});

it('demotes a software adapter below cpu by default, but gives it when named', async () => {
  registerBackend(cpuAdapter);
  registerBackend(fakeAdapter('webgpu', { software: true }));
  registerBackend(fakeAdapter('webgl2', { fail: 'no context' }));
  const auto = await createDevice({ options: { cpu: { workers: 1 } } });
  expect(auto.backend).toBe('cpu');
  expect(auto.skipped[0]?.reason).toMatch(/software adapter 'SwiftShader'.*demoted below cpu/);
  await auto.destroy();
  const named = await createDevice({ backend: 'webgpu' });
  expect(named.backend).toBe('webgpu');
  expect(named.info.software).toBe(true);
  await named.destroy();
});

it('falls back to a software adapter when nothing else works', async () => {
  registerBackend(fakeAdapter('webgpu', { software: true }));
  registerBackend({ kind: 'cpu', create: () => Promise.reject(new BackendUnavailableError('cpu', 'disabled')) });
  registerBackend(fakeAdapter('webgl2', { fail: 'no context' }));
  const device = await createDevice();
  expect(device.backend).toBe('webgpu');
  expect(device.skipped.map((s) => s.backend)).toEqual(['webgl2', 'cpu']);
  await device.destroy();
});

it('throws NoBackendAvailableError listing every reason', async () => {
  registerBackend({ kind: 'cpu', create: () => Promise.reject(new BackendUnavailableError('cpu', 'disabled')) });
  registerBackend(fakeAdapter('webgpu', { fail: 'no adapter' }));
  registerBackend(fakeAdapter('webgl2', { fail: 'no context' }));
  const err = await createDevice().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(NoBackendAvailableError);
  expect((err as NoBackendAvailableError).reasons.map((r) => r.reason)).toEqual(['no adapter', 'no context', 'disabled']);
  expect((err as Error).message).toContain('webgpu: no adapter');
});

it('rejects unknown backend names and empty preference lists', async () => {
  await expect(createDevice({ backend: 'metal' as 'cpu' })).rejects.toBeInstanceOf(InvalidArgumentError);
  await expect(createDevice({ backend: [] })).rejects.toBeInstanceOf(InvalidArgumentError);
});

it('reports invalid CPU worker counts as the reason the backend is unavailable', async () => {
  registerBackend(cpuAdapter);
  const err = await createDevice({ backend: 'cpu', options: { cpu: { workers: 0 } } }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(NoBackendAvailableError);
  expect((err as Error).message).toMatch(/workers/);
});
