/**
 * The single-pass scan: a chained scan with decoupled look-back (Merrill & Garland,
 * 2016) and the look-back fallback (Smith, Levien & Owens, "Decoupled Fallback", SPAA 2025), in one dispatch
 * that reads the input once and writes the output once (2n element moves).
 *
 * Each workgroup takes a tile id: its workgroup index (the default: no atomic and no
 * barrier before the loads) or the next value of a counter (one atomicAdd, so a tile
 * only waits on tiles whose workgroups have already started). It loads its tile,
 * scans it in the workgroup, publishes its aggregate, then one subgroup looks back
 * over the predecessors' published states, a window of subgroup-size tiles per
 * round, summing aggregates until it meets an inclusive prefix; it then publishes
 * its own inclusive prefix and the workgroup writes the tile's outputs.
 *
 * Publication without fences: WGSL atomics are relaxed and WebGPU has no fence
 * between workgroups, so a state and its value must travel in one atomic word. A
 * tile's state is two u32 words, each holding a 2-bit flag (not ready / aggregate /
 * inclusive) and one 16-bit half of the value's 32 bits (u32, i32 and f32 alike).
 * A reader trusts a tile only when both words show the same ready flag: each flag
 * is written once per tile with one value, so matching flags mean matching halves;
 * a mismatch is read as "not ready" and read again next round.
 *
 * Forward progress: WebGPU promises none between workgroups (a software adapter may
 * run workgroups as fibers on one thread; the CPU backend runs them in worker
 * slices). After `spinLimit` rounds without progress on the nearest predecessor,
 * the subgroup reduces that predecessor's tile from the input itself and goes on
 * looking back, so the look-back ends on every backend even if no other workgroup
 * ever runs; the cost is bounded by re-reading the tiles before this one.
 *
 * Uniformity: the look-back loop's condition comes from atomic loads, so it holds
 * no barrier (WGSL's uniformity analysis would refuse one; the CPU backend runs
 * barrier-holding control flow once per workgroup). It runs in one subgroup, with
 * subgroup reductions deciding every branch, so the subgroup stays converged; the
 * result reaches the workgroup through workgroup memory and a barrier at top level.
 *
 * Tile layouts. 'subgroup' (the default) cuts the tile into one contiguous run per
 * subgroup; lane l holds quads (4 elements) l, l + w, l + 2w, … of its run (w the
 * subgroup width: coalesced loads), sums each quad serially, and one vector-valued
 * subgroup scan serves four rows at once. The subgroups' run totals go through
 * workgroup memory to the first subgroup, which scans them (a subgroup scan per
 * subgroup-width of runs: one on GPUs), publishes the tile's aggregate, looks back
 * and leaves the tile's prefix in workgroup memory: two barriers per tile, both
 * ordering workgroup memory only (`workgroupBarrier`). 'subgroup-blocked' is the
 * same with lane l holding quads l·vecs … l·vecs + vecs - 1 of the run (one serial
 * chain per invocation, one scalar subgroup scan; strided loads). The older layouts
 * layout, 'blocked', combines invocations with the Hillis–Steele `workgroupScan`
 * (about 10 barriers per tile at 512 invocations) and gives each invocation `vecs`
 * consecutive quads. (A 'striped' layout, quad `q * wg + lid` of each of `vecs` rows
 * and one vector-valued workgroup scan, was the first default; it was slower than
 * 'subgroup' and, on the H100 at 32 invocations × 4 quads, gave a wrong prefix to
 * tile 1 in every run while every other layout passed: removed, cause not found.)
 *
 * Lanes are assumed to be numbered in local-index order within a subgroup (lane =
 * lid mod width, the subgroup of lid is lid / width), as `workgroupScan` assumes.
 */
