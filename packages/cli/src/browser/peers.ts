/**
 * The peers, timed in the same page as Trident's browser backends:
 * TensorFlow.js (webgl, webgpu, cpu, wasm backends) for sum, prefix sum and
 * sort (top-k with k = n), and an all-pairs N-body kernel written in gpu.js
 * (webgl2, webgl, cpu modes).
 *
 * Timing is wall clock around the operation and the read-back of its result
 * (`await t.data()`, or gpu.js returning arrays): neither library offers a way to
 * wait for its work without reading something back. Rows say `timer: wall`, so
 * the report shows where the clocks differ.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-webgpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { randomU32 } from '@trident/algorithms';
import { NBODY_SOFTENING2, nbodyBodies } from '../bench/cases.ts';
import { type Measurement, throughputOf } from '../bench/schema.ts';
import { summarize } from '../bench/stats.ts';
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

/** Warm-up, then timed runs until `repeats` or the budget (at least 3), like the Trident runner. */
async function timeRuns(run: () => Promise<void>, settings: Settings): Promise<number[]> {
  for (let i = 0; i < settings.warmup; i++) {
    const t0 = performance.now();
    await run();
    if (performance.now() - t0 > settings.budgetMs / 4) break;
  }
  const samples: number[] = [];
  let spent = 0;
  for (let i = 0; i < settings.repeats; i++) {
    const t0 = performance.now();
    await run();
    const ms = performance.now() - t0;
    samples.push(ms);
    spent += ms;
    if (samples.length >= 3 && spent > settings.budgetMs) break;
  }
  return samples;
}

function measurement(
  op: Op,
  implementation: string,
  backend: string,
  adapter: string,
  n: number,
  settings: Settings,
  outcome: { samples: number[]; verified: boolean } | { error: string },
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
    warmup: settings.warmup,
    ...(bytes !== undefined ? { bytes } : {}),
    ...(flops !== undefined ? { flops } : {}),
  };
  if ('error' in outcome) return { ...base, repeats: 0, error: outcome.error };
  const ms = summarize(outcome.samples);
  const throughput = throughputOf(bytes, flops, ms.median);
  return { ...base, repeats: outcome.samples.length, ms, ...(throughput ? { throughput } : {}), verified: outcome.verified };
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
      for (const n of config.peerSizes[op.algorithm] ?? []) {
        await progress(`tfjs ${backend} ${op.algorithm} n=${n}`);
        const host = tfInput(n);
        const x = tf.tensor1d(host, 'float32');
        try {
          const verified = op.check(host, await op.run(x));
          const samples = await timeRuns(async () => {
            await op.run(x);
          }, config.settings);
          out.measurements.push(measurement(op, 'tfjs', backend, backend, n, config.settings, { samples, verified }));
        } catch (err) {
          out.measurements.push(measurement(op, 'tfjs', backend, backend, n, config.settings, { error: errorText(err) }));
        } finally {
          x.dispose();
        }
      }
    }
  }
}

// ---------- gpu.js N-body ----------

const GPUJS_MODES = ['webgl2', 'webgl', 'cpu'] as const;

/** 20 flop per body-body interaction, as for Trident's nbody (DESIGN.md). */
const NBODY_OP: Op = { algorithm: 'nbody', variant: 'accelerations', dtype: 'f32', flops: (n) => 20 * n * n };

/** Accelerations of every body from all bodies (softened), as gpu.js source: gpu.js compiles this function's text. */
function nbodyAccel(this: { thread: { x: number }; constants: { n: number } }, pos: Float32Array, eps2: number): number[] {
  const i = this.thread.x;
  const xi = pos[i * 4] as number;
  const yi = pos[i * 4 + 1] as number;
  const zi = pos[i * 4 + 2] as number;
  let ax = 0;
  let ay = 0;
  let az = 0;
  for (let j = 0; j < this.constants.n; j++) {
    const dx = (pos[j * 4] as number) - xi;
    const dy = (pos[j * 4 + 1] as number) - yi;
    const dz = (pos[j * 4 + 2] as number) - zi;
    const d2 = dx * dx + dy * dy + dz * dz + eps2;
    const inv = 1 / Math.sqrt(d2);
    const s = (pos[j * 4 + 3] as number) * inv * inv * inv;
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
  }
  return [ax, ay, az];
}

function accelReference(pos: Float32Array, i: number, eps2: number): [number, number, number] {
  const n = pos.length / 4;
  const a: [number, number, number] = [0, 0, 0];
  for (let j = 0; j < n; j++) {
    const dx = (pos[j * 4] as number) - (pos[i * 4] as number);
    const dy = (pos[j * 4 + 1] as number) - (pos[i * 4 + 1] as number);
    const dz = (pos[j * 4 + 2] as number) - (pos[i * 4 + 2] as number);
    const inv = 1 / Math.sqrt(dx * dx + dy * dy + dz * dz + eps2);
    const s = (pos[j * 4 + 3] as number) * inv * inv * inv;
    a[0] += dx * s;
    a[1] += dy * s;
    a[2] += dz * s;
  }
  return a;
}

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
    for (const n of sizes) {
      await progress(`gpu.js ${mode} nbody n=${n}`);
      let gpu: GpuJsInstance | undefined;
      try {
        gpu = new GPU({ mode });
        const kernel = gpu.createKernel(nbodyAccel as unknown as (...args: never[]) => unknown, {
          output: [n],
          constants: { n },
          returnType: 'Array(3)',
          precision: 'single',
          tactic: 'precision',
        });
        const pos = nbodyBodies(n);
        const result = kernel(pos, eps2) as ArrayLike<ArrayLike<number>>;
        let verified = true;
        for (const i of [0, n >> 1, n - 1]) {
          const want = accelReference(pos, i, eps2);
          const got = result[i] as ArrayLike<number>;
          for (let c = 0; c < 3; c++) {
            const w = want[c] as number;
            if (!(Math.abs((got[c] as number) - w) <= 1e-3 * (Math.abs(w) + 1))) verified = false;
          }
        }
        const samples = await timeRuns(async () => {
          kernel(pos, eps2);
        }, config.settings);
        out.measurements.push(measurement(NBODY_OP, 'gpu.js', mode, mode, n, config.settings, { samples, verified }));
      } catch (err) {
        out.measurements.push(measurement(NBODY_OP, 'gpu.js', mode, mode, n, config.settings, { error: errorText(err) }));
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
