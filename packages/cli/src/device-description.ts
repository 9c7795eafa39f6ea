/** A plain-JSON description of a device (no Node APIs: the Chromium page uses it too). */
import type { BackendKind, Device, DeviceLimits, TimerSource } from 'trident';
import { chosenFormulations } from './bench/formulations.ts';

export interface DeviceDescription {
  readonly backend: BackendKind;
  readonly adapter: string;
  readonly software: boolean;
  readonly details: Readonly<Record<string, string | number | boolean>>;
  readonly caps: {
    readonly limits: DeviceLimits;
    readonly features: string[];
    readonly timerSource: TimerSource;
    readonly preferredWorkgroupSize: number;
    readonly concurrency: number;
    readonly dispatchCostMicros: number;
  };
  /** Algorithm -> the formulation it runs on this device with default options (each algorithm's own answer). */
  readonly formulations: Readonly<Record<string, string>>;
}

export function describeDevice(device: Device): DeviceDescription {
  return {
    backend: device.backend,
    adapter: device.info.adapter,
    software: device.info.software,
    details: { ...device.info.details },
    caps: {
      limits: { ...device.caps.limits },
      features: [...device.caps.features].sort(),
      timerSource: device.caps.timerSource,
      preferredWorkgroupSize: device.caps.preferredWorkgroupSize,
      concurrency: device.caps.concurrency,
      dispatchCostMicros: device.caps.dispatchCostMicros,
    },
    formulations: chosenFormulations(device),
  };
}
