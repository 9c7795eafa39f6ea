/**
 * Helpers for the CLI tests (test/cli-*.node.test.ts): run the real `trident`
 * binary as a child process, so exit codes, stderr lines and files on disk are
 * what a user sees.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const TRIDENT_BIN = fileURLToPath(new URL('../packages/cli/bin/trident.mjs', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function trident(args: readonly string[], options: { cwd?: string; timeoutMs?: number } = {}): CliResult {
  const r = spawnSync(process.execPath, [TRIDENT_BIN, ...args], {
    encoding: 'utf8',
    cwd: options.cwd ?? process.cwd(),
    timeout: options.timeoutMs ?? 120_000,
    env: { ...process.env, TRIDENT_DEBUG: '' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function tempDir(prefix = 'trident-cli-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

const RSS_REPORTER = fileURLToPath(new URL('./fixtures/cli/report-max-rss.mjs', import.meta.url));

export interface MeasuredCliResult extends CliResult {
  readonly signal: NodeJS.Signals | null;
  /** Peak resident set size of the child, MiB. */
  readonly maxRssMiB: number;
  readonly wallMs: number;
}

/**
 * Runs `trident` as a child process (asynchronously, so several can run at once)
 * and reports its peak RSS, read in the child through process.resourceUsage().
 */
export async function tridentMeasured(
  args: readonly string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<MeasuredCliResult> {
  const rssFile = join(tempDir('trident-rss-'), 'rss');
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', pathToFileURL(RSS_REPORTER).href, TRIDENT_BIN, ...args], {
    env: { ...process.env, TRIDENT_DEBUG: '', TRIDENT_TEST_RSS_FILE: rssFile, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: options.timeoutMs ?? 120_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) => child.once('close', (c, s) => done([c, s])));
  const wallMs = performance.now() - started;
  const maxRssMiB = existsSync(rssFile) ? Number(readFileSync(rssFile, 'utf8')) / 1024 : Number.NaN;
  return { code, signal, stdout, stderr, maxRssMiB, wallMs };
}

/** A zip member as it is stored: `data` already compressed (method 8, raw deflate) or not (method 0). */
export interface ZipEntry {
  readonly name: string;
  readonly method: 0 | 8;
  readonly data: Uint8Array;
  /** Inflated size and CRC-32, as the headers declare them. */
  readonly size: number;
  readonly crc: number;
}

/**
 * A plain zip archive (no zip64) of members stored as given: lets a test build an
 * archive whose deflate stream it made itself (say, gigabytes of zeros in a few MB).
 */
export function zipArchive(entries: readonly ZipEntry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = new TextEncoder().encode(e.name);
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    local.setUint16(4, 20, true);
    local.setUint16(8, e.method, true);
    local.setUint16(12, 0x21, true); // 1980-01-01
    local.setUint32(14, e.crc >>> 0, true);
    local.setUint32(18, e.data.length, true);
    local.setUint32(22, e.size, true);
    local.setUint16(26, name.length, true);
    const dir = new DataView(new ArrayBuffer(46));
    dir.setUint32(0, 0x02014b50, true);
    dir.setUint16(4, 20, true);
    dir.setUint16(6, 20, true);
    dir.setUint16(10, e.method, true);
    dir.setUint16(14, 0x21, true);
    dir.setUint32(16, e.crc >>> 0, true);
    dir.setUint32(20, e.data.length, true);
    dir.setUint32(24, e.size, true);
    dir.setUint16(28, name.length, true);
    dir.setUint32(42, offset, true);
    parts.push(new Uint8Array(local.buffer), name, e.data);
    central.push(new Uint8Array(dir.buffer), name);
    offset += 30 + name.length + e.data.length;
  }
  const dirBytes = central.reduce((n, p) => n + p.length, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, entries.length, true);
  end.setUint16(10, entries.length, true);
  end.setUint32(12, dirBytes, true);
  end.setUint32(16, offset, true);
  return Buffer.concat([...parts, ...central, new Uint8Array(end.buffer)]);
}

/** A `.npy` file with the header dict given as text (any dtype, any shape) and raw data bytes. */
export function npyWithHeader(dict: string, data: Uint8Array = new Uint8Array(0)): Uint8Array {
  const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
  const header = `${dict.padEnd(total - 10 - 1, ' ')}\n`;
  const out = new Uint8Array(total + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(out.buffer).setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  out.set(data, total);
  return out;
}
