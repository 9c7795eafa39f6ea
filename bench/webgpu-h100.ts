/**
 * Issue 3's real-GPU run: the WebGPU backend (Dawn, Vulkan) on the GPU machine.
 *
 * 1. A self-check of every kernel class (gather, scatter, atomic, atomic-other,
 *    workgroup, subgroup) against the JavaScript reference (core's JS generator run
 *    sequentially in this process), and of the algorithm suite's zcopy / zfill /
 *    reduce at the benchmark size.
 * 2. zcopy (read + write, vec4), zfill (write only) and reduce-sum-u32 at n = 2^28:
 *    the algorithm suite's kernels and hand-tuned IR variants (grid and workgroup
 *    size swept), each the median of `repeats` timed runs after warm-up, timed with
 *    timestamp-query (the source is recorded; a wall-clock figure is refused).
 * 3. The CUB / cudaMemcpy figures of the same run (bench/h100/run.sh runs
 *    anchors/cub_anchor.cu first and passes its output with --cub).
 *
 * Bundled by bench/h100/run.sh into one file beside Dawn's dawn.node; see
 * bench/results/README.md for the rerun command.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { randomU32, reduceInto, zcopy, zfill } from '@trident/algorithms';
import { DAWN_TOGGLES, webgpuAdapter } from '@trident/backend-webgpu';
import {
  type Buffer,
  buffer,
  createDevice,
  defineKernel,
  generateJs,
  type Kernel,
  registerBackend,
  select,
  u32,
  uniform,
  vec,
} from '@trident/core';
import { create, globals } from 'webgpu';

const { values } = parseArgs({
  options: {
    log2n: { type: 'string', default: '28' },
    repeats: { type: 'string', default: '7' },
    out: { type: 'string' },
    cub: { type: 'string' },
    machine: { type: 'string', default: 'nvidia-h100-x1' },
  },
});
const LOG2N = Number(values.log2n);
const N = 2 ** LOG2N;
const REPEATS = Math.max(5, Number(values.repeats));

Object.assign(globalThis, globals);
// The instance stays referenced by the device (keepAlive) for its whole life (PLATFORM.md).
const gpu = create([...DAWN_TOGGLES]);
registerBackend(webgpuAdapter);
const device = await createDevice({ backend: 'webgpu', options: { webgpu: { gpu } } });
const log = (s: string) => console.log(s);
log(`device: ${device.info.adapter} (${JSON.stringify(device.info.details)})`);
log(`caps: ${JSON.stringify({ ...device.caps, features: [...device.caps.features] })}`);

// ---------------------------------------------------------------- self-check

/** Runs `kernel` sequentially through the JS generator: the reference the CPU backend also uses. */
function reference(
  kernel: Kernel,
  workgroups: number,
  buffers: Record<string, Uint32Array | Int32Array>,
  uniforms: Record<string, number>,
) {
  const run = new Function(`return ${generateJs(kernel).source};`)() as (
    b: Record<string, Uint32Array | Int32Array>,
    u: Record<string, number>,
    s: number,
    e: number,
    n: number,
  ) => void;
  run(buffers, uniforms, 0, workgroups, workgroups);
}

const checks: Array<{ name: string; ok: boolean; detail: string }> = [];
async function check(name: string, body: () => Promise<string | undefined>): Promise<void> {
  try {
    const problem = await body();
    checks.push({ name, ok: problem === undefined, detail: problem ?? 'matches the reference' });
  } catch (err) {
    checks.push({ name, ok: false, detail: String(err) });
  }
  const c = checks[checks.length - 1];
  log(`check ${c?.ok ? 'PASS' : 'FAIL'} ${name}: ${c?.detail}`);
}

function firstDiff(a: ArrayLike<number>, b: ArrayLike<number>): string | undefined {
  if (a.length !== b.length) return `length ${a.length} vs ${b.length}`;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return `element ${i}: webgpu ${a[i]} reference ${b[i]}`;
  return undefined;
}

