/**
 * `trident run` never loses an output file: outputs are written to a temporary
 * file in the same directory and renamed into place (packages/cli/src/output.ts),
 * so a run that fails, or is killed while writing, leaves an existing output
 * byte for byte as it was; `--out` may name the `--in` file; output paths that
 * cannot be written are refused before any device work.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeError } from '../packages/cli/src/errors.ts';
import { encodeNpy, readNpy } from '../packages/cli/src/npy.ts';
import { checkOutputTargets, commitOutputs, OutputWriteError } from '../packages/cli/src/output.ts';
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
      const temp = join(dir, `.trident-${child.pid}-0.tmp`);
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

  it('two outputs commit together: when the second rename fails, both old files are back and no temp is left', () => {
    const dir = tempDir();
    const keys = join(dir, 'k.npy');
    const values = join(dir, 'v.npy');
    const fresh = join(dir, 'fresh.npy'); // no earlier file: the rollback removes the new one
    const oldKeys = encodeNpy(Uint32Array.of(1, 2));
    const oldValues = encodeNpy(Float32Array.of(0.5));
    writeFileSync(keys, oldKeys);
    writeFileSync(values, oldValues);
    const failSecond = {
      renameSync(from: string, to: string): void {
        if (to === values && from.endsWith('.tmp')) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        renameSync(from, to);
      },
    };
    const outputs = [
      { path: fresh, bytes: encodeNpy(Uint32Array.of(9)) },
      { path: keys, bytes: encodeNpy(Uint32Array.of(3, 4)) },
      { path: values, bytes: encodeNpy(Float32Array.of(7)) },
    ];
    let error: unknown;
    try {
      commitOutputs(outputs, failSecond);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OutputWriteError);
    expect(describeError(error)).toEqual({ code: 1, line: `OutputWriteError: ${values}: no space left on the device` });
    expect(readFileSync(keys)).toEqual(Buffer.from(oldKeys));
    expect(readFileSync(values)).toEqual(Buffer.from(oldValues));
    expect(readdirSync(dir).sort()).toEqual(['k.npy', 'v.npy']);
    // Without the fault the same commit replaces all three.
    commitOutputs(outputs);
    expect([...readNpy(keys).data]).toEqual([3, 4]);
    expect([...readNpy(values).data]).toEqual([7]);
    expect(readdirSync(dir).sort()).toEqual(['fresh.npy', 'k.npy', 'v.npy']);
  });

  it('through the binary: --out-values made unwritable during the run rolls --out back (exit 1, old keys, no temp)', async () => {
    const dir = tempDir();
    const keysIn = join(dir, 'keys-in.npy');
    const valuesIn = join(dir, 'values-in.npy');
    const n = 1 << 20;
    const keys = new Uint32Array(n);
    for (let i = 0; i < n; i++) keys[i] = (i * 2654435761) >>> 0;
    writeFileSync(keysIn, encodeNpy(keys));
    writeFileSync(valuesIn, encodeNpy(new Float32Array(n)));
    const k = join(dir, 'k.npy');
    const v = join(dir, 'v.npy');
    const oldKeys = Buffer.from(OLD);
    let landed = false;
    for (let attempt = 0; attempt < 3 && !landed; attempt++) {
      writeFileSync(k, oldKeys);
      rmSync(v, { recursive: true, force: true });
      writeFileSync(v, OLD);
      const child = spawn(
        process.execPath,
        [
          TRIDENT_BIN,
          'run',
          'sort',
          '--method',
          'merge',
          '--backend',
          'cpu',
          '--workers',
          '1',
          '--in',
          keysIn,
          '--values',
          valuesIn,
          '--out',
          k,
          '--out-values',
          v,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, TRIDENT_DEBUG: '' } },
      );
      let stderr = '';
      const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
      // The outputs were checked before the device was made (its line on stderr): now v.npy turns into a directory.
      await new Promise<void>((started) =>
        child.stderr.setEncoding('utf8').on('data', (s: string) => {
          stderr += s;
          if (/ on cpu/.test(stderr)) started();
        }),
      );
      rmSync(v);
      mkdirSync(join(v, 'inside'), { recursive: true });
      const code = await exited;
      if (code === 0) continue; // the commit won the race; try again
      landed = true;
      expect(code, stderr).toBe(1);
      expect(stderr.trim().split('\n').at(-1)).toBe(`trident run: OutputWriteError: ${v}: is a directory`);
      expect(readFileSync(k), '--out has its old contents back').toEqual(oldKeys);
      expect(readdirSync(dir).sort(), 'no temporary or kept-aside file').toEqual(['k.npy', 'keys-in.npy', 'v.npy', 'values-in.npy']);
    }
    expect(landed, 'the directory appeared before the commit in one of the attempts').toBe(true);
  });

  it('unwritable places are refused up front with exit 2 naming the output, not a temporary file', () => {
    const dir = tempDir();
    const cases: Array<[string, RegExp]> = [
      ['/proc/o.npy', /^--out \/proc\/o\.npy: cannot write in '\/proc': files cannot be created there$/],
      ['/sys/o.npy', /^--out \/sys\/o\.npy: cannot write in '\/sys': (permission denied|read-only file system)$/],
      [join(dir, `${'n'.repeat(300)}.npy`), /^--out .*: name too long$/],
      ['/dev/null', /^--out \/dev\/null: is not a regular file/],
    ];
    for (const [path, message] of cases) {
      let error: unknown;
      try {
        checkOutputTargets([{ flag: '--out', path }]);
      } catch (e) {
        error = e;
      }
      const { code, line } = describeError(error);
      expect(code, path).toBe(2);
      expect(line, path).toMatch(message);
      expect(line, path).not.toMatch(/\.tmp|\.trident-/);
    }
    expect(readdirSync(dir)).toEqual([]);
    // Through the binary: before any device work (no "on cpu" line), exit 2, one line.
    const input = join(dir, 'k.npy');
    writeFileSync(input, encodeNpy(Uint32Array.of(3, 1, 2)));
    const r = trident(['run', 'sort', '--backend', 'cpu', '--workers', '1', '--in', input, '--out', '/proc/k.npy']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim()).toBe("trident run: --out /proc/k.npy: cannot write in '/proc': files cannot be created there");
  });

  it('an output name of 255 bytes (NAME_MAX) is written: temporary names do not grow with it', () => {
    const dir = tempDir();
    const out = join(dir, `${'x'.repeat(251)}.npy`);
    checkOutputTargets([{ flag: '--out', path: out }]);
    commitOutputs([{ path: out, bytes: encodeNpy(Uint32Array.of(5)) }]);
    expect([...readNpy(out).data]).toEqual([5]);
    expect(readdirSync(dir)).toEqual([`${'x'.repeat(251)}.npy`]);
  });

  it('--out naming a symbolic link writes through it to the file it names (as np.save); the link stays', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'data'));
    const target = join(dir, 'data', 'real.npy');
    writeFileSync(target, OLD);
    const link = join(dir, 'link.npy');
    symlinkSync(join('data', 'real.npy'), link);
    const dangling = join(dir, 'dangling.npy');
    symlinkSync(join('data', 'new.npy'), dangling);
    checkOutputTargets([
      { flag: '--out', path: link },
      { flag: '--out-values', path: dangling },
    ]);
    commitOutputs([
      { path: link, bytes: encodeNpy(Uint32Array.of(1)) },
      { path: dangling, bytes: encodeNpy(Uint32Array.of(2)) },
    ]);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(join('data', 'real.npy'));
    expect([...readNpy(target).data]).toEqual([1]);
    expect(lstatSync(dangling).isSymbolicLink()).toBe(true);
    expect([...readNpy(join(dir, 'data', 'new.npy')).data]).toEqual([2]);
    expect(readdirSync(join(dir, 'data')).sort()).toEqual(['new.npy', 'real.npy']);
    // A link and the file it names are one output.
    expect(() =>
      checkOutputTargets([
        { flag: '--out', path: link },
        { flag: '--out-values', path: target },
      ]),
    ).toThrow(/--out and --out-values name the same file/);
    // A loop of links is refused up front.
    symlinkSync('loop-b', join(dir, 'loop-a'));
    symlinkSync('loop-a', join(dir, 'loop-b'));
    expect(() => checkOutputTargets([{ flag: '--out', path: join(dir, 'loop-a') }])).toThrow(/too many levels of symbolic links/);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} while the output is being written: the process ends by the signal, no temporary file is left`, async () => {
      const dir = tempDir();
      const input = join(dir, 'big.npy');
      const out = join(dir, 'out.npy');
      const data = new Uint32Array(1 << 23);
      for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 0;
      const fresh = Buffer.from(encodeNpy(data));
      writeFileSync(input, fresh);
      const old = Buffer.from(OLD);
      let sawTemp = false;
      for (let attempt = 0; attempt < 4 && !sawTemp; attempt++) {
        writeFileSync(out, old);
        const child = spawn(
          process.execPath,
          [TRIDENT_BIN, 'run', 'zcopy', '--backend', 'cpu', '--workers', '1', '--in', input, '--out', out],
          {
            stdio: 'ignore',
            env: { ...process.env, TRIDENT_DEBUG: '' },
          },
        );
        const exited = new Promise<NodeJS.Signals | null>((done) => child.once('exit', (_code, s) => done(s)));
        const temp = join(dir, `.trident-${child.pid}-0.tmp`);
        const deadline = Date.now() + 30_000;
        while (Date.now() < deadline && child.exitCode === null) {
          if (existsSync(temp)) {
            sawTemp = true;
            break;
          }
        }
        child.kill(signal);
        const endedBy = await exited;
        if (sawTemp) expect(endedBy, 'the process ends by the signal it got').toBe(signal);
        const now = readFileSync(out);
        expect(now.equals(old) || now.equals(fresh), `attempt ${attempt}: neither old nor complete`).toBe(true);
        expect(readdirSync(dir).sort(), 'no temporary or kept-aside file').toEqual(['big.npy', 'out.npy']);
      }
      expect(sawTemp, 'a signal landed while the temporary file existed').toBe(true);
    });
  }
});
