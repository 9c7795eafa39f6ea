/**
 * Compaction on workgroup devices (the 'tile-scan' formulation): the input is cut
 * into tiles of wg × items consecutive elements, one workgroup a tile.
 *
 * 1. Count: each workgroup counts the non-zero flags of its tile and writes one
 *    count per tile (the flags read once, as vec4s where the length divides by 4).
 * 2. An exclusive scan of the tile counts (recordScan over `tiles` + 1 elements, so
 *    that the last is the total) and one read of that total, which sizes the output.
 * 3. Scatter: each workgroup reads its tile's flags and elements again, ranks the
 *    kept ones in input order and writes each to its tile's offset plus its rank.
 *
 * Layout: invocation l of a tile holds quads (4 consecutive elements) l, l + wg,
 * l + 2 wg, … (one quad a "round"), so each load instruction of a workgroup reads
 * consecutive memory, and the kept elements of a round go to consecutive output
 * slots in invocation order (neighbouring invocations store to neighbouring slots).
 * An element's rank is the kept count of the earlier rounds, plus that of the earlier
 * invocations in its round (a workgroup scan), plus that of the earlier elements of
 * its quad. Two rounds share one scanned word: an invocation keeps at most 4
 * elements of a round and a round at most 4 · wg, so the two rounds' counts pack into
 * the 16-bit halves of one u32 and their sums never carry from one half to the other;
 * the words of all rounds are scanned across the workgroup together (tileScan).
 *
 * Past one binding, both passes go over one segment of the input and the flags a
 * dispatch (`tileRuns`): tiles are cut at segment ends and numbered across them
 * (`firstTile`), and only the output, written anywhere, binds every segment.
 *
 * Traffic: the flags twice, the input once and the kept elements once (about 14 bytes
 * an element when half are kept), and two numbers a tile; no temporary of n elements.
 * Indices stay below 2^32 for any length a buffer may have (maxBufferElements is at
 * most 2^31): a tile's first quad, t · wg · items / 4, is below n / 4 + wg · items.
 */
import {
  type Buffer,
  type BufferDType,
  buffer,
  type Device,
  defineKernel,
  type KernelBuilder,
  min,
  select,
  u32,
  uniform,
  type Val,
  type Var,
} from '@trident/core';
import { blockSize, cachedKernel, dispatchGroups, scratch, tiledRuns, workgroupReduce, workgroupScan } from '../common.ts';
import { recordScan } from '../scan/scan.ts';
import * as TUNING from './tuning.ts';

type Num = 'u32' | 'i32' | 'f32';
type Quad<T extends Num> = readonly [Val<T>, Val<T>, Val<T>, Val<T>];

/** How the tile-scan formulation cuts the input. */
export interface TileShape {
  /** Invocations per workgroup (a power of two, at most 16383 so that two rounds' counts pack in a u32). */
  readonly wg: number;
  /** Elements per invocation (a multiple of 4): a tile is wg × items elements. */
  readonly items: number;
}

/** The tile shape on `device`: TILES, its workgroup capped by the device's limits. */
export function tileShape(device: Device): TileShape {
  const { wg, items } = TUNING.TILES.value;
  // The scatter's scan holds one u32 per invocation in workgroup memory for each two rounds.
  return { wg: blockSize(device.caps, 4 * Math.ceil(items / 8), wg), items };
}

/** 1 where the flag is non-zero, else 0. */
function bit(flag: Val<'u32'>): Val<'u32'> {
  return select(flag.ne(0), 1, 0, 'u32');
}

/**
 * The four elements of quad `q` of a buffer parameter declared with `{ vector: width }`:
 * one vec4 load, or four scalar loads. Loads past the end give 0 (IR semantics), which
 * for flags means "not kept".
 */
