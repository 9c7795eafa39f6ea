/**
 * N-body on the H100: which layout of the tiled (workgroup) formulation is fastest,
 * and how much of the gap to CUDA is the generator's and how much the algorithm's.
 * One device call, one table (GFLOP/s at 20 flop per interaction, n = 262144, then 65536):
 *
 *   ir       nbodyAccelerations with a given tiling (workgroup size, bodies per
 *            invocation, unroll), ε² = 1e-6 (no zero-denominator select) or ε² = 0 (select)
 *   raw-gen  the WGSL Trident generated for an ir row, run on the raw GPUDevice
 *   raw-masked-nowg  the same with the workgroup-array bounds-check helpers turned into plain accesses
 *   raw-unmasked     the same without the tile-index mask (` & (wg - 1)`), i.e. the kernel before the mask
 *   raw-nowg the unmasked one without the workgroup-array bounds-check helpers
 *   hand     a hand-written WGSL kernel of the same layout (no helpers), raw GPUDevice
 *   ...-norobust  the same on a Dawn instance with robustness disabled (information only:
 *            the library cannot ask for that)
 *   step     nbody(steps: 1), the H100 suite's N-body row until it timed one force evaluation (two
 *            force evaluations + the kick-drift pass)
 *
 * Every row is checked against a float64 reference on a sample of bodies. Results of
 * the 2026-11-22 calls, with the CUDA anchor of the same call: nbody-check-2026-11-22.json.
 *
 * Bundle: node_modules/.bin/esbuild --bundle --platform=node --format=esm --target=node20 --conditions=trident-source
 *   "--banner:js=import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);"
 *   --alias:trident=./bench/h100/trident-webgpu-only.mjs bench/h100/nbody-check.ts --outfile=.gpu/nbody-check.mjs
 * Run on the GPU machine: source .gpu/start.sh && node .gpu/nbody-check.mjs [--quick] [--n N]
 * (beside: nvcc -O3 -arch=sm_90 -o /tmp/nb .gpu/nbody_anchor.cu && /tmp/nb).
 */
/// <reference types="@webgpu/types" />
import { type NBodyTiling, nbody, nbodyAccelerations, randomU32 } from '@trident/algorithms';
import type { WebGpuCompiled, WebGpuDevice } from '@trident/backend-webgpu';
import { DAWN_TOGGLES } from '@trident/backend-webgpu';
import { createDevice, type Device, type Kernel } from 'trident';
import { create } from 'webgpu';
import { median } from '../../packages/cli/src/bench/stats.ts';
import { timeRawWgsl } from './raw-wgsl.ts';

const QUICK = process.argv.includes('--quick');
// --n N for a smoke test off the GPU machine (the default is the issue's size, then 65536).
const nArg = process.argv.indexOf('--n');
const SIZES = nArg > 0 ? [Number(process.argv[nArg + 1])] : [262144, 65536];
const REPS = 5;

