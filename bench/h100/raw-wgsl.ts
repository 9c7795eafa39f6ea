/**
 * Times a WGSL compute module on a raw GPUDevice, outside Trident: the hand-written
 * and generated-source controls of the H100 checks (webgpu-h100-ab.ts and
 * bench/h100/*-check.ts). Bindings are `bind` in order, then a uniform buffer of
 * `uniformWords`; entry point `main`.
 */
/// <reference types="@webgpu/types" />
import { median } from '../../packages/cli/src/bench/stats.ts';

export interface RawWgslRun {
  readonly code: string;
  /** Binding i's buffer; null where the module declares binding i but never uses it ('auto' layouts drop those). */
  readonly bind: readonly (GPUBuffer | null)[];
  readonly uniformWords: readonly number[];
  /** Workgroups along x (folded into y past 65535). */
  readonly workgroups: number;
  /** Cleared before each timed pass, outside it (e.g. a look-back status buffer). */
  readonly clear?: GPUBuffer;
  /** Timed rounds after `warmup` untimed ones (and after `warmupMs` of GPU time, when given). */
  readonly reps: number;
  readonly warmup: number;
  readonly warmupMs?: number;
}

/** Median GPU-timestamp time of one compute pass, in ms. Throws on a validation error. */
export async function timeRawWgsl(gpu: GPUDevice, run: RawWgslRun): Promise<number> {
  // Scoped, so a rejected variant does not reach a Trident device's uncaptured-error handler.
  gpu.pushErrorScope('validation');
  const module = gpu.createShaderModule({ code: run.code });
  const pipeline = gpu.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const error = await gpu.popErrorScope();
  if (error) throw new Error(error.message);
  const ubuf = gpu.createBuffer({
    size: Math.max(256, run.uniformWords.length * 4),
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  gpu.queue.writeBuffer(ubuf, 0, new Uint32Array(run.uniformWords));
  const group = gpu.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [
      ...run.bind.flatMap((b, i) => (b ? [{ binding: i, resource: { buffer: b } }] : [])),
      { binding: run.bind.length, resource: { buffer: ubuf } },
    ],
  });
  const x = Math.min(run.workgroups, 65535);
  const y = Math.ceil(run.workgroups / x);
  // Each round records BURST passes back to back (the H100 keeps its clock up only under
  // sustained work; a lone pass between host round trips ran at the idle clock), each with
  // its own timestamps, the status clear in between outside the timed passes.
  const BURST = 4;
  const qs = gpu.createQuerySet({ type: 'timestamp', count: 2 * BURST });
  const resolve = gpu.createBuffer({ size: 16 * BURST, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const times: number[] = [];
  // Warm-up rounds: at least `warmup`, and until `warmupMs` of GPU time (a pipeline compile is a
  // host-side pause that lets the clock drop); at most 10^4 rounds in all.
  let warmed = 0;
  for (let r = 0, timed = 0; timed < run.reps && r < 10_000; r++) {
    const warming = r < run.warmup || warmed < (run.warmupMs ?? 0);
    const readback = gpu.createBuffer({ size: 16 * BURST, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = gpu.createCommandEncoder();
    for (let b = 0; b < BURST; b++) {
      if (run.clear) enc.clearBuffer(run.clear);
      const pass = enc.beginComputePass({
        timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 2 * b, endOfPassWriteIndex: 2 * b + 1 },
      });
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(x, y);
      pass.end();
    }
    enc.resolveQuerySet(qs, 0, 2 * BURST, resolve, 0);
    enc.copyBufferToBuffer(resolve, 0, readback, 0, 16 * BURST);
    gpu.queue.submit([enc.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(readback.getMappedRange());
    const passes = Array.from({ length: BURST }, (_, b) => Number((t[2 * b + 1] as bigint) - (t[2 * b] as bigint)) / 1e6);
    if (warming) warmed += passes.reduce((a, b) => a + b, 0);
    else {
      times.push(...passes);
      timed++;
    }
    readback.unmap();
    readback.destroy();
  }
  ubuf.destroy();
  qs.destroy();
  resolve.destroy();
  return median(times);
}
