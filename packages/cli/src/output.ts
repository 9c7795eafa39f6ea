/**
 * Output files are written all-or-nothing: each goes to a temporary file beside
 * its target and is renamed into place only after every output was produced, so
 * a failed command never leaves a partial or stale-looking result behind.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export interface PendingOutput {
  readonly path: string;
  readonly bytes: Uint8Array | string;
}

export function commitOutputs(outputs: readonly PendingOutput[]): void {
  const temps: Array<{ temp: string; path: string }> = [];
  try {
    for (const o of outputs) {
      const temp = join(dirname(o.path), `.${basename(o.path)}.${process.pid}.${temps.length}.tmp`);
      temps.push({ temp, path: o.path });
      writeFileSync(temp, o.bytes);
    }
    for (const t of temps) renameSync(t.temp, t.path);
  } catch (err) {
    for (const t of temps) rmSync(t.temp, { force: true });
    throw err;
  }
}