function loadQuad<T extends Num>(k: KernelBuilder, src: unknown, q: Val<'u32'>, width: 1 | 4, name: string): Quad<T> {
  if (width === 4) {
    const v = k.let((src as { load(i: Val<'u32'>): Val<'vec4<u32>'> }).load(q), name);
    return [v.x, v.y, v.z, v.w] as unknown as Quad<T>;
  }
  const scalars = src as { load(i: Val<'u32'>): Val<T> };
  const first = k.let(q.mul(4), `${name}e`);
  return [scalars.load(first), scalars.load(first.add(1)), scalars.load(first.add(2)), scalars.load(first.add(3))];
}

/** Quad index of round `r` of the invocation whose round 0 is `q0`. */
function roundQuad(q0: Val<'u32'>, r: number, wg: number): Val<'u32'> {
  return r === 0 ? q0 : q0.add(r * wg);
}

/**
 * Exclusive prefix sums over the workgroup's invocations (in local-index order) of
 * each of `words`, and their workgroup totals, all valid in every invocation. With
 * subgroups: a subgroup scan of each word, one barrier after each subgroup's last
 * lane has stored its totals, then each subgroup sums the totals of the subgroups
 * before it and of all: one barrier for all the words, where a Hillis–Steele
 * workgroupScan takes two per doubling for each word. Without subgroups,
 * workgroupScan per word. Called once per kernel: its workgroup arrays are not reused.
 */
function tileScan(
  k: KernelBuilder,
  words: readonly Val<'u32'>[],
  wg: number,
  subgroups: boolean,
): { exclusive: Val<'u32'>[]; total: Val<'u32'>[] } {
  if (!subgroups) {
    const scans = words.map((w) => workgroupScan(k, w, wg, false, u32(0)));
    return { exclusive: scans.map((s) => s.exclusive), total: scans.map((s) => s.total) };
  }
  // A workgroup narrower than the subgroup size fills only part of one subgroup.
  const sg = k.let(min(k.subgroupSize, u32(wg)), 'sg');
  const slot = k.let(k.localIndex.div(sg), 'slot');
  const slots = k.let(u32(wg).div(sg), 'slots');
  const sums = words.map(() => k.workgroupArray('u32', wg));
  const inclusive = words.map((w) => k.subgroupInclusiveAdd(w));
  k.if(k.subgroupInvocation.eq(sg.sub(1)), () => {
    for (const [p, arr] of sums.entries()) arr.store(slot, inclusive[p] as Val<'u32'>);
  });
  k.barrier();
  const before = words.map((_, p) => k.var('u32', 0, `before${p}`));
  const total = words.map((_, p) => k.var('u32', 0, `total${p}`));
  // Each subgroup reads the subgroup totals sg at a time, one a lane, and sums them in
  // the subgroup: one round where wg <= sg², so a lane reads one total whatever the count.
  k.for({ from: 0, to: slots, step: sg }, (first) => {
    const s = k.let(first.add(k.subgroupInvocation), 's');
    for (const [p, arr] of sums.entries()) {
      // Workgroup memory past the stored totals holds no defined value.
      const x = k.let(select(s.lt(slots), arr.load(s), u32(0)), `sum${p}`);
      const t = total[p] as Var<'u32'>;
      const b = before[p] as Var<'u32'>;
      t.set(t.add(k.subgroupAdd(x)));
      b.set(b.add(k.subgroupAdd(select(s.lt(slot), x, u32(0)))));
    }
  });
  return { exclusive: words.map((w, p) => (before[p] as Var<'u32'>).add(inclusive[p] as Val<'u32'>).sub(w)), total };
}

/**
 * The sum of `value` over the workgroup, valid in invocation 0 (a subgroup sum, one
 * barrier, then invocation 0 adds the subgroup sums), or in every invocation where
 * there are no subgroups (workgroupReduce).
 */
