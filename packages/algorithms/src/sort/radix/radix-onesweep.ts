/**
 * Onesweep passes of the 8-bit multisplit radix sort (after Adinets & Merrill,
 * "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs", 2022): one pass
 * over the keys per digit instead of two.
 *
 *   1. Up front, once per sort: one read of all keys counts all four digits
 *      (workgroup-atomic histograms, one global atomic add per counter and
 *      workgroup), then one small dispatch turns the four 256-bin histograms into
 *      each digit's first output index per pass (exclusive scans).
 *   2. Per pass, one dispatch: each workgroup ranks its tile (the multisplit of
 *      radix-multisplit.ts), publishes its per-digit counts, looks back over the
 *      earlier tiles' published counts (a chained scan with decoupled look-back,
 *      one invocation per digit) to find where its keys of each digit start, and
 *      scatters the locally sorted tile.
 *
 * Publication (as in scan-lookback.ts): WGSL atomics are relaxed, so a tile's state
 * for digit d is one u32 word holding a 2-bit flag (not ready / aggregate: this
 * tile's count / inclusive: the count of this and every earlier tile) and a 30-bit
 * value; hence n < 2^30 (recordMultisplitPasses keeps the reduce-then-scan passes
 * for larger n).
 *
 * Forward progress: WebGPU promises none between workgroups. After `SPIN_LIMIT`
 * reads without progress on the nearest predecessor, the invocation counts its
 * digit in that predecessor's tile from the keys itself and goes on to the one
 * before, so the look-back ends even if no other workgroup ever runs (the cost is
 * bounded by re-reading the tiles before this one). `forceFallback` (tests) never
 * trusts a published state.
 *
 * The look-back loop's condition comes from atomic loads, so it holds no barrier;
 * its results reach the workgroup through workgroup memory and the scatter's
 * barriers at top level.
 */
import { type Buffer, type BufferDType, buffer, type Device, defineKernel, select, u32, uniform } from '@trident/core';
import { cachedKernel, dispatchGroups, scratch, strideWorkgroups, workgroupScan } from '../../common.ts';
import { MULTISPLIT_PASSES, type MultisplitShape, passTarget, rankAndScatter } from './radix-multisplit.ts';
import * as TUNING from './tuning.ts';

const BITS = 8;
const DIGITS = 1 << BITS;
/** Largest n the 30-bit published counts hold. */
export const ONESWEEP_MAX_N = 2 ** 30 - 1;

const NOT_READY = 0;
const AGGREGATE = 1;
const INCLUSIVE = 2;

/**
 * Look-back reads without progress before the fallback counts the predecessor's
 * tile itself: large enough that a GPU never falls back while predecessors run (tuning.ts).
 */
export const ONESWEEP_SPIN_LIMIT = TUNING.ONESWEEP_SPIN_LIMIT.value;

/**
 * Predecessor tiles whose states one look-back round loads at once (independent
 * loads; one invocation per digit walks back; tuning.ts).
 */
export const ONESWEEP_WINDOW = TUNING.ONESWEEP_WINDOW.value;

/** Keys per invocation of the up-front histogram. */
const HIST_ITEMS = 16;

