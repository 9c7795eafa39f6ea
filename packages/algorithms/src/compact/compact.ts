/**
 * compact / filter (Dulle 2016's list method): keep the elements whose flag is
 * non-zero, in their original order. Predicate -> exclusive scan -> scatter.
 *
 * Serial-workgroup devices (a CPU; compact-chunked.ts) count the kept flags of one
 * contiguous chunk per worker, read the counts, and let each chunk write its kept
 * elements in order from its offset: two dispatches, no temporaries of n.
 *
 * Workgroup devices (compact-tiles.ts) count the kept flags of each tile of
 * consecutive elements, scan the tile counts, and let each workgroup rank its
 * tile's kept elements in order and write them from the tile's offset: two
 * passes over the data and a scan of one count per tile, no temporaries of n.
 *
 * Gather devices invert the map instead, with no pass over all n but the first: flags
 * are counted per block of FLAG_BLOCK and the counts scanned (inclusive); output
 * j finds its block (the first whose inclusive count exceeds j) by a binary search
 * between two samples (a first pass places every SAMPLE_STRIDE-th output by a
 * search over all blocks; blocks increase with j), then walks that block's flags.
 * Where the flags are whole texels (n a multiple of 4), one invocation writes four
 * consecutive outputs as a texel from one search (gatherTexelKernel). Every kernel
 * writes only its own element (or texel).
 */
import {
  type Buffer,
  type BufferDType,
  buffer,
  type Device,
  defineKernel,
  InvalidArgumentError,
  select,
  uniform,
  type Val,
  vec,
} from '@trident/core';
import { cachedKernel, checkBuffer, gatherSize, lowerBound, scratch } from '../common.ts';
import { chooseFamily, type Formulation } from '../plan.ts';
import { recordBlockSums, recordGatherBlockScan } from '../scan/scan-gather.ts';
import { compactChunked } from './compact-chunked.ts';
import { compactTiles, compactTilesInto, type TileShape, tileShape } from './compact-tiles.ts';

const DTYPES: readonly BufferDType[] = ['u32', 'i32', 'f32'];

/** Flags per block of the gather formulation (the last step walks one block's flags). */
const FLAG_BLOCK = 4;
/** Outputs per sample: each output searches the blocks between two samples. */
const SAMPLE_STRIDE = 16;
/**
 * Outputs per sample in the texel form (a multiple of 4: an output texel never
 * straddles two samples). Four outputs share one search there, so a longer stride
 * (fewer samples, each a search over all blocks) costs less than in the scalar
 * form. SwiftShader webgl2, 2^20 half kept, interleaved runs: 64 at or below 16.
 */
const TEXEL_SAMPLE_STRIDE = 64;

/** samples[s] = the block of output s · stride (first b with blocks[b] > s · stride); m - 1 past the count. */
function sampleKernel(stride: number, wg: number) {
  return cachedKernel(`compact-sample:${stride}:${wg}`, () =>
    defineKernel({
      name: 'compact_samples',
      workgroupSize: wg,
      params: {
        blocks: buffer('u32', 'read'),
        samples: buffer('u32', 'write'),
        m: uniform('u32'),
        count: uniform('u32'),
        slots: uniform('u32'),
      },
      body: ({ blocks, samples, m, count, slots }, k) => {
        const s = k.let(k.globalIndex, 's');
        k.if(s.lt(slots), () => {
          const j = k.let(s.mul(stride), 'j');
          const lo = k.var('u32', 0, 'lo');
          const hi = k.let(m, 'hi');
          k.if(j.lt(count), () => lowerBound(k, blocks, j, lo, hi));
          samples.store(s, select(j.lt(count), lo, m.sub(1)));
        });
      },
    }),
  );
}

/**
 * out[j] = input of the j-th set flag, for j < count (gather). `blocks` holds the
 * inclusive scan of the blocks' flag counts: output j finds its block between the
 * samples around it, then walks that block's FLAG_BLOCK flags.
 */
