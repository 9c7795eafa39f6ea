/** Per-backend device options the CLI passes to createDevice. */
import type { CreateDeviceOptions } from 'trident';

export function deviceOptions(workers?: number): CreateDeviceOptions['options'] {
  return workers === undefined ? {} : { cpu: { workers } };
}