/** Up-front histogram: hist[p · 256 + d] += keys with digit d in pass p. */
function histogramKernel(wg: number, rows: number, storage: number) {
  // Workgroup copies of the 4 × 256 counters: one per subgroup where memory allows, fewer otherwise.
  const copies = Math.max(1, Math.min(rows, Math.floor(storage / 2 / (MULTISPLIT_PASSES * DIGITS * 4))));
  return cachedKernel(`radix8-histogram:${wg}:${copies}`, () =>
    defineKernel({
      name: 'radix8_histogram',
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        hist: buffer('u32', 'atomic'),
        n: uniform('u32'),
        chunks: uniform('u32'),
        groups: uniform('u32'),
      },
      body: ({ keys, hist, n, chunks, groups }, k) => {
        const counters = MULTISPLIT_PASSES * DIGITS;
        const local = k.workgroupArray('u32', copies * counters, { atomic: true });
        const g = k.let(k.workgroupIndex, 'g');
        // Workgroups a folded grid adds past `groups` would repeat others' chunks.
        k.if(g.ge(groups), () => k.return());
        const base = k.let(k.localIndex.div(k.subgroupSize).rem(copies).mul(counters), 'copyBase');
        k.for({ from: g, to: chunks, step: groups }, (c) => {
          const first = k.let(c.mul(wg * HIST_ITEMS).add(k.localIndex), 'first');
          const keysIn = [];
          for (let j = 0; j < HIST_ITEMS; j++) {
            const i = k.let(first.add(j * wg), `i${j}`);
            keysIn.push({ ok: k.let(i.lt(n), `ok${j}`), key: k.let(keys.load(i), `k${j}`) });
          }
          for (const { ok, key } of keysIn) {
            k.if(ok, () => {
              for (let p = 0; p < MULTISPLIT_PASSES; p++) {
                local.atomicAdd(
                  base.add(
                    key
                      .shr(p * BITS)
                      .and(DIGITS - 1)
                      .add(p * DIGITS),
                  ),
                  1,
                );
              }
            });
          }
        });
        k.barrier();
        k.for({ from: k.localIndex, to: counters, step: wg }, (x) => {
          const total = k.var('u32', 0, 'total');
          for (let c = 0; c < copies; c++) total.set(total.add(local.load(x.add(c * counters))));
          k.if(total.gt(0), () => void hist.atomicAdd(x, total));
        });
      },
    }),
  );
}

/** starts[p · 256 + d] = keys whose pass-p digit is below d (one workgroup per pass). */
function digitStartsKernel(wg: number) {
  return cachedKernel(`radix8-digit-starts:${wg}`, () =>
    defineKernel({
      name: 'radix8_digit_starts',
      workgroupSize: wg,
      params: { hist: buffer('u32', 'read'), starts: buffer('u32', 'write') },
      body: ({ hist, starts }, k) => {
        const p = k.let(k.workgroupIndex, 'p');
        const per = Math.max(1, DIGITS / wg);
        const counts = [];
        let sum = u32(0);
        for (let q = 0; q < per; q++) {
          const d = k.let(k.localIndex.mul(per).add(q), `d${q}`);
          const c = k.let(select(d.lt(DIGITS), hist.load(p.mul(DIGITS).add(d)), 0), `c${q}`);
          counts.push({ d, c });
          sum = sum.add(c);
        }
        const run = k.let(workgroupScan(k, sum, wg, true, u32(0)).exclusive, 'run');
        for (const { d, c } of counts) {
          k.if(d.lt(DIGITS).and(p.lt(MULTISPLIT_PASSES)), () => starts.store(p.mul(DIGITS).add(d), run));
          run.set(run.add(c));
        }
      },
    }),
  );
}