/** The bodies of one size, and float64 reference accelerations for a sample of them (the full reference is n² in JS). */
class Problem {
  readonly data: Float32Array;
  readonly sample: number[];
  private readonly refs = new Map<number, Float64Array>();
  constructor(readonly n: number) {
    this.data = new Float32Array(4 * n);
    randomU32(4 * n, 3).forEach((x, e) => {
      this.data[e] = e % 4 === 3 ? 1 / n : x / 2 ** 32 - 0.5;
    });
    this.sample = Array.from({ length: 24 }, (_, s) => Math.min(n - 1, Math.floor((s * n) / 23)));
  }
  gflops(ms: number, evaluations = 1): number {
    return (evaluations * 20 * this.n * this.n) / ms / 1e6;
  }
  private reference(eps2: number): Float64Array {
    const cached = this.refs.get(eps2);
    if (cached) return cached;
    const d = this.data;
    const out = new Float64Array(4 * this.sample.length);
    this.sample.forEach((i, s) => {
      let ax = 0;
      let ay = 0;
      let az = 0;
      for (let j = 0; j < this.n; j++) {
        const dx = (d[4 * j] as number) - (d[4 * i] as number);
        const dy = (d[4 * j + 1] as number) - (d[4 * i + 1] as number);
        const dz = (d[4 * j + 2] as number) - (d[4 * i + 2] as number);
        const r2 = dx * dx + dy * dy + dz * dz + eps2;
        if (r2 === 0) continue;
        const f = (d[4 * j + 3] as number) / (r2 * Math.sqrt(r2));
        ax += dx * f;
        ay += dy * f;
        az += dz * f;
      }
      out.set([ax, ay, az, 0], 4 * s);
    });
    this.refs.set(eps2, out);
    return out;
  }
  /** Largest |error| / |a| over the sample (|a| at least 1e-3 of the largest). */
  error(got: Float32Array, eps2: number): number {
    const want = this.reference(eps2);
    let scale = 0;
    for (const v of want) scale = Math.max(scale, Math.abs(v));
    let worst = 0;
    this.sample.forEach((i, s) => {
      for (let c = 0; c < 3; c++) {
        const w = want[4 * s + c] as number;
        const err = Math.abs((got[4 * i + c] as number) - w) / Math.max(Math.abs(w), 1e-3 * scale);
        worst = Number.isNaN(err) ? Number.POSITIVE_INFINITY : Math.max(worst, err);
      }
    });
    return worst;
  }
}

interface Row {
  variant: string;
  tiling: string;
  eps2: number;
  ms: number;
  gflops: number;
  error?: number;
}
const rows: Row[] = [];
const show = (r: Row) => {
  rows.push(r);
  const err = r.error === undefined ? '' : ` maxRelErr ${r.error.toExponential(2)}`;
  console.log(
    `${r.variant.padEnd(14)} ${r.tiling.padEnd(16)} eps2=${String(r.eps2).padEnd(5)} ${r.ms.toFixed(3).padStart(8)} ms ${r.gflops.toFixed(0).padStart(6)} GFLOP/s${err}`,
  );
};
/** Generated WGSL per ir tiling (ε² > 0), from the first session, run raw in both. */
const sources = new Map<string, string>();
const name = (t: NBodyTiling) => `wg${t.workgroupSize} b${t.bodiesPerInvocation} u${t.unroll}`;

async function timeIt(device: Device, body: () => void): Promise<number> {
  await device.time('warm-up', body);
  const ms: number[] = [];
  for (let r = 0; r < REPS; r++) ms.push((await device.time('nbody', body)).ms);
  return median(ms);
}

/** Raw GPUDevice run of a WGSL module whose bindings are pos, velIn, velOut, acc, params. */
function rawTimed(gpu: GPUDevice, code: string, bind: GPUBuffer[], words: number[], workgroups: number): Promise<number> {
  return timeRawWgsl(gpu, { code, bind, uniformWords: words, workgroups, reps: REPS, warmup: 1 });
}

/** The generated source with the workgroup-array bounds-check helpers replaced by plain accesses. */
function withoutWorkgroupChecks(source: string): string {
  return source
    .replace(/fn wg(ld|st)_\d+\([^)]*\)[^{]*\{\n[^}]*\}\n(\s*return [^;]*;\n)?\}\n/g, '')
    .replace(/\bwgld_(\d+)\(([^;]*?)\);/g, 'wg_$1[$2];')
    .replace(/\bwgst_(\d+)\(([^,]*), ([^;]*)\);/g, 'wg_$1[$2] = $3;');
}