import {
  type Buffer,
  buffer,
  type Device,
  defineKernel,
  type KernelBuilder,
  select,
  u32,
  uniform,
  type Val,
  type Var,
  vec,
} from '@trident/core';
import { bindingsFor, blockSize, cachedKernel, dispatchGroups, hasAll, scratch, segmentRuns, workgroupScan } from '../common.ts';
import { tuned } from '../device-class.ts';
import * as TUNING from './tuning.ts';

export type Num = 'u32' | 'i32' | 'f32';

/** How the single-pass scan cuts and scans tiles. */
export interface LookbackTuning {
  /** Invocations per workgroup (a power of two). */
  readonly wg: number;
  /**
   * Quads (4 consecutive elements) per invocation: a tile is 4 * wg * vecs elements.
   * 'subgroup' takes 1, 2 or a multiple of 4; the others any.
   */
  readonly vecs: number;
  readonly layout: 'blocked' | 'subgroup' | 'subgroup-blocked';
  /**
   * Where a workgroup's tile id comes from: 'counter' (one atomicAdd, so a tile only
   * waits on tiles whose workgroups have started) or 'workgroup' (its workgroup index:
   * no atomic and no barrier before the loads; a predecessor that never runs is
   * reduced by the fallback, so this is correct without forward progress too).
   */
  readonly ids: 'counter' | 'workgroup';
  /** Look-back rounds without progress on the nearest predecessor before reducing its tile from the input. */
  readonly spinLimit: number;
  /** Never trust a published state: every predecessor is reduced from the input (tests of the fallback). */
  readonly forceFallback: boolean;
  /**
   * Measurement only: skip the look-back or the loads and stores (results are wrong).
   */
  readonly probe?: 'no-lookback' | 'no-data';
}

/** The narrowest subgroup the look-back wants (see tuning.ts). */
export const LOOKBACK_MIN_WINDOW = TUNING.LOOKBACK_MIN_WINDOW.value;

/**
 * True when the device can run the single-pass scan (it may still not be the best
 * choice): without subgroups the look-back runs in one invocation, a window of one.
 */
export function lookbackRuns(device: Device): boolean {
  return hasAll(device, 'workgroup', 'scatter', 'atomic', 'atomic-other');
}

/** True when the single-pass scan is the better formulation on `device` (caps only). */
export function lookbackPreferred(device: Device): boolean {
  return hasAll(device, 'workgroup', 'atomic', 'atomic-other', 'subgroup') && device.caps.limits.minSubgroupSize >= LOOKBACK_MIN_WINDOW;
}

/** The tuning for `device`, with `overrides` applied and the workgroup size fitted to its limits. */
export function lookbackTuning(device: Device, overrides: Partial<LookbackTuning> = {}): LookbackTuning {
  const t = { ...tuned(TUNING.LOOKBACK, device.caps), ...overrides };
  // The workgroup scan keeps one value per invocation in workgroup memory.
  // ('subgroup' keeps one value per subgroup: the invocation count bounds it.)
  // At least one whole subgroup of the widest size the device reports: the layouts read
  // a subgroup's total from its last lane and count wg / width subgroups (with wg = 16
  // on the H100's 32-wide subgroups that count was 0 and tile sums came out wrong).
  const widest = device.caps.features.has('subgroup') ? device.caps.limits.maxSubgroupSize : 1;
  const wg = blockSize(device.caps, 4, Math.max(t.wg, widest));
  if (t.layout === 'subgroup' && t.vecs % 4 !== 0 && ![1, 2].includes(t.vecs))
    throw new RangeError(`subgroup tiles take 1, 2 or a multiple of 4 quads per invocation, got ${t.vecs}`);
  if (!Number.isInteger(t.vecs) || t.vecs < 1) throw new RangeError(`vecs must be a positive integer, got ${t.vecs}`);
  return { ...t, wg };
}

/** Elements per tile. */
export function lookbackTile(t: LookbackTuning): number {
  return 4 * t.wg * t.vecs;
}

