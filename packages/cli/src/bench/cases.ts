/**
 * The benchmark cases: one per algorithm variant, each knowing its default
 * sizes, the work one run does (bytes moved or flops) and how to prepare a run
 * on a device and check its result against the sequential reference.
 *
 * Bytes count the minimal traffic of the operation (what a perfect
 * implementation must read and write), so GB/s compares across backends and
 * with the zcopy ceiling: zcopy n reads + n writes; zfill n writes.
 */
import {
  bitonicSort,
  compact,
  compactInto,
  compactReference,
  histogram,
  histogramReference,
  mergeSort,
  NBODY_FLOPS_PER_INTERACTION,
  nbodyAccelerations,
  nbodyAccelerationsReference,
  nbodyForceScale,
  quickSort,
  type ReduceOp,
  radixSort,
  randomU32,
  reduceInto,
  reduceReference,
  scan,
  scanReference,
  sort,
  sortReference,
  zcopy,
  zcopyReference,
  zfill,
} from '@trident/algorithms';
import { recordBlendedHistogram } from '@trident/algorithms/internal';
import type { Buffer, Device } from 'trident';
import { type BenchCase, type PeerRun, PeerUnavailableError, sameArray } from './bench-case.ts';
import { isCompaction, nbodySampleMatches } from './checks.ts';
import { gpuJsNbodyMatches, gpuJsNbodySettings, nbodyAccel } from './gpujs-nbody.ts';
import { GRAPH_CASES } from './graph-cases.ts';

export { type BenchCase, type PeerRun, PeerUnavailableError, type PreparedRun, sameArray } from './bench-case.ts';

/** Four sizes per case, so the report can draw throughput-vs-n curves; the whole default bench stays within the Quick start's 10 minutes on 2 cores. */
const MEMORY_SIZES = [2 ** 14, 2 ** 16, 2 ** 18, 2 ** 20] as const;

