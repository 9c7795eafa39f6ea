/**
 * Where a read-back's time goes on a real GPU (per-call latency): the suite's
 * latency rows put a full read of 2^20 f32 at about 1 ms in some calls and 3 ms in others,
 * whatever the operation before it. This times `buffer.read()` beside the steps it is made
 * of, on the raw GPUDevice: the copy into a pooled staging buffer and its mapping alone,
 * then each way of taking the data out of the mapping (ArrayBuffer.slice, as `read` does;
 * a typed-array copy; a copy into an array allocated once). Sizes 2^20 and 2^22, three
 * interleaved rounds, medians of 21 after 200 ms of warm-up.
 *
 *   (GPU machine) source .gpu/start.sh && node .gpu/read-probe.mjs
 */
import { createDevice } from 'trident';
import { wallMedian } from '../../packages/cli/src/bench/interleaved.ts';

const device = await createDevice({ backend: 'webgpu' });
const gpu = (device.impl as unknown as { gpu: GPUDevice }).gpu;
const rows: Record<string, unknown>[] = [];

for (const log2 of [20, 22]) {
  const n = 2 ** log2;
  const bytes = 4 * n;
  const buffer = device.createBuffer(
    'f32',
    Float32Array.from({ length: n }, (_, i) => i),
  );
  const src = (buffer.impl as unknown as { gpu: GPUBuffer }).gpu;
  const staging = gpu.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const kept = new Float32Array(n);
  /** Copy into the staging buffer, map it, hand the mapping to `take`, unmap. */
  const raw = (take: (range: ArrayBuffer) => unknown) => async () => {
    const enc = gpu.createCommandEncoder();
    enc.copyBufferToBuffer(src, 0, staging, 0, bytes);
    gpu.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ, 0, bytes);
    const out = take(staging.getMappedRange(0, bytes));
    staging.unmap();
    return out;
  };
  const variants: Array<[string, () => Promise<unknown>]> = [
    ['buffer.read()', () => buffer.read()],
    ['raw: copy + map only', raw(() => undefined)],
    ['raw: ArrayBuffer.slice', raw((r) => new Float32Array(r.slice(0)))],
    ['raw: Float32Array.slice', raw((r) => new Float32Array(r).slice())],
    ['raw: set into an array allocated once', raw((r) => kept.set(new Float32Array(r)))],
    ['host only: new Float32Array(n)', async () => new Float32Array(n)],
  ];
  for (let round = 0; round < 3; round++) {
    for (const [name, run] of variants) {
      const ms = (await wallMedian(run)).median;
      const row = { n: `2^${log2}`, round, name, ms: +ms.toFixed(4), GBps: +(bytes / ms / 1e6).toFixed(2) };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  }
  staging.destroy();
  buffer.destroy();
}
console.log(`RESULTS ${JSON.stringify(rows)}`);
await device.destroy();
