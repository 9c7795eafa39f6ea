/**
 * H100 check of the scan formulations (WebGPU through Dawn/Vulkan): n = 2^28,
 * reduce-then-scan beside single-pass look-back variants (layout, workgroup size,
 * quads per invocation, spin limit), u32 inclusive / exclusive and f32 inclusive,
 * GPU-timestamp medians and correctness against the sequential reference (every
 * 4099th element and the last; f32 within the documented bound). Run it beside the
 * CUB anchor in one device call; only same-call ratios compare:
 *
 *   node_modules/.bin/esbuild --bundle --platform=node --format=esm --target=node20 --conditions=trident-source \
 *     "--banner:js=import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" \
 *     --alias:trident=./bench/h100/trident-webgpu-only.mjs bench/h100/scan-check.ts --outfile=/work/main/.gpu/scan-check.mjs
 *   (GPU machine) source .gpu/start.sh && node .gpu/scan-check.mjs [--quick] [--raw] [--log2n=28]
 *
 * Rows named PROBE time measurement-only kernels (LookbackTuning.probe) that split
 * the single pass's time into its tile work and its look-back.
 */
import { gammaF32, randomU32, type ScanVariant, scanFormulation, scanSumDepth, scanVariant } from '@trident/algorithms';
/// <reference types="@webgpu/types" />
import type { UniformSlot } from '@trident/backend-webgpu';
import { type Buffer, createDevice, type Device, type Kernel } from 'trident';
import { sustainedMedian, warmedMedian } from '../../packages/cli/src/bench/sustained.ts';
import { timeRawWgsl } from './raw-wgsl.ts';

const quick = process.argv.includes('--quick');
const log2n = Number(process.argv.find((a) => a.startsWith('--log2n='))?.slice(8) ?? 28);
const N = 2 ** log2n;

const device = await createDevice({ backend: 'webgpu' });
const caps = device.caps;
console.log(
  `device: ${device.info.adapter}; subgroups ${caps.limits.minSubgroupSize}-${caps.limits.maxSubgroupSize}; ` +
    `max invocations ${caps.limits.maxComputeInvocationsPerWorkgroup}; default formulation ${scanFormulation(device).name}`,
);

const raw = randomU32(N, 11);
const f32Data = new Float32Array(N);
for (let i = 0; i < N; i++) f32Data[i] = ((raw[i] as number) / 2 ** 32 - 0.5) * 100;
const u32In = device.createBuffer('u32', raw);
const f32In = device.createBuffer('f32', f32Data);
const u32Out = device.createBuffer('u32', N);
const f32Out = device.createBuffer('f32', N);

// Reference prefix sums at the sampled positions (inclusive; exclusive reads one back).
const SAMPLE = 4099;
const positions: number[] = [];
for (let i = 0; i < N; i += SAMPLE) positions.push(i);
positions.push(N - 1);
const u32Ref = new Map<number, number>();
const f64Ref = new Map<number, number>();
const absRef = new Map<number, number>();
{
  let s = 0;
  let f = 0;
  let a = 0;
  let next = 0;
  for (let i = 0; i < N; i++) {
    // Exclusive values at the sampled positions are the inclusive values of i - 1.
    if (i === positions[next]) {
      u32Ref.set(-i - 1, s);
      f64Ref.set(-i - 1, f);
      absRef.set(-i - 1, a);
    }
    s = (s + (raw[i] as number)) >>> 0;
    f += f32Data[i] as number;
    a += Math.abs(f32Data[i] as number);
    if (i === positions[next]) {
      u32Ref.set(i, s);
      f64Ref.set(i, f);
      absRef.set(i, a);
      next++;
    }
  }
}

interface RawDevice {
  readonly gpu: GPUDevice;
  compile(kernel: Kernel): { readonly source: string; readonly wgsl: { readonly uniforms: readonly UniformSlot[] } };
}
const raw_ = device.impl as unknown as RawDevice;
const gpuOf = (b: Buffer): GPUBuffer => (b.impl as unknown as { gpu: GPUBuffer }).gpu;