export const CASES: readonly BenchCase[] = [
  {
    algorithm: 'zcopy',
    variant: 'copy',
    dtype: 'u32',
    sizes: MEMORY_SIZES,
    bytes: (n) => 8 * n,
    setup(device, n) {
      const host = randomU32(n);
      const src = device.createBuffer('u32', host);
      const dst = device.createBuffer('u32', n);
      return {
        run: () => {
          zcopy(device, src, { output: dst });
        },
        verify: async () => sameArray(await dst.read(), zcopyReference(host)),
        dispose: () => {
          src.destroy();
          dst.destroy();
        },
      };
    },
  },
  {
    algorithm: 'zcopy',
    variant: 'fill',
    dtype: 'u32',
    sizes: MEMORY_SIZES,
    bytes: (n) => 4 * n,
    setup(device, n) {
      const dst = device.createBuffer('u32', n);
      return {
        run: () => zfill(device, dst, 7),
        verify: async () => (await dst.read()).every((v) => v === 7),
        dispose: () => dst.destroy(),
      };
    },
  },
  ...(['sum', 'max'] as const).map(
    (op): BenchCase => ({
      algorithm: 'reduce',
      variant: op,
      dtype: 'u32',
      sizes: MEMORY_SIZES,
      bytes: (n) => 4 * n + 4,
      ...(op === 'sum' ? { peers: (n: number) => [plainLoopSumPeer(n), tfjsPeer(n, 'cpu', 'sum'), tfjsPeer(n, 'wasm', 'sum')] } : {}),
      setup(device, n) {
        const host = randomU32(n);
        const src = device.createBuffer('u32', host);
        const out = device.createBuffer('u32', 1);
        return {
          run: () => {
            reduceInto(device, src, { op: op as ReduceOp, output: out });
          },
          verify: async () => (await out.read())[0] === reduceReference(host, op),
          // The cases with a peer in the page (browser/peers.ts) read their result as the peer does.
          ...(op === 'sum' ? { read: () => out.read() } : {}),
          dispose: () => {
            src.destroy();
            out.destroy();
          },
        };
      },
    }),
  ),
  {
    algorithm: 'scan',
    variant: 'inclusive',
    dtype: 'u32',
    sizes: MEMORY_SIZES,
    bytes: (n) => 8 * n,
    peers: (n) => [plainLoopScanPeer(n), tfjsPeer(n, 'cpu', 'cumsum'), tfjsPeer(n, 'wasm', 'cumsum')],
    setup(device, n) {
      const host = randomU32(n);
      const src = device.createBuffer('u32', host);
      const dst = device.createBuffer('u32', n);
      return {
        run: () => {
          scan(device, src, { output: dst });
        },
        verify: async () => sameArray(await dst.read(), scanReference(host, false)),
        read: () => dst.read(),
        dispose: () => {
          src.destroy();
          dst.destroy();
        },
      };
    },
  },
  histogram256Case('256 bins', MEMORY_SIZES, (n) => randomU32(n).map((x) => x & 255)),
  // Blended atomics forced where gather devices count 256 bins by packed counting: the two side by
  // side on a hardware WebGL2 (sizes only where a plan names them: the browser bench on the H100).
  histogram256Case(
    '256 bins blended',
    [],
    (n) => randomU32(n).map((x) => x & 255),
    (device, values, output) => recordBlendedHistogram(device, values, output, 256),
  ),
  {
    algorithm: 'compact',
    variant: 'half kept',
    dtype: 'u32',
    sizes: MEMORY_SIZES,
    // Reads n values and n flags, writes the kept half (n/2 on average; the exact count is data-dependent).
    bytes: (n) => 4 * n + 4 * n + 2 * n,
    setup(device, n) {
      const { src, flags, isKept } = halfKept(device, n);
      let last: Awaited<ReturnType<typeof compact<'u32'>>> | undefined;
      return {
        run: async () => {
          last?.output.destroy();
          last = await compact(device, src, flags);
        },
        verify: async () => {
          if (!last) return false;
          return isKept(await last.output.read());
        },
        dispose: () => {
          last?.output.destroy();
          src.destroy();
          flags.destroy();
        },
      };
    },
  },
  {
    // compactInto: the same compaction into an output of n held across runs, the count left on the device
    // (no readback, no allocation on workgroup devices), as CUB's select-if writes into buffers it is given.
    algorithm: 'compact',
    variant: 'half kept (into)',
    dtype: 'u32',
    sizes: MEMORY_SIZES,
    bytes: (n) => 4 * n + 4 * n + 2 * n,
    setup(device, n) {
      const { src, flags, isKept } = halfKept(device, n);
      const output = device.createBuffer('u32', n);
      const count = device.createBuffer('u32', 1);
      return {
        run: () => compactInto(device, src, flags, { output, count }),
        verify: async () => {
          const kept = (await count.read())[0] as number;
          return isKept(await output.read({ offset: 0, length: kept }));
        },
        dispose: () => {
          for (const b of [src, flags, output, count]) b.destroy();
        },
      };
    },
  },
  ...(
    [
      // sort(): by caps (sortMethod) — radix sort on hardware GPUs and the CPU backend, merge path on software GPUs and gather-only devices.
      ['auto', sort],
      // radixSort(): the workgroup formulations, or on gather-only devices (WebGL2) the gather radix sort (radix-gather.ts).
      ['radix', radixSort],
      ['merge', mergeSort],
      ['bitonic', bitonicSort],
      ['quick', quickSort],
    ] as const
  ).map(
    ([variant, run]): BenchCase => ({
      algorithm: 'sort',
      variant,
      dtype: 'u32',
      // Radix and quick sort on SwiftShader's WebGPU take seconds per run at 2^16: larger sizes belong to real GPUs (--sizes).
      sizes: [2 ** 10, 2 ** 12, 2 ** 13, 2 ** 14],
      // Minimal traffic of a sort: read every key once, write it once.
      bytes: (n) => 8 * n,
      // The bar a CPU device must clear: the runtime's own sort, same keys, same process.
      // TF.js has no sort: top-k with k = n is its sort, as in the page (browser/peers.ts).
      ...(variant === 'auto'
        ? { peers: (n: number) => [typedArraySortPeer(n), tfjsPeer(n, 'cpu', 'topk'), tfjsPeer(n, 'wasm', 'topk')] }
        : {}),
      setup(device, n) {
        const host = randomU32(n);
        const keys = device.createBuffer('u32', host);
        let last: Awaited<ReturnType<typeof radixSort<'u32'>>> | undefined;
        return {
          run: async () => {
            last?.keys.destroy();
            last = await run(device, keys);
          },
          verify: async () => last !== undefined && sameArray(await last.keys.read(), sortReference(host).keys),
          ...(variant === 'auto' ? { read: async () => last?.keys.read() } : {}),
          dispose: () => {
            last?.keys.destroy();
            keys.destroy();
          },
        };
      },
    }),
  ),
  {
    algorithm: 'nbody',
    // One all-pairs force evaluation (the n² part of a leapfrog step), as the gpu.js peer kernel computes.
    variant: 'accelerations',
    dtype: 'f32',
    sizes: [256, 512, 1024, 2048],
    flops: (n) => NBODY_FLOPS_PER_INTERACTION * n * n,
    peers: (n) => [gpuJsCpuPeer(n)],
    setup(device, n) {
      const host = nbodyBodies(n);
      const bodies = device.createBuffer('f32', host);
      let last: ReturnType<typeof nbodyAccelerations> | undefined;
      return {
        run: () => {
          last?.destroy();
          last = nbodyAccelerations(device, bodies, { softening2: NBODY_SOFTENING2 });
        },
        verify: async () => {
          if (!last) return false;
          const got = await last.read();
          // The full reference is n² on the host: past NBODY_EXACT_MAX bodies (the GPU machine's
          // 2^16 and 2^18), NBODY_SAMPLE bodies spread out, against the same formula and bound.
          if (n > NBODY_EXACT_MAX) return nbodySampleMatches(host, got, NBODY_SOFTENING2, NBODY_SAMPLE);
          const want = nbodyAccelerationsReference(host, NBODY_SOFTENING2);
          const scale = nbodyForceScale(host, NBODY_SOFTENING2);
          // f32 accumulation over n terms: bound relative to Σ m/r² (the magnitude before cancellation).
          for (let i = 0; i < got.length; i++) {
            if (i % 4 === 3) continue;
            if (!(Math.abs((got[i] as number) - (want[i] as number)) <= 1e-4 * (scale[i >> 2] as number) + 1e-6)) return false;
          }
          return true;
        },
        read: async () => last?.read(),
        dispose: () => {
          last?.destroy();
          bodies.destroy();
        },
      };
    },
  },
  ...GRAPH_CASES,
];

