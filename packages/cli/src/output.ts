/**
 * Output files are written all-or-nothing: each goes to a temporary file in the
 * directory of the file it replaces (so the rename cannot cross file systems), is
 * flushed to disk, and is renamed into place only after every output was
 * produced. rename(2) replaces the target in one step, so a run that fails or is
 * killed at any moment leaves an existing output either untouched or replaced
 * whole, never truncated.
 *
 * Several outputs commit together: before a target is replaced, its old file is
 * kept aside under a second name (a hard link, so the target itself never goes
 * missing); if a later rename fails, every target already replaced gets its old
 * file back (or is removed, where there was none) and only then is the error
 * reported. The kept-aside files are removed once every rename has succeeded.
 *
 * Temporary names are short and do not contain the output's name
 * (`.trident-<pid>-<i>.tmp`, `.trident-<pid>-<i>.old`), so any output name the
 * file system allows (NAME_MAX, 255 bytes) can be written. The commit is one
 * synchronous step: SIGINT and SIGTERM are held from the first output check on
 * (a handler is installed; Node runs it only between tasks), so a commit under
 * way finishes or rolls back, its temporary files are removed, and the process
 * then ends by that signal (main.ts gives the loop the turns to deliver it). Only SIGKILL (or a crash
 * of the machine) can leave a temporary file behind; the target is intact even
 * then.
 *
 * A `--out` that names a symbolic link writes through it, as NumPy's `np.save`
 * does: the file the link points to is replaced (even where the link dangles),
 * and the link itself stays.
 */
import {
  closeSync,
  copyFileSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from './errors.ts';

export interface PendingOutput {
  readonly path: string;
  readonly bytes: Uint8Array | string;
}

/** The renames of a commit; a parameter so tests can make one of them fail. */
export interface CommitFs {
  renameSync(from: string, to: string): void;
}

const NODE_FS: CommitFs = { renameSync };

/** Large outputs go out in slices so one huge write never has to fit a single syscall. */
const WRITE_SLICE = 1 << 20;

/** Symbolic links followed before giving up (Linux's MAXSYMLINKS). */
const MAX_LINK_HOPS = 40;

function sideName(dir: string, i: number, kind: 'tmp' | 'old'): string {
  return join(dir, `.trident-${process.pid}-${i}.${kind}`);
}

const WRITE_PROBLEMS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOENT: 'files cannot be created there',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ENAMETOOLONG: 'name too long',
  ELOOP: 'too many levels of symbolic links',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'is a directory',
};

/** One line for a failed write: the common cases in words, the rest by errno code. */
export function writeProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return (code !== undefined ? WRITE_PROBLEMS[code] : undefined) ?? `cannot write (${String(code ?? err)})`;
}

/**
 * The regular file an output path names: the path itself, or where its chain of
 * symbolic links ends (that file may not exist yet).
 */
export function outputFile(path: string): string {
  let file = resolve(path);
  for (let hop = 0; ; hop++) {
    const st = lstatSync(file, { throwIfNoEntry: false });
    if (st === undefined || !st.isSymbolicLink()) return file;
    if (hop === MAX_LINK_HOPS) throw Object.assign(new Error('symbolic link loop'), { code: 'ELOOP' });
    file = resolve(dirname(file), readlinkSync(file));
  }
}

export interface OutputTarget {
  readonly flag: string;
  readonly path: string;
}

/**
 * Checks, before any work is done, that every output can be written: its
 * directory exists, the path is not a directory or another non-regular file, no
 * two outputs name the same file, and a temporary file can really be created
 * (and is removed at once) where the output will be written — which finds
 * read-only and permission-denied directories, `/proc`, `/sys` and names too
 * long for the file system up front. `flag` names the option each path came
 * from, for the message.
 */
export function checkOutputTargets(targets: readonly OutputTarget[]): void {
  const seen = new Map<string, string>();
  for (const { flag, path } of targets) {
    const file = checkOutputTarget(flag, path);
    const earlier = seen.get(file);
    if (earlier !== undefined) throw new UsageError(`${earlier} and ${flag} name the same file '${path}'`);
    seen.set(file, flag);
  }
}