function gatherKernel(dtype: BufferDType, wg: number) {
  return cachedKernel(`compact-gather:${dtype}:${wg}`, () =>
    defineKernel({
      name: `compact_gather_${dtype}`,
      workgroupSize: wg,
      params: {
        input: buffer(dtype, 'read'),
        flags: buffer('u32', 'read'),
        blocks: buffer('u32', 'read'),
        samples: buffer('u32', 'read'),
        out: buffer(dtype, 'write'),
        m: uniform('u32'),
        count: uniform('u32'),
      },
      body: ({ input, flags, blocks, samples, out, m, count }, k) => {
        const j = k.let(k.globalIndex, 'j');
        k.if(j.lt(count), () => {
          const s = k.let(j.div(SAMPLE_STRIDE), 's');
          // Blocks increase with j: j's lies between its sample's and the next sample's.
          const lo = k.var('u32', samples.load(s), 'lo');
          const next = k.let(samples.load(s.add(1)).add(1), 'next');
          const hi = k.let(select(next.lt(m), next, m), 'hi');
          lowerBound(k, blocks, j, lo, hi);
          const before = k.var('u32', 0, 'before');
          k.if(lo.gt(0), () => before.set(blocks.load(lo.sub(1))));
          // The (j - before)-th set flag of block lo (0-based).
          const want = k.let(j.sub(before), 'want');
          const first = k.let(lo.mul(FLAG_BLOCK), 'first');
          const seen = k.var('u32', 0, 'seen');
          const from = k.var('u32', first, 'from');
          k.for({ from: 0, to: FLAG_BLOCK }, (t) => {
            const set = k.let(flags.load(first.add(t)).ne(0), 'set');
            k.if(set.and(seen.eq(want)), () => from.set(first.add(t)));
            seen.set(seen.add(select(set, 1, 0, 'u32')));
          });
          out.store(j, input.load(from));
        });
      },
    }),
  );
}

/** The flag bit (0/1) of one texel component. */
function bit(x: Val<'u32'>): Val<'u32'> {
  return select(x.ne(0), 1, 0, 'u32');
}

type Texel = 'vec4<u32>' | 'vec4<i32>' | 'vec4<f32>';

/**
 * Flags per block in the texel form: one texel. Longer blocks (a walk over several
 * texels to place an output) measured the same, so the form without the walk
 * (LEDGER.md compact.texelBlock).
 */
const TEXEL_FLAGS_BLOCK = 4;

/**
 * The texel form of gatherKernel, for flags of whole texels (a block is one flag
 * texel): invocation t writes outputs 4t … 4t + 3 as one texel of a vec4 view of
 * `out`. It searches the block of output 4t once; each later output stays in the
 * current block while its count allows, else tries the next block (the common
 * case when many are kept) and searches only past it. The output's place inside
 * its texel comes from the texel's prefix counts. Outputs past `count` (the pad of
 * the last texel) are written with some input element.
 */
function gatherTexelKernel(dtype: BufferDType, wg: number) {
  return cachedKernel(`compact-gather4:${dtype}:${wg}`, () =>
    defineKernel({
      name: `compact_gather4_${dtype}`,
      workgroupSize: wg,
      params: {
        input: buffer(dtype, 'read'),
        flags: buffer('u32', 'read', { vector: 4 }),
        blocks: buffer('u32', 'read'),
        samples: buffer('u32', 'read'),
        out: buffer(dtype, 'write', { vector: 4 }),
        m: uniform('u32'),
        count: uniform('u32'),
      },
      body: ({ input, flags, blocks, samples, out, m, count }, k) => {
        const t = k.let(k.globalIndex, 't');
        const j0 = k.let(t.mul(4), 'j0');
        k.if(j0.lt(count), () => {
          const s = k.let(j0.div(TEXEL_SAMPLE_STRIDE), 's');
          // Every output of this texel lies between sample s and sample s + 1 (the stride is a multiple of 4).
          const lo = k.var('u32', samples.load(s), 'lo');
          const next = k.let(samples.load(s.add(1)).add(1), 'next');
          const end = k.let(select(next.lt(m), next, m), 'end');
          // lowerBound narrows its bounds: each search gets its own copy of the end.
          lowerBound(k, blocks, j0, lo, k.var('u32', end, 'hi'));
          const before = k.var('u32', 0, 'before');
          k.if(lo.gt(0), () => before.set(blocks.load(lo.sub(1))));
          const incl = k.var('u32', blocks.load(lo), 'incl');
          // The current flag texel: its index, the kept count before it, and its flag bits.
          const tx = k.var('u32', 0, 'tx');
          const tb = k.var('u32', 0, 'tb');
          const fx = k.var('u32', 0, 'fx');
          const fy = k.var('u32', 0, 'fy');
          const fz = k.var('u32', 0, 'fz');
          const fw = k.var('u32', 0, 'fw');
          const loadTexel = () => {
            const v = k.let((flags as unknown as { load(i: Val<'u32'>): Val<'vec4<u32>'> }).load(tx), 'fv');
            fx.set(bit(v.x));
            fy.set(bit(v.y));
            fz.set(bit(v.z));
            fw.set(bit(v.w));
          };
          const enterBlock = () => {
            tx.set(lo);
            tb.set(before);
            loadTexel();
          };
          enterBlock();
          const outs: Array<Val<BufferDType>> = [];
          for (let q = 0; q < 4; q++) {
            const j = q === 0 ? j0 : k.let(j0.add(q), `j${q}`);
            if (q > 0) {
              k.if(j.ge(incl).and(j.lt(count)), () => {
                // Block lo is used up: j's block is lo + 1 or later (it exists: j < count).
                before.set(incl);
                lo.set(lo.add(1));
                incl.set(blocks.load(lo));
                k.if(incl.le(j), () => {
                  const from = k.var('u32', lo.add(1), 'from');
                  lowerBound(k, blocks, j, from, k.var('u32', end, 'hi'));
                  lo.set(from);
                  before.set(blocks.load(lo.sub(1)));
                  incl.set(blocks.load(lo));
                });
                enterBlock();
              });
            }
            // The (j - tb)-th set flag of texel tx: its component is the number of prefix counts not above it.
            const want = k.let(j.sub(tb), `want${q}`);
            const px = k.let(fx, `px${q}`);
            const py = k.let(px.add(fy), `py${q}`);
            const pz = k.let(py.add(fz), `pz${q}`);
            const c = k.let(
              select(px.le(want), 1, 0, 'u32')
                .add(select(py.le(want), 1, 0, 'u32'))
                .add(select(pz.le(want), 1, 0, 'u32')),
              `c${q}`,
            );
            outs.push(k.let(input.load(tx.mul(4).add(c)), `o${q}`));
          }
          (out as unknown as { store(i: Val<'u32'>, v: Val<Texel>): void }).store(
            t,
            vec(dtype, outs[0] as never, outs[1] as never, outs[2] as never, outs[3] as never) as Val<Texel>,
          );
        });
      },
    }),
  );
}

