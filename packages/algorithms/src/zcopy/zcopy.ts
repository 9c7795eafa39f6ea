/**
 * zcopy (Stephan 2019, SYCL / HC / HIP / CUDA compared): the bandwidth ceiling each backend is measured against.
 * `zcopy` reads and writes every element once; `zfill` only writes.
 */
import { type Buffer, type BufferDType, buffer, type Device, defineKernel, InvalidArgumentError, min, uniform, vec } from '@trident/core';
import { cachedKernel, checkBuffer, dispatchGroups, gatherSize, gridStride, segmentRuns, strideWorkgroups } from '../common.ts';
import { capableFamily, chooseFamily, type Formulation } from '../plan.ts';
import { chunkPlan } from '../reduce/reduce.ts';

const DTYPES: readonly BufferDType[] = ['u32', 'i32', 'f32'];

/** Loads in flight per grid-stride iteration of the copy. */
const UNROLL = 4;
/** Elements each invocation handles at least before the grid stops growing. */
const MIN_PER_INVOCATION = 4;
/**
 * Waves of `caps.concurrency` in a copy's grid. The concurrency figure is a
 * conservative guess (a large GPU holds about twice WebGPU's 131072), and surplus
 * workgroups of a grid-stride copy cost little, so copies ask for four (LEDGER.md
 * zcopy.waves).
 */
const WAVES = 4;

function copyKernel(dtype: BufferDType, width: 1 | 4, wg: number, strided: boolean) {
  return cachedKernel(`zcopy:${dtype}:${width}:${wg}:${strided}`, () =>
    defineKernel({
      name: `zcopy_${dtype}_v${width}${strided ? '_stride' : ''}`,
      workgroupSize: wg,
      params: {
        src: buffer(dtype, 'read', { vector: width }),
        dst: buffer(dtype, 'write', { vector: width }),
        n: uniform('u32'),
        groups: uniform('u32'),
      },
      body: ({ src, dst, n, groups }, k) => {
        if (!strided) {
          // Gather form: invocation i writes element i only (valid on gather-only devices).
          const i = k.let(k.globalIndex, 'i');
          k.if(i.lt(n), () => dst.store(i, src.load(i)));
          return;
        }
        const { i, stride } = gridStride(k, groups, n);
        // UNROLL loads in flight before their stores (memory-level parallelism), then the tail.
        const last = k.let(stride.mul(UNROLL - 1), 'last');
        k.while(
          () => i.add(last).lt(n),
          () => {
            const at = (u: number) => (u === 0 ? i : i.add(stride.mul(u)));
            const xs = [];
            for (let u = 0; u < UNROLL; u++) xs.push(k.let(src.load(at(u)), `x${u}`));
            for (let u = 0; u < UNROLL; u++) dst.store(at(u), xs[u] as (typeof xs)[number]);
            i.set(i.add(stride.mul(UNROLL)));
          },
        );
        k.while(
          () => i.lt(n),
          () => {
            dst.store(i, src.load(i));
            i.set(i.add(stride));
          },
        );
      },
    }),
  );
}

function fillKernel(dtype: BufferDType, width: 1 | 4, wg: number, strided: boolean) {
  return cachedKernel(`zfill:${dtype}:${width}:${wg}:${strided}`, () =>
    defineKernel({
      name: `zfill_${dtype}_v${width}${strided ? '_stride' : ''}`,
      workgroupSize: wg,
      params: { dst: buffer(dtype, 'write', { vector: width }), value: uniform(dtype), n: uniform('u32'), groups: uniform('u32') },
      body: ({ dst, value, n, groups }, k) => {
        const v = width === 4 ? vec(dtype as 'u32', value as never, value as never, value as never, value as never) : value;
        if (!strided) {
          const i = k.let(k.globalIndex, 'i');
          k.if(i.lt(n), () => dst.store(i, v as never));
          return;
        }
        const { i, stride } = gridStride(k, groups, n);
        k.while(
          () => i.lt(n),
          () => {
            dst.store(i, v as never);
            i.set(i.add(stride));
          },
        );
      },
    }),
  );
}