/** Median GPU time of one compute pass of `code` (status cleared before each, outside the timed pass). */
function rawTimed(code: string, bind: GPUBuffer[], uniformWords: number[], groups: number, clear: GPUBuffer): Promise<number> {
  return timeRawWgsl(raw_.gpu, { code, bind, uniformWords, workgroups: groups, clear, reps: 7, warmup: 25, warmupMs: 1000 });
}

/** Strips the generated storage bounds-check helpers: `ld_x(i, len_x)` -> `b_x[i]`, `st_x(i, v, len_x)` -> `b_x[i] = v`. */
function noChecks(source: string): string {
  return source
    .replace(/\bld_(\w+)\(([^;]*?), len_\w+\)/g, 'b_$1[$2]')
    .replace(/\bst_(\w+)\((.*), (vec4<u32>\(.*\)), len_\w+\);/g, 'b_$1[$2] = $3;');
}

/**
 * Calls of the status buffer's atomic `fn` helper replaced by the bare built-in:
 * `atomic_load_status(i, len)` -> `atomicLoad(&b_status[i])`, `atomic_store_status(i, v, len);`
 * -> `atomicStore(&b_status[i], v);` (Dawn's robustness still clamps the index).
 */
function plainAtomics(source: string, fn: 'load' | 'store', form: 'bare' | 'guarded' | 'clamped' = 'bare'): string {
  if (fn === 'load') return source.replace(/\batomic_load_status\((.*?), len_status\)/g, 'atomicLoad(&b_status[$1])');
  return source.replace(/\batomic_store_status\((.*), len_status\);/g, (whole, args: string) => {
    // The first top-level comma splits index from value.
    let depth = 0;
    for (let i = 0; i < args.length; i++) {
      const c = args[i];
      if (c === '(') depth++;
      else if (c === ')') depth--;
      else if (c === ',' && depth === 0) {
        const index = args.slice(0, i);
        const value = args.slice(i + 1).trim();
        // guarded: the same bounds check, inline at the call site instead of in the helper function;
        // clamped: no branch, the index clamped into the array (what an in-range store could emit).
        if (form === 'clamped') return `atomicStore(&b_status[min(${index}, arrayLength(&b_status) - 1u)], ${value});`;
        const store = `atomicStore(&b_status[${index}], ${value});`;
        return form === 'guarded' ? `if (${index} < len_status) { ${store} }` : store;
      }
    }
    return whole;
  });
}

/** The store helper with an early return instead of a guarded block. */
function earlyReturnStores(source: string): string {
  return source.replace(
    /fn atomic_store_status\(i: u32, v: u32, len: u32\) \{\n[^}]*\}\n\}/,
    'fn atomic_store_status(i: u32, v: u32, len: u32) {\n  if (i >= len) { return; }\n  atomicStore(&b_status[i], v);\n}',
  );
}