export interface CompactResult<D extends BufferDType> {
  /** Number of kept elements. */
  readonly count: number;
  /** A new buffer of exactly `count` elements, the kept elements in input order. */
  readonly output: Buffer<D>;
}

export type CompactFormulationName = 'chunked' | 'tile-scan' | 'inverted-map';

/** The formulation `compact` runs on `device` (see the file comment), with its tile shape where it is the tile scan. */
export function compactFormulation(device: Device): Formulation<CompactFormulationName, TileShape | undefined> {
  const family = chooseFamily(device, 'compact', { families: ['serial', 'workgroup', 'gather'] });
  if (family === 'serial')
    return { family, name: 'chunked', shape: undefined, summary: 'per-worker chunks: count kept, host offsets, ordered write' };
  if (family === 'workgroup') {
    const shape = tileShape(device);
    const summary = `tiles of ${shape.wg} x ${shape.items}: count kept per tile, scan of the counts, ordered write per tile`;
    return { family, name: 'tile-scan', shape, summary };
  }
  return { family, name: 'inverted-map', shape: undefined, summary: 'scan + binary-search gather (inverted map)' };
}

/** The arguments every compaction checks: input and flags of this device, flags u32 and as long. */
function checkCompactArgs(device: Device, input: Buffer, flags: Buffer): void {
  checkBuffer(device, input, 'input', DTYPES);
  checkBuffer(device, flags, 'flags', ['u32']);
  if (flags.length !== input.length)
    throw new InvalidArgumentError('flags', `length ${flags.length} differs from the input length ${input.length}`);
}

/**
 * Keeps the elements of `input` whose entry in `flags` (u32, same length) is
 * non-zero, preserving their order, and resolves to the count and a new buffer of
 * exactly that length (empty when nothing is kept or the input is empty). Values
 * are moved as they are (f32 -0 and NaNs included; a signalling NaN may come back
 * quieted, as with zcopy).
 *
 * Complexity: O(n) work; on workgroup and serial-workgroup devices 2 flag reads
 * and 1 input read per element and 1 write per kept element (plus, on workgroup
 * devices, a scan of one count per tile: compact/tuning.ts TILES); on gather
 * devices n flag reads for the block counts, a scan of n / B counts (B =
 * FLAG_BLOCK, or TEXEL_FLAGS_BLOCK where n is a multiple of 4), and
 * O(count (log(n / count) + B)) reads for the searches (where n is a multiple
 * of 4 and the count is not, plus a copy of the count's elements). One small
 * readback for the count. Throws InvalidArgumentError for bad buffers, a flags
 * dtype other than u32, or a length mismatch; the inputs are never modified.
 */
export async function compact<D extends BufferDType>(device: Device, input: Buffer<D>, flags: Buffer<'u32'>): Promise<CompactResult<D>> {
  checkCompactArgs(device, input, flags);
  const { family, shape } = compactFormulation(device);
  const n = input.length;
  if (n === 0) return { count: 0, output: device.createBuffer(input.dtype, 0) };
  if (family === 'serial') return compactChunked(device, input, flags);
  if (shape !== undefined) return compactTiles(device, input, flags, shape);
  return compactGather(device, input, flags, n, gatherSize(device.caps));
}

