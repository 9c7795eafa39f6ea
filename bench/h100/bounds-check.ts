/**
 * What the bounds checks cost radix sort's rank + scatter step on a real GPU:
 * one 2^28-key scatter pass (shift 0, its offsets from the count and scan steps), timed
 * through Trident and as raw WGSL on the same GPUDevice: the generated module as is,
 * with the workgroup-array checks taken out of its helpers, and with the storage-buffer
 * checks taken out too; each on a default Dawn instance and on one with Dawn's own
 * robustness disabled (information only: WebGPU in a browser always has it). Then the
 * whole radixSort on each instance. Every raw variant's output is compared with the
 * library's. Run: node .gpu/bounds-check.mjs [log2 n] (after pack).
 *
 * Session 8 (tuning/h100-radix-session8-2026-11-24.json, call 4, code before IndexBounds):
 * workgroup-array checks out 4.7% faster, storage checks out too slower; the generator
 * now leaves out the workgroup checks an index provably passes (IndexBounds, core's
 * ir/index-ranges.ts), so on later code 'all' has fewer checks to take out.
 */
/// <reference types="@webgpu/types" />

import { randomU32 } from '@trident/algorithms';
import { countKernel, dispatchGroups, recordRadixSort, recordScan, scatterKernel, sortShape } from '@trident/algorithms/internal';
import type { WebGpuCompiled, WebGpuDevice } from '@trident/backend-webgpu';
import { DAWN_TOGGLES } from '@trident/backend-webgpu';
import { createDevice, type Kernel } from 'trident';
import { create, globals } from 'webgpu';
import { warmedMedian } from '../../packages/cli/src/bench/sustained.ts';
import { timeRawWgsl } from './raw-wgsl.ts';

// Dawn's enums (GPUBufferUsage, …) as globals, as the backend's own instance installs them.
Object.assign(globalThis, globals);
const LOG = Number(process.argv[2] ?? 28);
const n = 2 ** LOG;
const data = randomU32(n, 11 + LOG);

type Checks = 'all' | 'storage only' | 'none';

/** The generated module with the helpers' index checks taken out: of workgroup arrays ('storage only' kept), or of all. */
function withChecks(source: string, checks: Checks): string {
  if (checks === 'all') return source;
  const bodies: Record<string, (a: string) => string> = {
    ld: (a) => `return ${a}[i];`,
    st: (a) => `${a}[i] = v;`,
    wgld: (a) => `return ${a}[i];`,
    wgst: (a) => `${a}[i] = v;`,
    wgatomic_add: (a) => `return atomicAdd(&${a}[i], v);`,
    wgatomic_load: (a) => `return atomicLoad(&${a}[i]);`,
    wgatomic_store: (a) => `atomicStore(&${a}[i], v);`,
  };
  return source.replace(
    /fn (wgatomic_add|wgatomic_load|wgatomic_store|wgld|wgst|ld|st)_(\w+)\(([^)]*)\)( -> [\w<>]+)? \{\n[\s\S]*?\n\}\n/g,
    (whole, kind: string, id: string, params: string, ret: string | undefined) => {
      const storage = kind === 'ld' || kind === 'st';
      if (storage && checks === 'storage only') return whole;
      const body = bodies[kind] as (a: string) => string;
      return `fn ${kind}_${id}(${params})${ret ?? ''} {\n  ${body(storage ? `b_${id}` : `wg_${id}`)}\n}\n`;
    },
  );
}

const rows: Record<string, unknown>[] = [];
const show = (row: Record<string, unknown>) => {
  rows.push(row);
  console.log(JSON.stringify(row));
};

async function session(label: string, toggles: string[]): Promise<void> {
  const device = await createDevice({ backend: 'webgpu', options: { webgpu: { gpu: create(toggles) } } });
  const impl = device.impl as WebGpuDevice;
  const sources = new Map<string, string>();
  const compile = impl.compile.bind(impl);
  impl.compile = (k: Kernel) => {
    const c = compile(k) as WebGpuCompiled;
    const name = /Trident kernel '([^']+)'/.exec(c.source)?.[1];
    if (name) sources.set(name, c.source);
    return c;
  };
  const shape = sortShape(device.caps, false);
  if (!shape) throw new Error('no multisplit shape on this device');
  const tiles = Math.ceil(n / (shape.wg * shape.items));
  const keys = device.createBuffer('u32', data);
  const keysOut = device.createBuffer('u32', n);
  const rawOut = device.createBuffer('u32', n);
  const counts = device.createBuffer('u32', 256 * tiles);
  const offsets = device.createBuffer('u32', 256 * tiles);
  const dummy = device.createBuffer('u32', 1);
  const dummyOut = device.createBuffer('u32', 1);
  dispatchGroups(device, countKernel(shape), tiles, { keys, counts, n, shift: 0, tiles, firstTile: 0, endTile: tiles });
  recordScan(device, counts, offsets, 256 * tiles, true);
  const scatter = () =>
    dispatchGroups(device, scatterKernel(shape, undefined), tiles, {
      keys,
      keysOut,
      vals: dummy,
      valsOut: dummyOut,
      offsets,
      n,
      shift: 0,
      tiles,
      firstTile: 0,
      endTile: tiles,
    });
  show({ session: label, variant: 'scatter pass, ir', ms: +(await warmedMedian(device, 'scatter', scatter, { batch: 4 })).toFixed(4) });
  const want = await keysOut.read();
  const source = sources.get('radix8_scatter');
  if (!source) throw new Error('the scatter kernel was not compiled');
  const gpu = impl.gpu as GPUDevice;
  const gpuOf = (b: typeof keys) => (b.impl as unknown as { gpu: GPUBuffer }).gpu;
  // 'all' again last: a control for clock drift between the variants.
  for (const checks of ['all', 'storage only', 'none', 'all'] as const) {
    try {
      const ms = await timeRawWgsl(gpu, {
        code: withChecks(source, checks),
        // The keys-only module leaves the value bindings unused.
        bind: [gpuOf(keys), gpuOf(rawOut), null, null, gpuOf(offsets)],
        // Params: n, shift, tiles, then the buffers' lengths in binding order.
        uniformWords: [n, 0, tiles, n, n, 1, 1, 256 * tiles],
        workgroups: tiles,
        reps: 5,
        warmup: 2,
        // Long: each variant follows a 1 GiB read-back and a host-side comparison, during which
        // the GPU idles and drops its clock.
        warmupMs: 1000,
      });
      const got = await rawOut.read();
      const same = got.every((x, i) => x === want[i]);
      show({ session: label, variant: `scatter pass, raw WGSL, checks: ${checks}`, ms: +ms.toFixed(4), sameOutput: same });
    } catch (err) {
      console.log(`${label} raw ${checks}: failed: ${String(err).slice(0, 300)}`);
    }
  }
  const sorted = device.createBuffer('u32', n);
  const sortMs = await warmedMedian(device, 'sort', () => recordRadixSort(device, keys, undefined, sorted, undefined, shape), { batch: 4 });
  show({ session: label, variant: `radixSort keys 2^${LOG}`, ms: +sortMs.toFixed(4) });
  await device.destroy();
}

await session('default', [...DAWN_TOGGLES]);
await session('robustness off', [...DAWN_TOGGLES, 'enable-dawn-features=allow_unsafe_apis,disable_robustness']);
console.log(`RESULTS ${JSON.stringify(rows)}`);
process.exit(0);
