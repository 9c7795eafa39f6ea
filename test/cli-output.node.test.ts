/**
 * `trident run` never loses an output file: outputs are written to a temporary
 * file in the same directory and renamed into place (packages/cli/src/output.ts),
 * so a run that fails, or is killed while writing, leaves an existing output
 * byte for byte as it was; `--out` may name the `--in` file; output paths that
 * cannot be written are refused before any device work.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeNpy, readNpy } from '../packages/cli/src/npy.ts';
import { TRIDENT_BIN, tempDir, trident } from './cli-helpers.ts';

const OLD = encodeNpy(new Uint32Array([0xdead, 0xbeef, 7]));

describe('trident run output files', () => {
  it('--out equal to --in: the input is read first, then replaced by the result', () => {
    const dir = tempDir();
    const file = join(dir, 'x.npy');
    writeFileSync(file, encodeNpy(new Uint32Array([1, 2, 3, 4])));
    const r = trident(['run', 'scan', '--backend', 'cpu', '--workers', '1', '--in', file, '--out', file]);
    expect(r.code, r.stderr).toBe(0);
    expect([...readNpy(file).data]).toEqual([1, 3, 6, 10]);
    expect(readdirSync(dir)).toEqual(['x.npy']); // no temporary file left behind
  });

  it('a run that fails on the device leaves the existing output intact (exit 1)', () => {
    const dir = tempDir();
    const input = join(dir, 'x.npy');
    const out = join(dir, 'h.npy');
    writeFileSync(input, encodeNpy(new Uint32Array([1, 2, 3])));
    writeFileSync(out, OLD);
    // More bins than a buffer may hold: the device refuses with LimitExceededError after the inputs were read.
    const r = trident(['run', 'histogram', '--bins', '4000000000', '--backend', 'cpu', '--workers', '1', '--in', input, '--out', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/LimitExceededError/);
    expect(readFileSync(out)).toEqual(Buffer.from(OLD));
    expect(readdirSync(dir).sort()).toEqual(['h.npy', 'x.npy']);
  });

  it('unwritable output paths are refused up front (exit 2), nothing written', () => {
    const dir = tempDir();
    const input = join(dir, 'k.npy');
    writeFileSync(input, encodeNpy(new Uint32Array([3, 1, 2])));
    mkdirSync(join(dir, 'sub'));
    const cases: Array<{ args: string[]; message: RegExp }> = [
      { args: ['--out', join(dir, 'missing', 'o.npy')], message: /--out .*: directory '.*missing' does not exist$/ },
      { args: ['--out', join(dir, 'sub')], message: /--out .*sub: is a directory$/ },
      { args: ['--out', join(input, 'o.npy')], message: /is not a directory$/ },
      {
        args: ['--values', input, '--out', join(dir, 'same.npy'), '--out-values', join(dir, 'same.npy')],
        message: /--out and --out-values name the same file/,
      },
    ];
    for (const c of cases) {
      const r = trident(['run', 'sort', '--backend', 'cpu', '--workers', '1', '--in', input, ...c.args]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim()).toMatch(c.message);
    }
    expect(readdirSync(dir).sort()).toEqual(['k.npy', 'sub']);
    expect(readdirSync(join(dir, 'sub'))).toEqual([]);
  });

  it('SIGKILL while the output is being written leaves the old file intact, never truncated', async () => {
    const dir = tempDir();
    const input = join(dir, 'big.npy');
    const out = join(dir, 'out.npy');
    // 8 Mi u32 = 32 MiB of output, written in 1 MiB slices and fsynced: a window of tens of ms.
    const n = 1 << 23;
    const data = new Uint32Array(n);
    for (let i = 0; i < n; i++) data[i] = (i * 2654435761) >>> 0;
    const fresh = Buffer.from(encodeNpy(data));
    writeFileSync(input, fresh);
    const old = Buffer.from(OLD);

    let killedMidWrite = 0;
    for (let attempt = 0; attempt < 6 && killedMidWrite === 0; attempt++) {
      writeFileSync(out, old);
      const child = spawn(
        process.execPath,
        [TRIDENT_BIN, 'run', 'zcopy', '--backend', 'cpu', '--workers', '1', '--in', input, '--out', out],
        {
          stdio: 'ignore',
          env: { ...process.env, TRIDENT_DEBUG: '' },
        },
      );
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      const temp = join(dir, `.out.npy.${child.pid}.0.tmp`);
      // Busy-wait (the child runs on the other core) so the kill lands while the temporary file is being filled.
      const deadline = Date.now() + 30_000;
      let sawTemp = false;
      while (Date.now() < deadline && child.exitCode === null) {
        if (existsSync(temp)) {
          sawTemp = true;
          break;
        }
      }
      child.kill('SIGKILL');
      await exited;
      const now = readFileSync(out);
      // Whatever the timing, the target is the old file or the complete new one: never anything else.
      const isOld = now.equals(old);
      expect(isOld || now.equals(fresh), `attempt ${attempt}: ${now.length} bytes, neither old nor complete`).toBe(true);
      if (sawTemp && isOld) killedMidWrite++;
    }
    // At least one attempt must really have killed the writer mid-file (else the test proved nothing).
    expect(killedMidWrite).toBeGreaterThan(0);
  });
});
