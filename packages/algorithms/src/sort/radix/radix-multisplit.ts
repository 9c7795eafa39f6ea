/**
 * The subgroup formulation of radix sort's passes: 8-bit digits, 4 passes, each a
 * reduce-then-scan pass of three dispatches:
 *   1. count: per-tile digit counts, stored digit-major (digit d of tile t at
 *      d · tiles + t): by default ('atomic') one workgroup atomic add per key into
 *      its subgroup's own histogram, summed per digit; as an option ('ballot'), one
 *      atomic add per run of equal digits in a subgroup, found by the same ballots
 *      as below (measured slower on the H100, skewed keys included);
 *   2. an exclusive scan of those counts, which gives every (digit, tile) its first
 *      output slot in stable order (the global digit offsets are folded in);
 *   3. rank and scatter: the tile is re-read, ranked stably, sorted by digit in
 *      workgroup memory and written out as runs of equal digits, so that the global
 *      writes are coalesced.
 *
 * Ranking is a warp-level multisplit built from subgroup ballots. Subgroup s owns
 * ITEMS · S consecutive keys of the tile (S = subgroup size); item j of lane l is
 * key s · S · ITEMS + j · S + l, so the keys are visited in input order item by item.
 * For each item, 8 ballots (one per digit bit, ANDed or AND-NOTed by the lane's own
 * bit) give the mask of lanes holding the same digit; a key's rank among them is the
 * popcount of the lower lanes. The lowest lane of each digit adds the digit's count
 * to its subgroup's row of 256 counters in workgroup memory with a workgroup
 * atomic add and shuffles the old value to the others (the default 'atomic'
 * ranking; the 'barrier' ranking uses a plain load and store, then a workgroup
 * barrier after each item, because the next item's leader may be another lane and
 * WGSL has no subgroup-scope memory barrier: 5-7% slower on the H100).
 * Afterwards one scan per digit over the subgroups' rows and one workgroup scan over
 * the digits turn the counters into each (subgroup, digit)'s first slot in the
 * locally sorted tile.
 *
 * Pairs: values are loaded beside the keys before the ranking (or, as an option,
 * once the keys are ranked) and staged beside them, so one pass over the sorted tile
 * writes both. Workgroups that a folded grid adds past the
 * last tile leave at once.
 *
 * Correct for any subgroup size the device reports (masks span 32 · ceil(max / 32)
 * lanes), provided subgroups are consecutive runs of local indices, as the rest of
 * the suite assumes. Workgroup memory: one 256-counter row per possible subgroup
 * (wg / minSubgroupSize) plus the tile, so devices with tiny subgroups (the CPU
 * backend's width 1) keep the 4-bit formulation in radix-sort.ts.
 */
import {
  type Buffer,
  type BufferAccess,
  type BufferDType,
  type BufferHandle,
  buffer,
  countOneBits,
  type DeviceCaps,
  defineKernel,
  type KernelBuilder,
  min,
  select,
  u32,
  uniform,
  type Val,
  type Var,
} from '@trident/core';
import { cachedKernel, floorPow2, workgroupScan } from '../../common.ts';
import * as TUNING from './tuning.ts';

const BITS = 8;
const DIGITS = 1 << BITS;
export const MULTISPLIT_PASSES = 32 / BITS;

/**
 * Where pass `p` of the MULTISPLIT_PASSES writes: the output (`out`) on the last pass and every
 * second one back from it, one temporary (`temp()`) on the others. The input is read only by pass 0,
 * so one temporary an array suffices: the passes alternate between it and the output (with two
 * temporaries, key-value pairs of 2^31 took 64 GiB where 48 do).
 */
export function passTarget(p: number, out: Buffer, temp: () => Buffer): Buffer {
  return (MULTISPLIT_PASSES - 1 - p) % 2 === 0 ? out : temp();
}