/** The generated kernel of `variant` (captured from its dispatch) on the raw device, as generated and without checks. */
async function rawRow(name: string, variant: ScanVariant): Promise<void> {
  let captured: { kernel: Kernel; groups: number; args: Record<string, Buffer | number> } | undefined;
  const dispatch = device.dispatch.bind(device);
  (device as { dispatch: Device['dispatch'] }).dispatch = ((kernel: Kernel, grid: { invocations: number }, args: never) => {
    if (kernel.name.startsWith('scan_lookback'))
      captured = { kernel, groups: grid.invocations / kernel.ir.workgroupSize, args: args as Record<string, Buffer | number> };
    return dispatch(kernel, grid as never, args);
  }) as Device['dispatch'];
  scanVariant(device, u32In, { output: u32Out }, variant);
  (device as { dispatch: Device['dispatch'] }).dispatch = dispatch;
  await device.flush();
  if (!captured) throw new Error('no look-back dispatch seen');
  const { kernel, groups, args } = captured;
  const compiled = raw_.compile(kernel);
  const words = compiled.wgsl.uniforms.map((u) =>
    u.kind === 'uniform' ? (args[u.param] as number) : (args[u.param] as Buffer).length / u.vector,
  );
  const status = args.status as Buffer;
  for (const [label, code] of [
    ['raw-gen', compiled.source],
    ['raw-nocheck', noChecks(compiled.source)],
    ['raw-plain-stores', plainAtomics(compiled.source, 'store')],
    ['raw-inline-guarded-stores', plainAtomics(compiled.source, 'store', 'guarded')],
    ['raw-clamped-stores', plainAtomics(compiled.source, 'store', 'clamped')],
    ['raw-early-return-store-helper', earlyReturnStores(compiled.source)],
  ] as const) {
    const row: Record<string, unknown> = { name: `${label} ${name}`, dtype: 'u32', exclusive: false };
    try {
      const ms = await rawTimed(code, [gpuOf(u32In), gpuOf(u32Out), gpuOf(status)], words, groups, gpuOf(status));
      Object.assign(row, {
        ms: +ms.toFixed(4),
        GBps: +((8 * N) / ms / 1e6).toFixed(1),
        check: await verify(u32Out, 'u32', false, variant),
      });
    } catch (e) {
      row.error = String(e).slice(0, 600);
    }
    if (label !== 'raw-gen' && code === compiled.source) row.note = 'transform changed nothing';
    rows.push(row);
    console.log(JSON.stringify(row));
  }
}

/**
 * Hand-written single pass, u32 inclusive, the 'subgroup' layout: subgroup-contiguous
 * runs of `quads` vec4 rows, one vector subgroup scan per four rows, the first subgroup
 * scans the run totals and looks back over a subgroup-wide window (two-word states as
 * in scan-lookback.ts, spinning without a fallback).
 */