export const NBODY_SOFTENING2 = 1e-4;

/** Bodies the N-body check compares in full; a larger run is checked on NBODY_SAMPLE of them. */
const NBODY_EXACT_MAX = 4096;
const NBODY_SAMPLE = 256;

/** Bodies in the cube [-1, 1)³ with masses in [1, 2): deterministic. Shared with the gpu.js peer, so both integrate the same system. */
export function nbodyBodies(n: number): Float32Array {
  const r = randomU32(4 * n, n + 3);
  return Float32Array.from(r, (x, i) => (i % 4 === 3 ? 1 + (x % 100) / 100 : (x % 20001) / 10000 - 1));
}

/** `Uint32Array.prototype.sort` on the same keys (a fresh copy each run, as Trident sorts into new buffers). */
function typedArraySortPeer(n: number): PeerRun {
  const host = randomU32(n);
  let sorted = new Uint32Array(0);
  return {
    implementation: 'Uint32Array.prototype.sort',
    prepare: () => undefined,
    run: () => {
      sorted = host.slice().sort();
    },
    verify: () => sameArray(sorted, sortReference(host).keys),
  };
}

/** A plain JavaScript loop summing the same u32 values (wrapping), one thread. */
function plainLoopSumPeer(n: number): PeerRun {
  const host = randomU32(n);
  let total = 0;
  return {
    implementation: 'plain JS loop',
    prepare: () => undefined,
    run: () => {
      let t = 0;
      for (let i = 0; i < host.length; i++) t = (t + (host[i] as number)) >>> 0;
      total = t;
    },
    verify: () => total === reduceReference(host, 'sum'),
  };
}

/** A plain JavaScript loop computing the same inclusive prefix sum (wrapping), one thread, into an array allocated once. */
function plainLoopScanPeer(n: number): PeerRun {
  const host = randomU32(n);
  const out = new Uint32Array(n);
  return {
    implementation: 'plain JS loop',
    prepare: () => undefined,
    run: () => {
      let s = 0;
      for (let i = 0; i < host.length; i++) {
        s = (s + (host[i] as number)) >>> 0;
        out[i] = s;
      }
    },
    verify: () => sameArray(out, scanReference(host, false)),
  };
}

/**
 * gpu.js in Node, 'cpu' mode (its only mode without the native `gl` module), running the
 * page's N-body kernel (bench/gpujs-nbody.ts) on the same bodies. Unavailable, not
 * failed, where gpu.js does not load.
 */