/** Hand-written WGSL of the same layout: no helpers, fma, no select (ε² > 0 only). */
function handWgsl(t: NBodyTiling): string {
  const { workgroupSize: wg, bodiesPerInvocation: B, unroll: U } = t;
  const bs = [...Array(B).keys()];
  const inner = [...Array(U).keys()]
    .map(
      (u) =>
        `      { let q = tile[j + ${u}u];\n` +
        bs
          .map(
            (b) =>
              `        { let d = q.xyz - p${b}; let r2 = fma(d.x, d.x, fma(d.y, d.y, fma(d.z, d.z, P.eps2))); let inv = inverseSqrt(r2); let s = q.w * inv * inv * inv; a${b} = fma(d, vec3<f32>(s), a${b}); }`,
          )
          .join('\n') +
        '\n      }',
    )
    .join('\n');
  return `
struct Params { n: u32, eps2: f32, halfDt: f32, l0: u32, l1: u32, l2: u32, l3: u32 }
@group(0) @binding(0) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> velIn: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> velOut: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> acc: array<vec4<f32>>;
@group(0) @binding(4) var<uniform> P: Params;
var<workgroup> tile: array<vec4<f32>, ${wg}>;
@compute @workgroup_size(${wg})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let first = wid.x * ${wg * B}u + lid;
${bs.map((b) => `  let i${b} = first + ${b * wg}u; let p${b} = pos[min(i${b}, P.n - 1u)].xyz; var a${b} = vec3<f32>();`).join('\n')}
  for (var start = 0u; start < P.n; start += ${wg}u) {
    let k = start + lid;
    tile[lid] = select(vec4<f32>(), pos[min(k, P.n - 1u)], k < P.n);
    workgroupBarrier();
    for (var j = 0u; j < ${wg}u; j += ${U}u) {
${inner}
    }
    workgroupBarrier();
  }
${bs.map((b) => `  if (i${b} < P.n) { acc[i${b}] = vec4<f32>(a${b}, 0.0); velOut[i${b}] = velIn[i${b}] + vec4<f32>(a${b}, 0.0) * P.halfDt; }`).join('\n')}
}`;
}

/** The source with the tile-index masks (` & (wg-1)u`) taken out of the workgroup loads: the kernel as before the mask. */
function withoutMask(source: string): string {
  return source.replace(/\bwgld_(\d+)\(\((.*?) & \d+u\)\);/g, 'wgld_$1($2);');
}

const T = (workgroupSize: number, bodiesPerInvocation: number, unroll: number): NBodyTiling => ({
  workgroupSize,
  bodiesPerInvocation,
  unroll,
});