/** One onesweep pass: rank, publish, look back, scatter. */
export function onesweepKernel(shape: MultisplitShape, valueType: BufferDType | undefined, window = ONESWEEP_WINDOW) {
  const { wg, items } = shape;
  const tile = wg * items;
  const key = `radix8-onesweep:${window}:${wg}:${items}:${shape.rows}:${shape.words}:${shape.valueLoads}:${shape.rank}:${shape.rankBatch}:${valueType ?? 'none'}:${shape.probe ?? ''}`;
  return cachedKernel(key, () =>
    defineKernel({
      name: `radix8_onesweep${valueType ? `_pairs_${valueType}` : ''}`,
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        keysOut: buffer('u32', 'write'),
        vals: buffer(valueType ?? 'u32', 'read'),
        valsOut: buffer(valueType ?? 'u32', 'write'),
        // Tile t's state of digit d at t · 256 + d: the count << 2 | flag.
        status: buffer('u32', 'atomic'),
        starts: buffer('u32', 'read'),
        n: uniform('u32'),
        shift: uniform('u32'),
        tiles: uniform('u32'),
        spinLimit: uniform('u32'),
        forceFallback: uniform('u32'),
      },
      body: ({ keys, keysOut, vals, valsOut, status, starts, n, shift, tiles, spinLimit, forceFallback }, k) => {
        /** Keys of digit d in tile p, counted from the input (the fallback). */
        const countDigit = (p: ReturnType<typeof u32>, d: ReturnType<typeof u32>) => {
          const c = k.var('u32', 0, 'fallbackCount');
          const end = k.let(p.add(1).mul(tile), 'fallbackEnd');
          k.for({ from: p.mul(tile), to: select(end.lt(n), end, n) }, (i) => {
            c.set(
              c.add(
                select(
                  keys
                    .load(i)
                    .shr(shift)
                    .and(DIGITS - 1)
                    .eq(d),
                  u32(1),
                  u32(0),
                ),
              ),
            );
          });
          return c;
        };
        rankAndScatter(
          k,
          shape,
          valueType,
          { keys, keysOut, vals, valsOut, n, shift, endTile: tiles },
          {
            totals: (t, d, total) => {
              // Tile 0's count is already inclusive.
              status.store(t.mul(DIGITS).add(d), total.shl(2).or(select(t.eq(0), u32(INCLUSIVE), u32(AGGREGATE))));
            },
            base: (t, d, total, start) => {
              // The sum of digit d's counts over tiles [0, look) is still to be added.
              const prefix = k.var('u32', 0, 'prefix');
              const look = k.var('u32', t, 'look');
              const stalls = k.var('u32', 0, 'stalls');
              k.while(
                () => look.gt(0),
                () => {
                  // Tiles look - 1 … look - window, loaded at once (independent loads), then
                  // taken in order while ready: aggregates add up, an inclusive count ends
                  // the look-back; tiles before tile 0 read as an inclusive zero.
                  const active = k.var('bool', true, 'active');
                  const reached = k.var('bool', false, 'reached');
                  const taken = k.var('u32', 0, 'taken');
                  const states = [];
                  for (let i = 0; i < window; i++) {
                    const inRange = k.let(look.gt(i), `in${i}`);
                    const at = k.let(
                      select(inRange, look.sub(i + 1), u32(0))
                        .mul(DIGITS)
                        .add(d),
                      `at${i}`,
                    );
                    states.push({ inRange, w: k.let(status.load(at), `state${i}`) });
                  }
                  for (const { inRange, w } of states) {
                    const flag = k.let(select(inRange, select(forceFallback.eq(0), w.and(3), u32(NOT_READY)), u32(INCLUSIVE)), 'flag');
                    const take = k.let(active.and(flag.ne(NOT_READY)), 'take');
                    prefix.set(prefix.add(select(take.and(inRange), w.shr(2), u32(0))));
                    taken.set(taken.add(select(take, u32(1), u32(0))));
                    reached.set(reached.or(take.and(flag.eq(INCLUSIVE))));
                    active.set(take.and(flag.ne(INCLUSIVE)));
                  }
                  look.set(select(reached, u32(0), look.sub(taken)));
                  stalls.set(select(taken.eq(0), stalls.add(1), u32(0)));
                  k.if(look.gt(0).and(stalls.gt(spinLimit).or(forceFallback.ne(0))), () => {
                    prefix.set(prefix.add(countDigit(look.sub(1), d)));
                    look.set(look.sub(1));
                    stalls.set(0);
                  });
                },
              );
              k.if(t.gt(0), () => status.store(t.mul(DIGITS).add(d), prefix.add(total).shl(2).or(INCLUSIVE)));
              return starts
                .load(shift.mul(DIGITS / BITS).add(d))
                .add(prefix)
                .sub(start);
            },
          },
        );
      },
    }),
  );
}