/** The shape of the multisplit kernels on one device. */
export interface MultisplitShape {
  /** Invocations per workgroup: a power of two, a multiple of the largest subgroup. */
  readonly wg: number;
  /** Keys per invocation; a tile is wg · items keys. */
  readonly items: number;
  /** Counter rows: the most subgroups a workgroup can hold (wg / minSubgroupSize). */
  readonly rows: number;
  /** 32-bit words of a ballot mask that can be non-zero: ceil(maxSubgroupSize / 32). */
  readonly words: number;
  /**
   * How the count step counts: 'ballot' (one workgroup atomic per run of equal digits
   * in a subgroup, found by the ranking's ballots) or 'atomic' (one workgroup atomic
   * per key into its subgroup's own histogram; no ballots, but equal digits in a
   * subgroup contend for one address).
   */
  readonly count: MultisplitCount;
  /**
   * When the scatter step loads its (digit, tile) offsets from the scan: 'early' (at
   * the start, beside the keys) or 'late' (after the ranking, where they are used).
   */
  readonly offsets: 'early' | 'late';
  /**
   * When the scatter step loads values: 'late' (once the keys are ranked, just
   * before staging them) or 'early' (beside the keys, before the ranking's
   * barriers, so the loads overlap; 'items' more registers held through the ranking).
   */
  readonly valueLoads: MultisplitValueLoads;
  /**
   * Where the scatter step stages values: 'separate' (a workgroup array of their own,
   * written beside the keys) or 'shared' (the keys' array, after the keys have been
   * written out: one barrier and a second round of stores more, half the workgroup
   * memory, so larger tiles fit).
   */
  readonly valueStaging: MultisplitValueStaging;
  /**
   * How a pass finds each (digit, tile)'s first output slot: 'onesweep' (one histogram
   * of all four digits up front, then per pass a single dispatch that ranks its tile,
   * looks back over the earlier tiles' published digit counts and scatters:
   * radix-onesweep.ts) or 'reduce-then-scan' (per pass a count dispatch, a scan of
   * the counts and the rank + scatter dispatch). 'onesweep' needs atomics on buffers.
   */
  readonly passes: MultisplitPasses;
  /**
   * How the ranking orders its subgroup's updates of a counter row: 'barrier' (a
   * plain load and store by each run's lowest lane, then a workgroup barrier per
   * item, so the next item's leader, which may be another lane, sees the update) or
   * 'atomic' (a workgroup atomic add by the lowest lane, whose old value the subgroup
   * shuffle then hands to the run: no barrier per item). 'atomic' relies on one
   * subgroup's atomic adds to one counter taking effect in program order: the next
   * item's add comes after the shuffle that consumed this item's result, which holds
   * on hardware that executes a subgroup's lanes together (WGSL's memory model does
   * not state it for different lanes). 'batched' issues the adds of `rankBatch` items
   * back to back before their shuffles (rankBatched), so it relies further on a
   * subgroup's adds taking effect in the order it issues them.
   */
  readonly rank: MultisplitRank;
  /** Items per batch of the 'batched' ranking (see rankBatched). */
  readonly rankBatch: number;
  /**
   * Diagnosis only (bench/h100/onesweep-check.ts), the output is not sorted:
   * 'coalesced-writes' writes each tile's locally sorted keys (and values) back to the
   * tile's own range instead of to their digits' destinations, so the same data moves
   * without the scattered writes; the difference is what the scattering costs.
   */
  readonly probe?: 'coalesced-writes';
}

export type MultisplitCount = 'ballot' | 'atomic';
export type MultisplitValueLoads = 'late' | 'early';
export type MultisplitValueStaging = 'separate' | 'shared';
export type MultisplitPasses = 'onesweep' | 'reduce-then-scan';
export type MultisplitRank = 'barrier' | 'atomic' | 'batched';

/** Optional choices of multisplitShape (benchmarks and tests sweep them). */
export interface MultisplitOptions {
  readonly count?: MultisplitCount;
  readonly offsets?: 'early' | 'late';
  readonly valueLoads?: MultisplitValueLoads;
  readonly valueStaging?: MultisplitValueStaging;
  readonly passes?: MultisplitPasses;
  readonly rank?: MultisplitRank;
  readonly rankBatch?: number;
  readonly probe?: 'coalesced-writes';
}

/** Default keys per invocation (tuning.ts). */
export const MULTISPLIT_ITEMS = TUNING.KEY_ITEMS.value;

/**
 * Default keys per invocation with values, staged through the keys' workgroup array
 * once the keys are out ('shared' staging: a 256-wide tile of 36 keys and values takes
 * 46 KiB; tuning.ts).
 */
export const MULTISPLIT_PAIR_ITEMS = TUNING.PAIR_ITEMS.value;

/**
 * The multisplit shape for `caps`, or undefined when the device has no subgroups or
 * the counter rows would take more than half its workgroup memory at 64 invocations.
 * `items`, `maxWg` and `options` override the defaults (benchmarks and tests sweep
 * them). The count step defaults to 'atomic' (per-key workgroup atomics: faster
 * than the ballot count on random, small and all-equal keys alike on the H100), and
 * values are loaded early, beside the keys (the pairs scatter 1.6x faster), and staged
 * in a workgroup array of their own ('separate'; sortShape asks for 'shared'). The
 * ranking defaults to 'atomic' (see MultisplitShape.rank), the passes to 'onesweep'
 * where the device has atomics on buffers ('atomic' and 'atomic-other'), else
 * 'reduce-then-scan'; sortShape picks what radixSort uses.
 */