function handScan(wg: number, quads: number, ids: 'counter' | 'workgroup', mode: 'full' | 'no-lookback' | 'copy'): string {
  const qs = Array.from({ length: quads }, (_, q) => q);
  const groups = Array.from({ length: Math.ceil(quads / 4) }, (_, g) => g);
  const tileId =
    ids === 'counter'
      ? `if (lid == 0u) { tileId = atomicAdd(&status[0], 1u); }\n  let tile = workgroupUniformLoad(&tileId);`
      : 'let tile = wid.x + wid.y * nw.x;';
  if (mode === 'copy')
    return `
enable subgroups;
struct P { tiles: u32 }
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> p: P;
@compute @workgroup_size(${wg})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>, @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sg: u32) {
  let tile = wid.x + wid.y * nw.x;
  if (tile >= p.tiles) { return; }
  if (tile == 0xffffffffu) { atomicStore(&status[0], 0u); } // keeps the binding in the layout
  let base = tile * ${wg * quads}u + (lid - lane) * ${quads}u + lane;
  let end = arrayLength(&dst);
${qs.map((q) => `  let x${q} = src[min(base + ${q}u * sg, end - 1u)];`).join('\n')}
${qs.map((q) => `  if (base + ${q}u * sg < end) { dst[base + ${q}u * sg] = x${q}; }`).join('\n')}
}`;
  return `
enable subgroups;
diagnostic(off, subgroup_uniformity);
struct P { tiles: u32 }
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> p: P;
var<workgroup> runs: array<u32, ${wg}>;
var<workgroup> tilePrefix: u32;
var<workgroup> tileId: u32;
@compute @workgroup_size(${wg})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>, @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sg: u32) {
  ${tileId}
  let live = tile < p.tiles;
  let base = min(tile, p.tiles) * ${wg * quads}u + (lid - lane) * ${quads}u + lane;
${qs.map((q) => `  let x${q} = src[min(base + ${q}u * sg, arrayLength(&src) - 1u)];\n  let t${q} = x${q}.x + x${q}.y + x${q}.z + x${q}.w;`).join('\n')}
  var run = 0u;
${groups
  .map((g) => {
    const rs = qs.slice(4 * g, 4 * g + 4);
    const v = rs.length === 1 ? `t${rs[0]}` : `vec${rs.length}<u32>(${rs.map((q) => `t${q}`).join(', ')})`;
    const c = (i: number) => (rs.length === 1 ? '' : `.${'xyzw'[i]}`);
    return [
      `  let incl${g} = subgroupInclusiveAdd(${v});`,
      `  let tot${g} = subgroupShuffle(incl${g}, sg - 1u);`,
      ...rs.map((q, i) => `  let b${q} = run + incl${g}${c(i)} - t${q};\n  run += tot${g}${c(i)};`),
    ].join('\n');
  })
  .join('\n')}
  if (lane == 0u) { runs[lid / sg] = run; }
  workgroupBarrier();
  if (lid < sg && live) {
    let count = ${wg}u / sg;
    let v = select(0u, runs[lid], lid < count);
    let incl = subgroupInclusiveAdd(v);
    if (lid < count) { runs[lid] = incl - v; }
    let total = subgroupShuffle(incl, count - 1u);
    if (lane == 0u) {
      atomicStore(&status[2u * tile + 1u], ((total & 0xffffu) << 2u) | 1u);
      atomicStore(&status[2u * tile + 2u], ((total >> 16u) << 2u) | 1u);
    }
    var prefix = 0u;
    var look = tile;
    loop {
      if (look == 0u${mode === 'no-lookback' ? ' || true' : ''}) { break; }
      let inRange = lane < look;
      let j = min(look - 1u - lane, look - 1u);
      let w0 = atomicLoad(&status[2u * j + 1u]);
      let w1 = atomicLoad(&status[2u * j + 2u]);
      let flag = select(2u, select(0u, w0 & 3u, (w0 & 3u) == (w1 & 3u)), inRange);
      let value = select(0u, (w0 >> 2u) | ((w1 >> 2u) << 16u), inRange);
      let firstInclusive = subgroupMin(select(0xffffffffu, lane, flag == 2u));
      let firstWaiting = subgroupMin(select(0xffffffffu, lane, flag == 0u));
      if (firstWaiting < firstInclusive) {
        prefix += subgroupAdd(select(0u, value, lane < firstWaiting));
        look -= firstWaiting;
      } else {
        prefix += subgroupAdd(select(0u, value, lane <= firstInclusive));
        look = select(0u, look - sg, firstInclusive == 0xffffffffu);
      }
    }
    if (lane == 0u) {
      let inclusive = prefix + total;
      atomicStore(&status[2u * tile + 1u], ((inclusive & 0xffffu) << 2u) | 2u);
      atomicStore(&status[2u * tile + 2u], ((inclusive >> 16u) << 2u) | 2u);
      tilePrefix = prefix;
    }
  }
  workgroupBarrier();
  if (!live) { return; }
  let offset = tilePrefix + runs[lid / sg];
${qs
  .map((q) => {
    const o = `o${q}`;
    return `  let ${o} = offset + b${q};\n  if (base + ${q}u * sg < arrayLength(&dst)) { dst[base + ${q}u * sg] = vec4<u32>(${o} + x${q}.x, ${o} + x${q}.x + x${q}.y, ${o} + x${q}.x + x${q}.y + x${q}.z, ${o} + t${q}); }`;
  })
  .join('\n')}
}`;
}

async function verifyCopy(out: Buffer): Promise<string> {
  const got = await out.read();
  for (const i of positions) if (got[i] !== raw[i]) return `WRONG copy at ${i}`;
  return 'copy ok';
}

async function verify(out: Buffer, dtype: 'u32' | 'f32', exclusive: boolean, variant: ScanVariant): Promise<string> {
  const got = await out.read();
  const g = gammaF32(scanSumDepth(device, N, variant));
  let worst = 0;
  for (const i of positions) {
    const key = exclusive ? -i - 1 : i;
    const v = got[i] as number;
    if (dtype === 'u32') {
      if (v !== u32Ref.get(key)) return `WRONG at ${i}: ${v} want ${u32Ref.get(key)}`;
    } else {
      const err = Math.abs(v - (f64Ref.get(key) as number));
      const bound = g * (absRef.get(key) as number);
      if (!(err <= bound)) return `WRONG at ${i}: ${v} want ${f64Ref.get(key)} (bound ${bound})`;
      worst = Math.max(worst, bound > 0 ? err / bound : 0);
    }
  }
  return dtype === 'u32' ? 'ok' : `ok (worst err/bound ${worst.toExponential(2)})`;
}