/**
 * Serial-workgroup devices (a CPU's workers): invocation c copies or fills chunk c, one
 * contiguous run of `chunk` elements (reduce's chunk plan), in one loop. A grid stride
 * would send each worker across the whole array, a cache line per element.
 */
function chunkCopyKernel(dtype: BufferDType, width: 1 | 4) {
  return cachedKernel(`zcopy-chunk:${dtype}:${width}`, () =>
    defineKernel({
      name: `zcopy_chunk_${dtype}_v${width}`,
      workgroupSize: 1,
      params: {
        src: buffer(dtype, 'read', { vector: width }),
        dst: buffer(dtype, 'write', { vector: width }),
        n: uniform('u32'),
        chunk: uniform('u32'),
      },
      body: ({ src, dst, n, chunk }, k) => {
        const start = k.let(k.globalIndex.mul(chunk), 'start');
        k.for({ from: start, to: min(n, start.add(chunk)) }, (i) => dst.store(i, src.load(i)));
      },
    }),
  );
}

function chunkFillKernel(dtype: BufferDType, width: 1 | 4) {
  return cachedKernel(`zfill-chunk:${dtype}:${width}`, () =>
    defineKernel({
      name: `zfill_chunk_${dtype}_v${width}`,
      workgroupSize: 1,
      params: { dst: buffer(dtype, 'write', { vector: width }), value: uniform(dtype), n: uniform('u32'), chunk: uniform('u32') },
      body: ({ dst, value, n, chunk }, k) => {
        const v = width === 4 ? vec(dtype as 'u32', value as never, value as never, value as never, value as never) : value;
        const start = k.let(k.globalIndex.mul(chunk), 'start');
        k.for({ from: start, to: min(n, start.add(chunk)) }, (i) => dst.store(i, v as never));
      },
    }),
  );
}

/** The chunks of a serial copy or fill of `length` elements: counted in vec4s where the length divides by 4 and the device has 'simd'. */
function chunks(device: Device, length: number): { chunks: number; chunk: number; width: 1 | 4; n: number } {
  const { chunks, chunk, width } = chunkPlan(device, length);
  return { chunks, chunk: chunk / width, width, n: length / width };
}

interface Plan {
  readonly width: 1 | 4;
  readonly strided: boolean;
  readonly wg: number;
  readonly workgroups: number;
  readonly n: number;
}

/**
 * The formulation zcopy and zfill run on `device`. Grid-stride loops pay off on
 * compute devices (persistent invocations), software GPUs included: zcopy is the
 * ceiling the others are measured against, so it keeps its workgroup form wherever
 * workgroups run in parallel. Serial-workgroup devices (a CPU) copy one contiguous
 * chunk per worker; a gather-only device shades one element per invocation.
 */
export function zcopyFormulation(device: Device): Formulation<'chunked' | 'grid-stride' | 'gather'> {
  return copyFormulation(device, 'zcopy');
}

/** zcopyFormulation, naming `algorithm` (zcopy or zfill) in the error of a device that runs neither. */
function copyFormulation(device: Device, algorithm: string): Formulation<'chunked' | 'grid-stride' | 'gather'> {
  if (chooseFamily(device, algorithm, { families: ['serial', 'workgroup', 'gather'] }) === 'serial')
    return { family: 'serial', name: 'chunked', shape: undefined, summary: 'one contiguous chunk per worker' };
  const family = capableFamily(device, algorithm);
  return family === 'workgroup'
    ? { family, name: 'grid-stride', shape: undefined, summary: 'grid-stride workgroups' }
    : { family, name: 'gather', shape: undefined, summary: 'one gather pass' };
}

/**
 * vec4 views when the length divides by 4 (the widest element compute devices move
 * well; on WebGL2 a vec4 is one texel, one fetch); grid-stride loops on compute
 * devices, else one invocation per element of the view (the gather form).
 */
