/**
 * The host memory a run's inputs may take, charged from what the files declare
 * (shapes, entry counts) before anything of that size is allocated, so a tiny
 * file that declares a huge array is refused at once instead of exhausting the
 * machine. The limit is half the memory the process may use (the cgroup's limit
 * where there is one, else the physical memory): inputs are copied at least once
 * more on their way to a device. `TRIDENT_HOST_MEMORY` (bytes) sets it instead.
 */
import { totalmem } from 'node:os';
import { InputError } from '../errors.ts';

/** The default limit and where it came from, for the message. */
export function defaultHostBudget(): { bytes: number; source: string } {
  const set = process.env.TRIDENT_HOST_MEMORY;
  if (set !== undefined && set !== '') {
    const n = Number(set);
    if (Number.isSafeInteger(n) && n > 0) return { bytes: n, source: 'TRIDENT_HOST_MEMORY' };
  }
  // 0 or a huge number where no cgroup limit is set.
  const limit = process.constrainedMemory?.() ?? 0;
  const total = totalmem();
  const cgroup = limit > 0 && limit < total;
  return {
    bytes: Math.floor((cgroup ? limit : total) / 2),
    source: `half the ${cgroup ? "cgroup's memory limit" : 'memory'}; TRIDENT_HOST_MEMORY sets it`,
  };
}

export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${v.toFixed(1)} ${units[i]}`;
}

export class HostBudget {
  private used = 0;
  readonly limitBytes: number;
  private readonly source: string;

  /** `limitBytes` given: a fixed limit (tests, embedders); otherwise the default above. */
  constructor(limitBytes?: number) {
    const d = limitBytes === undefined ? defaultHostBudget() : { bytes: limitBytes, source: 'as given' };
    this.limitBytes = d.bytes;
    this.source = d.source;
  }

  /** Reserves `bytes` for `what` of `file`; an InputError (exit 2) when the run would pass the limit. */
  take(file: string, what: string, bytes: number): void {
    if (!(bytes <= this.limitBytes - this.used)) {
      throw new InputError(
        file,
        `${what} needs ${formatBytes(bytes)}, more than the ${formatBytes(Math.max(0, this.limitBytes - this.used))} of host memory left to this run (limit ${formatBytes(this.limitBytes)}: ${this.source})`,
      );
    }
    this.used += bytes;
  }

  /** Gives back what a buffer no longer alive had taken. */
  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}
