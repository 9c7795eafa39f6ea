/**
 * A 2-D stencil: Jacobi relaxation of Laplace's equation on a width x height grid.
 * The border holds fixed values; every interior cell becomes the mean of its four
 * neighbours, `iterations` times, ping-ponging between two buffers.
 *
 * One invocation per cell over a 1-D grid (`{ invocations: width * height }`): the
 * kernel splits its global index into (x, y). Every invocation stores only its own
 * element (a gather kernel), so it runs on webgpu, webgl2 and cpu alike.
 */
import { buffer, type Device, defineKernel, select, uniform } from 'trident';

export const jacobiStep = defineKernel({
  name: 'jacobi_step',
  workgroupSize: 64,
  params: { src: buffer('f32', 'read'), dst: buffer('f32', 'write'), width: uniform('u32'), height: uniform('u32') },
  body: ({ src, dst, width, height }, k) => {
    const i = k.let(k.globalIndex);
    // The grid rounds up to whole workgroups: guard the surplus invocations.
    k.if(i.lt(width.mul(height)), () => {
      const y = k.let(i.div(width));
      const x = k.let(i.sub(y.mul(width)));
      const border = x
        .eq(0)
        .or(y.eq(0))
        .or(x.eq(width.sub(1)))
        .or(y.eq(height.sub(1)));
      // Both sides of a select are evaluated: the border's out-of-range neighbours load 0, harmlessly.
      const sum = src
        .load(i.sub(1))
        .add(src.load(i.add(1)))
        .add(src.load(i.sub(width)))
        .add(src.load(i.add(width)));
      dst.store(i, select(border, src.load(i), sum.mul(0.25)));
    });
  },
});

/** The initial grid: 0 inside, the top row hot (1), the other borders cold (0). */
export function initialGrid(width: number, height: number): Float32Array {
  const grid = new Float32Array(width * height);
  grid.fill(1, 0, width);
  return grid;
}

/** The same relaxation in plain JavaScript, rounding to f32 after every operation as the kernel does. */
export function jacobiReference(grid: Float32Array, width: number, height: number, iterations: number): Float32Array {
  let src = Float32Array.from(grid);
  let dst = new Float32Array(src.length);
  const f = Math.fround;
  for (let it = 0; it < iterations; it++) {
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const i = y * width + x;
        const border = x === 0 || y === 0 || x === width - 1 || y === height - 1;
        const at = (j: number): number => src[j] ?? 0;
        dst[i] = border ? at(i) : f(f(f(f(at(i - 1) + at(i + 1)) + at(i - width)) + at(i + width)) * 0.25);
      }
    }
    [src, dst] = [dst, src];
  }
  return src;
}

/** Runs `iterations` steps on `device`; returns the final grid. */
export async function jacobi(device: Device, grid: Float32Array, width: number, height: number, iterations: number): Promise<Float32Array> {
  let src = device.createBuffer('f32', grid);
  let dst = device.createBuffer('f32', grid.length);
  for (let it = 0; it < iterations; it++) {
    device.dispatch(jacobiStep, { invocations: width * height }, { src, dst, width, height });
    [src, dst] = [dst, src];
  }
  const result = await src.read();
  src.destroy();
  dst.destroy();
  return result;
}

/** The example as `examples/run.ts` and the tests run it: device result against the reference. */
export async function runStencil(device: Device, size = { width: 24, height: 16, iterations: 20 }) {
  const { width, height, iterations } = size;
  const grid = initialGrid(width, height);
  const got = await jacobi(device, grid, width, height, iterations);
  const want = jacobiReference(grid, width, height, iterations);
  // f32 rounding per operation makes the results equal, but a GPU may fuse a multiply-add: allow 1 ulp-ish.
  const maxError = got.reduce((m, v, i) => Math.max(m, Math.abs(v - (want[i] ?? 0))), 0);
  return { ok: maxError <= 1e-6, maxError, center: got[(height >> 1) * width + (width >> 1)] };
}
