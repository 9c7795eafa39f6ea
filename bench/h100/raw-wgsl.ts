/**
 * Times a WGSL compute module on a raw GPUDevice, outside Trident: the hand-written
 * and generated-source controls of the H100 checks (webgpu-h100-ab.ts and
 * bench/h100/*-check.ts). Bindings are `bind` in order, then a uniform buffer of
 * `uniformWords`; entry point `main`.
 */
/// <reference types="@webgpu/types" />

export interface RawWgslRun {
  readonly code: string;
  readonly bind: readonly GPUBuffer[];
  readonly uniformWords: readonly number[];
  /** Workgroups along x (folded into y past 65535). */
  readonly workgroups: number;
  /** Cleared before each timed pass, outside it (e.g. a look-back status buffer). */
  readonly clear?: GPUBuffer;
  /** Timed runs after `warmup` untimed ones. */
  readonly reps: number;
  readonly warmup: number;
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
      ...run.bind.map((b, i) => ({ binding: i, resource: { buffer: b } })),
      { binding: run.bind.length, resource: { buffer: ubuf } },
    ],
  });
  const x = Math.min(run.workgroups, 65535);
  const y = Math.ceil(run.workgroups / x);
  const qs = gpu.createQuerySet({ type: 'timestamp', count: 2 });
  const resolve = gpu.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const times: number[] = [];
  for (let r = 0; r < run.warmup + run.reps; r++) {
    const readback = gpu.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = gpu.createCommandEncoder();
    if (run.clear) enc.clearBuffer(run.clear);
    const pass = enc.beginComputePass({ timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(x, y);
    pass.end();
    enc.resolveQuerySet(qs, 0, 2, resolve, 0);
    enc.copyBufferToBuffer(resolve, 0, readback, 0, 16);
    gpu.queue.submit([enc.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(readback.getMappedRange());
    if (r >= run.warmup) times.push(Number((t[1] as bigint) - (t[0] as bigint)) / 1e6);
    readback.unmap();
    readback.destroy();
  }
  ubuf.destroy();
  qs.destroy();
  resolve.destroy();
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}