/** Rows of one problem size on one Dawn instance; `full` adds the library rows and the headline step. */
async function session(label: string, toggles: string[], problem: Problem, full: boolean): Promise<void> {
  const N = problem.n;
  const instance = create(toggles);
  const device = await createDevice({ backend: 'webgpu', options: { webgpu: { gpu: instance } } });
  console.log(`--- n = ${N}${label}: ${device.info.adapter}; timer ${device.caps.timerSource}; concurrency ${device.caps.concurrency}`);
  const impl = device.impl as WebGpuDevice;
  // The last source compiled, to run it on the raw device.
  let lastSource = '';
  const compile = impl.compile.bind(impl);
  impl.compile = (k: Kernel) => {
    const c = compile(k) as WebGpuCompiled;
    lastSource = c.source;
    return c;
  };
  const bodies = device.createBuffer('f32', problem.data);
  const velIn = device.createBuffer('f32', 4 * N);
  velIn.fill(0);
  const velOut = device.createBuffer('f32', 4 * N);
  const accRaw = device.createBuffer('f32', 4 * N);
  await device.flush();
  const gpuOf = (b: typeof bodies) => (b.impl as unknown as { gpu: GPUBuffer }).gpu;
  const bind = [gpuOf(bodies), gpuOf(velIn), gpuOf(velOut), gpuOf(accRaw)];
  const f32bits = (x: number) => new Uint32Array(new Float32Array([x]).buffer)[0] as number;
  const words = (eps2: number) => [N, f32bits(eps2), 0, N, N, N, N];
  const row = async (
    variant: string,
    t: NBodyTiling | string,
    eps2: number,
    f: () => Promise<number>,
    check?: () => Promise<number>,
    evaluations = 1,
  ) => {
    const tiling = typeof t === 'string' ? t : name(t);
    try {
      const ms = await f();
      show({
        variant: variant + label,
        tiling,
        eps2,
        ms,
        gflops: problem.gflops(ms, evaluations),
        ...(check ? { error: await check() } : {}),
      });
    } catch (err) {
      console.log(`${variant}${label} ${tiling} eps2=${eps2}: failed: ${String(err).slice(0, 300)}`);
    }
  };
  const raw = (code: string, t: NBodyTiling, eps2: number) =>
    rawTimed(impl.gpu, code, bind, words(eps2), Math.ceil(N / (t.workgroupSize * t.bodiesPerInvocation)));
  const rawError = (eps2: number) => async () => problem.error(await accRaw.read(), eps2);
  const library = async (t: NBodyTiling | undefined, eps2: number) => {
    let acc: ReturnType<typeof nbodyAccelerations> | undefined;
    await row(
      'ir',
      t ?? 'default',
      eps2,
      () =>
        timeIt(device, () => {
          acc?.destroy();
          acc = nbodyAccelerations(device, bodies, { softening2: eps2, ...(t ? { tiling: t } : {}) });
        }),
      async () => problem.error(await (acc as ReturnType<typeof nbodyAccelerations>).read(), eps2),
    );
    if (t && eps2 > 0) sources.set(`${N}:${name(t)}`, lastSource);
    acc?.destroy();
  };

  const big = N === SIZES[0];
  if (full) {
    const shapes = big
      ? [
          T(512, 4, 16),
          T(512, 4, 8),
          T(1024, 2, 16),
          T(1024, 2, 8),
          T(1024, 4, 16),
          T(512, 2, 16),
          T(256, 4, 16),
          T(512, 8, 4),
          T(256, 2, 8),
          T(256, 1, 16),
        ]
      : [T(512, 1, 16), T(256, 1, 16), T(256, 2, 16), T(512, 2, 16), T(128, 2, 16), T(128, 4, 16), T(256, 4, 16), T(128, 1, 16)];
    for (const t of QUICK ? shapes.slice(0, 3) : shapes) await library(t, 1e-6);
    await library(undefined, 1e-6);
    await library(undefined, 0); // the zero-denominator select kept
  }
  if (big) {
    for (const t of [T(512, 4, 16), T(256, 2, 8), T(256, 1, 16)]) {
      const gen = sources.get(`${N}:${name(t)}`);
      if (gen) {
        await row('raw-gen', t, 1e-6, () => raw(gen, t, 1e-6), rawError(1e-6));
        await row('raw-masked-nowg', t, 1e-6, () => raw(withoutWorkgroupChecks(gen), t, 1e-6), rawError(1e-6));
        await row('raw-unmasked', t, 1e-6, () => raw(withoutMask(gen), t, 1e-6), rawError(1e-6));
        await row('raw-nowg', t, 1e-6, () => raw(withoutWorkgroupChecks(withoutMask(gen)), t, 1e-6), rawError(1e-6));
      }
      await row('hand', t, 1e-6, () => raw(handWgsl(t), t, 1e-6), rawError(1e-6));
    }
  }
  if (full) {
    if (big) console.log(`--- generated WGSL, n = ${N}, wg512 b4 u16, eps2 > 0 ---\n${sources.get(`${N}:wg512 b4 u16`)}`);
    // Headline: one leapfrog step (two force evaluations + kick-drift) with the default tiling.
    for (const eps2 of [1e-6, 0]) {
      let out: ReturnType<typeof nbody> | undefined;
      await row(
        'step',
        'default',
        eps2,
        () =>
          timeIt(device, () => {
            out?.bodies.destroy();
            out?.velocities.destroy();
            out = nbody(device, bodies, { steps: 1, dt: 1e-3, softening2: eps2 });
          }),
        undefined,
        2,
      );
    }
  }
  await device.destroy();
}

const problems = SIZES.map((n) => new Problem(n));
for (const problem of problems) await session('', [...DAWN_TOGGLES], problem, true);
await session('-norobust', [...DAWN_TOGGLES, 'enable-dawn-features=allow_unsafe_apis,disable_robustness'], problems[0] as Problem, false);
console.log(`ROWS ${JSON.stringify(rows)}`);
process.exit(0);
