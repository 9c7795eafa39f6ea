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

export function defaultHostBudgetBytes(): number {
  const set = process.env.TRIDENT_HOST_MEMORY;
  if (set !== undefined && set !== '') {
    const n = Number(set);
    if (Number.isSafeInteger(n) && n > 0) return n;
  }
  // 0 or a huge number where no cgroup limit is set.
  const limit = process.constrainedMemory?.() ?? 0;
  const total = totalmem();
  return Math.floor((limit > 0 && limit < total ? limit : total) / 2);
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
  constructor(readonly limitBytes: number = defaultHostBudgetBytes()) {}

  /** Reserves `bytes` for `what` of `file`; an InputError (exit 2) when the run would pass the limit. */
  take(file: string, what: string, bytes: number): void {
    if (!(bytes <= this.limitBytes - this.used)) {
      throw new InputError(
        file,
        `${what} needs ${formatBytes(bytes)}, more than the ${formatBytes(Math.max(0, this.limitBytes - this.used))} of host memory left to this run (limit ${formatBytes(this.limitBytes)}: half the memory; TRIDENT_HOST_MEMORY sets it)`,
      );
    }
    this.used += bytes;
  }

  /** Gives back what a buffer no longer alive had taken. */
  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}
