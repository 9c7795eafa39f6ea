/**
 * The peers, timed in the same page as Trident's browser backends:
 * TensorFlow.js (webgl, webgpu, cpu, wasm backends) for sum, prefix sum and
 * sort (top-k with k = n), and an all-pairs N-body kernel written in gpu.js
 * (webgl2, webgl, cpu modes).
 *
 * Timing is wall clock around the operation and the read-back of its result
 * (`await t.data()`, or gpu.js returning arrays): neither library offers a way to
 * wait for its work without reading something back. Rows say `timer: wall`, so
 * the report shows where the clocks differ, and the adaptive protocol (bench/timing.ts)
 * times them whatever Trident's rows used (`protocol`); Trident's cases of the same
 * operations time call + read the same way (`wallWithReadMs`, bench/runner.ts).
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-webgpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { randomU32 } from '@trident/algorithms';
import { NBODY_SOFTENING2, nbodyBodies } from '../bench/cases.ts';
import { gpuJsNbodyMatches, gpuJsNbodySettings, nbodyAccel } from '../bench/gpujs-nbody.ts';
import { type Measurement, throughputOf } from '../bench/schema.ts';
import { summarize } from '../bench/stats.ts';
import { timeRepeats, warmUp, warmupRule } from '../bench/timing.ts';
import type { PageConfig, PageResult } from './protocol.ts';

/** The subset of gpu.js's browser bundle (window.GPU) used here. */
type GpuJsKernel = (...args: unknown[]) => unknown;
interface GpuJsInstance {
  createKernel(fn: (...args: never[]) => unknown, settings: Record<string, unknown>): GpuJsKernel;
  destroy(): void | Promise<void>;
}
interface GpuJsNamespace {
  GPU: (new (settings: { mode: string }) => GpuJsInstance) & { isWebGL2Supported?: boolean; isWebGLSupported?: boolean };
}
declare global {
  interface Window {
    GPU?: GpuJsNamespace;
  }
}

type Progress = (label: string) => Promise<void>;
type Settings = PageConfig['settings'];

interface Op {
  readonly algorithm: string;
  readonly variant: string;
  readonly dtype: Measurement['dtype'];
  bytes?(n: number): number;
  flops?(n: number): number;
}

/** The same adaptive warm-up as the Trident runner, then timed runs until `repeats` or the budget (at least 3). */
async function timeRuns(run: () => Promise<void>, settings: Settings): Promise<{ samples: number[]; warmup: number }> {
  const warmup = await warmUp(run, warmupRule(settings));
  return { samples: await timeRepeats(run, settings), warmup };
}

function measurement(
  op: Op,
  implementation: string,
  backend: string,
  adapter: string,
  n: number,
  outcome: { samples: number[]; warmup: number; verified: boolean } | { error: string },
): Measurement {
  const bytes = op.bytes?.(n);
  const flops = op.flops?.(n);
  const base = {
    algorithm: op.algorithm,
    variant: op.variant,
    implementation,
    backend,
    runtime: 'chromium' as const,
    adapter,
    n,
    dtype: op.dtype,
    timer: 'wall' as const,
    ...(bytes !== undefined ? { bytes } : {}),
    ...(flops !== undefined ? { flops } : {}),
  };
  if ('error' in outcome) return { ...base, warmup: 0, repeats: 0, error: outcome.error };
  const ms = summarize(outcome.samples);
  const throughput = throughputOf(bytes, flops, ms.median);
  return {
    ...base,
    warmup: outcome.warmup,
    repeats: outcome.samples.length,
    protocol: 'adaptive',
    ms,
    ...(throughput ? { throughput } : {}),
    verified: outcome.verified,
  };
}

/**
 * The peers' time budget (PageConfig.peerBudgetMs): a size whose checked run (the first, untimed:
 * compile and upload included) took longer is not timed, and the larger sizes of the same
 * operation are skipped, each with a row that says why.
 */
class PeerBudget {
  private exceeded: { n: number; ms: number } | undefined;
  constructor(private readonly budgetMs: number | undefined) {}