/** Dispatches `kernel` on the device and on the reference with the same inputs; compares every output buffer. */
async function compareKernel(
  kernel: Kernel,
  workgroups: number,
  inputs: Record<string, Uint32Array | Int32Array>,
  outputs: Record<string, Uint32Array | Int32Array>,
  uniforms: Record<string, number> = {},
): Promise<string | undefined> {
  const bufs: Record<string, Buffer> = {};
  for (const [name, data] of Object.entries({ ...inputs, ...outputs })) {
    bufs[name] = device.createBuffer(data instanceof Int32Array ? 'i32' : 'u32', data as never) as Buffer;
  }
  device.dispatch(kernel, { workgroups }, { ...bufs, ...uniforms } as never);
  const ref: Record<string, Uint32Array | Int32Array> = {};
  for (const [name, data] of Object.entries({ ...inputs, ...outputs })) ref[name] = data.slice();
  reference(kernel, workgroups, ref, uniforms);
  for (const name of Object.keys(outputs)) {
    const got = await (bufs[name] as Buffer).read();
    const d = firstDiff(got, ref[name] as ArrayLike<number>);
    if (d) return `${name}: ${d}`;
  }
  for (const b of Object.values(bufs)) b.destroy();
  return undefined;
}

const SN = 1 << 16;
const sa = randomU32(SN, 1);
const sb = randomU32(SN, 2);
sa.set([0x80000000, 0x7fc00000, 0x7f800000, 0xff800000, 0xffffffff, 0, 1, 0x4f800000]);
sb.set([0xffffffff, 0, 0xf0000000, 16, 31, 32, 33, 0]);

await check('gather: integer, shift, division and conversion semantics', () =>
  compareKernel(
    defineKernel({
      name: 'check_gather',
      workgroupSize: 256,
      params: { a: buffer('u32', 'read'), b: buffer('u32', 'read'), o: buffer('u32', 'write') },
      body: ({ a, b, o }, k) => {
        const i = k.let(k.globalIndex, 'i');
        const x = a.load(i);
        const y = b.load(i);
        const xi = x.bitcast('i32');
        const yi = y.bitcast('i32').shr(u32(28));
        const f = x.bitcast('f32');
        const acc = k.var('u32', 0, 'acc');
        acc.set(acc.add(x.div(y.shr(3)).add(x.rem(y.and(15)))));
        acc.set(acc.mul(31).add(xi.div(yi).bitcast('u32')).add(xi.rem(yi).bitcast('u32')));
        acc.set(acc.mul(31).add(x.shl(y).xor(x.shr(y)).xor(xi.shr(y).bitcast('u32'))));
        acc.set(acc.mul(31).add(f.cast('u32')).add(f.cast('i32').bitcast('u32')));
        acc.set(acc.mul(31).add(select(x.lt(y), x.mul(y), xi.mul(yi).bitcast('u32'))));
        acc.set(acc.mul(31).add(x.cast('f32').cast('u32')).add(xi.cast('f32').cast('i32').bitcast('u32')));
        o.store(i, acc.add(a.load(i.add(SN))));
      },
    }),
    SN / 256,
    { a: sa, b: sb },
    { o: new Uint32Array(SN) },
  ),
);

await check('scatter: stores at computed (permuted) indices, out-of-range stores dropped', () =>
  compareKernel(
    defineKernel({
      name: 'check_scatter',
      workgroupSize: 256,
      params: { a: buffer('u32', 'read'), o: buffer('u32', 'write') },
      body: ({ a, o }, k) => {
        const i = k.let(k.globalIndex, 'i');
        o.store(i.mul(0x9e3779b1).and(SN - 1), a.load(i).mul(3));
        o.store(i.add(SN), 1);
      },
    }),
    SN / 256,
    { a: sa },
    { o: new Uint32Array(SN) },
  ),
);