// Tile states (the 2-bit flag of both state words).
const NOT_READY = 0;
const AGGREGATE = 1;
const INCLUSIVE = 2;
/** Larger than any lane index: "no such lane" in subgroup minima. */
const NO_LANE = 0xffffffff;

type Quad = Val<`vec4<${Num}>`>;

function bitsOf(v: Val<Num>): Val<'u32'> {
  return v.type === 'u32' ? (v as Val<'u32'>) : (v as Val<'i32' | 'f32'>).bitcast('u32');
}

function fromBits(dtype: Num, bits: Val<'u32'>): Val<Num> {
  return dtype === 'u32' ? bits : bits.bitcast(dtype);
}

/** Component `c` of a vector (a scalar is its own component 0). */
function component(v: Val<Num> | Val<`vec${2 | 4}<${Num}>`>, c: number): Val<Num> {
  if (v.type === 'u32' || v.type === 'i32' || v.type === 'f32') return v as Val<Num>;
  const w = v as unknown as Val<'vec4<u32>'>;
  const picked = c === 0 ? w.x : c === 1 ? w.y : c === 2 ? w.z : w.w;
  return picked as unknown as Val<Num>;
}

/**
 * Loads quad `qi` (elements 4qi … 4qi+3). Vector views give zeros past their end;
 * scalar views mask by `n`, because pooled temporaries may be longer than n.
 */
function loadQuad(dtype: Num, src: { load(i: Val<'u32'>): Val<Num> | Quad }, qi: Val<'u32'>, width: 1 | 4, n: Val<'u32'>): Quad {
  if (width === 4) return src.load(qi) as Quad;
  const e = qi.shl(2);
  const parts = [0, 1, 2, 3].map((c) => {
    const i = c === 0 ? e : e.add(c);
    return select(i.lt(n), src.load(i) as Val<Num>, 0);
  });
  return vec(dtype as 'u32', ...(parts as [Val<'u32'>, Val<'u32'>, Val<'u32'>, Val<'u32'>])) as unknown as Quad;
}

function storeQuad(
  k: KernelBuilder,
  dtype: Num,
  dst: { store(i: Val<'u32'>, v: never): void },
  qi: Val<'u32'>,
  outs: Array<Val<Num>>,
  width: 1 | 4,
  n: Val<'u32'>,
): void {
  if (width === 4) {
    dst.store(qi, vec(dtype as 'u32', ...(outs as [Val<'u32'>, Val<'u32'>, Val<'u32'>, Val<'u32'>])) as never);
    return;
  }
  const e = qi.shl(2);
  outs.forEach((o, c) => {
    const i = c === 0 ? e : e.add(c);
    k.if(i.lt(n), () => dst.store(i, o as never));
  });
}

function quadSum(q: Quad): Val<Num> {
  const c = [0, 1, 2, 3].map((i) => component(q as never, i));
  return (c[0] as Val<Num>).add(c[1] as never).add((c[2] as Val<Num>).add(c[3] as never) as never);
}

/** Subgroup helpers that are the identity where the kernel runs without subgroups (one lane). */
interface Lanes {
  readonly lane: Val<'u32'>;
  readonly width: Val<'u32'>;
  min(v: Val<'u32'>): Val<'u32'>;
  add(v: Val<Num>): Val<Num>;
  inclusiveAdd<T extends Num | `vec${2 | 4}<${Num}>`>(v: Val<T>): Val<T>;
  /** `v` of lane `from` (a lane of this subgroup). */
  shuffle<T extends Num | `vec${2 | 4}<${Num}>`>(v: Val<T>, from: Val<'u32'>): Val<T>;
}

function lanes(k: KernelBuilder, subgroups: boolean): Lanes {
  if (!subgroups) return { lane: u32(0), width: u32(1), min: (v) => v, add: (v) => v, inclusiveAdd: (v) => v, shuffle: (v) => v };
  return {
    lane: k.subgroupInvocation,
    width: k.subgroupSize,
    min: (v) => k.subgroupMin(v),
    add: (v) => k.subgroupAdd(v),
    inclusiveAdd: (v) => k.subgroupInclusiveAdd(v),
    shuffle: (v, from) => k.subgroupShuffle(v, from),
  };
}

