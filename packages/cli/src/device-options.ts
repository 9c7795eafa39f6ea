/** Per-backend device options the CLI passes to createDevice. */
import type { CreateDeviceOptions } from 'trident';

/** `wasm: false` runs the CPU backend's kernels as generated JavaScript only (bench --no-wasm, to compare). */
export function deviceOptions(workers?: number, wasm?: boolean): CreateDeviceOptions['options'] {
  if (workers === undefined && wasm === undefined) return {};
  return { cpu: { ...(workers !== undefined ? { workers } : {}), ...(wasm !== undefined ? { wasm } : {}) } };
}
