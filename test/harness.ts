/**
 * The conformance harness: finds the backends that give a device here and lets a
 * spec run once per backend. A backend plugs in by being registered in
 * packages/trident (the registry wiring); nothing here names one.
 *
 * TRIDENT_BACKENDS=cpu,webgpu limits the run to those kinds; every kind named
 * there must then be available, or the harness fails loudly (CI names them all,
 * so a missing driver cannot pass as "skipped").
 *
 * Environment-agnostic: the same file runs in Node and in the browser. The list
 * arrives through vitest's `provide` (vitest.config.ts passes TRIDENT_BACKENDS to
 * the node project and TRIDENT_BROWSER_BACKENDS to the browser project), never
 * through `process`, which a browser does not have.
 */

import { randomU32 } from '@trident/algorithms';
import { type BackendKind, type CreateDeviceOptions, createDevice, type Device, probeBackends, registeredBackends } from 'trident';
import { afterAll, beforeAll, describe, inject } from 'vitest';

export { randomU32 };

declare module 'vitest' {
  export interface ProvidedContext {
    /** Comma-separated backend kinds this project must find; '' = whichever are available. */
    tridentBackends: string;
  }
}

const requestedList = (inject('tridentBackends') ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean) as BackendKind[];
const requested = requestedList.length > 0 ? requestedList : undefined;

/** Options for test devices: small worker pools keep the suite light on 2 cores. */
export const TEST_DEVICE_OPTIONS: CreateDeviceOptions['options'] = { cpu: { workers: 2 } };

async function findBackends(): Promise<BackendKind[]> {
  const kinds = requested ?? registeredBackends();
  const found: BackendKind[] = [];
  for (const r of await probeBackends(kinds, TEST_DEVICE_OPTIONS)) {
    if (r.available) {
      found.push(r.backend);
      await r.device.destroy();
    } else if (requested) {
      throw new Error(`TRIDENT_BACKENDS names '${r.backend}', which is unavailable here: ${r.reason}`);
    }
  }
  if (found.length === 0) throw new Error('no backend is available for the conformance suite');
  return found;
}

/** The backends the conformance suite runs on here. */
export const TEST_BACKENDS: readonly BackendKind[] = await findBackends();

export interface BackendContext {
  readonly kind: BackendKind;
  /** The device for this backend, created before the specs of the block run. */
  readonly device: Device;
}

/**
 * `describe` once per available backend, with a fresh device shared by the
 * block's specs and destroyed after them. Test names carry the backend.
 */
export function describeEachBackend(title: string, body: (ctx: BackendContext) => void): void {
  for (const kind of TEST_BACKENDS) {
    describe(`${title} [${kind}]`, () => {
      let device: Device | undefined;
      const ctx: BackendContext = {
        kind,
        get device(): Device {
          if (!device) throw new Error(`device for ${kind} not created yet`);
          return device;
        },
      };
      beforeAll(async () => {
        device = await createDevice({ backend: kind, options: TEST_DEVICE_OPTIONS });
      });
      afterAll(async () => {
        await device?.destroy();
      });
      body(ctx);
    });
  }
}