  /** Why size n is skipped, if an earlier size went over the budget. */
  skip(n: number): string | undefined {
    const e = this.exceeded;
    return e && n > e.n
      ? `skipped: n=${e.n} already took ${Math.round(e.ms)} ms a run, over the peer time budget of ${this.budgetMs} ms`
      : undefined;
  }

  /** Why size n is not timed, if its checked run took `ms`, over the budget (and remembers it). */
  over(n: number, ms: number): string | undefined {
    if (this.budgetMs === undefined || ms <= this.budgetMs) return undefined;
    this.exceeded = { n, ms };
    return `over the peer time budget: the checked run took ${Math.round(ms)} ms (budget ${this.budgetMs} ms); not timed`;
  }
}

const errorText = (err: unknown): string =>
  (err instanceof Error ? `${err.name}: ${err.message}` : String(err)).replace(/\s*\n\s*/g, ' ').slice(0, 300);

// ---------- TensorFlow.js ----------

const TFJS_BACKENDS = ['webgl', 'webgpu', 'wasm', 'cpu'] as const;

/** Values in [0, 2^16): f32 sums of up to 2^20 of them stay exact enough to check. */
function tfInput(n: number): Float32Array {
  return Float32Array.from(randomU32(n, n + 17), (x) => x & 0xffff);
}

const TF_OPS: ReadonlyArray<
  Op & { run(x: tf.Tensor1D): Promise<Float32Array | Int32Array | Uint8Array>; check(x: Float32Array, r: ArrayLike<number>): boolean }
> = [
  {
    algorithm: 'reduce',
    variant: 'sum',
    dtype: 'f32',
    bytes: (n) => 4 * n + 4,
    run: async (x) => {
      const y = tf.sum(x);
      const d = await y.data();
      y.dispose();
      return d as Float32Array;
    },
    check: (x, r) => {
      let s = 0;
      for (const v of x) s += v;
      return Math.abs((r[0] as number) - s) <= 1e-5 * s + 1;
    },
  },
  {
    algorithm: 'scan',
    variant: 'inclusive',
    dtype: 'f32',
    bytes: (n) => 8 * n,
    run: async (x) => {
      const y = tf.cumsum(x);
      const d = await y.data();
      y.dispose();
      return d as Float32Array;
    },
    check: (x, r) => {
      let s = 0;
      for (const v of x) s += v;
      return r.length === x.length && Math.abs((r[r.length - 1] as number) - s) <= 1e-5 * s + 1;
    },
  },
  {
    algorithm: 'sort',
    variant: 'top-k (k = n)',
    dtype: 'f32',
    bytes: (n) => 8 * n,
    run: async (x) => {
      const { values, indices } = tf.topk(x, x.shape[0], true);
      const d = await values.data();
      values.dispose();
      indices.dispose();
      return d as Float32Array;
    },
    check: (x, r) => {
      if (r.length !== x.length) return false;
      for (let i = 1; i < r.length; i++) if ((r[i - 1] as number) < (r[i] as number)) return false;
      return true;
    },
  },
];

async function runTfjs(config: PageConfig, progress: Progress, out: PageResult): Promise<void> {
  // The wasm backend fetches its .wasm files from here (copied beside the page by bundle.ts).
  setWasmPaths(new URL('./tfjs-wasm/', location.href).href);
  out.versions['@tensorflow/tfjs'] = tf.version.tfjs;
  for (const backend of TFJS_BACKENDS) {
    const ops = TF_OPS.filter((op) => (config.peerSizes[op.algorithm]?.length ?? 0) > 0);
    let ok = false;
    let reason = '';
    try {
      ok = await tf.setBackend(backend);
      await tf.ready();
      if (!ok) reason = `tf.setBackend('${backend}') returned false`;
    } catch (err) {
      reason = errorText(err);
    }
    if (!ok) {
      out.unavailable.push({ backend: `tfjs ${backend}`, runtime: 'chromium', reason });
      for (const op of ops)
        for (const n of config.peerSizes[op.algorithm] ?? []) await progress(`tfjs ${backend} ${op.algorithm} n=${n} (unavailable)`);
      continue;
    }
    out.adapters[`chromium/tfjs-${backend}`] = backend;
    for (const op of ops) {
      const budget = new PeerBudget(config.peerBudgetMs);
      for (const n of config.peerSizes[op.algorithm] ?? []) {
        await progress(`tfjs ${backend} ${op.algorithm} n=${n}`);
        const skipped = budget.skip(n);
        if (skipped) {
          out.measurements.push(measurement(op, 'tfjs', backend, backend, n, { error: skipped }));
          continue;
        }
        let x: tf.Tensor1D | undefined;
        try {
          const host = tfInput(n);
          x = tf.tensor1d(host, 'float32');
          const input = x;
          const t0 = performance.now();
          const verified = op.check(host, await op.run(input));
          const over = budget.over(n, performance.now() - t0);
          if (over) {
            out.measurements.push(measurement(op, 'tfjs', backend, backend, n, { error: over }));
            continue;
          }
          const timed = await timeRuns(async () => {
            await op.run(input);
          }, config.settings);
          out.measurements.push(measurement(op, 'tfjs', backend, backend, n, { ...timed, verified }));
        } catch (err) {
          out.measurements.push(measurement(op, 'tfjs', backend, backend, n, { error: errorText(err) }));
        } finally {
          x?.dispose();
        }
      }
    }
  }
}