await check('atomic: add / max histogram', () =>
  compareKernel(
    defineKernel({
      name: 'check_atomic',
      workgroupSize: 256,
      params: { a: buffer('u32', 'read'), h: buffer('u32', 'atomic'), m: buffer('i32', 'atomic') },
      body: ({ a, h, m }, k) => {
        const x = a.load(k.globalIndex);
        h.atomicAdd(x.and(255), 1);
        m.atomicMax(x.shr(24), x.bitcast('i32'));
        m.atomicMin(x.shr(24).add(256), x.bitcast('i32'));
      },
    }),
    SN / 256,
    { a: sa },
    { h: new Uint32Array(256), m: new Int32Array(512).fill(0) },
  ),
);

await check('atomic-other: xor / or / and / exchange-free CAS counter', () =>
  compareKernel(
    defineKernel({
      name: 'check_atomic_other',
      workgroupSize: 64,
      params: { a: buffer('u32', 'read'), c: buffer('u32', 'atomic') },
      body: ({ a, c }, k) => {
        const x = a.load(k.globalIndex);
        c.atomicXor(0, x);
        c.atomicOr(1, x.and(0x0f0f0f0f));
        c.atomicAnd(2, x.or(0x10000000));
        c.atomicSub(3, 1);
        const done = k.var('bool', false, 'done');
        k.while(
          () => done.not(),
          () => {
            const old = c.load(4);
            const seen = c.atomicCompareExchange(4, old, old.add(x.and(7)));
            k.if(seen.eq(old), () => done.set(true));
          },
        );
      },
    }),
    16,
    { a: sa.subarray(0, 1024) },
    { c: Uint32Array.from([0, 0, 0xffffffff, 0, 0]) },
  ),
);

await check('workgroup: block inclusive scan in workgroup memory with barriers', () =>
  compareKernel(
    defineKernel({
      name: 'check_workgroup',
      workgroupSize: 256,
      params: { a: buffer('u32', 'read'), o: buffer('u32', 'write') },
      body: ({ a, o }, k) => {
        const buf = [k.workgroupArray('u32', 256), k.workgroupArray('u32', 256)] as const;
        buf[0].store(k.localIndex, a.load(k.globalIndex).and(0xffff));
        k.barrier();
        // Hillis-Steele, ping-ponging between two arrays (unrolled: log2(256) steps).
        for (let s = 0; s < 8; s++) {
          const [src, dst] = s % 2 === 0 ? [buf[0], buf[1]] : [buf[1], buf[0]];
          const off = 1 << s;
          const v = src.load(k.localIndex);
          k.if(
            k.localIndex.ge(off),
            () => dst.store(k.localIndex, v.add(src.load(k.localIndex.sub(off)))),
            () => dst.store(k.localIndex, v),
          );
          k.barrier();
        }
        o.store(k.globalIndex, buf[0].load(k.localIndex));
      },
    }),
    SN / 256,
    { a: sa },
    { o: new Uint32Array(SN) },
  ),
);

await check('subgroup: subgroupAdd / subgroupMax per workgroup, combined through workgroup memory', () =>
  compareKernel(
    defineKernel({
      name: 'check_subgroup',
      workgroupSize: 256,
      params: { a: buffer('u32', 'read'), o: buffer('u32', 'write') },
      body: ({ a, o }, k) => {
        // Results independent of the subgroup size, so the width-1 reference agrees.
        const x = a.load(k.globalIndex).and(0xffff);
        const sums = k.workgroupArray('u32', 256);
        const maxes = k.workgroupArray('u32', 256);
        const s = k.subgroupAdd(x);
        const m = k.subgroupMax(x);
        k.if(k.subgroupInvocation.eq(0), () => {
          sums.store(k.localIndex.div(k.subgroupSize), s);
          maxes.store(k.localIndex.div(k.subgroupSize), m);
        });
        k.barrier();
        k.if(k.localIndex.eq(0), () => {
          const t = k.var('u32', 0, 't');
          const mx = k.var('u32', 0, 'mx');
          k.for({ from: 0, to: u32(256).div(k.subgroupSize) }, (j) => {
            t.set(t.add(sums.load(j)));
            mx.set(select(maxes.load(j).gt(mx), maxes.load(j), mx));
          });
          o.store(k.workgroupIndex.mul(2), t);
          o.store(k.workgroupIndex.mul(2).add(1), mx);
        });
      },
    }),
    SN / 256,
    { a: sa },
    { o: new Uint32Array((SN / 256) * 2) },
  ),
);