function tileSum(k: KernelBuilder, value: Val<'u32'>, wg: number, subgroups: boolean): Val<'u32'> {
  const add = (a: Val<'u32'>, b: Val<'u32'>) => a.add(b);
  if (!subgroups) return workgroupReduce(k, value, wg, false, add, (v) => v);
  const sg = k.let(min(k.subgroupSize, u32(wg)), 'sg');
  const sums = k.workgroupArray('u32', wg);
  const sum = k.subgroupAdd(value);
  k.if(k.subgroupInvocation.eq(0), () => sums.store(k.localIndex.div(sg), sum));
  k.barrier();
  const total = k.var('u32', 0, 'total');
  k.if(k.localIndex.eq(0), () => k.for({ from: 0, to: u32(wg).div(sg) }, (s) => total.set(total.add(sums.load(s)))));
  return total;
}

/**
 * counts[firstTile + t] = the non-zero flags of tile t of `flags` (one run of the input: the
 * whole of it, or one segment). Workgroups past the run's last tile (a folded grid's) do nothing.
 */
function countKernel(width: 1 | 4, shape: TileShape, subgroups: boolean) {
  const { wg, items } = shape;
  const rounds = items / 4;
  return cachedKernel(`compact-tiles:count:${width}:${wg}:${items}:${subgroups}`, () =>
    defineKernel({
      name: `compact_tile_counts_v${width}`,
      workgroupSize: wg,
      params: {
        flags: buffer('u32', 'read', { vector: width }),
        counts: buffer('u32', 'write'),
        tiles: uniform('u32'),
        firstTile: uniform('u32'),
      },
      body: ({ flags, counts, tiles, firstTile }, k) => {
        const t = k.let(k.workgroupIndex, 't');
        k.if(t.lt(tiles), () => {
          const q0 = k.let(t.mul(wg * rounds).add(k.localIndex), 'q0');
          // Every round's loads first: `rounds` loads in flight.
          const quads = Array.from({ length: rounds }, (_, r) => loadQuad<'u32'>(k, flags, roundQuad(q0, r, wg), width, `f${r}`));
          let kept: Val<'u32'> = u32(0);
          for (const quad of quads) for (const f of quad) kept = kept.add(bit(f));
          const total = tileSum(k, k.let(kept, 'kept'), wg, subgroups);
          k.if(k.localIndex.eq(0), () => counts.store(firstTile.add(t), total));
        });
      },
    }),
  );
}

/**
 * out[offsets[firstTile + t] + rank] = each kept element of tile t of the run, rank
 * counting the kept elements before it in the tile (see the file comment).
 */