/** Options of the onesweep passes (tests). */
export interface OnesweepOptions {
  /** Never trust a published state: every predecessor's count comes from the fallback. */
  readonly forceFallback?: boolean;
  /** Predecessor states loaded per look-back round (default ONESWEEP_WINDOW). */
  readonly window?: number;
}

/**
 * Records the up-front histogram of `src`'s four digits and their per-pass digit
 * starts; returns the starts buffer (a temporary).
 */
export function recordOnesweepHistogram(device: Device, shape: MultisplitShape, src: Buffer, n: number): Buffer {
  const { wg } = shape;
  const counters = MULTISPLIT_PASSES * DIGITS;
  const hist = scratch(device, 'radix8.hist', 'u32', counters);
  const starts = scratch(device, 'radix8.starts', 'u32', counters);
  hist.fill(0, { length: counters });
  const chunks = Math.ceil(n / (wg * HIST_ITEMS));
  const groups = strideWorkgroups(device.caps, n, wg, HIST_ITEMS, 4);
  const storage = device.caps.limits.maxComputeWorkgroupStorageSize;
  dispatchGroups(device, histogramKernel(wg, shape.rows, storage), groups, { keys: src, hist, n, chunks, groups });
  dispatchGroups(device, digitStartsKernel(wg), MULTISPLIT_PASSES, { hist, starts });
  return starts;
}

/** Records onesweep pass `pass` (digit bits 8·pass …) from keysIn (valsIn) to keysOut (valsOut). */
export function recordOnesweepPass(
  device: Device,
  shape: MultisplitShape,
  starts: Buffer,
  io: { keysIn: Buffer; keysOut: Buffer; valsIn?: Buffer | undefined; valsOut?: Buffer | undefined },
  n: number,
  pass: number,
  options: OnesweepOptions = {},
): void {
  const tiles = Math.ceil(n / (shape.wg * shape.items));
  const status = scratch(device, 'radix8.status', 'u32', tiles * DIGITS);
  status.fill(0, { length: tiles * DIGITS });
  dispatchGroups(device, onesweepKernel(shape, io.valsIn?.dtype, options.window), tiles, {
    keys: io.keysIn,
    keysOut: io.keysOut,
    vals: io.valsIn ?? scratch(device, 'radix8.dummy', 'u32', 1),
    valsOut: io.valsOut ?? scratch(device, 'radix8.dummyOut', 'u32', 1),
    status,
    starts,
    n,
    shift: pass * BITS,
    tiles,
    spinLimit: ONESWEEP_SPIN_LIMIT,
    forceFallback: options.forceFallback ? 1 : 0,
  });
}

/**
 * Records the up-front histogram and the 4 onesweep passes of u32 keys `src` (and
 * values `vsrc`) into `keysOut` (and `valuesOut`); 1 <= n <= ONESWEEP_MAX_N.
 */
export function recordOnesweepPasses(
  device: Device,
  shape: MultisplitShape,
  src: Buffer,
  vsrc: Buffer | undefined,
  keysOut: Buffer,
  valuesOut: Buffer | undefined,
  n: number,
  options: OnesweepOptions = {},
): void {
  const starts = recordOnesweepHistogram(device, shape, src, n);
  let keysIn = src;
  let valsIn = vsrc;
  for (let p = 0; p < MULTISPLIT_PASSES; p++) {
    const dst = passTarget(p, keysOut, () => scratch(device, 'radix8.k', 'u32', n));
    const vdst = vsrc ? passTarget(p, valuesOut as Buffer, () => scratch(device, 'radix8.v', vsrc.dtype, n)) : undefined;
    recordOnesweepPass(device, shape, starts, { keysIn, keysOut: dst, valsIn, valsOut: vdst }, n, p, options);
    keysIn = dst;
    valsIn = vdst;
  }
}