export function multisplitShape(
  caps: DeviceCaps,
  items = MULTISPLIT_ITEMS,
  maxWg = 256,
  options: MultisplitOptions = {},
): MultisplitShape | undefined {
  const { minSubgroupSize, maxSubgroupSize, maxComputeWorkgroupStorageSize: storage } = caps.limits;
  if (!caps.features.has('subgroup') || !caps.features.has('workgroup') || !caps.features.has('scatter')) return undefined;
  if (minSubgroupSize < 1 || maxSubgroupSize < minSubgroupSize) return undefined;
  const words = Math.min(4, Math.ceil(maxSubgroupSize / 32));
  if (maxSubgroupSize > 128) return undefined;
  const count = options.count ?? 'atomic';
  const valueLoads = options.valueLoads ?? 'early';
  const valueStaging = options.valueStaging ?? 'separate';
  const lookback = caps.features.has('atomic') && caps.features.has('atomic-other');
  if (options.passes === 'onesweep' && !lookback) return undefined;
  const passes = options.passes ?? (lookback ? 'onesweep' : 'reduce-then-scan');
  const rank = options.rank ?? 'atomic';
  const rankBatch = options.rankBatch ?? items;
  const top = floorPow2(Math.min(maxWg, caps.limits.maxComputeInvocationsPerWorkgroup));
  for (let wg = top; wg >= Math.max(64, ceilToPow2(maxSubgroupSize)); wg /= 2) {
    const rows = Math.max(1, wg / floorPow2(minSubgroupSize));
    const rowBytes = rows * DIGITS * 4;
    // rows + staged keys and values + per-digit destinations + the workgroup scan's array.
    const staged = valueStaging === 'shared' ? 1 : 2;
    const bytes = rowBytes + staged * wg * items * 4 + DIGITS * 4 + wg * 4;
    if (rowBytes <= storage / 2 && bytes <= storage)
      return {
        wg,
        items,
        rows,
        words,
        count,
        offsets: options.offsets ?? 'late',
        valueLoads,
        valueStaging,
        passes,
        rank,
        rankBatch,
        ...(options.probe ? { probe: options.probe } : {}),
      };
  }
  return undefined;
}

/** Items per batch of the batched ranking in radixSort's keys-only and key-value shapes (see sortShape). */
export const KEY_RANK_BATCH = TUNING.KEY_RANK_BATCH.value;
export const PAIR_RANK_BATCH = TUNING.PAIR_RANK_BATCH.value;

/**
 * The shape radixSort uses for `caps`: MULTISPLIT_ITEMS keys per invocation
 * (MULTISPLIT_PAIR_ITEMS with values, staged after the keys in one workgroup array),
 * the batched ranking (batches of KEY_RANK_BATCH / PAIR_RANK_BATCH items),
 * early offsets and the passes of tuning.ts's SORT_PASSES, keys alone or with values.
 */
export function sortShape(caps: DeviceCaps, pairs: boolean): MultisplitShape | undefined {
  const options = { passes: TUNING.SORT_PASSES.value, rank: 'batched', offsets: 'early' } as const;
  return pairs
    ? multisplitShape(caps, MULTISPLIT_PAIR_ITEMS, 256, { ...options, rankBatch: PAIR_RANK_BATCH, valueStaging: 'shared' })
    : multisplitShape(caps, MULTISPLIT_ITEMS, 256, { ...options, rankBatch: KEY_RANK_BATCH });
}

function ceilToPow2(x: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, x)));
}

type U = Val<'u32'>;

/** Words of a ballot that can be non-zero. */
function ballotWords(k: KernelBuilder, predicate: Val<'bool'>, words: number): U[] {
  const b = k.subgroupBallot(predicate);
  return [b.x, b.y, b.z, b.w].slice(0, words);
}

/** Index of the lowest set bit of a non-zero multi-word mask. */
function lowestLane(mask: U[]): U {
  const ctz = (x: U) => countOneBits(x.bitnot().and(x.sub(1)));
  let lane: U = u32(0);
  for (let w = mask.length - 1; w >= 0; w--) {
    const word = mask[w] as U;
    lane = w === mask.length - 1 ? ctz(word).add(32 * w) : select(word.ne(0), ctz(word).add(32 * w), lane);
  }
  return lane;
}

/** The lanes among `lanes` (a mask per word) whose digit is `d` (this lane's own digit), per mask word. */
function matchDigit(k: KernelBuilder, lanes: U[], d: U): Array<Var<'u32'>> {
  const words = lanes.length;
  const match = lanes.map((w, c) => k.let(w, `m${c}`));
  for (let b = 0; b < BITS; b++) {
    const bit = k.let(d.and(1 << b).ne(0), 'bit');
    ballotWords(k, bit, words).forEach((w, c) => {
      const m = match[c] as Var<'u32'>;
      m.set(m.and(select(bit, w, w.bitnot())));
    });
  }
  return match;
}