type Mode = readonly ['u32' | 'f32', boolean];
const ALL: readonly Mode[] = [
  ['u32', false],
  ['u32', true],
  ['f32', false],
  ['f32', true],
];
const U32: readonly Mode[] = [['u32', false]];
const sp = (lookback: ScanVariant['lookback']): ScanVariant => ({ formulation: 'single-pass', lookback });
// Probes (results wrong, not checked) split the single pass's time: its tile work alone, its look-back alone.
const sub = (
  wg: number,
  vecs: number,
  ids: 'counter' | 'workgroup' = 'counter',
  probe?: 'no-lookback' | 'no-data',
  layout: 'subgroup' | 'subgroup-blocked' = 'subgroup',
): ScanVariant => sp({ layout, wg, vecs, ids, ...(probe ? { probe } : {}) });
// Session 4 (2026-11-23): the sweep again under the warmed protocol (the first sweeps ran each
// variant after a single warm-up run, when the H100's clock had not risen: 2.15 ms for what the
// suite's warmed timing measured at 1.03 ms).
// Call 2 (warmed by 3 s of scans first, all rows under the suite's protocol): default
// 1.029 ms, 512 x 8 1.033, 128 x 16 1.040, 256 x 16 1.047, counter ids 1.047, 256 x 8
// 1.087; no-lookback probe 0.730; the hand-written kernel of the same layout 0.899 (256 x 12)
// / 0.895 (128 x 16): the generated look-back costs 0.30 ms against the hand one's 0.18.
// Call 3: the fallback outside a spin loop of its own ('nested', since removed) measured the same (1.022 ms against 1.026; 128 x 16 1.026,
// 512 x 8 1.024). Call 4: the generated WGSL with parts removed, on the raw device (--raw):
// without the status helpers 0.886 ms, as generated 1.023. Call 5 (after the branch-free
// loads, which the suite measured at 1.013): which of the helpers' loads and stores costs: the
// stores (bare stores 0.891 ms, bare loads 1.006, as generated 1.008).
// Session 5, call 1: which form of the store's bounds check costs: any branch around the store
// (guarded in the helper 1.009 ms, inline at the call site 1.104, early return 1.004); the index
// clamped instead, no branch: 0.886 (bare 0.888; CUB 0.879 in the same call). The generator now
// stores out-of-range writes to a spare element past the logical length (wgsl.ts atomicHelper).
// Call 2, with that generator: default 0.892 ms u32 inclusive, 0.874 exclusive, 0.888 f32
// (CUB 0.891 / 0.888 in the same call); the raw transforms now change nothing or nothing measurable.
// Session 7 (22:13 UTC, bench/results/tuning/h100-scan-inclusive-2026-11-23.json): u32 inclusive
// outputs formed back from each quad's end (its first element dead before the barriers, as in
// the exclusive scan) against the running sums, interleaved: 0.8963 / 0.8965 / 0.8947 ms against
// 0.8934 / 0.8930 (dropped: register pressure is not why inclusive trails exclusive, 0.8738);
// shapes (from-end outputs) 512 x 8 0.897, 128 x 16 0.900, 256 x 16 0.908, 256 x 8 0.933; the hand kernel of
// the default's layout 0.894; CUB 0.883 in the same call.
const variants: Array<[string, ScanVariant, readonly Mode[]]> = [
  ['default', {}, ALL],
  ['PROBE no-lookback subgroup wg256 x12q workgroup ids', sub(256, 12, 'workgroup', 'no-lookback'), U32],
];

const rows: Array<Record<string, unknown>> = [];
// The clock rises only under sustained work: 3 s of back-to-back scans first (as the suite warms each device: packages/cli/src/bench/suite-runner.ts).
for (const start = performance.now(); performance.now() - start < 3000; )
  await device.time('warm-up', () => void scanVariant(device, u32In, { output: u32Out }, {}));
