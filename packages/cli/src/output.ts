/**
 * Output files are written all-or-nothing: each goes to a temporary file beside
 * its target (same directory, so the rename cannot cross file systems), is
 * flushed to disk, and is renamed into place only after every output was
 * produced. rename(2) replaces the target in one step, so a run that fails or is
 * killed at any moment leaves an existing output either untouched or replaced
 * whole, never truncated. A run killed mid-write may leave its temporary file
 * (`.<name>.<pid>.<i>.tmp`) behind; the target itself is intact.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from './errors.ts';

export interface PendingOutput {
  readonly path: string;
  readonly bytes: Uint8Array | string;
}

/** Large outputs go out in slices so one huge write never has to fit a single syscall. */
const WRITE_SLICE = 1 << 20;

function writeDurably(file: string, data: Uint8Array | string): void {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  const fd = openSync(file, 'wx', 0o644);
  try {
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, Math.min(WRITE_SLICE, bytes.length - at));
    // Flush before the rename: otherwise a crash of the machine could publish the name before the bytes.
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Checks, before any work is done, that every output can be written: its
 * directory exists, the path is not a directory, and no two outputs share a
 * path. `flags` names the option each path came from, for the message.
 */
export function checkOutputTargets(targets: ReadonlyArray<{ flag: string; path: string }>): void {
  const seen = new Map<string, string>();
  for (const { flag, path } of targets) {
    const full = resolve(path);
    const earlier = seen.get(full);
    if (earlier !== undefined) throw new UsageError(`${earlier} and ${flag} name the same file '${path}'`);
    seen.set(full, flag);
    const dir = dirname(full);
    const dirStat = statSync(dir, { throwIfNoEntry: false });
    if (dirStat === undefined) throw new UsageError(`${flag} ${path}: directory '${dir}' does not exist`);
    if (!dirStat.isDirectory()) throw new UsageError(`${flag} ${path}: '${dir}' is not a directory`);
    if (statSync(full, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`${flag} ${path}: is a directory`);
  }
}

export function commitOutputs(outputs: readonly PendingOutput[]): void {
  const temps: Array<{ temp: string; path: string }> = [];
  try {
    for (const o of outputs) {
      const temp = join(dirname(o.path), `.${basename(o.path)}.${process.pid}.${temps.length}.tmp`);
      rmSync(temp, { force: true }); // a leftover of an earlier, killed process with this pid
      temps.push({ temp, path: o.path });
      writeDurably(temp, o.bytes);
    }
    for (const t of temps) renameSync(t.temp, t.path);
  } catch (err) {
    for (const t of temps) rmSync(t.temp, { force: true });
    throw err;
  }
}