interface Params {
  readonly dtype: Num;
  readonly width: 1 | 4;
  readonly tuning: LookbackTuning;
  readonly subgroups: boolean;
  readonly exclusive: boolean;
}

function lookbackKernel(p: Params) {
  const { dtype, width, subgroups, exclusive } = p;
  const { wg, vecs, layout, ids, probe, forceFallback } = p.tuning;
  const key = `scan-lb:${dtype}:${width}:${wg}:${vecs}:${layout}:${ids}:${forceFallback}:${subgroups}:${exclusive}:${probe ?? ''}`;
  return cachedKernel(key, () =>
    defineKernel({
      name: `scan_lookback_${dtype}_v${width}_${layout.replace('-', '_')}${exclusive ? '_excl' : ''}`,
      workgroupSize: wg,
      params: {
        src: buffer(dtype, 'read', { vector: width }),
        dst: buffer(dtype, 'write', { vector: width }),
        // [0]: the tile counter; tile t's state words at 2t + 1 and 2t + 2.
        status: buffer('u32', 'atomic'),
        n: uniform('u32'),
        tiles: uniform('u32'),
        // The state index of this dispatch's first tile: a scan past one binding runs one
        // dispatch a segment, each looking back into the states of the segments before it.
        firstTile: uniform('u32'),
        spinLimit: uniform('u32'),
      },
      body: ({ src, dst, status, n, tiles, firstTile, spinLimit }, k) => {
        const lid = k.localIndex;
        const tileQuads = wg * vecs;
        const zero = () => k.var(dtype, 0) as Val<Num>;
        const L = lanes(k, subgroups);
        // [0]: this workgroup's tile id (from the counter); [1]: the bits of the tile's exclusive prefix.
        const shared = k.workgroupArray('u32', 2);
        // Barriers below exchange workgroup memory only: the look-back's atomics stay in one subgroup.
        let tile: Val<'u32'>;
        if (ids === 'workgroup') tile = k.let(k.workgroupIndex, 'tile');
        else {
          k.if(lid.eq(0), () => shared.store(0, status.atomicAdd(0, 1)));
          k.workgroupBarrier();
          tile = k.let(shared.load(0), 'tile');
        }
        // Workgroups a folded grid adds past `tiles` load nothing, store nothing and publish nothing.
        const live = k.let(tile.lt(tiles), 'live');
        // `tile` places the data (in this dispatch's buffers), `state` the tile's states.
        const state = k.let(tile.add(firstTile), 'state');
        const firstQuad = k.let(select(live, tile, tiles).mul(tileQuads), 'firstQuad');
        // 'subgroup': the subgroup's run of width * vecs quads starts at (lid - lane) * vecs.
        const runStart = layout === 'subgroup' ? k.let(firstQuad.add(lid.sub(L.lane).mul(vecs)).add(L.lane), 'runStart') : firstQuad;
        const quadIndex = (q: number): Val<'u32'> =>
          layout === 'blocked' || layout === 'subgroup-blocked'
            ? firstQuad.add(lid.mul(vecs).add(q))
            : q === 0
              ? runStart
              : runStart.add(L.width.mul(q));

        // ---- load the tile ----
        const xs: Array<Array<Val<Num>>> = [];
        for (let q = 0; q < vecs; q++) {
          const loaded =
            probe === 'no-data'
              ? (vec(dtype as 'u32', 0, 0, 0, 0) as unknown as Quad)
              : loadQuad(dtype, src as never, quadIndex(q), width, n);
          const quad = k.let(loaded, `x${q}`) as unknown as Quad;
          xs.push([0, 1, 2, 3].map((c) => component(quad as never, c)));
        }

        // ---- the look-back, run by the first subgroup once it knows the tile's total ----
        const publish = (t: Val<'u32'>, value: Val<Num>, flag: number) => {
          const bits = bitsOf(value);
          status.store(t.mul(2).add(1), bits.and(0xffff).shl(2).or(flag));
          status.store(t.mul(2).add(2), bits.shr(16).shl(2).or(flag));
        };
        /** Publishes `total`, sums the predecessors, publishes the inclusive prefix; stores the exclusive one in shared[1]. */
        const lookBack = (total: Val<Num>) => {
          if (probe === 'no-lookback') {
            k.if(L.lane.eq(0), () => shared.store(1, 0));
            return;
          }
          k.if(L.lane.eq(0), () => publish(state, total, AGGREGATE));
          const prefix = k.var(dtype, 0, 'prefix') as Var<Num>;
          // Tiles [0, look) are still to be summed.
          const look = k.let(state, 'look');
          const stalls = k.var('u32', 0, 'stalls');
          /** One round over the window of predecessors before `look`: adds what is ready, moves `look`, counts stalls. */
          const round = () => {
            // Lane i reads tile look - 1 - i; lanes before tile 0 read tile 0 again (no
            // out-of-range load) and count as an inclusive zero.
            const inRange = k.let(L.lane.lt(look), 'inRange');
            const j = k.let(select(inRange, look.sub(1).sub(L.lane), u32(0)), 'j');
            const w0 = status.load(j.mul(2).add(1));
            const w1 = status.load(j.mul(2).add(2));
            // forceFallback (tests) never trusts a state of this dispatch's tiles: their flags read
            // "not ready" (earlier dispatches' tiles are not bound for the fallback to re-read).
            const seen = select(w0.and(3).eq(w1.and(3)), w0.and(3), NOT_READY);
            const ready = forceFallback ? select(j.lt(firstTile), seen, u32(NOT_READY)) : seen;
            const flag = k.let(select(inRange, ready, INCLUSIVE), 'flag');
            const value = k.let(select(inRange, fromBits(dtype, w0.shr(2).or(w1.shr(2).shl(16))), 0) as Val<Num>, 'value') as Val<Num>;
            const firstInclusive = k.let(L.min(select(flag.eq(INCLUSIVE), L.lane, NO_LANE)), 'firstInclusive');
            const firstWaiting = k.let(L.min(select(flag.eq(NOT_READY), L.lane, NO_LANE)), 'firstWaiting');
            k.if(
              firstWaiting.lt(firstInclusive),
              () => {
                // Sum the aggregates before the first tile that is not ready, then wait on it.
                prefix.set(prefix.add(L.add(select(L.lane.lt(firstWaiting), value, 0)) as never));
                look.set(look.sub(firstWaiting));
                stalls.set(select(firstWaiting.eq(0), stalls.add(1), u32(0)));
              },
              () => {
                // Every tile up to the first inclusive one (or the whole window) is ready.
                prefix.set(prefix.add(L.add(select(L.lane.le(firstInclusive), value, 0)) as never));
                look.set(select(firstInclusive.eq(NO_LANE), look.sub(L.width), u32(0)));
                stalls.set(0);
              },
            );
          };
          /**
           * The nearest predecessor stalled `spinLimit` rounds: reduce its tile from the input.
           * It is one of this dispatch's tiles: earlier dispatches published all of theirs.
           */
          const fallback = () => {
            const t = look.sub(1).sub(firstTile);
            prefix.set(prefix.add(reduceTile(k, dtype, src as never, t, tileQuads, width, n, L) as never));
            look.set(look.sub(1));
            stalls.set(0);
          };
          k.while(
            () => look.gt(0),
            () => {
              round();
              k.if(stalls.gt(spinLimit), fallback);
            },
          );
          k.if(L.lane.eq(0), () => {
            k.if(state.gt(0), () => publish(state, prefix.add(total as never), INCLUSIVE));
            shared.store(1, bitsOf(prefix));
          });
        };
        const firstSubgroup = lid.lt(L.width).and(live);

        // inclusive[q][c]: the sum of this invocation's elements up to (q, c), in the layout's order.
        const inclusive: Array<Array<Val<Num>>> = [];
        let localOffset: (q: number) => Val<Num>;
        if (layout === 'subgroup' || layout === 'subgroup-blocked') {
          const from = k.let(select(L.lane.gt(0), L.lane.sub(1), 0), 'from');
          const last = k.let(L.width.sub(1), 'last');
          // base[q]: the sum of the subgroup's run before this invocation's quad q; acc: the run's total.
          const base: Array<Val<Num>> = [];
          let acc: Val<Num> | undefined;
          if (layout === 'subgroup-blocked') {
            // The invocation's own quads first (serially), then one scalar scan across the lanes.
            const own = blockedInclusive(xs);
            const sum = own[vecs - 1]?.[3] as Val<Num>;
            const incl = k.let(L.inclusiveAdd(sum), 'incl') as Val<Num>;
            const before = k.let(select(L.lane.gt(0), L.shuffle(incl, from), 0) as Val<Num>, 'laneBefore') as Val<Num>;
            for (let q = 0; q < vecs; q++) base.push(before);
            acc = k.let(L.shuffle(incl, last), 'runTotal') as Val<Num>;
          } else {
            // Rows of up to four quads scan across the subgroup's lanes at once (one vector scan).
            const laneBefore: Array<Val<Num>> = [];
            const rowTotals: Array<Val<Num>> = [];
            for (let g = 0; g < vecs; g += 4) {
              const sums = xs.slice(g, g + 4).map((x) => quadInclusive(x)[3] as Val<Num>);
              const v = (sums.length === 1 ? sums[0] : vec(dtype as 'u32', ...(sums as [Val<'u32'>, Val<'u32'>]))) as Val<Num>;
              const incl = k.let(L.inclusiveAdd(v), `incl${g}`) as Val<Num>;
              const prev = k.let(L.shuffle(incl, from), `prev${g}`) as Val<Num>;
              const rowTotal = k.let(L.shuffle(incl, last), `rowTotal${g}`) as Val<Num>;
              sums.forEach((_, c) => {
                laneBefore.push(select(L.lane.gt(0), component(prev as never, c), 0) as Val<Num>);
                rowTotals.push(component(rowTotal as never, c));
              });
            }
            for (let q = 0; q < vecs; q++) {
              const before = laneBefore[q] as Val<Num>;
              base.push(k.let(acc === undefined ? before : acc.add(before as never), `base${q}`) as Val<Num>);
              const r = rowTotals[q] as Val<Num>;
              acc = acc === undefined ? r : (k.let(acc.add(r as never), `run${q}`) as Val<Num>);
            }
          }
          // The subgroups' totals, scanned in place by the first subgroup, which then looks back.
          const runs = k.workgroupArray(dtype, wg);
          const runIndex = k.let(lid.div(L.width), 'runIndex');
          const count = k.let(u32(wg).div(L.width), 'runCount');
          k.if(L.lane.eq(0), () => runs.store(runIndex, acc as Val<Num>));
          k.workgroupBarrier();
          k.if(firstSubgroup, () => {
            const running = k.var(dtype, 0, 'running') as Var<Num>;
            const c = k.var('u32', 0, 'c');
            k.while(
              () => c.lt(count),
              () => {
                const i = k.let(c.add(L.lane), 'i');
                const v = k.let(select(i.lt(count), runs.load(i), 0) as Val<Num>, 'v') as Val<Num>;
                const incl = k.let(L.inclusiveAdd(v), 'runIncl') as Val<Num>;
                const before = select(L.lane.gt(0), L.shuffle(incl, from), 0) as Val<Num>;
                k.if(i.lt(count), () => runs.store(i, running.add(before as never) as Val<Num>));
                running.set(running.add(L.shuffle(incl, last) as never));
                c.set(c.add(L.width));
              },
            );
            lookBack(running);
          });
          k.workgroupBarrier();
          const runBefore = k.let(runs.load(runIndex), 'runBefore') as Val<Num>;
          // Recomputed from the loaded quads here rather than kept live across the barriers.
          if (layout === 'subgroup-blocked') inclusive.push(...blockedInclusive(xs));
          else for (let q = 0; q < vecs; q++) inclusive.push(quadInclusive(xs[q] as Array<Val<Num>>));
          localOffset = (q) => runBefore.add(base[q] as never);
        } else {
          // 'blocked': each invocation's quads in a serial chain, then one workgroup scan.
          let run: Val<Num> | undefined;
          for (let q = 0; q < vecs; q++) {
            const row: Array<Val<Num>> = [];
            for (let c = 0; c < 4; c++) {
              const x = xs[q]?.[c] as Val<Num>;
              run = run === undefined ? x : (k.let(run.add(x as never), `s${q}_${c}`) as Val<Num>);
              row.push(run);
            }
            inclusive.push(row);
          }
          const scanned = workgroupScan(k, run as Val<Num>, wg, subgroups, zero());
          const before = k.let(scanned.exclusive, 'before') as Val<Num>;
          const total = k.let(scanned.total, 'total') as Val<Num>;
          localOffset = () => before;
          k.if(firstSubgroup, () => lookBack(total));
          k.workgroupBarrier();
        }
        const tilePrefix = k.let(fromBits(dtype, shared.load(1)), 'tilePrefix') as Val<Num>;

        // ---- outputs ----
        for (let q = 0; q < vecs; q++) {
          const offset = k.let(tilePrefix.add(localOffset(q) as never), `offset${q}`) as Val<Num>;
          const outs: Array<Val<Num>> = [];
          for (let c = 0; c < 4; c++) {
            if (!exclusive) outs.push(offset.add(inclusive[q]?.[c] as never));
            else if (c > 0) outs.push(offset.add(inclusive[q]?.[c - 1] as never));
            else if ((layout !== 'blocked' && layout !== 'subgroup-blocked') || q === 0) outs.push(offset);
            else outs.push(offset.add(inclusive[q - 1]?.[3] as never));
          }
          if (probe !== 'no-data') storeQuad(k, dtype, dst as never, quadIndex(q), outs, width, n);
        }
      },
    }),
  );
}