/** The mask of the lanes below `lane`, per mask word. */
function lanesBelow(k: KernelBuilder, lane: U, words: number): U[] {
  const below: U[] = [];
  for (let w = 0; w < words; w++) {
    const inWord = lane.sub(32 * w);
    below.push(k.let(select(lane.ge(32 * (w + 1)), 0xffffffff, select(lane.lt(32 * w), 0, u32(1).shl(inWord).sub(1))), `below${w}`));
  }
  return below;
}

/** The number of set bits of a multi-word mask, optionally only below this lane (`below`). */
function popcount(mask: U[], below?: U[]): U {
  let sum: U = u32(0);
  mask.forEach((m, c) => {
    sum = sum.add(countOneBits(below ? m.and(below[c] as U) : m));
  });
  return sum;
}

/** The subgroups' counter rows in workgroup memory (atomic for the 'atomic' ranking). */
interface CounterRows {
  load(i: U): U;
  store(i: U, v: U): void;
  atomicAdd(i: U, v: U): U;
}

/** Per item: the key, its digit, its index, and its rank in its subgroup's row. */
interface Ranked {
  readonly index: U[];
  readonly key: U[];
  readonly digit: U[];
  readonly rank: U[];
}

/**
 * Loads the subgroup's keys item by item (under a range hint where `hintRange`), counts
 * them into the subgroup's row of `rows` and returns each key's rank among the equal
 * digits of its subgroup before it (stable). Uniform control flow; ends with a barrier.
 *
 * The last tile's slots past n rank as keys of digit 255 rather than being left out:
 * no ballot of the valid lanes per item and no branch around the run's add (faster:
 * LEDGER.md radix.lastTile).
 * Being the tile's highest indices they sort after its real keys of digit 255, into
 * staged slots past the tile's count that the write loop never reads; being in the
 * last tile, they come before no (digit, tile) whose destination they could move.
 */
function multisplit(
  k: KernelBuilder,
  shape: MultisplitShape,
  keys: KeysIn,
  rows: CounterRows,
  n: U,
  shift: U,
  sgBase: U,
  rowBase: U,
  hintRange: boolean,
): Ranked {
  const S = k.subgroupSize;
  const lane = k.let(k.subgroupInvocation, 'lane');
  const below = lanesBelow(k, lane, shape.words);
  const everyLane = lanesBelow(k, S, shape.words);
  const out: Ranked = { index: [], key: [], digit: [], rank: [] };
  // Every key is loaded before the first barrier, so the loads overlap instead of
  // each waiting behind the previous item's barrier.
  for (let j = 0; j < shape.items; j++) {
    out.index.push(k.let(sgBase.add(S.mul(j)).add(lane), `i${j}`));
    out.key.push(k.var('u32', 0, `k${j}`));
  }
  // All loads first, then the digits: with the digits between them, the loads from an array split
  // over bindings did not overlap (LEDGER.md radix.segments). The subgroup's keys are consecutive,
  // which a range hint can tell.
  const load = () => {
    for (const [j, i] of out.index.entries()) (out.key[j] as Var<'u32'>).set(keys.load(i));
  };
  if (hintRange) k.expectRange(keys, sgBase, sgBase.add(S.mul(shape.items)).sub(1), load);
  else load();
  out.index.forEach((i, j) => {
    out.digit.push(k.let(select(i.lt(n), (out.key[j] as U).shr(shift).and(DIGITS - 1), DIGITS - 1), `d${j}`));
  });
  if (shape.rank === 'batched') {
    rankBatched(k, shape, rows, everyLane, rowBase, below, out);
    return out;
  }
  for (let j = 0; j < shape.items; j++) {
    const d = out.digit[j] as U;
    const match = matchDigit(k, everyLane, d);
    const before = k.let(popcount(match, below), `lower${j}`);
    const slot = k.let(rowBase.add(d), 'slot');
    const old = k.var('u32', 0, 'old');
    k.if(before.eq(0), () => {
      if (shape.rank === 'atomic') old.set(rows.atomicAdd(slot, popcount(match)));
      else {
        old.set(rows.load(slot));
        rows.store(slot, old.add(popcount(match)));
      }
    });
    out.rank.push(k.let(k.subgroupShuffle(old, lowestLane(match)).add(before), `r${j}`));
    if (shape.rank === 'barrier' || j === shape.items - 1) k.barrier();
  }
  return out;
}

/**
 * The 'batched' ranking: per batch of `shape.rankBatch` items, first every item's
 * match mask and rank among the lower lanes (ballots only), then every item's
 * workgroup atomic add by its run's lowest lane, in item order, then every item's
 * shuffle of the old counts. The adds of a batch are issued back to back instead of
 * each waiting for the previous item's shuffle, so their latencies overlap. Like
 * 'atomic', it relies on one subgroup's adds to one counter taking effect in the
 * order the subgroup issues them.
 */
