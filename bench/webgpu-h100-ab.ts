/**
 * Why does Trident's WebGPU zcopy / reduce reach only ~55% of the native figures on
 * the H100 when a hand-written WGSL kernel through the same Dawn got ~100%
 * (ANCHORS.md)? This A/B run answers it in one device call: the same 1 GiB
 * buffers, the same timestamp method, and one change at a time.
 *
 *   raw-hand      hand-written WGSL (no helpers, plain uniform n) on the raw GPUDevice
 *   raw-trident   Trident's generated WGSL source, run on the raw GPUDevice (plain uniform buffer)
 *   raw-nocheck   Trident's generated WGSL with its bounds-check helpers turned into plain accesses
 *   trident       device.dispatch + device.time (dynamic-offset uniform arena, bind-group cache)
 *   ... each again on a Dawn instance with robustness disabled ('-norobust').
 *
 * Run by bench/h100/run.sh ab (after `run.sh pack`); prints a table and writes JSON.
 */
/// <reference types="@webgpu/types" />
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DAWN_TOGGLES, type WebGpuCompiled, type WebGpuDevice, webgpuAdapter } from '@trident/backend-webgpu';
import { buffer, createDevice, type Device, defineKernel, registerBackend, u32, uniform } from '@trident/core';
import { create, globals } from 'webgpu';
import { median } from '../packages/cli/src/bench/stats.ts';
import { timeRawWgsl } from './h100/raw-wgsl.ts';

const { values } = parseArgs({
  options: {
    log2n: { type: 'string', default: '28' },
    repeats: { type: 'string', default: '7' },
    wg: { type: 'string', default: '1024' },
    grid: { type: 'string', default: '528' },
    out: { type: 'string' },
  },
});
const N = 2 ** Number(values.log2n);
const REPEATS = Number(values.repeats);
const WG = Number(values.wg);
const GRID = Number(values.grid);
Object.assign(globalThis, globals);
registerBackend(webgpuAdapter);

const rows: Array<{ variant: string; kernel: string; ms: number; gbps: number }> = [];

const copyKernel = defineKernel({
  name: 'ab_zcopy',
  workgroupSize: WG,
  params: { src: buffer('u32', 'read', { vector: 4 }), dst: buffer('u32', 'write', { vector: 4 }), n: uniform('u32') },
  body: ({ src, dst, n }, k) => {
    const i = k.let(k.globalIndex, 'i');
    const stride = k.let(k.numInvocations, 'stride');
    k.while(
      () => i.lt(n),
      () => {
        dst.store(i, src.load(i));
        i.set(i.add(stride));
      },
    );
  },
});
const reduceKernel = defineKernel({
  name: 'ab_reduce',
  workgroupSize: WG,
  params: { x: buffer('u32', 'read', { vector: 4 }), out: buffer('u32', 'atomic'), n: uniform('u32') },
  body: ({ x, out, n }, k) => {
    const acc = k.var('vec4<u32>', 0, 'acc');
    const i = k.let(k.globalIndex, 'i');
    const stride = k.let(k.numInvocations, 'stride');
    k.while(
      () => i.lt(n),
      () => {
        acc.set(acc.add(x.load(i)));
        i.set(i.add(stride));
      },
    );
    const partial = k.workgroupArray('u32', WG);
    const s = k.subgroupAdd(acc.x.add(acc.y).add(acc.z.add(acc.w)));
    k.if(k.subgroupInvocation.eq(0), () => partial.store(k.localIndex.div(k.subgroupSize), s));
    k.barrier();
    k.if(k.localIndex.lt(k.subgroupSize), () => {
      const t = k.var('u32', 0, 't');
      k.for({ from: k.localIndex, to: u32(WG).div(k.subgroupSize), step: k.subgroupSize }, (j) => t.set(t.add(partial.load(j))));
      const total = k.subgroupAdd(t);
      k.if(k.localIndex.eq(0), () => out.atomicAdd(0, total));
    });
  },
});

const HAND_COPY = `
struct P { n: u32 }
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let stride = nw.x * ${WG}u;
  for (var i = g.x; i < p.n; i += stride) { dst[i] = src[i]; }
}`;
const HAND_REDUCE = `
enable subgroups;
diagnostic(off, subgroup_uniformity);
struct P { n: u32 }
@group(0) @binding(0) var<storage, read> x: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> p: P;
var<workgroup> partial: array<u32, ${WG}>;
@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>, @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) ss: u32) {
  let stride = nw.x * ${WG}u;
  var acc = vec4<u32>();
  for (var i = g.x; i < p.n; i += stride) { acc += x[i]; }
  let s = subgroupAdd(acc.x + acc.y + acc.z + acc.w);
  if (sid == 0u) { partial[lid / ss] = s; }
  workgroupBarrier();
  if (lid < ss) {
    var t = 0u;
    for (var j = lid; j < ${WG}u / ss; j += ss) { t += partial[j]; }
    let total = subgroupAdd(t);
    if (lid == 0u) { atomicAdd(&out[0], total); }
  }
}`;