/** Inclusive sums over consecutive quads, left to right (one serial chain). */
function blockedInclusive(xs: Array<Array<Val<Num>>>): Array<Array<Val<Num>>> {
  let run: Val<Num> | undefined;
  return xs.map((x) =>
    x.map((v) => {
      run = run === undefined ? v : (run.add(v as never) as Val<Num>);
      return run;
    }),
  );
}

/** Inclusive sums within one quad, left to right: [a, a+b, (a+b)+c, ((a+b)+c)+d]. */
function quadInclusive(x: Array<Val<Num>>): Array<Val<Num>> {
  const out: Array<Val<Num>> = [x[0] as Val<Num>];
  for (let c = 1; c < 4; c++) out.push((out[c - 1] as Val<Num>).add(x[c] as never) as Val<Num>);
  return out;
}

/** The fallback: the sum of tile `t`, read from the input by the look-back's lanes. */
function reduceTile(
  k: KernelBuilder,
  dtype: Num,
  src: { load(i: Val<'u32'>): Val<Num> | Quad },
  t: Val<'u32'>,
  tileQuads: number,
  width: 1 | 4,
  n: Val<'u32'>,
  L: Lanes,
): Val<Num> {
  const acc = k.var(dtype, 0, 'fallback') as Var<Num>;
  const q = k.let(t.mul(tileQuads).add(L.lane), 'fq');
  const end = k.let(t.add(1).mul(tileQuads), 'fend');
  k.while(
    () => q.lt(end),
    () => {
      acc.set(acc.add(quadSum(loadQuad(dtype, src, q, width, n)) as never));
      q.set(q.add(L.width));
    },
  );
  return L.add(acc);
}

