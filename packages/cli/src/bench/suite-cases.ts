/**
 * Cases the GPU machine's suite runs beside the local bench's (bench/suites.ts): the
 * f32 and exclusive variants of reduce and scan, the histogram's worst case (every value
 * in one bin), and radix sorts of keys and of key-value pairs into outputs allocated once
 * (`options.output` / `valuesOutput`), the way CUB's benchmark calls its sorts: a new
 * 1 GiB output per call cost the same 2^28 sort 2.3-2.5x on the H100, the allocation's
 * price and not the sort's. Their variant names are those of the CUB anchor's rows
 * (bench/anchors.ts), so the report sets each beside CUB at the same n.
 *
 * Checks stay exact where the host can afford the reference; sorts of more than 2^22
 * keys are checked for order and multiset (pairs: a stable permutation carrying each
 * key's index, which is exact), bench/checks.ts.
 *
 * The suite's BFS and components cases are the local bench's (bench/graph-cases.ts) with
 * their R-MAT graphs built on worker threads (bench/rmat-threads.ts: the same graphs), each
 * host phase of a step (generation, CSR, upload, read-back, reference) printed on stderr
 * beside the suite's progress lines, and the same cases on Graph500's shape (edge factor 16,
 * variant 'rmat ef16'), the suite's graphs from 2^30 stored edges (bench/suites.ts).
 */
import { randomU32, reduceInto, reduceReference, scan, scanReference } from '@trident/algorithms';
import { type BenchCase, sameArray } from './bench-case.ts';
import { histogram256Case } from './cases.ts';
import { bfsCase, componentsCase, type GraphHost } from './graph-cases.ts';
import { radixCase } from './radix-cases.ts';
import { rmatGraphThreads } from './rmat-threads.ts';

/** Values in [0, 1): sums of 2^28 of them stay within f32's range and checkable. */
function unitFloats(n: number): Float32Array {
  // A loop, not Float32Array.from(array, map): V8 collects a mapped from() in a JavaScript array
  // first, which does not fit its heap at 2^28 elements.
  const bits = randomU32(n, 7);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (bits[i] as number) / 2 ** 32;
  return out;
}

/** f32 results summed in another order than the reference's: within 1e-4 of max(1, |reference|). */
function closeF32(got: Float32Array, want: Float64Array | Float32Array): boolean {
  if (got.length !== want.length) return false;
  for (let i = 0; i < got.length; i++) {
    const b = want[i] as number;
    if (!(Math.abs((got[i] as number) - b) <= 1e-4 * Math.max(1, Math.abs(b)))) return false;
  }
  return true;
}

const reduceSumF32: BenchCase = {
  algorithm: 'reduce',
  variant: 'sum f32',
  dtype: 'f32',
  sizes: [2 ** 16, 2 ** 20],
  bytes: (n) => 4 * n + 4,
  setup(device, n) {
    const host = unitFloats(n);
    const src = device.createBuffer('f32', host);
    const out = device.createBuffer('f32', 1);
    return {
      run: () => {
        reduceInto(device, src, { op: 'sum', output: out });
      },
      verify: async () => {
        const want = reduceReference(host, 'sum');
        return Math.abs(((await out.read())[0] as number) - want) <= 1e-4 * Math.max(1, want);
      },
      dispose: () => {
        src.destroy();
        out.destroy();
      },
    };
  },
};

function scanCase(variant: 'exclusive' | 'inclusive f32' | 'exclusive f32'): BenchCase {
  const exclusive = variant.startsWith('exclusive');
  const f32 = variant.endsWith('f32');
  return {
    algorithm: 'scan',
    variant,
    dtype: f32 ? 'f32' : 'u32',
    sizes: [2 ** 16, 2 ** 20],
    bytes: (n) => 8 * n,
    setup(device, n) {
      if (f32) {
        const host = unitFloats(n);
        const src = device.createBuffer('f32', host);
        const dst = device.createBuffer('f32', n);
        return {
          run: () => {
            scan(device, src, { output: dst, exclusive });
          },
          verify: async () => closeF32(await dst.read(), scanReference(host, exclusive)),
          dispose: () => {
            src.destroy();
            dst.destroy();
          },
        };
      }
      const host = randomU32(n);
      const src = device.createBuffer('u32', host);
      const dst = device.createBuffer('u32', n);
      return {
        run: () => {
          scan(device, src, { output: dst, exclusive });
        },
        verify: async () => sameArray(await dst.read(), scanReference(host, exclusive)),
        dispose: () => {
          src.destroy();
          dst.destroy();
        },
      };
    },
  };
}

/** Every value in one bin: all atomics on one counter, the histogram's worst case. */
const histogramAllEqual = histogram256Case('256 bins all-equal', [2 ** 16, 2 ** 20], (n) => new Uint32Array(n).fill(17));

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** A host phase on stderr, between the suite's progress lines (where a large graph step's minutes go). */
function printPhase(step: string, what: string): void {
  process.stderr.write(`  host ${step}: ${what}\n`);
}

/** R-MAT graphs on worker threads (one per logical CPU), every host phase printed. */
const THREADED_HOST: GraphHost = {
  rmat(scale, edgeFactor, seed) {
    const { graph, times } = rmatGraphThreads(scale, edgeFactor, { symmetric: true, seed });
    printPhase(
      `R-MAT scale ${scale}, edge factor ${edgeFactor}`,
      `generation ${seconds(times.generationMs)}, CSR ${seconds(times.csrMs)} (${times.threads} thread${times.threads > 1 ? 's' : ''})`,
    );
    return graph;
  },
  phase: (step, what, ms) => printPhase(step, `${what} ${seconds(ms)}`),
};

/** The suite's graph cases: these replace the local bench's of the same name in a suite (bench/suites.ts). */
export const SUITE_GRAPH_CASES: readonly BenchCase[] = [
  bfsCase('rmat', THREADED_HOST),
  componentsCase('rmat', THREADED_HOST),
  bfsCase('rmat ef16', THREADED_HOST),
  componentsCase('rmat ef16', THREADED_HOST),
];

export const SUITE_CASES: readonly BenchCase[] = [
  reduceSumF32,
  scanCase('exclusive'),
  scanCase('inclusive f32'),
  scanCase('exclusive f32'),
  histogramAllEqual,
  radixCase(false),
  radixCase(true),
];