/** Strips the generated bounds-check helpers: `ld_x(i, len_x)` -> `b_x[i]`, `st_x(i, v, len_x)` -> `b_x[i] = v`. */
function noChecks(source: string): string {
  return source
    .replace(/fn (ld|st)_\w+\([^)]*\)[^{]*\{\n[^}]*\}\n(\s*return [^;]*;\n)?\}\n/g, '')
    .replace(/\bld_(\w+)\(([^(),]*), len_\w+\)/g, 'b_$1[$2]')
    .replace(/\bst_(\w+)\(([^,]*), ([^;]*), len_\w+\);/g, 'b_$1[$2] = $3;');
}

function rawTimed(gpu: GPUDevice, code: string, bind: GPUBuffer[], uniformWords: number[]): Promise<number> {
  return timeRawWgsl(gpu, { code, bind, uniformWords, workgroups: GRID, reps: REPEATS, warmup: 2 });
}

async function variants(label: string, toggles: string[]): Promise<void> {
  const instance = create(toggles);
  const device: Device = await createDevice({ backend: 'webgpu', options: { webgpu: { gpu: instance } } });
  const impl = device.impl as WebGpuDevice;
  const gpu = impl.gpu;
  const a = device.createBuffer('u32', N);
  const b = device.createBuffer('u32', N);
  const out = device.createBuffer('u32', 1);
  a.fill(1);
  await device.flush();
  const bufOf = (x: typeof a) => (x.impl as unknown as { gpu: GPUBuffer }).gpu;
  const copySrc = (impl.compile(copyKernel) as WebGpuCompiled).source;
  const reduceSrc = (impl.compile(reduceKernel) as WebGpuCompiled).source;
  const record = (variant: string, kernel: string, ms: number) => {
    const bytes = kernel === 'zcopy' ? N * 8 : N * 4;
    rows.push({ variant: `${variant}${label}`, kernel, ms, gbps: bytes / (ms * 1e6) });
    console.log(`${variant}${label} ${kernel}: ${ms.toFixed(4)} ms ${(bytes / (ms * 1e6)).toFixed(1)} GB/s`);
  };
  const n4 = N / 4;
  const tryRun = async (variant: string, kernel: string, f: () => Promise<number>) => {
    try {
      record(variant, kernel, await f());
    } catch (err) {
      console.log(`${variant}${label} ${kernel}: failed: ${String(err).slice(0, 400)}`);
    }
  };
  await tryRun('raw-hand', 'zcopy', () => rawTimed(gpu, HAND_COPY, [bufOf(a), bufOf(b)], [n4]));
  await tryRun('raw-hand', 'reduce', () => rawTimed(gpu, HAND_REDUCE, [bufOf(a), bufOf(out)], [n4]));
  // Trident's struct: u_n, len_src, len_dst (all in vec4 units here).
  await tryRun('raw-trident', 'zcopy', () => rawTimed(gpu, copySrc, [bufOf(a), bufOf(b)], [n4, n4, n4]));
  await tryRun('raw-trident', 'reduce', () => rawTimed(gpu, reduceSrc, [bufOf(a), bufOf(out)], [n4, n4, 1]));
  await tryRun('raw-nocheck', 'zcopy', () => rawTimed(gpu, noChecks(copySrc), [bufOf(a), bufOf(b)], [n4, n4, n4]));
  await tryRun('raw-nocheck', 'reduce', () => rawTimed(gpu, noChecks(reduceSrc), [bufOf(a), bufOf(out)], [n4, n4, 1]));
  for (const [kernel, run] of [
    ['zcopy', () => device.dispatch(copyKernel, { workgroups: GRID }, { src: a, dst: b, n: n4 })],
    ['reduce', () => device.dispatch(reduceKernel, { workgroups: GRID }, { x: a, out, n: n4 })],
  ] as const) {
    await tryRun('trident', kernel, async () => {
      const ts: number[] = [];
      for (let r = 0; r < REPEATS + 2; r++) {
        const t = await device.time(kernel, run);
        if (r >= 2) ts.push(t.ms);
      }
      return median(ts);
    });
  }
  console.log(`--- ${label || 'default'}: generated zcopy WGSL ---\n${copySrc}\n--- without checks ---\n${noChecks(copySrc)}`);
  await device.destroy();
}

await variants('', [...DAWN_TOGGLES]);
await variants('-norobust', [...DAWN_TOGGLES, 'enable-dawn-features=allow_unsafe_apis,disable_robustness']);
if (values.out)
  writeFileSync(values.out, `${JSON.stringify({ date: new Date().toISOString(), n: N, wg: WG, grid: GRID, rows }, null, 2)}\n`);