function rankBatched(k: KernelBuilder, shape: MultisplitShape, rows: CounterRows, lanes: U[], rowBase: U, below: U[], out: Ranked): void {
  const batch = Math.max(1, Math.min(shape.rankBatch, shape.items));
  for (let first = 0; first < shape.items; first += batch) {
    const js = Array.from({ length: Math.min(batch, shape.items - first) }, (_, i) => first + i);
    const matched = js.map((j) => {
      const d = out.digit[j] as U;
      const match = matchDigit(k, lanes, d);
      return { d, match, before: k.let(popcount(match, below), `lower${j}`) };
    });
    const olds = matched.map(({ d, match, before }, i) => {
      const old = k.var('u32', 0, `old${js[i]}`);
      k.if(before.eq(0), () => old.set(rows.atomicAdd(rowBase.add(d), popcount(match))));
      return old;
    });
    matched.forEach(({ match, before }, i) => {
      out.rank.push(k.let(k.subgroupShuffle(olds[i] as U, lowestLane(match)).add(before), `r${js[i]}`));
    });
  }
  k.barrier();
}

/**
 * Replaces each digit's per-subgroup counts in `rows` by their exclusive prefix over
 * the subgroups (plus `start(d)` when given) and returns, per digit this invocation
 * owns, the digit's tile total. Invocation lid owns digits lid · P … lid · P + P - 1.
 */
function scanRows(k: KernelBuilder, shape: MultisplitShape, rows: CounterRows, subgroupsInGroup: U, visit: (d: U, total: U) => void): void {
  const per = Math.max(1, DIGITS / shape.wg);
  for (let q = 0; q < per; q++) {
    const d = k.let(k.localIndex.mul(per).add(q), 'dig');
    const run = k.var('u32', 0, 'run');
    k.if(d.lt(DIGITS), () => {
      k.for({ from: 0, to: subgroupsInGroup }, (s) => {
        const at = k.let(inRows(s.mul(DIGITS).add(d), shape.rows), 'at');
        const c = k.let(rows.load(at), 'c');
        rows.store(at, run);
        run.set(run.add(c));
      });
    });
    visit(d, run);
  }
}

/**
 * The first counter of this invocation's subgroup's row: subgroup · 256. Subgroups
 * number below `rows` (wg / the smallest subgroup size); the clamp says so to the
 * WGSL generator, which then drops its bounds checks on the rows (LEDGER.md
 * radix.clampedRows).
 */
function subgroupRow(k: KernelBuilder, rows: number): U {
  return min(k.localIndex.div(k.subgroupSize), rows - 1).mul(DIGITS);
}

/** A counter's index `at`, clamped into the rows (it is there by construction; see subgroupRow). */
function inRows(at: U, rows: number): U {
  return min(at, rows * DIGITS - 1);
}

/**
 * Folded grids (past maxComputeWorkgroupsPerDimension) are rounded up, by up to a
 * whole row of workgroups: the extra ones leave at once (a uniform branch, so the
 * barriers after it stay in uniform control flow) instead of ranking empty tiles.
 */
function leaveIfPast(k: KernelBuilder, t: U, tiles: U): void {
  k.if(t.ge(tiles), () => k.return());
}

/**
 * Pass step 1: counts[d * tiles + t] = keys of tile t with digit d, from a workgroup-atomic
 * histogram. A dispatch counts tiles [firstTile, endTile), its keys from element 0 of
 * `keys` on (one dispatch per segment past one binding, recordMultisplitPasses).
 */
