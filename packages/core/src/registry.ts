import type { BackendAdapter, BackendDevice, BackendOptionsMap } from './backend.ts';
import { BACKEND_KINDS, type BackendKind } from './caps.ts';
import { Device, type SkippedBackend } from './device.ts';
import { BackendUnavailableError, InvalidArgumentError, NoBackendAvailableError } from './errors.ts';

const adapters = new Map<BackendKind, BackendAdapter>();

/** Makes a backend available to `createDevice`. Registering a kind again replaces it. */
export function registerBackend(adapter: BackendAdapter): void {
  adapters.set(adapter.kind, adapter);
}

/** The kinds registered in this process. */
export function registeredBackends(): BackendKind[] {
  return BACKEND_KINDS.filter((k) => adapters.has(k));
}

/** The default preference order. Software rasterisers found on the way are demoted below 'cpu'. */
export const DEFAULT_ORDER: readonly BackendKind[] = ['webgpu', 'webgl2', 'cpu'];

export interface CreateDeviceOptions {
  /**
   * One kind, or kinds in order of preference. Without it: webgpu -> webgl2 -> cpu,
   * where a software adapter (SwiftShader) counts only after cpu. Named kinds are
   * taken as named, software or not.
   */
  readonly backend?: BackendKind | readonly BackendKind[];
  /** Per-backend options, e.g. `{ cpu: { workers: 2 } }`. */
  readonly options?: Partial<{ [K in keyof BackendOptionsMap]: BackendOptionsMap[K] }>;
}

/**
 * Returns a device of the first backend that gives a working one. The device's
 * `skipped` says why each earlier backend was passed over; if none works, throws
 * NoBackendAvailableError listing every reason.
 */
export async function createDevice(options: CreateDeviceOptions = {}): Promise<Device> {
  const explicit = options.backend !== undefined;
  const order: readonly BackendKind[] =
    options.backend === undefined ? DEFAULT_ORDER : typeof options.backend === 'string' ? [options.backend] : options.backend;
  if (!Array.isArray(order) || order.length === 0) throw new InvalidArgumentError('backend', 'must name at least one backend');
  for (const kind of order) {
    if (!BACKEND_KINDS.includes(kind))
      throw new InvalidArgumentError('backend', `unknown backend '${String(kind)}' (known: ${BACKEND_KINDS.join(', ')})`);
  }
  const skipped: SkippedBackend[] = [];
  let softwareFallback: { device: BackendDevice; at: number } | undefined;
  for (const kind of order) {
    const adapter = adapters.get(kind);
    if (!adapter) {
      skipped.push({
        backend: kind,
        reason: `not registered in this build (import 'trident' or register @trident/backend-${kind === 'webgl2' ? 'webgl' : kind})`,
      });
      continue;
    }
    let device: BackendDevice;
    try {
      const perBackend = (options.options as Record<string, unknown> | undefined)?.[kind];
      device = await (adapter.create as (o: unknown) => Promise<BackendDevice>)(perBackend);
    } catch (err) {
      const reason = err instanceof BackendUnavailableError ? err.reason : err instanceof Error ? err.message : String(err);
      skipped.push({ backend: kind, reason });
      continue;
    }
    if (!explicit && device.info.software) {
      // Fix (webgl2 engineer): a second software device (in a browser without a GPU, WebGPU and
      // WebGL2 are both SwiftShader) used to be returned ahead of cpu; only the first is kept as fallback.
      if (softwareFallback) await device.destroy();
      else softwareFallback = { device, at: skipped.length };
      skipped.push({
        backend: kind,
        reason: `software adapter '${device.info.adapter}' is slower than the cpu backend; demoted below cpu`,
      });
      continue;
    }
    if (softwareFallback) await softwareFallback.device.destroy();
    return new Device(device, skipped);
  }
  if (softwareFallback) {
    skipped.splice(softwareFallback.at, 1);
    return new Device(softwareFallback.device, skipped);
  }
  throw new NoBackendAvailableError(skipped);
}

/** Tries every registered kind (or `kinds`) and reports which give a device, without keeping any. */
export async function probeBackends(
  kinds: readonly BackendKind[] = BACKEND_KINDS,
  options?: CreateDeviceOptions['options'],
): Promise<Array<{ backend: BackendKind; available: true; device: Device } | { backend: BackendKind; available: false; reason: string }>> {
  const results: Array<
    { backend: BackendKind; available: true; device: Device } | { backend: BackendKind; available: false; reason: string }
  > = [];
  for (const kind of kinds) {
    try {
      const device = await createDevice({ backend: kind, ...(options ? { options } : {}) });
      results.push({ backend: kind, available: true, device });
    } catch (err) {
      const reason = err instanceof NoBackendAvailableError ? (err.reasons[0]?.reason ?? err.message) : String(err);
      results.push({ backend: kind, available: false, reason });
    }
  }
  return results;
}