/** One output's checks; returns the file it will write (symbolic links followed). */
function checkOutputTarget(flag: string, path: string): string {
  const fail = (problem: string): never => {
    throw new UsageError(`${flag} ${path}: ${problem}`);
  };
  let file: string;
  let st: ReturnType<typeof statSync>;
  try {
    file = outputFile(path);
    st = statSync(file, { throwIfNoEntry: false });
  } catch (err) {
    return fail(writeProblem(err)); // ELOOP, ENAMETOOLONG, EACCES on the directory, ...
  }
  const dir = dirname(file);
  const dirStat = statSync(dir, { throwIfNoEntry: false });
  if (dirStat === undefined) fail(`directory '${dir}' does not exist`);
  if (!dirStat?.isDirectory()) fail(`'${dir}' is not a directory`);
  if (st?.isDirectory()) fail('is a directory');
  if (st !== undefined && !st.isFile()) fail('is not a regular file (a device, FIFO or socket is not replaced)');
  const probe = sideName(dir, 0, 'tmp');
  holdSignals();
  liveTemps.add(probe);
  try {
    rmSync(probe, { force: true }); // a leftover of an earlier, killed process with this pid
    closeSync(openSync(probe, 'wx', 0o644));
    rmSync(probe, { force: true });
  } catch (err) {
    fail(`cannot write in '${dir}': ${writeProblem(err)}`);
  } finally {
    liveTemps.delete(probe);
  }
  return file;
}

/** Temporary files of the commit in progress, removed if a signal ends the process. */
const liveTemps = new Set<string>();

function onSignal(signal: NodeJS.Signals): void {
  for (const t of liveTemps) rmSync(t, { force: true });
  liveTemps.clear();
  process.removeListener('SIGINT', onSignal);
  process.removeListener('SIGTERM', onSignal);
  // Re-raised with no handler left: the process ends by the signal, as the caller expects.
  process.kill(process.pid, signal);
}

/**
 * Holds SIGINT and SIGTERM from the first commit on: Node runs a handler only
 * between tasks, never inside the synchronous commit, so a signal lets the
 * commit finish or roll back before the process ends.
 */
function holdSignals(): void {
  if (process.listeners('SIGINT').includes(onSignal)) return;
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

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

/** Keeps `file`'s current contents under `aside` without ever removing `file`. */
function keepAside(file: string, aside: string): void {
  rmSync(aside, { force: true });
  try {
    linkSync(file, aside);
  } catch {
    copyFileSync(file, aside); // file systems without hard links
  }
}

interface Replaced {
  readonly file: string;
  /** Where the old file was kept; undefined where there was none. */
  readonly aside: string | undefined;
}

/**
 * Puts back every replaced file's old contents (or removes the new file). What it
 * cannot restore is named in the error, and its kept-aside copy is not removed.
 */
function rollBack(replaced: readonly Replaced[], fs: CommitFs, keep: Set<string>): string[] {
  const stuck: string[] = [];
  for (const r of [...replaced].reverse()) {
    try {
      if (r.aside !== undefined) fs.renameSync(r.aside, r.file);
      else rmSync(r.file, { force: true });
    } catch {
      if (r.aside !== undefined) keep.add(r.aside);
      stuck.push(r.aside !== undefined ? `${r.file} (its old contents are in ${r.aside})` : r.file);
    }
  }
  return stuck;
}

/** A write or rename of the commit failed (exit 1): the message names the output, not the temporary file. */
export class OutputWriteError extends Error {
  constructor(path: string, cause: unknown, stuck: readonly string[]) {
    super(`${path}: ${writeProblem(cause)}${stuck.length > 0 ? `; could not restore ${stuck.join(', ')}` : ''}`);
    this.name = 'OutputWriteError';
  }
}

/** Writes every output, then replaces all targets or none (see the module comment). */
export function commitOutputs(outputs: readonly PendingOutput[], fs: CommitFs = NODE_FS): void {
  holdSignals();
  const staged: Array<{ temp: string; file: string; aside: string; path: string }> = [];
  const keep = new Set<string>();
  let current = outputs[0]?.path ?? '';
  try {
    for (const [i, o] of outputs.entries()) {
      current = o.path;
      const file = outputFile(o.path);
      const dir = dirname(file);
      const temp = sideName(dir, i, 'tmp');
      rmSync(temp, { force: true }); // a leftover of an earlier, killed process with this pid
      liveTemps.add(temp);
      staged.push({ temp, file, aside: sideName(dir, i, 'old'), path: o.path });
      writeDurably(temp, o.bytes);
    }
    const replaced: Replaced[] = [];
    try {
      for (const s of staged) {
        current = s.path;
        const exists = statSync(s.file, { throwIfNoEntry: false }) !== undefined;
        if (exists) {
          liveTemps.add(s.aside);
          keepAside(s.file, s.aside);
        }
        fs.renameSync(s.temp, s.file);
        replaced.push({ file: s.file, aside: exists ? s.aside : undefined });
      }
    } catch (err) {
      throw new OutputWriteError(current, err, rollBack(replaced, fs, keep));
    }
  } catch (err) {
    throw err instanceof OutputWriteError ? err : new OutputWriteError(current, err, []);
  } finally {
    for (const s of staged) {
      rmSync(s.temp, { force: true });
      if (!keep.has(s.aside)) rmSync(s.aside, { force: true });
      liveTemps.delete(s.temp);
      liveTemps.delete(s.aside);
    }
  }
}
