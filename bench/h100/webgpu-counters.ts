import type { Device } from 'trident';

/**
 * The WebGPU backend's operation counters (submits, map round trips, GPU buffer
 * creations, queue waits) of `device`, or undefined on other backends: what one
 * call of an algorithm costs the host, counted rather than timed.
 */
export function webGpuCounters(device: Device): Record<string, number> | undefined {
  const counters = (device.impl as { counters?: Readonly<Record<string, number>> }).counters;
  return counters ? { ...counters } : undefined;
}
