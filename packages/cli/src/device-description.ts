/** A plain-JSON description of a device (no Node APIs: the Chromium page uses it too). */
import type { BackendKind, Device, DeviceLimits, TimerSource } from 'trident';

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
  };
}