function gpuJsCpuPeer(n: number): PeerRun {
  type GpuJs = typeof import('gpu.js');
  const pos = nbodyBodies(n);
  let kernel: ((pos: Float32Array, eps2: number) => unknown) | undefined;
  let result: ArrayLike<ArrayLike<number>> = [];
  return {
    implementation: 'gpu.js cpu (Node)',
    flops: NBODY_FLOPS_PER_INTERACTION * n * n,
    prepare: async () => {
      let GPU: GpuJs['GPU'];
      try {
        const mod = (await import('gpu.js')) as GpuJs & { default?: GpuJs };
        GPU = mod.GPU ?? (mod.default as GpuJs).GPU;
      } catch (err) {
        throw new PeerUnavailableError(`gpu.js does not load in Node: ${err instanceof Error ? err.message : String(err)}`);
      }
      const gpu = new GPU({ mode: 'cpu' });
      kernel = gpu.createKernel(nbodyAccel as never, gpuJsNbodySettings(n)) as unknown as typeof kernel;
    },
    run: () => {
      if (!kernel) throw new Error('gpu.js peer not prepared');
      result = kernel(pos, NBODY_SOFTENING2) as ArrayLike<ArrayLike<number>>;
    },
    verify: () => gpuJsNbodyMatches(pos, result, NBODY_SOFTENING2),
  };
}

/**
 * TF.js in Node on its 'cpu' or 'wasm' backend (each runtime compares like
 * with like), int32 tensors of the same values (TF.js has no uint32; sums wrap alike,
 * compared modulo 2^32). Loaded on first use: most runs never need it.
 */
function tfjsPeer(n: number, backend: 'cpu' | 'wasm', op: 'sum' | 'cumsum' | 'topk'): PeerRun {
  const host = randomU32(n);
  const int32 = new Int32Array(host.buffer, host.byteOffset, host.length);
  type Tf = typeof import('@tensorflow/tfjs');
  let tf: Tf | undefined;
  let input: ReturnType<Tf['tensor1d']> | undefined;
  let result: Int32Array | Float32Array | Uint8Array = new Int32Array(0);
  return {
    implementation: `TF.js ${backend} (Node)`,
    ...(op === 'topk' ? { variant: 'top-k (k = n)' } : {}),
    prepare: async () => {
      tf = await import('@tensorflow/tfjs');
      if (backend === 'wasm') await import('@tensorflow/tfjs-backend-wasm');
      if (!(await tf.setBackend(backend))) throw new Error(`TF.js backend '${backend}' did not start`);
      await tf.ready();
      input?.dispose();
      input = tf.tensor1d(int32, 'int32');
    },
    run: () => {
      if (!tf || !input) throw new Error('TF.js peer not prepared');
      const t = input;
      const lib = tf;
      const out = lib.tidy(() => (op === 'sum' ? lib.sum(t) : op === 'cumsum' ? lib.cumsum(t) : lib.topk(t, n, true).values));
      result = out.dataSync() as Int32Array;
      out.dispose();
    },
    verify: () => {
      if (op === 'sum') return (result[0] as number) >>> 0 === reduceReference(host, 'sum');
      // Top-k gives the int32 values largest first: the same keys sorted as signed, descending.
      if (op === 'topk') return sameArray(result, int32.slice().sort().reverse());
      return sameArray(Uint32Array.from(result), scanReference(host, false));
    },
  };
}

/** The compaction cases' input: n random values, every other one kept on average, and the check of a result. */
function halfKept(device: Device, n: number) {
  const host = randomU32(n);
  const flagsHost = randomU32(n, 0x1234567).map((x) => x & 1);
  return {
    src: device.createBuffer('u32', host),
    flags: device.createBuffer('u32', flagsHost),
    // Past 2^24 the reference would cost the host seconds: one streaming pass.
    isKept: (got: Uint32Array) => (n <= 2 ** 24 ? sameArray(got, compactReference(host, flagsHost)) : isCompaction(host, flagsHost, got)),
  };
}

/**
 * A 256-bin histogram of the values `input(n)` gives, into one output reused by every run:
 * by histogram() (the device's own formulation), or by `record` (one formulation forced).
 */
export function histogram256Case(
  variant: string,
  sizes: readonly number[],
  input: (n: number) => Uint32Array,
  record: (device: Device, values: Buffer<'u32'>, output: Buffer<'u32'>) => void = (device, values, output) =>
    void histogram(device, values, { bins: 256, output }),
): BenchCase {
  return {
    algorithm: 'histogram',
    variant,
    dtype: 'u32',
    sizes,
    // Reads n values, writes the 256 counts.
    bytes: (n) => 4 * n + 4 * 256,
    setup(device, n) {
      const host = input(n);
      const src = device.createBuffer('u32', host);
      const out = device.createBuffer('u32', 256);
      return {
        run: () => record(device, src, out),
        verify: async () => sameArray(await out.read(), histogramReference(host, 256)),
        dispose: () => {
          src.destroy();
          out.destroy();
        },
      };
    },
  };
}
