/**
 * The gpu.js N-body peer's kernel (all-pairs softened accelerations, one thread per
 * body), shared by the benchmark page (webgl2, webgl, cpu modes) and Node (cpu mode),
 * with the double-precision reference its results are checked against.
 */

/** Accelerations of every body from all bodies (softened), as gpu.js source: gpu.js compiles this function's text. */
export function nbodyAccel(this: { thread: { x: number }; constants: { n: number } }, pos: Float32Array, eps2: number): number[] {
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

export function accelReference(pos: Float32Array, i: number, eps2: number): [number, number, number] {
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

/** The kernel's gpu.js settings for n bodies (single precision, as Trident's f32). */
export function gpuJsNbodySettings(n: number): Record<string, unknown> {
  return { output: [n], constants: { n }, returnType: 'Array(3)', precision: 'single', tactic: 'precision' };
}

/** Whether gpu.js's accelerations match the reference on three bodies (first, middle, last) within f32 accumulation error. */
export function gpuJsNbodyMatches(pos: Float32Array, result: ArrayLike<ArrayLike<number>>, eps2: number): boolean {
  const n = pos.length / 4;
  for (const i of [0, n >> 1, n - 1]) {
    const want = accelReference(pos, i, eps2);
    const got = result[i];
    if (!got) return false;
    for (let c = 0; c < 3; c++) {
      const w = want[c] as number;
      if (!(Math.abs((got[c] as number) - w) <= 1e-3 * (Math.abs(w) + 1))) return false;
    }
  }
  return true;
}
