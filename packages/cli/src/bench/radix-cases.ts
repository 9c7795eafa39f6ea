/**
 * Radix sort of u32 keys, and of key-value pairs, into outputs allocated once (as CUB's
 * benchmark calls a sort): the H100 suite's sort cases, and the browser bench's beside them, so
 * that browser and Node time the same case. Browser-safe.
 */
import { radixSort, randomU32, sortReference } from '@trident/algorithms';
import { type BenchCase, sameArray } from './bench-case.ts';
import { isSortedPermutation } from './checks.ts';

/** Above this many keys the exact reference sort costs the host seconds: order and multiset instead. */
const EXACT_SORT_MAX = 2 ** 22;

/** 0, 1, …, n - 1 (a plain loop: `Uint32Array.from` with a map function is slow at 2^28). */
function positions(n: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}

export function radixCase(pairs: boolean): BenchCase {
  return {
    algorithm: 'sort',
    variant: pairs ? 'radix pairs' : 'radix keys',
    dtype: 'u32',
    sizes: [2 ** 12, 2 ** 14],
    // Each key (and value) read once and written once, as the CUB anchor's rows count them.
    bytes: (n) => (pairs ? 16 : 8) * n,
    setup(device, n) {
      const host = randomU32(n);
      const keys = device.createBuffer('u32', host);
      const output = device.createBuffer('u32', n);
      // Values are the original positions: the check proves the pairing and the stability.
      const values = pairs ? device.createBuffer('u32', positions(n)) : undefined;
      const valuesOutput = pairs ? device.createBuffer('u32', n) : undefined;
      return {
        run: () => {
          if (values && valuesOutput) radixSort(device, keys, { values, output, valuesOutput });
          else radixSort(device, keys, { output });
        },
        verify: async () => {
          const got = await output.read();
          if (valuesOutput) return isSortedPermutation(host, got, await valuesOutput.read());
          return n <= EXACT_SORT_MAX ? sameArray(got, sortReference(host).keys) : isSortedPermutation(host, got);
        },
        dispose: () => {
          for (const b of [keys, output, values, valuesOutput]) b?.destroy();
        },
      };
    },
  };
}

/** The two radix cases, for the browser page (the suite lists them in SUITE_CASES). */
export const RADIX_CASES: readonly BenchCase[] = [radixCase(false), radixCase(true)];
