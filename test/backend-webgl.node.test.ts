/**
 * In Node there is no WebGL2: the adapter must say so (BackendUnavailableError with
 * the reason) rather than fail to import or crash, and createDevice must pass over it.
 */

import { webglAdapter } from '@trident/backend-webgl';
import { BackendUnavailableError, createDevice, NoBackendAvailableError, registeredBackends } from 'trident';
import { describe, expect, it } from 'vitest';

describe('webgl2 in Node', () => {
  it('is registered by the trident wiring', () => {
    expect(registeredBackends()).toContain('webgl2');
  });

  it('reports itself unavailable, with the reason', async () => {
    const err = await webglAdapter.create(undefined).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as BackendUnavailableError).backend).toBe('webgl2');
    expect((err as BackendUnavailableError).reason).toMatch(/browser/);
  });

  it('createDevice names the reason when webgl2 is asked for', async () => {
    const err = await createDevice({ backend: 'webgl2' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NoBackendAvailableError);
    expect((err as NoBackendAvailableError).reasons[0]?.reason).toMatch(/Node has no WebGL2/);
  });
});
