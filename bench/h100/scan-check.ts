/**
 * H100 check of the scan formulations (WebGPU through Dawn/Vulkan): n = 2^28,
 * reduce-then-scan beside single-pass look-back variants (layout, workgroup size,
 * quads per invocation, spin limit), u32 inclusive / exclusive and f32 inclusive,
 * GPU-timestamp medians and correctness against the sequential reference (every
 * 4099th element and the last; f32 within the documented bound). Run it beside the
 * CUB anchor in one device call; only same-call ratios compare:
 *
 *   node_modules/.bin/esbuild --bundle --platform=node --format=esm --target=node20 \
 *     "--banner:js=import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" \
 *     --alias:trident=./bench/h100/trident-webgpu-only.mjs bench/h100/scan-check.ts --outfile=/work/main/.gpu/scan-check.mjs
 *   (GPU machine) source .gpu/start.sh && node .gpu/scan-check.mjs [--quick] [--log2n=28]
 *
 * Rows named PROBE time measurement-only kernels (LookbackTuning.probe) that split
 * the single pass's time into its tile work and its look-back.
 */
import { gammaF32, randomU32, type ScanVariant, scanFormulation, scanSumDepth, scanVariant } from '@trident/algorithms';
import { type Buffer, createDevice, type Device } from 'trident';

const quick = process.argv.includes('--quick');
const log2n = Number(process.argv.find((a) => a.startsWith('--log2n='))?.slice(8) ?? 28);
const N = 2 ** log2n;

async function median(device: Device, label: string, body: () => void, reps = 7): Promise<number> {
  await device.time(label, body); // warm-up: compiles, allocates temporaries
  const ms: number[] = [];
  for (let r = 0; r < reps; r++) ms.push((await device.time(label, body)).ms);
  ms.sort((a, b) => a - b);
  return ms[Math.floor(reps / 2)] as number;
}

const device = await createDevice({ backend: 'webgpu' });
const caps = device.caps;
console.log(
  `device: ${device.info.adapter}; subgroups ${caps.limits.minSubgroupSize}-${caps.limits.maxSubgroupSize}; ` +
    `max invocations ${caps.limits.maxComputeInvocationsPerWorkgroup}; default formulation ${scanFormulation(device)}`,
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
];
const U32: readonly Mode[] = [['u32', false]];
const sp = (lookback: ScanVariant['lookback']): ScanVariant => ({ formulation: 'single-pass', lookback });
// Probes (results wrong, not checked) split the single pass's time: its tile work alone, its look-back alone.
const variants: Array<[string, ScanVariant, readonly Mode[]]> = [
  ['reduce-then-scan', { formulation: 'reduce-then-scan' }, ALL],
  ['default', {}, ALL],
  ['striped wg256 x4q (4096)', sp({ layout: 'striped', wg: 256, vecs: 4 }), U32],
  ['striped wg1024 x2q (8192)', sp({ layout: 'striped', wg: 1024, vecs: 2 }), U32],
  ['striped wg1024 x4q (16384)', sp({ layout: 'striped', wg: 1024, vecs: 4 }), U32],
  ['blocked wg256 x4q (4096)', sp({ layout: 'blocked', wg: 256, vecs: 4 }), U32],
  ['blocked wg256 x8q (8192)', sp({ layout: 'blocked', wg: 256, vecs: 8 }), U32],
  ['blocked wg512 x4q (8192)', sp({ layout: 'blocked', wg: 512, vecs: 4 }), U32],
  ['striped wg512 x4q spin 16', sp({ layout: 'striped', wg: 512, vecs: 4, spinLimit: 16 }), U32],
  ['striped wg512 x4q spin 4096', sp({ layout: 'striped', wg: 512, vecs: 4, spinLimit: 4096 }), U32],
  ['PROBE no-lookback striped wg512 x4q', sp({ layout: 'striped', wg: 512, vecs: 4, probe: 'no-lookback' }), U32],
  ['PROBE no-data striped wg512 x4q', sp({ layout: 'striped', wg: 512, vecs: 4, probe: 'no-data' }), U32],
  ['PROBE static-ids striped wg512 x4q', sp({ layout: 'striped', wg: 512, vecs: 4, probe: 'static-ids' }), U32],
  ['PROBE no-lookback blocked wg512 x4q', sp({ layout: 'blocked', wg: 512, vecs: 4, probe: 'no-lookback' }), U32],
];

const rows: Array<Record<string, unknown>> = [];
for (const [name, variant, modes] of quick ? variants.slice(0, 3) : variants) {
  for (const [dtype, exclusive] of modes) {
    const input = dtype === 'u32' ? u32In : f32In;
    const output = dtype === 'u32' ? u32Out : f32Out;
    output.fill(0);
    let ms: number;
    try {
      ms = await median(
        device,
        name,
        () => void scanVariant(device, input as Buffer<'u32'>, { exclusive, output: output as Buffer<'u32'> }, variant),
      );
    } catch (e) {
      console.log(JSON.stringify({ name, dtype, exclusive, error: String(e) }));
      continue;
    }
    const check =
      variant.lookback?.probe && variant.lookback.probe !== 'static-ids'
        ? 'probe (not checked)'
        : await verify(output, dtype, exclusive, variant);
    const row = { name, dtype, exclusive, ms: +ms.toFixed(4), GBps: +((8 * N) / ms / 1e6).toFixed(1), check };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
}
console.log(`RESULTS ${JSON.stringify(rows)}`);
await device.destroy();
process.exit(0);