// ---------- gpu.js N-body ----------

const GPUJS_MODES = ['webgl2', 'webgl', 'cpu'] as const;

/** 20 flop per body-body interaction, as for Trident's nbody (DESIGN.md). */
const NBODY_OP: Op = { algorithm: 'nbody', variant: 'accelerations', dtype: 'f32', flops: (n) => 20 * n * n };

async function runGpuJs(config: PageConfig, progress: Progress, out: PageResult): Promise<void> {
  const sizes = config.peerSizes.nbody ?? [];
  if (sizes.length === 0) return;
  const GPU = window.GPU?.GPU;
  if (!GPU) {
    out.unavailable.push({ backend: 'gpu.js', runtime: 'chromium', reason: 'gpu-browser.min.js did not load' });
    return;
  }
  const eps2 = NBODY_SOFTENING2;
  for (const mode of GPUJS_MODES) {
    if ((mode === 'webgl2' && GPU.isWebGL2Supported === false) || (mode === 'webgl' && GPU.isWebGLSupported === false)) {
      out.unavailable.push({ backend: `gpu.js ${mode}`, runtime: 'chromium', reason: `gpu.js reports no ${mode} support` });
      continue;
    }
    out.adapters[`chromium/gpu.js-${mode}`] = mode;
    const budget = new PeerBudget(config.peerBudgetMs);
    for (const n of sizes) {
      await progress(`gpu.js ${mode} nbody n=${n}`);
      const skipped = budget.skip(n);
      if (skipped) {
        out.measurements.push(measurement(NBODY_OP, 'gpu.js', mode, mode, n, { error: skipped }));
        continue;
      }
      let gpu: GpuJsInstance | undefined;
      try {
        gpu = new GPU({ mode });
        const kernel = gpu.createKernel(nbodyAccel as unknown as (...args: never[]) => unknown, gpuJsNbodySettings(n));
        const pos = nbodyBodies(n);
        const t0 = performance.now();
        const verified = gpuJsNbodyMatches(pos, kernel(pos, eps2) as ArrayLike<ArrayLike<number>>, eps2);
        const over = budget.over(n, performance.now() - t0);
        if (over) {
          out.measurements.push(measurement(NBODY_OP, 'gpu.js', mode, mode, n, { error: over }));
          continue;
        }
        const timed = await timeRuns(async () => {
          kernel(pos, eps2);
        }, config.settings);
        out.measurements.push(measurement(NBODY_OP, 'gpu.js', mode, mode, n, { ...timed, verified }));
      } catch (err) {
        out.measurements.push(measurement(NBODY_OP, 'gpu.js', mode, mode, n, { error: errorText(err) }));
      } finally {
        await gpu?.destroy();
      }
    }
  }
  out.versions['gpu.js'] = 'dist/gpu-browser.min.js';
}

export async function runPeers(config: PageConfig, progress: Progress): Promise<PageResult> {
  const out: PageResult = { measurements: [], unavailable: [], adapters: {}, versions: {} };
  await runTfjs(config, progress, out);
  await runGpuJs(config, progress, out);
  return out;
}