function scatterKernel(dtype: Num, width: 1 | 4, shape: TileShape, subgroups: boolean) {
  const { wg, items } = shape;
  const rounds = items / 4;
  return cachedKernel(`compact-tiles:scatter:${dtype}:${width}:${wg}:${items}:${subgroups}`, () =>
    defineKernel({
      name: `compact_tile_scatter_${dtype}_v${width}`,
      workgroupSize: wg,
      params: {
        input: buffer(dtype, 'read', { vector: width }),
        flags: buffer('u32', 'read', { vector: width }),
        offsets: buffer('u32', 'read'),
        out: buffer(dtype, 'write'),
        tiles: uniform('u32'),
        firstTile: uniform('u32'),
      },
      body: ({ input, flags, offsets, out, tiles, firstTile }, k) => {
        const t = k.let(k.workgroupIndex, 't');
        // Workgroups past the last tile come from a folded grid.
        k.if(t.lt(tiles), () => {
          const q0 = k.let(t.mul(wg * rounds).add(k.localIndex), 'q0');
          // Every load before the first barrier: 2 · rounds loads in flight.
          const flagQuads = Array.from({ length: rounds }, (_, r) => loadQuad<'u32'>(k, flags, roundQuad(q0, r, wg), width, `f${r}`));
          // The elements as their bits until stored: they live across the barrier, and a backend may keep such
          // variables where an f32 NaN loses its payload (the CPU backend's phase-split arrays of doubles).
          const values = Array.from({ length: rounds }, (_, r) =>
            loadQuad<Num>(k, input, roundQuad(q0, r, wg), width, `x${r}`).map((v, c) =>
              k.let(dtype === 'u32' ? (v as Val<'u32'>) : v.bitcast('u32'), `x${r}${c}`),
            ),
          );
          const keep = flagQuads.map((quad, r) => quad.map((f, c) => k.let(bit(f), `b${r}${c}`)));
          const kept = keep.map((b, r) =>
            k.let(
              b.reduce((s: Val<'u32'>, x) => s.add(x), u32(0)),
              `c${r}`,
            ),
          );
          // Two rounds a word: their counts in its 16-bit halves.
          const words: Val<'u32'>[] = [];
          for (let r = 0; r < rounds; r += 2) {
            const low = kept[r] as Val<'u32'>;
            const high = kept[r + 1];
            words.push(k.let(high === undefined ? low : low.or(high.shl(16)), `w${r / 2}`));
          }
          const scanned = tileScan(k, words, wg, subgroups);
          const half = (x: Val<'u32'>, r: number) => (r % 2 === 0 ? x.and(0xffff) : x.shr(16));
          // The first output slot of round r: the tile's offset plus the earlier rounds' totals.
          let base: Val<'u32'> = k.let(offsets.load(firstTile.add(t)), 'base');
          for (let r = 0; r < rounds; r++) {
            const word = Math.floor(r / 2);
            const b = keep[r] as Val<'u32'>[];
            const x = values[r] as Val<'u32'>[];
            let slot: Val<'u32'> = k.let(base.add(half(scanned.exclusive[word] as Val<'u32'>, r)), `o${r}`);
            for (let c = 0; c < 4; c++) {
              const at = slot;
              const bits = x[c] as Val<'u32'>;
              k.if((b[c] as Val<'u32'>).ne(0), () => out.store(at, (dtype === 'u32' ? bits : bits.bitcast(dtype)) as never));
              if (c < 3) slot = k.let(slot.add(b[c] as Val<'u32'>), `o${r}${c}`);
            }
            if (r + 1 < rounds) base = k.let(base.add(half(scanned.total[word] as Val<'u32'>, r)), `base${r + 1}`);
          }
        });
      },
    }),
  );
}

/**
 * Whether the tile scans use subgroup operations for `shape` on `device` (`force`: the
 * diagnosis override of bench/h100/compact-check.ts). The scan's subgroup form has each
 * lane read wg / sg² subgroup totals: past 16 (subgroups narrower than a quarter of √wg,
 * such as the CPU backend's single lanes) the Hillis–Steele workgroup scan does less.
 * On the H100 (NVIDIA, Dawn/Vulkan) the subgroup form ranked wrongly wherever a tile had
 * several rounds and a workgroup several subgroups, while the barrier form was exact
 * (tuning/h100-compact-tiles-2026-11-27.json, call 3): past one round, the barrier form,
 * until the fault is found.
 */
function useSubgroups(device: Device, shape: TileShape, force: boolean | undefined): boolean {
  const sg = device.caps.limits.minSubgroupSize;
  const subgroupForm = shape.items <= 4 || shape.wg <= sg;
  return force ?? (device.caps.features.has('subgroup') && shape.wg <= 16 * sg * sg && subgroupForm);
}

/**
 * The runs a compaction's passes go over (`tiledRuns`): the whole input and flags, or,
 * past one binding, one segment of each at a time, so that each dispatch binds one
 * binding per array (the output, written anywhere, is bound whole); each run reads vec4s
 * where its length divides by 4.
 */
interface TileRun {
  readonly input: Buffer;
  readonly flags: Buffer<'u32'>;
  readonly tiles: number;
  readonly firstTile: number;
  readonly width: 1 | 4;
}

function tileRuns(device: Device, input: Buffer, flags: Buffer<'u32'>, shape: TileShape): { runs: TileRun[]; tiles: number } {
  const { runs, tiles } = tiledRuns(device, [input, flags], input.length, shape.wg * shape.items);
  return {
    tiles,
    runs: runs.map(({ views, n, firstTile, tiles: count }) => {
      const [runInput, runFlags] = views as [Buffer, Buffer<'u32'>];
      const width: 1 | 4 = n % 4 === 0 && runInput.length % 4 === 0 && runFlags.length % 4 === 0 ? 4 : 1;
      return { input: runInput, flags: runFlags, tiles: count, firstTile, width };
    }),
  };
}