export function countKernel(shape: MultisplitShape) {
  const { wg, items } = shape;
  return cachedKernel(`radix8-count:${wg}:${items}:${shape.words}:${shape.count}:${shape.rows}`, () =>
    defineKernel({
      name: 'radix8_count',
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        counts: buffer('u32', 'write'),
        n: uniform('u32'),
        shift: uniform('u32'),
        tiles: uniform('u32'),
        firstTile: uniform('u32'),
        endTile: uniform('u32'),
      },
      body: ({ keys, counts, n, shift, tiles, firstTile, endTile }, k) => {
        const local = k.let(k.workgroupIndex, 'tl');
        const t = k.let(local.add(firstTile), 't');
        leaveIfPast(k, t, endTile);
        const tileBase = k.let(local.mul(wg * items), 'tileBase');
        // Order does not matter here: coalesced rows of wg keys, all loaded before any atomic.
        const at = Array.from({ length: items }, (_, j) => k.let(tileBase.add(k.localIndex.add(j * wg)), `i${j}`));
        const valids = at.map((i, j) => k.let(i.lt(n), `ok${j}`));
        const digits = at.map((_, j) => k.var('u32', 0, `d${j}`));
        // The tile's keys are consecutive: an array split over bindings picks its binding once.
        k.expectRange(keys, tileBase, tileBase.add(wg * items - 1), () => {
          for (const [j, i] of at.entries())
            (digits[j] as Var<'u32'>).set(
              keys
                .load(i)
                .shr(shift)
                .and(DIGITS - 1),
            );
        });
        if (shape.count === 'ballot') {
          const hist = k.workgroupArray('u32', DIGITS, { atomic: true });
          const below = lanesBelow(k, k.let(k.subgroupInvocation, 'lane'), shape.words);
          for (let j = 0; j < items; j++) {
            const valid = valids[j] as Val<'bool'>;
            const d = digits[j] as U;
            const match = matchDigit(k, ballotWords(k, valid, shape.words), d);
            // The lowest lane of each run of equal digits adds the run's length.
            k.if(valid.and(popcount(match, below).eq(0)), () => void hist.atomicAdd(d, popcount(match)));
          }
          k.barrier();
          k.for({ from: k.localIndex, to: DIGITS, step: wg }, (d) => counts.store(d.mul(tiles).add(t), hist.load(d)));
          return;
        }
        // One histogram per subgroup, copy-major (subgroup s, digit d at s · 256 + d, so a
        // subgroup's random digits spread over the banks), summed per digit at the end.
        const hist = k.workgroupArray('u32', shape.rows * DIGITS, { atomic: true });
        const rowBase = k.let(subgroupRow(k, shape.rows), 'rowBase');
        for (let j = 0; j < items; j++) {
          k.if(valids[j] as Val<'bool'>, () => void hist.atomicAdd(rowBase.add(digits[j] as U), 1));
        }
        k.barrier();
        k.for({ from: k.localIndex, to: DIGITS, step: wg }, (d) => {
          const total = k.var('u32', 0, 'total');
          for (let r = 0; r < shape.rows; r++) total.set(total.add(hist.load(inRows(d.add(r * DIGITS), shape.rows))));
          counts.store(d.mul(tiles).add(t), total);
        });
      },
    }),
  );
}

/** The keys a pass reads: a buffer, so that loads of consecutive keys can carry a range hint. */
type KeysIn = BufferHandle<'u32', BufferAccess>;

/** The handles a rank + scatter body reads and writes. */
export interface ScatterIO {
  readonly keys: KeysIn;
  /** Absent: the values' own scatter, which writes no keys. */
  readonly keysOut?: BufferHandle<'u32', BufferAccess>;
  readonly vals: BufferHandle<'u32' | 'i32' | 'f32', BufferAccess>;
  readonly valsOut: BufferHandle<'u32' | 'i32' | 'f32', BufferAccess>;
  readonly n: U;
  readonly shift: U;
  /** This dispatch's tiles: [firstTile, endTile) (firstTile absent: 0), its data from element 0 on. */
  readonly firstTile?: U;
  readonly endTile: U;
}

/**
 * Where a tile's keys of one digit go. `totals` is called once the tile's digit
 * totals are known (per digit this invocation owns, inside a branch on d < 256):
 * the place to publish them. `base` returns the global output index of the tile's
 * first key of digit d minus `start`, that digit's first slot in the locally sorted
 * tile (the same branch; called after `totals` for every digit).
 */
export interface ScatterDestinations {
  totals?(t: U, d: U, total: U): void;
  /**
   * A value `base` needs that does not depend on the ranking (the scan's offset of
   * (digit, tile)): loaded at the start, before the tile's keys, so that its latency
   * overlaps theirs instead of stalling the workgroup after its barriers. `base`
   * receives it as `early`.
   */
  early?(t: U, d: U): U;
  base(t: U, d: U, total: U, start: U, early: U | undefined): U;
}

/**
 * Rank the tile, sort it by digit in workgroup memory, write runs of equal digits
 * to `destinations.base(d) + local slot`. Shared by the reduce-then-scan scatter and
 * the onesweep pass.
 */