export interface CompactIntoOptions<D extends BufferDType> {
  /** Receives the kept elements from element 0: at least as long as the input, not the input or the flags. */
  readonly output: Buffer<D>;
  /** A u32 buffer whose element 0 receives the number kept (other elements untouched): not the output. */
  readonly count: Buffer<'u32'>;
}

/**
 * `compact` into buffers the caller holds: writes the kept elements of `input` (those
 * whose flag is non-zero), in order, to `options.output` from element 0, and their
 * number to `options.count[0]`. Output elements from the count on are left as they were.
 * For pipelines that keep working on the GPU: on workgroup devices (the tile-scan
 * formulation) the work is only recorded — no readback, no allocation — and the promise
 * resolves at once, the count staying on the device for later kernels. Serial-workgroup
 * and gather devices read the count back as `compact` does, then copy the kept elements
 * into `output` (one more pass over them).
 *
 * Throws InvalidArgumentError for bad buffers, a flags dtype other than u32, a length
 * mismatch, an output shorter than the input or of another dtype, an output that is the
 * input or the flags, or a count buffer that is not u32, is empty or is the output.
 */
export async function compactInto<D extends BufferDType>(
  device: Device,
  input: Buffer<D>,
  flags: Buffer<'u32'>,
  options: CompactIntoOptions<D>,
): Promise<void> {
  checkCompactArgs(device, input, flags);
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options', 'must be an object with output and count');
  const { output, count } = options;
  checkBuffer(device, output, 'options.output', [input.dtype]);
  if (output.length < input.length)
    throw new InvalidArgumentError('options.output', `length ${output.length} is shorter than the input length ${input.length}`);
  if ((output as Buffer) === input || (output as Buffer) === flags)
    throw new InvalidArgumentError('options.output', 'must not be the input or the flags buffer');
  checkBuffer(device, count, 'options.count', ['u32']);
  if (count.length < 1) throw new InvalidArgumentError('options.count', 'must hold at least one element');
  if ((count as Buffer) === output) throw new InvalidArgumentError('options.count', 'must not be the output buffer');
  if (input.length === 0) {
    count.write([0]);
    return;
  }
  const { shape } = compactFormulation(device);
  if (shape !== undefined) {
    compactTilesInto(device, input, flags, shape, output, count);
    return;
  }
  const kept = await compact(device, input, flags);
  try {
    if (kept.count > 0) device.copyBuffer(kept.output, output, { length: kept.count });
    count.write([kept.count]);
  } finally {
    kept.output.destroy();
  }
}

/**
 * The gather formulation: flag counts per block of FLAG_BLOCK, their inclusive
 * scan (scan-gather.ts), one readback for the count, samples, then one gather.
 * No pass runs over all n elements except the block counts.
 */
async function compactGather<D extends BufferDType>(
  device: Device,
  input: Buffer<D>,
  flags: Buffer<'u32'>,
  n: number,
  wg: number,
): Promise<CompactResult<D>> {
  // Whole flag texels: blocks of one texel and texel outputs.
  const texels = n % 4 === 0;
  const block = texels ? TEXEL_FLAGS_BLOCK : FLAG_BLOCK;
  const m = Math.ceil(n / block);
  // Fresh: `blocks` is used after an await, when a pooled buffer could have been taken meanwhile.
  const blocks = device.createBuffer('u32', m);
  try {
    const sums = scratch(device, 'compact.sums', 'u32', m);
    recordBlockSums(device, flags, sums, n, block, 'flags');
    recordGatherBlockScan(device, sums, blocks, m, false, 'values', 'compact.scan');
    const count = (await blocks.read({ offset: m - 1, length: 1 }))[0] as number;
    const output = device.createBuffer(input.dtype, count);
    if (count > 0) {
      const stride = texels ? TEXEL_SAMPLE_STRIDE : SAMPLE_STRIDE;
      const slots = Math.ceil(count / stride) + 1;
      const samples = scratch(device, 'compact.samples', 'u32', slots);
      device.dispatch(sampleKernel(stride, wg), { invocations: slots }, { blocks, samples, m, count, slots });
      if (texels) {
        // A vec4 view needs whole texels, so a count that is not a multiple of 4 goes through a padded temporary.
        const padded = count % 4 === 0 ? output : scratch(device, 'compact.padded', input.dtype, Math.ceil(count / 4) * 4);
        device.dispatch(gatherTexelKernel(input.dtype, wg), { invocations: Math.ceil(count / 4) }, {
          input,
          flags,
          blocks,
          samples,
          out: padded,
          m,
          count,
        } as never);
        if (padded !== output) device.copyBuffer(padded, output, { length: count });
      } else {
        device.dispatch(gatherKernel(input.dtype, wg), { invocations: count }, { input, flags, blocks, samples, out: output, m, count });
      }
    }
    return { count, output };
  } finally {
    void device
      .flush()
      .catch(() => undefined)
      .finally(() => blocks.destroy());
  }
}