function plan(device: Device, length: number): Plan {
  const strided = zcopyFormulation(device).family === 'workgroup';
  const width: 1 | 4 = length % 4 === 0 ? 4 : 1;
  const n = length / width;
  const wg = gatherSize(device.caps);
  const workgroups = strided ? strideWorkgroups(device.caps, n, wg, MIN_PER_INVOCATION, WAVES) : Math.ceil(n / wg);
  return { width, strided, wg, workgroups, n };
}

/**
 * Copies `input` into `options.output` (same dtype and length), or into a new buffer.
 * Records the work and returns the output at once (stream order makes it safe to use).
 *
 * Complexity: O(n) work, one read and one write per element; span O(n / P).
 * Edge cases: n = 0 returns an empty buffer and dispatches nothing. u32 / i32 are
 * copied bit for bit; f32 is copied as values, so every bit pattern survives except
 * that a signalling NaN may come back quieted (the CPU backend's JavaScript numbers
 * do that; GPUs may). The input is
 * never modified. Throws InvalidArgumentError ('input' / 'options.output') for a
 * non-buffer, a buffer of another device, a destroyed buffer, or a dtype or
 * length mismatch; UnsupportedFeatureError when the device runs no gather kernels.
 */
export function zcopy<D extends BufferDType>(device: Device, input: Buffer<D>, options?: { output?: Buffer<D> }): Buffer<D> {
  checkBuffer(device, input, 'input', DTYPES);
  const out = options?.output;
  if (out !== undefined) {
    checkBuffer(device, out, 'options.output', [input.dtype]);
    if (out.length !== input.length)
      throw new InvalidArgumentError('options.output', `length ${out.length} differs from the input length ${input.length}`);
    if (out === input) throw new InvalidArgumentError('options.output', 'must not be the input buffer');
  }
  const { family } = zcopyFormulation(device);
  const output = out ?? device.createBuffer(input.dtype, input.length);
  if (input.length === 0) return output;
  // Past one binding, one copy per segment: each binds one binding per array instead of
  // one per segment.
  for (const { views, n } of segmentRuns(device, [input, output], input.length)) {
    const [src, dst] = views as [Buffer<D>, Buffer<D>];
    if (family === 'serial') {
      const c = chunks(device, n);
      device.dispatch(chunkCopyKernel(input.dtype, c.width), { invocations: c.chunks }, { src, dst, n: c.n, chunk: c.chunk });
      continue;
    }
    const p = plan(device, n);
    dispatchGroups(device, copyKernel(input.dtype, p.width, p.wg, p.strided), p.workgroups, { src, dst, n: p.n, groups: p.workgroups });
  }
  return output;
}

/**
 * Sets every element of `output` to `value` with a write-only kernel (the
 * write-bandwidth half of zcopy). `value` must fit the buffer's dtype (u32:
 * integer in [0, 2^32), i32: integer in [-2^31, 2^31), f32: any number, rounded).
 *
 * Complexity: O(n) writes. Edge cases: n = 0 does nothing. Throws InvalidArgumentError
 * ('output', 'value') for a bad buffer or a value that does not fit.
 */
export function zfill(device: Device, output: Buffer, value: number): void {
  checkBuffer(device, output, 'output', DTYPES);
  if (output.dtype === 'f32') {
    if (typeof value !== 'number') throw new InvalidArgumentError('value', `must be a number, got ${typeof value}`);
  } else {
    const [lo, hi] = output.dtype === 'u32' ? [0, 0xffffffff] : [-0x80000000, 0x7fffffff];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < lo || value > hi) {
      throw new InvalidArgumentError('value', `${String(value)} is not a ${output.dtype}`);
    }
  }
  const { family } = copyFormulation(device, 'zfill');
  if (output.length === 0) return;
  for (const dst of device.segments(output)) {
    if (family === 'serial') {
      const c = chunks(device, dst.length);
      device.dispatch(chunkFillKernel(output.dtype, c.width), { invocations: c.chunks }, { dst, value, n: c.n, chunk: c.chunk });
      continue;
    }
    const p = plan(device, dst.length);
    dispatchGroups(device, fillKernel(output.dtype, p.width, p.wg, p.strided), p.workgroups, { dst, value, n: p.n, groups: p.workgroups });
  }
}