/**
 * Records the single-pass scan of the first `n` elements of `src` into `dst`.
 * Clears the tile states, then one dispatch of one workgroup per tile; past one
 * binding, one dispatch per segment (`Device.segments`: each binds one binding per
 * array, not one per segment), its tiles' states after the earlier segments'.
 */
export function recordLookbackScan(device: Device, src: Buffer, dst: Buffer, n: number, exclusive: boolean, tuning: LookbackTuning): void {
  const dtype = src.dtype as Num;
  const tile = lookbackTile(tuning);
  const runs = segmentRuns(device, [src, dst], n);
  const tiles = runs.reduce((sum, run) => sum + Math.ceil(run.n / tile), 0);
  const status = scratch(device, 'scan.status', 'u32', 2 * tiles + 1);
  status.fill(0, { length: 2 * tiles + 1 });
  const subgroups = device.caps.features.has('subgroup');
  let firstTile = 0;
  for (const { views, n: count } of runs) {
    const [from, to] = views as [Buffer, Buffer];
    // Each dispatch counts its tiles from 0.
    if (firstTile > 0) status.fill(0, { length: 1 });
    const width: 1 | 4 = count % 4 === 0 && from.length === count && to.length === count ? 4 : 1;
    const tilesHere = Math.ceil(count / tile);
    dispatchGroups(device, lookbackKernel({ dtype, width, tuning, subgroups, exclusive }), tilesHere, {
      src: from,
      dst: to,
      status,
      n: count,
      tiles: tilesHere,
      firstTile,
      spinLimit: tuning.spinLimit,
    });
    firstTile += tilesHere;
  }
}