// ---------------------------------------------------------------- benchmark data

/** Fills x[i] with a hash of i on the device (writing 1 GiB from the host would dominate the run). */
const initKernel = defineKernel({
  name: 'bench_init',
  workgroupSize: 256,
  params: { x: buffer('u32', 'write'), n: uniform('u32') },
  body: ({ x, n }, k) => {
    const i = k.let(k.globalIndex, 'i');
    k.while(
      () => i.lt(n),
      () => {
        const h = k.let(i.mul(2654435761), 'h');
        h.set(h.xor(h.shr(13)).mul(0x5bd1e995));
        x.store(i, h.xor(h.shr(15)));
        i.set(i.add(k.numInvocations));
      },
    );
  },
});
function hostHash(i: number): number {
  let h = Math.imul(i, 2654435761) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0;
  return (h ^ (h >>> 15)) >>> 0;
}

const a = device.createBuffer('u32', N);
const b = device.createBuffer('u32', N);
device.dispatch(initKernel, { workgroups: 4096 }, { x: a, n: N });
await device.flush();
let expectedSum = 0;
for (let i = 0; i < N; i++) expectedSum = (expectedSum + hostHash(i)) >>> 0;

async function spotCheck(buf: Buffer, want: (i: number) => number): Promise<string | undefined> {
  for (const i of [0, 1, 4095, N / 2 + 7, N - 1]) {
    const got = (await buf.read({ offset: i, length: 1 }))[0];
    if (got !== want(i)) return `element ${i}: ${got}, want ${want(i)}`;
  }
  return undefined;
}

await check(`algorithms zcopy u32 n=2^${LOG2N}`, async () => {
  b.fill(0);
  zcopy(device, a, { output: b });
  return spotCheck(b, hostHash);
});
await check(`algorithms zfill u32 n=2^${LOG2N}`, async () => {
  zfill(device, b, 0xdeadbeef);
  return spotCheck(b, () => 0xdeadbeef);
});
await check(`algorithms reduce sum u32 n=2^${LOG2N}`, async () => {
  const out = reduceInto(device, a, { op: 'sum' });
  const got = (await out.read())[0];
  return got === expectedSum ? undefined : `sum ${got}, want ${expectedSum}`;
});

// ---------------------------------------------------------------- benchmarks

interface Result {
  readonly name: string;
  readonly source: string;
  readonly medianMs: number;
  readonly gbps: number;
  readonly runsMs: number[];
  readonly ok: boolean;
}
const results: Result[] = [];
const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

async function bench(name: string, bytes: number, before: () => void, body: () => void, verify: () => Promise<boolean>): Promise<void> {
  for (let w = 0; w < 2; w++) {
    before();
    await device.time(name, body);
  }
  const runs: number[] = [];
  let source = '';
  for (let r = 0; r < REPEATS; r++) {
    before();
    const t = await device.time(name, body);
    if (t.source !== 'gpu-timestamp') throw new Error(`${name}: timer source is ${t.source}; refusing to mix sources`);
    source = t.source;
    runs.push(t.ms);
  }
  const ms = median(runs);
  const ok = await verify();
  const res = { name, source, medianMs: ms, gbps: bytes / (ms * 1e6), runsMs: runs, ok };
  results.push(res);
  log(`${name}: ${ms.toFixed(4)} ms, ${res.gbps.toFixed(1)} GB/s${ok ? '' : ' (WRONG RESULT)'}`);
}

const maxWg = device.caps.limits.maxComputeInvocationsPerWorkgroup;
const wgSizes = [256, 1024].filter((w) => w <= maxWg);
const grids = [264, 528, 1056, 2112, 4224];