// The call-pattern check: the default timed in batches of 4 after 100 ms (warmedMedian) and in
// batches filling 50 ms after 500 ms (sustainedMedian, the suite's protocol), back to back.
for (const [protocol, time] of [
  ['batches of 4', (label: string, body: () => void) => warmedMedian(device, label, body, { reps: 7, batch: 4 })],
  ['sustained', (label: string, body: () => void) => sustainedMedian(device, label, body, { reps: 7 })],
  ['single runs', (label: string, body: () => void) => warmedMedian(device, label, body, { reps: 7, batch: 1 })],
] as const) {
  const ms = await time(`default ${protocol}`, () => void scanVariant(device, u32In, { output: u32Out }, {}));
  const row = { name: `default, ${protocol}`, dtype: 'u32', exclusive: false, ms: +ms.toFixed(4), GBps: +((8 * N) / ms / 1e6).toFixed(1) };
  rows.push(row);
  console.log(JSON.stringify(row));
}
for (const [name, variant, modes] of quick ? variants.slice(0, 3) : variants) {
  for (const [dtype, exclusive] of modes) {
    const input = dtype === 'u32' ? u32In : f32In;
    const output = dtype === 'u32' ? u32Out : f32Out;
    output.fill(0);
    let ms: number;
    try {
      ms = await sustainedMedian(
        device,
        name,
        () => void scanVariant(device, input as Buffer<'u32'>, { exclusive, output: output as Buffer<'u32'> }, variant),
        { reps: 7 },
      );
    } catch (e) {
      console.log(JSON.stringify({ name, dtype, exclusive, error: String(e) }));
      continue;
    }
    const check = variant.lookback?.probe ? 'probe (not checked)' : await verify(output, dtype, exclusive, variant);
    const row = { name, dtype, exclusive, ms: +ms.toFixed(4), GBps: +((8 * N) / ms / 1e6).toFixed(1), check };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
}
// ---- the platform's ceiling: WGSL on the raw GPUDevice (u32 inclusive) ----
// Hand-written WGSL of the 'subgroup' layout (no helpers, no fallback: it assumes forward
// progress, as CUB does): 'full', without the look-back, and a tile copy (loads and stores
// of the same addresses, nothing else). Call 1 also ran the generated kernel's WGSL on the
// raw device with and without its bounds-check helpers (rawRow): no difference (2.230 / 2.239 ms).
if (process.argv.includes('--raw')) await rawRow('default (subgroup wg256 x12q workgroup ids)', sp({}));
if (!quick) {
  for (const [wg, quads, ids, mode] of [
    [256, 8, 'workgroup', 'full'],
    [256, 12, 'workgroup', 'full'],
    [128, 16, 'workgroup', 'full'],
    [256, 8, 'workgroup', 'no-lookback'],
    [256, 8, 'workgroup', 'copy'],
    [512, 4, 'workgroup', 'copy'],
  ] as const) {
    const tiles = Math.ceil(N / (4 * wg * quads));
    const name = `hand ${mode} wg${wg} x${quads}q ${ids} ids`;
    const status = device.createBuffer('u32', 2 * tiles + 1);
    try {
      const ms = await rawTimed(
        handScan(wg, quads, ids, mode),
        [gpuOf(u32In), gpuOf(u32Out), gpuOf(status)],
        [tiles],
        tiles,
        gpuOf(status),
      );
      const check =
        mode === 'full'
          ? await verify(u32Out, 'u32', false, sub(wg, quads))
          : mode === 'copy'
            ? await verifyCopy(u32Out)
            : 'probe (not checked)';
      const row = { name, dtype: 'u32', exclusive: false, ms: +ms.toFixed(4), GBps: +((8 * N) / ms / 1e6).toFixed(1), check };
      rows.push(row);
      console.log(JSON.stringify(row));
    } catch (e) {
      console.log(JSON.stringify({ name, error: String(e).slice(0, 600) }));
    }
    status.destroy();
  }
}

console.log(`RESULTS ${JSON.stringify(rows)}`);
await device.destroy();
process.exit(0);
