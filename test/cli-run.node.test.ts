/**
 * `trident run` agrees with each algorithm's sequential reference
 * (packages/algorithms/src/reference) on every backend available here, through
 * real .npy files and the real binary.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  compactReference,
  histogramReference,
  nbodyForceScale,
  nbodyReference,
  reduceReference,
  scanReference,
  sortReference,
  zcopyReference,
} from '@trident/algorithms';
import { describe, expect, it } from 'vitest';
import { encodeNpy, type NpyData, readNpy } from '../packages/cli/src/npy.ts';
import { tempDir, trident } from './cli-helpers.ts';
import { randomU32, TEST_BACKENDS } from './harness.ts';

const bits = (a: NpyData): number[] => [...new Uint32Array(a.buffer, a.byteOffset, a.length)];

function inputs(n: number): Record<'u32' | 'i32' | 'f32', NpyData> {
  const raw = randomU32(n, n + 7);
  return {
    u32: raw,
    i32: new Int32Array(raw.buffer.slice(0)),
    // Finite floats of mixed sign and magnitude (random bit patterns would include NaNs).
    f32: Float32Array.from(raw, (x) => ((x % 2001) - 1000) / 7),
  };
}

for (const backend of TEST_BACKENDS) {
  describe(`trident run [${backend}]`, () => {
    const dir = tempDir();
    const run = (...args: string[]) => trident(['run', ...args, '--backend', backend, '--workers', '2']);
    const save = (name: string, data: NpyData, shape?: number[]): string => {
      const file = join(dir, name);
      writeFileSync(file, encodeNpy(data, shape));
      return file;
    };

    it('zcopy: output equals the input bit for bit (u32, i32, f32; n = 1000)', () => {
      for (const [dtype, data] of Object.entries(inputs(1000))) {
        const out = join(dir, `zcopy-${dtype}.out.npy`);
        const r = run('zcopy', '--in', save(`zcopy-${dtype}.npy`, data), '--out', out);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toContain(`zcopy on ${backend}`);
        const got = readNpy(out);
        expect(got.dtype).toBe(dtype);
        expect(bits(got.data)).toEqual(bits(zcopyReference(data)));
      }
    });

    it('reduce: sum/min/max match reduceReference, as a 1-element array of the input dtype', () => {
      for (const [dtype, data] of Object.entries(inputs(4099))) {
        const file = save(`reduce-${dtype}.npy`, data);
        for (const op of ['sum', 'min', 'max'] as const) {
          const out = join(dir, `reduce-${dtype}-${op}.out.npy`);
          const r = run('reduce', '--op', op, '--in', file, '--out', out);
          expect(r.code, r.stderr).toBe(0);
          const got = readNpy(out);
          expect(got.dtype).toBe(dtype);
          expect(got.shape).toEqual([1]);
          const want = reduceReference(data, op);
          if (dtype === 'f32' && op === 'sum') {
            // f32 sums are reassociated by a parallel tree: agree to a few ulps of the f64 reference.
            expect(Math.abs((got.data[0] as number) - want)).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(want)) + 1e-2);
          } else {
            expect(got.data[0]).toBe(dtype === 'f32' ? Math.fround(want) : want);
          }
        }
      }
    });

    it('scan: inclusive and exclusive match scanReference (n = 2^12 + 1)', () => {
      for (const [dtype, data] of Object.entries(inputs(4097))) {
        const file = save(`scan-${dtype}.npy`, data);
        for (const exclusive of [false, true]) {
          const out = join(dir, `scan-${dtype}-${exclusive}.out.npy`);
          const r = run('scan', ...(exclusive ? ['--exclusive'] : []), '--in', file, '--out', out);
          expect(r.code, r.stderr).toBe(0);
          const got = readNpy(out);
          expect(got.dtype).toBe(dtype);
          const want = scanReference(data, exclusive);
          if (dtype !== 'f32') {
            expect([...got.data]).toEqual([...want]);
            continue;
          }
          // f32: parallel scans reassociate; bound the error by the prefix sum of |x| (generous ulp factor).
          let abs = 0;
          for (let i = 0; i < data.length; i++) {
            if (!exclusive) abs += Math.abs(data[i] as number);
            expect(Math.abs((got.data[i] as number) - (want[i] as number))).toBeLessThanOrEqual(1e-5 * abs + 1e-6);
            if (exclusive) abs += Math.abs(data[i] as number);
          }
        }
      }
    });

    it('histogram: counts match histogramReference (values past --bins ignored)', () => {
      const data = randomU32(5003, 3).map((x) => x % 300);
      const out = join(dir, 'hist.out.npy');
      const r = run('histogram', '--bins', '256', '--in', save('hist.npy', data), '--out', out);
      expect(r.code, r.stderr).toBe(0);
      const got = readNpy(out);
      expect(got.dtype).toBe('u32');
      expect([...got.data]).toEqual([...histogramReference(data, 256)]);
    });

    it('compact: matches compactReference bit for bit (u32, i32, f32)', () => {
      const flags = randomU32(3001, 11).map((x) => (x % 3 === 0 ? 0 : x));
      const flagsFile = save('flags.npy', flags);
      for (const [dtype, data] of Object.entries(inputs(3001))) {
        const out = join(dir, `compact-${dtype}.out.npy`);
        const r = run('compact', '--in', save(`compact-${dtype}.npy`, data), '--flags', flagsFile, '--out', out);
        expect(r.code, r.stderr).toBe(0);
        const got = readNpy(out);
        expect(got.dtype).toBe(dtype);
        expect(bits(got.data)).toEqual(bits(compactReference(data, flags)));
      }
    });

    it('compact: flags of another length is exit 2 naming the flags file, nothing written', () => {
      const out = join(dir, 'compact-bad.out.npy');
      const flagsFile = save('flags-short.npy', new Uint32Array(10));
      const r = run('compact', '--in', save('compact-in.npy', new Uint32Array(11)), '--flags', flagsFile, '--out', out);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(`trident run: ${flagsFile}: length 10 differs from the length 11 of ${join(dir, 'compact-in.npy')}`);
      expect(existsSync(out)).toBe(false);
    });

    it('sort: keys (and values) match sortReference for every method wired and the default', () => {
      const data = inputs(1500);
      const values = save('sort-values.npy', randomU32(1500, 99));
      const valuesHost = readNpy(values).data;
      // The default method on every dtype; each named method on f32 (the total order is the hard case).
      const runs = [
        ...(['u32', 'i32', 'f32'] as const).map((dtype) => [undefined, dtype] as const),
        ['radix', 'f32'] as const,
        ['merge', 'f32'] as const,
        ['bitonic', 'f32'] as const,
        ['quick', 'f32'] as const,
      ];
      for (const [method, dtype] of runs) {
        {
          const keys = data[dtype] as NpyData;
          const outK = join(dir, `sort-${method}-${dtype}.k.npy`);
          const outV = join(dir, `sort-${method}-${dtype}.v.npy`);
          const args = ['sort', ...(method ? ['--method', method] : []), '--in', save(`sort-${dtype}.npy`, keys), '--values', values];
          const r = run(...args, '--out', outK, '--out-values', outV);
          expect(r.code, r.stderr).toBe(0);
          const want = sortReference(keys, valuesHost);
          expect(bits(readNpy(outK).data)).toEqual(bits(want.keys));
          expect(bits(readNpy(outV).data)).toEqual(bits(want.values as NpyData));
        }
      }
    });

    it('nbody: (n, 4) bodies and velocities after S leapfrog steps match nbodyReference', () => {
      const n = 64;
      const raw = randomU32(8 * n, 5);
      const bodies = Float32Array.from(raw.subarray(0, 4 * n), (x, i) => (i % 4 === 3 ? 1 + (x % 10) / 10 : (x % 2001) / 1000 - 1));
      const velocities = Float32Array.from(raw.subarray(4 * n), (x, i) => (i % 4 === 3 ? 0 : ((x % 201) - 100) / 1000));
      const outB = join(dir, 'nbody.b.npy');
      const outV = join(dir, 'nbody.v.npy');
      const args = ['--in', save('bodies.npy', bodies, [n, 4]), '--velocities', save('vel.npy', velocities, [n, 4])];
      const r = run('nbody', ...args, '--steps', '3', '--dt', '0.001', '--softening', '0.05', '--out', outB, '--out-velocities', outV);
      expect(r.code, r.stderr).toBe(0);
      const gotB = readNpy(outB);
      const gotV = readNpy(outV);
      expect(gotB.shape).toEqual([n, 4]);
      expect(gotV.shape).toEqual([n, 4]);
      const want = nbodyReference(bodies, { steps: 3, dt: 0.001, softening2: 0.0025, velocities });
      const scale = nbodyForceScale(bodies, 0.0025);
      for (let i = 0; i < 4 * n; i++) {
        // Masses carried exactly; positions/velocities within f32 accumulation error of the force scale.
        if (i % 4 === 3) expect(gotB.data[i]).toBe(bodies[i]);
        const tol = 1e-5 * (1 + (scale[i >> 2] as number) * 0.003);
        expect(Math.abs((gotB.data[i] as number) - (want.bodies[i] as number))).toBeLessThanOrEqual(tol);
        expect(Math.abs((gotV.data[i] as number) - (want.velocities[i] as number))).toBeLessThanOrEqual(tol * 10);
      }
    });

    it('nbody: (n, 3) velocities (the NumPy shape) come back (n, 3); without --velocities (zero start) the output is (n, 3)', () => {
      const n = 16;
      const raw = randomU32(7 * n, 6);
      const bodies = Float32Array.from(raw.subarray(0, 4 * n), (x, i) => (i % 4 === 3 ? 1 : (x % 2001) / 1000 - 1));
      const vel3 = Float32Array.from(raw.subarray(4 * n), (x) => ((x % 201) - 100) / 1000);
      const vel4 = new Float32Array(4 * n);
      for (let i = 0; i < n; i++) vel4.set(vel3.subarray(3 * i, 3 * i + 3), 4 * i);
      const outB = join(dir, 'nbody3.b.npy');
      const outV = join(dir, 'nbody3.v.npy');
      const common = ['--steps', '2', '--dt', '0.001', '--softening', '0.05', '--out', outB, '--out-velocities', outV];
      const r = run('nbody', '--in', save('bodies3.npy', bodies, [n, 4]), '--velocities', save('vel3.npy', vel3, [n, 3]), ...common);
      expect(r.code, r.stderr).toBe(0);
      const gotV = readNpy(outV);
      expect(gotV.shape).toEqual([n, 3]);
      const want = nbodyReference(bodies, { steps: 2, dt: 0.001, softening2: 0.0025, velocities: vel4 });
      const scale = nbodyForceScale(bodies, 0.0025);
      for (let i = 0; i < n; i++) {
        const tol = 1e-4 * (1 + (scale[i] as number) * 0.003);
        for (let c = 0; c < 3; c++) {
          expect(Math.abs((gotV.data[3 * i + c] as number) - (want.velocities[4 * i + c] as number))).toBeLessThanOrEqual(tol);
        }
      }
      // No velocities given: they start at zero and are written (n, 3).
      const r0 = run('nbody', '--in', save('bodies3.npy', bodies, [n, 4]), ...common);
      expect(r0.code, r0.stderr).toBe(0);
      expect(readNpy(outV).shape).toEqual([n, 3]);
    });

    it('nbody: velocities of another shape or row count are exit 2 with the accepted shapes named', () => {
      const n = 4;
      const bodiesFile = save('bodies4.npy', new Float32Array(4 * n).fill(1), [n, 4]);
      const out = join(dir, 'nbody-badv.npy');
      const badShape = save('vel2.npy', new Float32Array(2 * n), [n, 2]);
      const r = run('nbody', '--in', bodiesFile, '--velocities', badShape, '--steps', '1', '--dt', '0.1', '--out', out);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(
        `trident run: ${badShape}: wrong shape (${n}, 2): expected (n, 3) = vx, vy, vz (or (n, 4), the 4th column carried through)`,
      );
      const badRows = save('vel5.npy', new Float32Array(3 * 5), [5, 3]);
      const r2 = run('nbody', '--in', bodiesFile, '--velocities', badRows, '--steps', '1', '--dt', '0.1', '--out', out);
      expect(r2.code).toBe(2);
      expect(r2.stderr.trim()).toBe(`trident run: ${badRows}: 5 velocities for ${n} bodies in ${bodiesFile}`);
      expect(existsSync(out)).toBe(false);
    });

    it('nbody: a 1-D bodies file is exit 2 (wrong shape), nothing written', () => {
      const out = join(dir, 'nbody-bad.npy');
      const file = save('bodies-1d.npy', new Float32Array(8));
      const r = run('nbody', '--in', file, '--steps', '1', '--dt', '0.1', '--out', out);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(`trident run: ${file}: wrong shape (8): expected (n, 4) = x, y, z, mass`);
      expect(existsSync(out)).toBe(false);
    });
  });
}