/**
 * Records the count pass and the scan of the tile counts into `offsets` (tiles + 1
 * elements; the last is the total). The scan runs over one count more than there are
 * tiles, so that its last element is the total; an exclusive scan never adds its last
 * input, so that count need not be written.
 */
function recordTileOffsets(
  device: Device,
  runs: { runs: readonly TileRun[]; tiles: number },
  shape: TileShape,
  subgroups: boolean,
  offsets: Buffer<'u32'>,
): void {
  // Pooled: written and scanned before the caller awaits anything, so no other call's commands come between.
  const counts = scratch(device, 'compact.tileCounts', 'u32', runs.tiles + 1);
  for (const run of runs.runs)
    dispatchGroups(device, countKernel(run.width, shape, subgroups), run.tiles, {
      flags: run.flags,
      counts,
      tiles: run.tiles,
      firstTile: run.firstTile,
    });
  recordScan(device, counts, offsets, runs.tiles + 1, true);
}

function recordTileScatter(
  device: Device,
  dtype: BufferDType,
  runs: readonly TileRun[],
  shape: TileShape,
  subgroups: boolean,
  offsets: Buffer<'u32'>,
  output: Buffer,
): void {
  for (const run of runs)
    dispatchGroups(device, scatterKernel(dtype as Num, run.width, shape, subgroups), run.tiles, {
      input: run.input,
      flags: run.flags,
      offsets,
      out: output,
      tiles: run.tiles,
      firstTile: run.firstTile,
    });
}

/**
 * The tile-scan compaction of `input` (n >= 1 elements) by `flags`: resolves to the
 * count and a new buffer of exactly the kept elements, in input order.
 */
export async function compactTiles<D extends BufferDType>(
  device: Device,
  input: Buffer<D>,
  flags: Buffer<'u32'>,
  shape: TileShape,
  /** Diagnosis only (bench/h100/compact-check.ts): whether the workgroup scans use subgroups, in place of the choice below. */
  forceSubgroups?: boolean,
): Promise<{ count: number; output: Buffer<D> }> {
  const subgroups = useSubgroups(device, shape, forceSubgroups);
  const runs = tileRuns(device, input, flags, shape);
  // Fresh: the scatter pass reads it after the await, when a pooled buffer could have been taken meanwhile.
  const offsets = device.createBuffer('u32', runs.tiles + 1);
  try {
    recordTileOffsets(device, runs, shape, subgroups, offsets);
    const count = (await offsets.read({ offset: runs.tiles, length: 1 }))[0] as number;
    const output = device.createBuffer(input.dtype, count);
    if (count > 0) recordTileScatter(device, input.dtype, runs.runs, shape, subgroups, offsets, output);
    return { count, output };
  } finally {
    void device
      .flush()
      .catch(() => undefined)
      .finally(() => offsets.destroy());
  }
}

/**
 * The tile-scan compaction recorded whole, with nothing read back: the kept elements to
 * `output` from element 0 (it holds at least n), their count to `count[0]`.
 */
export function compactTilesInto<D extends BufferDType>(
  device: Device,
  input: Buffer<D>,
  flags: Buffer<'u32'>,
  shape: TileShape,
  output: Buffer<D>,
  count: Buffer<'u32'>,
): void {
  const subgroups = useSubgroups(device, shape, undefined);
  const runs = tileRuns(device, input, flags, shape);
  // Pooled: nothing awaits between the passes that write and read it.
  const offsets = scratch(device, 'compact.tileOffsets', 'u32', runs.tiles + 1);
  recordTileOffsets(device, runs, shape, subgroups, offsets);
  recordTileScatter(device, input.dtype, runs.runs, shape, subgroups, offsets, output);
  device.copyBuffer(offsets, count, { srcOffset: runs.tiles, length: 1 });
}