function copyV4(wg: number) {
  return defineKernel({
    name: `bench_zcopy_v4_wg${wg}`,
    workgroupSize: wg,
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
}
function fillV4(wg: number) {
  return defineKernel({
    name: `bench_zfill_v4_wg${wg}`,
    workgroupSize: wg,
    params: { dst: buffer('u32', 'write', { vector: 4 }), value: uniform('u32'), n: uniform('u32') },
    body: ({ dst, value, n }, k) => {
      const v = k.let(vec('u32', value, value, value, value), 'v');
      const i = k.let(k.globalIndex, 'i');
      const stride = k.let(k.numInvocations, 'stride');
      k.while(
        () => i.lt(n),
        () => {
          dst.store(i, v);
          i.set(i.add(stride));
        },
      );
    },
  });
}
/** vec4 loads, UNROLL in flight, subgroupAdd, one atomicAdd per workgroup, grid-stride. */
function reduceV4(wg: number, unroll: number) {
  return defineKernel({
    name: `bench_reduce_v4_wg${wg}_u${unroll}`,
    workgroupSize: wg,
    params: { x: buffer('u32', 'read', { vector: 4 }), out: buffer('u32', 'atomic'), n: uniform('u32') },
    body: ({ x, out, n }, k) => {
      const acc = k.var('vec4<u32>', 0, 'acc');
      const i = k.let(k.globalIndex, 'i');
      const stride = k.let(k.numInvocations, 'stride');
      const last = k.let(stride.mul(unroll - 1), 'last');
      k.while(
        () => i.add(last).lt(n),
        () => {
          const loads = [];
          for (let u = 0; u < unroll; u++) loads.push(x.load(u === 0 ? i : i.add(stride.mul(u))));
          let s = loads[0] as (typeof loads)[0];
          for (const l of loads.slice(1)) s = s.add(l);
          acc.set(acc.add(s));
          i.set(i.add(stride.mul(unroll)));
        },
      );
      k.while(
        () => i.lt(n),
        () => {
          acc.set(acc.add(x.load(i)));
          i.set(i.add(stride));
        },
      );
      const partial = k.workgroupArray('u32', wg);
      const s = k.subgroupAdd(acc.x.add(acc.y).add(acc.z.add(acc.w)));
      k.if(k.subgroupInvocation.eq(0), () => partial.store(k.localIndex.div(k.subgroupSize), s));
      k.barrier();
      k.if(k.localIndex.lt(k.subgroupSize), () => {
        const t = k.var('u32', 0, 't');
        k.for({ from: k.localIndex, to: u32(wg).div(k.subgroupSize), step: k.subgroupSize }, (j) => t.set(t.add(partial.load(j))));
        const total = k.subgroupAdd(t);
        k.if(k.localIndex.eq(0), () => out.atomicAdd(0, total));
      });
    },
  });
}

const copyBytes = N * 8;
const fillBytes = N * 4;
const reduceBytes = N * 4;
const nop = () => undefined;
const verifyCopy = async () => (await spotCheck(b, hostHash)) === undefined;
const fillValue = 0x01234567;
const verifyFill = async () => (await spotCheck(b, () => fillValue)) === undefined;

await bench(
  'zcopy algorithms (library)',
  copyBytes,
  () => b.fill(0),
  () => void zcopy(device, a, { output: b }),
  verifyCopy,
);
for (const wg of wgSizes) {
  for (const g of grids) {
    const kc = copyV4(wg);
    await bench(
      `zcopy ir vec4 wg${wg} grid${g}`,
      copyBytes,
      () => b.fill(0),
      () => device.dispatch(kc, { workgroups: g }, { src: a, dst: b, n: N / 4 }),
      verifyCopy,
    );
  }
}
await bench(
  'zfill algorithms (library)',
  fillBytes,
  () => b.fill(0),
  () => zfill(device, b, fillValue),
  verifyFill,
);
for (const wg of wgSizes) {
  for (const g of grids) {
    const kf = fillV4(wg);
    await bench(
      `zfill ir vec4 wg${wg} grid${g}`,
      fillBytes,
      () => b.fill(0),
      () => device.dispatch(kf, { workgroups: g }, { dst: b, value: fillValue, n: N / 4 }),
      verifyFill,
    );
  }
}
let reduceOut: Buffer | undefined;
await bench(
  'reduce sum u32 algorithms (library)',
  reduceBytes,
  nop,
  () => {
    reduceOut?.destroy();
    reduceOut = reduceInto(device, a, { op: 'sum' });
  },
  async () => (await (reduceOut as Buffer).read())[0] === expectedSum,
);
if (device.caps.features.has('subgroup')) {
  const out = device.createBuffer('u32', 1);
  for (const wg of wgSizes) {
    for (const unroll of [4, 8]) {
      for (const g of grids) {
        const kr = reduceV4(wg, unroll);
        await bench(
          `reduce sum u32 ir vec4 subgroupAdd wg${wg} unroll${unroll} grid${g}`,
          reduceBytes,
          () => out.fill(0),
          () => device.dispatch(kr, { workgroups: g }, { x: a, out, n: N / 4 }),
          async () => (await out.read())[0] === expectedSum,
        );
      }
    }
  }
}

// ---------------------------------------------------------------- CUB anchors and report

interface Anchor {
  readonly memcpyD2D?: { ms: number; gbps: number };
  readonly cubReduceSum?: { ms: number; gbps: number };
  readonly raw: string;
}
function parseCub(file: string | undefined): Anchor | undefined {
  if (!file) return undefined;
  const raw = readFileSync(file, 'utf8');
  const line = (re: RegExp) => {
    const m = raw.match(re);
    return m ? { ms: Number(m[1]), gbps: Number(m[2]) } : undefined;
  };
  return {
    memcpyD2D: line(new RegExp(`n=2\\^${LOG2N} memcpy d2d: ([\\d.]+) ms ([\\d.]+) GB/s`)),
    cubReduceSum: line(new RegExp(`n=2\\^${LOG2N} CUB reduce sum u32: ([\\d.]+) ms ([\\d.]+) GB/s`)),
    raw,
  };
}
const cub = parseCub(values.cub);
const best = (prefix: string) =>
  results.filter((r) => r.name.startsWith(prefix) && r.ok).reduce<Result | undefined>((x, r) => (!x || r.gbps > x.gbps ? r : x), undefined);
const bestCopy = best('zcopy');
const bestFill = best('zfill');
const bestReduce = best('reduce');
const library = (prefix: string) => results.find((r) => r.name.startsWith(prefix) && r.name.includes('(library)'));
const summary = {
  zcopy: {
    best: bestCopy,
    library: library('zcopy'),
    vsMemcpyD2D: cub?.memcpyD2D && bestCopy ? bestCopy.gbps / cub.memcpyD2D.gbps : undefined,
    libraryVsMemcpyD2D: cub?.memcpyD2D ? (library('zcopy')?.gbps ?? 0) / cub.memcpyD2D.gbps : undefined,
  },
  zfill: { best: bestFill, library: library('zfill') },
  reduceSumU32: {
    best: bestReduce,
    library: library('reduce'),
    vsCubReduce: cub?.cubReduceSum && bestReduce ? bestReduce.gbps / cub.cubReduceSum.gbps : undefined,
    libraryVsCubReduce: cub?.cubReduceSum ? (library('reduce')?.gbps ?? 0) / cub.cubReduceSum.gbps : undefined,
  },
};
const report = {
  date: new Date().toISOString(),
  machine: values.machine,
  host: hostname(),
  adapter: device.info,
  limits: device.caps.limits,
  features: [...device.caps.features],
  timerSource: device.caps.timerSource,
  n: N,
  log2n: LOG2N,
  repeats: REPEATS,
  gbpsCounts: 'bytes read + written per run / median time (zcopy 8n, zfill 4n, reduce 4n)',
  checks,
  results,
  summary,
  cub: cub ? { memcpyD2D: cub.memcpyD2D, cubReduceSum: cub.cubReduceSum, output: cub.raw.trim().split('\n') } : undefined,
};
log(`summary: ${JSON.stringify(summary, (k, v) => (k === 'runsMs' ? undefined : v))}`);
log(`checks: ${checks.filter((c) => c.ok).length}/${checks.length} passed`);
if (values.out) writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
await device.destroy();
process.exit(checks.every((c) => c.ok) ? 0 : 1);