/**
 * The longest chain of f32 additions behind one output of the single-pass scan
 * (an upper bound). Within a tile: the layout's serial part, the workgroup scan,
 * the offsets. Across tiles, tile t's prefix sums terms (aggregates, inclusive
 * prefixes, fallback reductions) of disjoint runs of earlier tiles; a round that
 * takes k of them adds at most k roundings on any path (adding an exact zero does
 * not round), and each round takes at least one tile, so by induction tile t's
 * inclusive prefix lies within 3t roundings of its deepest term.
 */
export function lookbackSumDepth(device: Device, n: number, t: LookbackTuning): number {
  // Past one binding each segment may end in a partial tile: at most one more tile a segment.
  const tiles = Math.ceil(n / lookbackTile(t)) + bindingsFor(device, n) - 1;
  const lanes = Math.max(1, device.caps.limits.minSubgroupSize);
  const widest = Math.max(1, device.caps.limits.maxSubgroupSize);
  // Combining invocation totals: subgroup scans, then the Hillis–Steele tree (taken as log2(wg) together).
  const combine = Math.ceil(Math.log2(t.wg));
  // 'subgroup': a quad (3), a lane scan (any order: widest - 1), the run's rows (vecs), the
  // first subgroup's scan of the runs (chunks of `lanes` runs, each chunk widest - 1), the offsets (3).
  const runs = Math.ceil(t.wg / lanes);
  const subgroupLocal = 3 + 2 * (widest - 1) + t.vecs + Math.ceil(runs / lanes) + 3;
  const local = t.layout === 'blocked' ? 4 * t.vecs + combine + 1 : t.layout === 'subgroup' ? subgroupLocal : subgroupLocal + 4 * t.vecs;
  const fallback = Math.ceil((t.wg * t.vecs) / lanes) + 2 + Math.ceil(Math.log2(widest));
  return Math.max(local, fallback) + 3 * tiles + local + 2;
}