export function rankAndScatter(
  k: KernelBuilder,
  shape: MultisplitShape,
  valueType: BufferDType | undefined,
  io: ScatterIO,
  destinations: ScatterDestinations,
): void {
  const { wg, items } = shape;
  const tile = wg * items;
  const { keys, keysOut, vals, valsOut, n, shift, firstTile, endTile } = io;
  const rows: CounterRows =
    shape.rank !== 'barrier'
      ? k.workgroupArray('u32', shape.rows * DIGITS, { atomic: true })
      : Object.assign(k.workgroupArray('u32', shape.rows * DIGITS), {
          atomicAdd: (): U => {
            throw new Error('internal: atomicAdd on the barrier ranking rows');
          },
        });
  const stagedKeys = k.workgroupArray('u32', tile);
  // Values travel as bits: beside their keys, or through the keys' array once the keys are out.
  const sharedStaging = valueType !== undefined && shape.valueStaging === 'shared';
  const stagedVals = valueType && !sharedStaging ? k.workgroupArray('u32', tile) : undefined;
  // Output index of the tile's local slot p with digit d: dest[d] + p.
  const dest = k.workgroupArray('u32', DIGITS);
  const lid = k.localIndex;
  // `t` numbers the tile among all the pass's tiles (offsets, states), `local` places its data.
  const local = k.let(k.workgroupIndex, 'tl');
  const t = firstTile ? k.let(local.add(firstTile), 't') : local;
  leaveIfPast(k, t, endTile);
  const per = Math.max(1, DIGITS / wg);
  const digitOf = (q: number) => k.let(lid.mul(per).add(q), 'dig');
  // Invocations past the last digit (workgroups wider than 256) load nothing useful: their digit's
  // index lies past the offsets, where loads read 0.
  const prefetched =
    destinations.early && shape.offsets === 'early'
      ? Array.from({ length: per }, (_, q) => k.let((destinations.early as (t: U, d: U) => U)(t, digitOf(q)), `early${q}`))
      : undefined;
  const S = k.let(k.subgroupSize, 'S');
  const sg = k.let(lid.div(S), 'sg');
  const tileBase = k.let(local.mul(tile), 'tileBase');
  const sgBase = k.let(tileBase.add(sg.mul(S).mul(items)), 'sgBase');
  const rowBase = k.let(subgroupRow(k, shape.rows), 'rowBase');
  // Early value loads: item j of this lane, as multisplit numbers the keys.
  const early: U[] = [];
  if (valueType && shape.valueLoads === 'early') {
    const lane = k.let(k.subgroupInvocation, 'vlane');
    for (let j = 0; j < items; j++) {
      const v = vals.load(sgBase.add(S.mul(j)).add(lane));
      early.push(k.let(valueType === 'u32' ? (v as U) : (v as Val<'i32' | 'f32'>).bitcast('u32'), `v${j}`));
    }
  }
  // Range hints on the keys alone: with values, the copies of the loads per binding cost more than they save.
  const r = multisplit(k, shape, keys, rows, n, shift, sgBase, rowBase, valueType === undefined);
  const groups = k.let(u32(wg).add(S).sub(1).div(S), 'groups');
  // Digit totals of this invocation's digits, then their exclusive scan over the tile.
  const totals: U[] = [];
  let sum: U = u32(0);
  scanRows(k, shape, rows, groups, (_d, total) => {
    const v = k.let(total, 'tot');
    totals.push(v);
    sum = sum.add(v);
  });
  const { totals: publish } = destinations;
  if (publish) {
    for (let q = 0; q < per; q++) {
      const d = digitOf(q);
      k.if(d.lt(DIGITS), () => publish(t, d, totals[q] as U));
    }
  }
  const mine = k.let(sum, 'mine');
  const scan = workgroupScan(k, mine, wg, true, u32(0));
  const start = k.let(scan.exclusive, 'start');
  for (let q = 0; q < per; q++) {
    const d = digitOf(q);
    k.if(d.lt(DIGITS), () => {
      const early = prefetched?.[q] ?? (destinations.early ? destinations.early(t, d) : undefined);
      dest.store(d, destinations.base(t, d, totals[q] as U, start, early));
      k.for({ from: 0, to: groups }, (s) => {
        const at = k.let(inRows(s.mul(DIGITS).add(d), shape.rows), 'at');
        rows.store(at, rows.load(at).add(start));
      });
    });
    start.set(start.add(totals[q] as U));
  }
  k.barrier();
  const valueBits = (j: number): U => {
    if (early.length > 0) return early[j] as U;
    const v = vals.load(r.index[j] as U);
    return valueType === 'u32' ? (v as U) : (v as Val<'i32' | 'f32'>).bitcast('u32');
  };
  const slots: U[] = [];
  for (let j = 0; j < items; j++) {
    // A slot is below the tile by construction: the clamp only shows the WGSL generator so.
    const slot = k.let(min(rows.load(rowBase.add(r.digit[j] as U)).add(r.rank[j] as U), tile - 1), `slot${j}`);
    slots.push(slot);
    // The last tile's slots past n too (see multisplit): their staged slots lie past its count.
    stagedKeys.store(slot, r.key[j] as U);
    if (stagedVals) stagedVals.store(slot, valueBits(j));
  }
  k.barrier();
  const inTile = k.let(select(tileBase.lt(n), min(n.sub(tileBase), tile), 0), 'inTile');
  // Output indices kept for the values' round when values are staged after the keys.
  const outputs: Array<Var<'u32'>> = [];
  for (let q = 0; q < items; q++) {
    const p = k.let(lid.add(q * wg), `p${q}`);
    const kept = sharedStaging ? k.var('u32', 0, `at${q}`) : undefined;
    if (kept) outputs.push(kept);
    k.if(p.lt(inTile), () => {
      const key = k.let(stagedKeys.load(p), 'key');
      const at =
        shape.probe === 'coalesced-writes' ? k.let(tileBase.add(p), 'at') : k.let(dest.load(key.shr(shift).and(DIGITS - 1)).add(p), 'at');
      keysOut?.store(at, key);
      if (stagedVals) writeValue(stagedVals.load(p), at);
      kept?.set(at);
    });
  }
  if (sharedStaging) {
    // Every key has been read out of the staging array before values overwrite it.
    k.barrier();
    for (let j = 0; j < items; j++) stagedKeys.store(slots[j] as U, valueBits(j));
    k.barrier();
    for (let q = 0; q < items; q++) {
      const p = k.let(lid.add(q * wg), `vp${q}`);
      k.if(p.lt(inTile), () => writeValue(stagedKeys.load(p), outputs[q] as U));
    }
  }

  function writeValue(bits: U, at: U): void {
    valsOut.store(at, (valueType === 'u32' ? bits : bits.bitcast(valueType as 'i32' | 'f32')) as never);
  }
}

