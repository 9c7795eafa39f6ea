/**
 * `trident run --backend webgl2` runs transparently in headless Chromium (Node
 * has no WebGL2) and agrees with the sequential references, one spawn per
 * algorithm (each launches Chromium, so inputs stay small).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  compactReference,
  histogramReference,
  nbodyReference,
  reduceReference,
  scanReference,
  sortReference,
  zcopyReference,
} from '@trident/algorithms';
import { describe, expect, it } from 'vitest';
import { encodeNpy, type NpyData, readNpy } from '../packages/cli/src/npy.ts';
import { tempDir, trident } from './cli-helpers.ts';
import { randomU32 } from './harness.ts';

const bits = (a: NpyData): number[] => [...new Uint32Array(a.buffer, a.byteOffset, a.length)];

describe('trident run --backend webgl2 (headless Chromium)', () => {
  const dir = tempDir();
  const save = (name: string, data: NpyData, shape?: number[]): string => {
    const file = join(dir, name);
    writeFileSync(file, encodeNpy(data, shape));
    return file;
  };
  const run = (...args: string[]) => trident(['run', ...args, '--backend', 'webgl2']);
  const ok = (r: ReturnType<typeof trident>): void => {
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/on webgl2 \(.+\) in headless Chromium/);
  };

  it('zcopy, reduce, scan', () => {
    const f = Float32Array.from(randomU32(777, 1), (x) => ((x % 2001) - 1000) / 8);
    const i = new Int32Array(randomU32(777, 2).buffer);
    const u = randomU32(777, 3).map((x) => x % 1000);
    ok(run('zcopy', '--in', save('f.npy', f), '--out', join(dir, 'z.npy')));
    expect(bits(readNpy(join(dir, 'z.npy')).data)).toEqual(bits(zcopyReference(f)));
    ok(run('reduce', '--op', 'max', '--in', save('i.npy', i), '--out', join(dir, 'r.npy')));
    expect([...readNpy(join(dir, 'r.npy')).data]).toEqual([reduceReference(i, 'max')]);
    ok(run('scan', '--exclusive', '--in', save('u.npy', u), '--out', join(dir, 's.npy')));
    expect([...readNpy(join(dir, 's.npy')).data]).toEqual([...scanReference(u, true)]);
  });

  it('histogram, compact, sort with values', () => {
    const u = randomU32(1001, 4).map((x) => x % 40);
    const flags = randomU32(1001, 5).map((x) => x & 1);
    const keys = Float32Array.from(randomU32(600, 6), (x) => ((x % 201) - 100) / 4);
    const values = randomU32(600, 7);
    ok(run('histogram', '--bins', '32', '--in', save('h.npy', u), '--out', join(dir, 'h.out.npy')));
    expect([...readNpy(join(dir, 'h.out.npy')).data]).toEqual([...histogramReference(u, 32)]);
    ok(run('compact', '--in', save('c.npy', u), '--flags', save('cf.npy', flags), '--out', join(dir, 'c.out.npy')));
    expect([...readNpy(join(dir, 'c.out.npy')).data]).toEqual([...compactReference(u, flags)]);
    const sortArgs = ['--in', save('k.npy', keys), '--values', save('v.npy', values)];
    ok(run('sort', ...sortArgs, '--out', join(dir, 'k.out.npy'), '--out-values', join(dir, 'v.out.npy')));
    const want = sortReference(keys, values);
    expect(bits(readNpy(join(dir, 'k.out.npy')).data)).toEqual(bits(want.keys));
    expect(bits(readNpy(join(dir, 'v.out.npy')).data)).toEqual(bits(want.values as NpyData));
  });

  it('nbody', () => {
    const n = 32;
    const bodies = Float32Array.from(randomU32(4 * n, 8), (x, i) => (i % 4 === 3 ? 1 : (x % 2001) / 1000 - 1));
    ok(
      run(
        'nbody',
        '--in',
        save('b.npy', bodies, [n, 4]),
        '--steps',
        '2',
        '--dt',
        '0.001',
        '--softening',
        '0.1',
        '--out',
        join(dir, 'b.out.npy'),
      ),
    );
    const got = readNpy(join(dir, 'b.out.npy'));
    expect(got.shape).toEqual([n, 4]);
    const want = nbodyReference(bodies, { steps: 2, dt: 0.001, softening2: 0.01 });
    for (let i = 0; i < 4 * n; i++) expect(Math.abs((got.data[i] as number) - (want.bodies[i] as number))).toBeLessThanOrEqual(1e-4);
  });

  it('sort --method radix runs on webgl2 (the gather radix sort)', () => {
    const keys = randomU32(100, 9);
    ok(run('sort', '--method', 'radix', '--in', save('q.npy', keys), '--out', join(dir, 'q.out.npy')));
    expect(bits(readNpy(join(dir, 'q.out.npy')).data)).toEqual(bits(sortReference(keys).keys));
  });

  it('a run the device refuses fails with exit 1 naming the error in one line, nothing written', () => {
    const out = join(dir, 'big.out.npy');
    // More bins than a buffer may hold: refused in the page after the input was read.
    const r = run('histogram', '--bins', '4000000000', '--in', save('b.npy', new Uint32Array([1, 2, 3])), '--out', out);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/LimitExceededError: /);
    expect(existsSync(out)).toBe(false);
  });
});
