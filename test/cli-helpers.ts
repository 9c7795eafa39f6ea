/**
 * Helpers for the CLI tests (test/cli-*.node.test.ts): run the real `trident`
 * binary as a child process, so exit codes, stderr lines and files on disk are
 * what a user sees.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