/** Pass step 3: rank the tile, sort it by digit in workgroup memory, write runs of equal digits. */
export function scatterKernel(shape: MultisplitShape, valueType: BufferDType | undefined) {
  const { wg, items } = shape;
  return cachedKernel(
    `radix8-scatter:${wg}:${items}:${shape.rows}:${shape.words}:${shape.valueLoads}:${shape.valueStaging}:${shape.rank}:${shape.rankBatch}:${shape.offsets}:${valueType ?? 'none'}:${shape.probe ?? ''}`,
    () =>
      defineKernel({
        name: `radix8_scatter${valueType ? `_pairs_${valueType}` : ''}`,
        workgroupSize: wg,
        params: {
          keys: buffer('u32', 'read'),
          keysOut: buffer('u32', 'write'),
          vals: buffer(valueType ?? 'u32', 'read'),
          valsOut: buffer(valueType ?? 'u32', 'write'),
          offsets: buffer('u32', 'read'),
          n: uniform('u32'),
          shift: uniform('u32'),
          tiles: uniform('u32'),
          firstTile: uniform('u32'),
          endTile: uniform('u32'),
        },
        body: ({ keys, keysOut, vals, valsOut, offsets, n, shift, tiles, firstTile, endTile }, k) => {
          const io = { keys, keysOut, vals, valsOut, n, shift, firstTile, endTile };
          rankAndScatter(k, shape, valueType, io, offsetsFrom(offsets, tiles));
        },
      }),
  );
}

/**
 * Pass step 3 for the values alone: the tile ranked as scatterKernel ranks it (the same
 * slots), its values written and its keys not, so that the kernel binds no keys output.
 * With scatterKernel on the keys alone it splits a pairs pass whose four arrays span more
 * bindings than one kernel may have (recordMultisplitPasses).
 */
export function valueScatterKernel(shape: MultisplitShape, valueType: BufferDType) {
  const { wg, items } = shape;
  return cachedKernel(
    `radix8-scatter-values:${wg}:${items}:${shape.rows}:${shape.words}:${shape.valueLoads}:${shape.valueStaging}:${shape.rank}:${shape.rankBatch}:${shape.offsets}:${valueType}`,
    () =>
      defineKernel({
        name: `radix8_scatter_values_${valueType}`,
        workgroupSize: wg,
        params: {
          keys: buffer('u32', 'read'),
          vals: buffer(valueType, 'read'),
          valsOut: buffer(valueType, 'write'),
          offsets: buffer('u32', 'read'),
          n: uniform('u32'),
          shift: uniform('u32'),
          tiles: uniform('u32'),
          firstTile: uniform('u32'),
          endTile: uniform('u32'),
        },
        body: ({ keys, vals, valsOut, offsets, n, shift, tiles, firstTile, endTile }, k) => {
          rankAndScatter(k, shape, valueType, { keys, vals, valsOut, n, shift, firstTile, endTile }, offsetsFrom(offsets, tiles));
        },
      }),
  );
}

/** Each (digit, tile)'s first slot from the scanned counts (digit-major), less the digit's start in the tile. */
function offsetsFrom(offsets: { load(i: U): U }, tiles: U): ScatterDestinations {
  return {
    early: (t, d) => offsets.load(d.mul(tiles).add(t)),
    base: (_t, _d, _total, start, early) => (early as U).sub(start),
  };
}
