/**
 * Radix sort for gather-only devices (WebGL2 fragment passes): stable LSD over
 * eight 4-bit digits in which every kernel writes only its own element (or texel)
 * and never reads what it writes: each output finds its source instead of each
 * key being scattered. (Scattering by points measured 40-60x slower than a gather
 * pass on SwiftShader WebGL2: every point is a primitive of its own; LEDGER.md
 * radix.gatherNotPoints.)
 *
 * Keys are cut into blocks of BLOCK = 16 (four texels) and blocks into superblocks
 * of SUPER = 16 blocks (256 keys). Per digit pass:
 *   1. block:   per block, the digits' exclusive offsets inside the block as 16
 *               8-bit counters in one vec4 (E), and the block's stable order by digit
 *               as 16 4-bit source positions (Q.xy; Q.z = the block's key count);
 *   2. prefix:  per block, the digit counts of the earlier blocks of its superblock
 *               (P, 16 8-bit counters: at most 15 · 16 = 240);
 *   3. counts:  C[d · ns + s] = keys of digit d in superblock s (digit-major, so
 *               that one scan orders by digit, then superblock);
 *   4. scan:    I = inclusive scan of C (scan-gather.ts);
 *   5. samples: the entry of I holding output 64 · q, for every q;
 *   6. gather:  one invocation per output texel: its first output finds its entry
 *               (d, s) of I between two samples, the block of s by a binary search
 *               of P over 16 blocks, and its key by E and Q; the next outputs step
 *               through that block, the next blocks and the next entries. Keys (and
 *               values) are read at their source positions and written as one texel;
 *               where keys and values together would take more bindings than a kernel
 *               may have, two dispatches move them apart, each finding the sources.
 * i32 / f32 keys are mapped to order keys first and back after (radix-sort.ts).
 *
 * Work: O(n) per pass: about 0.25 + 0.5 texel reads per key in the block and
 * prefix passes, 5-8 in the output pass (a few hundred operations per output texel). Measured on SwiftShader WebGL2 it is 3-5x slower
 * than merge sort by merge path (sort.ts has the figures), so `sort` does not
 * choose it; `radixSort` runs it where there are no workgroups.
 */
import {
  type Buffer,
  type BufferDType,
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
import { bindingsOf, cachedKernel, gatherSize, lowerBound, scratch } from '../../common.ts';
import { recordGatherBlockScan } from '../../scan/scan-gather.ts';

const BITS = 4;
const DIGITS = 1 << BITS;
const PASSES = 32 / BITS;
/** Keys per block (four texels); a block's stable order fits 16 4-bit positions. */
const BLOCK = 16;
/** Blocks per superblock: the prefix counters (at most 15 · 16) fit 8 bits. */
const SUPER = 16;
/** Outputs per sample (a multiple of 4: one output texel never straddles two samples). */
const STRIDE = 64;

type V4 = Val<'vec4<u32>'>;
type Loader<T extends 'u32' | 'vec4<u32>'> = { load(i: Val<'u32'>): Val<T> };
type Storer<T extends 'u32' | 'vec4<u32>'> = { store(i: Val<'u32'>, v: Val<T>): void };

/** Component `w` (dynamic, 0-3) of `v`, by selects. */
function component(v: V4, w: Val<'u32'>): Val<'u32'> {
  return select(w.lt(2), select(w.eq(0), v.x, v.y), select(w.eq(2), v.z, v.w));
}

/** The 8-bit counter of digit d in a packed vec4 (digit d is byte d & 3 of word d >> 2). */
function byteOf(v: V4, d: Val<'u32'>): Val<'u32'> {
  return component(v, d.shr(2)).shr(d.and(3).mul(8)).and(0xff);
}

/** 1 in the 8-bit counter of digit d. */
function increment(d: Val<'u32'>): V4 {
  const one = u32(1).shl(d.and(3).mul(8));
  const w = d.shr(2);
  return vec('u32', select(w.eq(0), one, 0), select(w.eq(1), one, 0), select(w.eq(2), one, 0), select(w.eq(3), one, 0));
}

/**
 * Exclusive prefix over digits of packed counts whose total is at most 255:
 * within a word, x · 0x01010101 holds the inclusive byte prefix (no carries), and
 * shifted one byte up the exclusive one; each word adds the earlier words' totals.
 */
function exclusiveDigits(k: KernelBuilder, h: V4): V4 {
  const spread = 0x01010101;
  const inc = [h.x, h.y, h.z, h.w].map((x, w) => k.let(x.mul(spread), `inc${w}`));
  const total = inc.map((x) => x.shr(24));
  const carry1 = k.let(total[0] as Val<'u32'>, 'carry1');
  const carry2 = k.let(carry1.add(total[1] as Val<'u32'>), 'carry2');
  const carry3 = k.let(carry2.add(total[2] as Val<'u32'>), 'carry3');
  const word = (w: number, carry: Val<'u32'> | null) => {
    const ex = (inc[w] as Val<'u32'>).shl(8);
    return carry ? ex.add(carry.mul(spread)) : ex;
  };
  return vec('u32', word(0, null), word(1, carry1), word(2, carry2), word(3, carry3));
}

/** Step 1: E[b] = exclusive digit offsets inside block b, Q[b] = (its stable order as 4-bit positions, ·, key count, 0). */
function blockKernel(texels: boolean, wg: number) {
  return cachedKernel(`radix-gather-block:${texels}:${wg}`, () =>
    defineKernel({
      name: `radix_gather_block${texels ? '_vec4' : ''}`,
      workgroupSize: wg,
      params: {
        keys: texels ? buffer('u32', 'read', { vector: 4 }) : buffer('u32', 'read'),
        offsets: buffer('u32', 'write', { vector: 4 }),
        order: buffer('u32', 'write', { vector: 4 }),
        n: uniform('u32'),
        shift: uniform('u32'),
        blocks: uniform('u32'),
      },
      body: ({ keys, offsets, order, n, shift, blocks }, k) => {
        const b = k.let(k.globalIndex, 'b');
        k.if(b.lt(blocks), () => {
          const first = k.let(b.mul(BLOCK), 'first');
          const digits: Array<Val<'u32'>> = [];
          for (let q = 0; q < BLOCK / 4; q++) {
            const parts: Array<Val<'u32'>> = [];
            if (texels) {
              const v = k.let((keys as unknown as Loader<'vec4<u32>'>).load(b.mul(4).add(q)), `v${q}`);
              parts.push(v.x, v.y, v.z, v.w);
            } else {
              for (let c = 0; c < 4; c++) parts.push((keys as unknown as Loader<'u32'>).load(first.add(4 * q + c)));
            }
            for (const x of parts) digits.push(k.let(x.shr(shift).and(DIGITS - 1), `d${digits.length}`));
          }
          const count = k.let(select(n.sub(first).lt(BLOCK), n.sub(first), BLOCK), 'count');
          // Keys past n (in the last block only) are neither counted nor placed. (Branches, not selects:
          // the same code without them made SwiftShader's shader compiler stall past the GPU watchdog.)
          const hist = k.var('vec4<u32>', 0, 'hist');
          for (const [i, d] of digits.entries()) k.if(u32(i).lt(count), () => hist.set(hist.add(increment(d))));
          const start = k.let(exclusiveDigits(k, hist), 'start');
          // Key i goes to start[d] + (earlier keys of digit d): the running counter starts at start.
          const run = k.var('vec4<u32>', start, 'run');
          const lo = k.var('u32', 0, 'lo');
          const hi = k.var('u32', 0, 'hi');
          for (const [i, d] of digits.entries()) {
            k.if(u32(i).lt(count), () => {
              const pos = k.let(byteOf(run, d), 'pos');
              const bits = u32(i).shl(pos.and(7).mul(4));
              k.if(
                pos.lt(8),
                () => lo.set(lo.or(bits)),
                () => hi.set(hi.or(bits)),
              );
              run.set(run.add(increment(d)));
            });
          }
          (offsets as unknown as Storer<'vec4<u32>'>).store(b, start);
          (order as unknown as Storer<'vec4<u32>'>).store(b, vec('u32', lo, hi, count, 0));
        });
      },
    }),
  );
}

/** The packed digit counts of a full block from its exclusive offsets (the 17th offset is 16). */
function countsOfFull(e: V4): V4 {
  const next = (w: number, above: Val<'u32'> | number) => {
    const words = [e.x, e.y, e.z, e.w];
    const here = words[w] as Val<'u32'>;
    const up = typeof above === 'number' ? u32(above) : above;
    // Offsets never decrease: byte-wise differences borrow nothing.
    return here.shr(8).or(up.shl(24)).sub(here);
  };
  return vec('u32', next(0, e.y), next(1, e.z), next(2, e.w), next(3, BLOCK));
}

/** Step 2: P[b] = the packed digit counts of the blocks of b's superblock before b (all full). */
function prefixKernel(wg: number) {
  return cachedKernel(`radix-gather-prefix:${wg}`, () =>
    defineKernel({
      name: 'radix_gather_prefix',
      workgroupSize: wg,
      params: {
        offsets: buffer('u32', 'read', { vector: 4 }),
        prefix: buffer('u32', 'write', { vector: 4 }),
        blocks: uniform('u32'),
      },
      body: ({ offsets, prefix, blocks }, k) => {
        const b = k.let(k.globalIndex, 'b');
        k.if(b.lt(blocks), () => {
          const acc = k.var('vec4<u32>', 0, 'acc');
          k.for({ from: b.sub(b.and(SUPER - 1)), to: b }, (p) => {
            acc.set(acc.add(countsOfFull((offsets as unknown as Loader<'vec4<u32>'>).load(p))));
          });
          (prefix as unknown as Storer<'vec4<u32>'>).store(b, acc);
        });
      },
    }),
  );
}

/** The count of digit d in block b from its offsets E and order texel Q (Q.z: the block's key count). */
function digitCount(e: V4, qz: Val<'u32'>, d: Val<'u32'>): Val<'u32'> {
  const end = select(d.lt(DIGITS - 1), byteOf(e, d.add(1)), qz);
  return end.sub(byteOf(e, d));
}

/** Step 3: C[d · ns + s] = keys of digit d in superblock s. */
function countsKernel(wg: number) {
  return cachedKernel(`radix-gather-counts:${wg}`, () =>
    defineKernel({
      name: 'radix_gather_counts',
      workgroupSize: wg,
      params: {
        offsets: buffer('u32', 'read', { vector: 4 }),
        order: buffer('u32', 'read', { vector: 4 }),
        prefix: buffer('u32', 'read', { vector: 4 }),
        counts: buffer('u32', 'write'),
        blocks: uniform('u32'),
        supers: uniform('u32'),
      },
      body: ({ offsets, order, prefix, counts, blocks, supers }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(supers.mul(DIGITS)), () => {
          const d = k.let(i.div(supers), 'd');
          const s = k.let(i.sub(d.mul(supers)), 's');
          const end = k.let(s.mul(SUPER).add(SUPER), 'end');
          const last = k.let(select(end.lt(blocks), end, blocks).sub(1), 'last');
          const e = (offsets as unknown as Loader<'vec4<u32>'>).load(last);
          const q = k.let((order as unknown as Loader<'vec4<u32>'>).load(last), 'q');
          const before = byteOf((prefix as unknown as Loader<'vec4<u32>'>).load(last), d);
          counts.store(i, before.add(digitCount(k.let(e, 'e'), q.z, d)));
        });
      },
    }),
  );
}

/** Step 5: samples[q] = the entry of I holding output q · STRIDE (m - 1 past the end). */
function sampleKernel(wg: number) {
  return cachedKernel(`radix-gather-samples:${wg}`, () =>
    defineKernel({
      name: 'radix_gather_samples',
      workgroupSize: wg,
      params: { incl: buffer('u32', 'read'), samples: buffer('u32', 'write'), n: uniform('u32'), m: uniform('u32'), slots: uniform('u32') },
      body: ({ incl, samples, n, m, slots }, k) => {
        const q = k.let(k.globalIndex, 'q');
        k.if(q.lt(slots), () => {
          const j = k.let(q.mul(STRIDE), 'j');
          const lo = k.var('u32', 0, 'lo');
          const hi = k.let(m, 'hi');
          k.if(j.lt(n), () => lowerBound(k, incl, j, lo, hi));
          samples.store(q, select(j.lt(n), lo, m.sub(1)));
        });
      },
    }),
  );
}

/** Byte `sh / 8` of word `w` of `v` (w and sh fixed for a digit: computed once per entry). */
function byteAt(v: V4, w: Val<'u32'>, sh: Val<'u32'>): Val<'u32'> {
  return component(v, w).shr(sh).and(0xff);
}

/**
 * What a move dispatch carries: the keys, the values (of this dtype), or both. Keys and
 * values move apart where their four arrays together would take more bindings than a
 * kernel may have (arrays past one binding take one per segment); both dispatches find
 * the same sources.
 */
type Moves = { readonly keys: true; readonly values?: BufferDType } | { readonly keys: false; readonly values: BufferDType };

/** Step 6: output texel t = the keys and / or values of outputs 4t … 4t + 3. */
function gatherKernel(moves: Moves, wg: number) {
  const valueType = moves.values;
  const suffix = `${moves.keys ? '' : '_values'}${valueType ? `${moves.keys ? '_pairs' : ''}_${valueType}` : ''}`;
  return cachedKernel(`radix-gather-move:${moves.keys}:${valueType ?? 'none'}:${wg}`, () =>
    defineKernel({
      name: `radix_gather_move${suffix}`,
      workgroupSize: wg,
      params: {
        // Only the sides that move: every binding counts against the kernel's limit.
        ...(moves.keys ? { keys: buffer('u32', 'read'), keysOut: buffer('u32', 'write', { vector: 4 }) } : {}),
        ...(valueType ? { vals: buffer(valueType, 'read'), valsOut: buffer(valueType, 'write', { vector: 4 }) } : {}),
        offsets: buffer('u32', 'read', { vector: 4 }),
        order: buffer('u32', 'read', { vector: 4 }),
        prefix: buffer('u32', 'read', { vector: 4 }),
        incl: buffer('u32', 'read'),
        samples: buffer('u32', 'read'),
        n: uniform('u32'),
        m: uniform('u32'),
        blocks: uniform('u32'),
        supers: uniform('u32'),
      },
      body: (p, k) => {
        const { incl, samples, n, m, blocks, supers } = p;
        const sides = p as unknown as Partial<Record<'keys' | 'vals', Loader<'u32'>> & Record<'keysOut' | 'valsOut', Storer<'vec4<u32>'>>>;
        const offsets = p.offsets as unknown as Loader<'vec4<u32>'>;
        const order = p.order as unknown as Loader<'vec4<u32>'>;
        const prefix = p.prefix as unknown as Loader<'vec4<u32>'>;
        const t = k.let(k.globalIndex, 't');
        k.if(t.mul(4).lt(n), () => {
          const j0 = k.let(t.mul(4), 'j0');
          // The entry (digit, superblock) of output j0, between the samples around it.
          const sq = k.let(j0.div(STRIDE), 'sq');
          const i = k.var('u32', samples.load(sq), 'i');
          const next = k.let(samples.load(sq.add(1)).add(1), 'next');
          const hi = k.var('u32', select(next.lt(m), next, m), 'hi');
          lowerBound(k, incl, j0, i, hi);
          const end = k.var('u32', incl.load(i), 'end');
          const excl = k.var('u32', 0, 'excl');
          k.if(i.gt(0), () => excl.set(incl.load(i.sub(1))));
          // Per entry: the digit's word and shift in packed counters (and the next digit's).
          const d = k.var('u32', 0, 'dg');
          const w = k.var('u32', 0, 'w');
          const sh = k.var('u32', 0, 'sh');
          const w1 = k.var('u32', 0, 'w1');
          const sh1 = k.var('u32', 0, 'sh1');
          // Per block: its first key, the digit's first place in its order and count, its order words.
          const base = k.var('u32', 0, 'base');
          const first = k.var('u32', 0, 'first');
          const cnt = k.var('u32', 0, 'cnt');
          const qx = k.var('u32', 0, 'qx');
          const qy = k.var('u32', 0, 'qy');
          const r = k.var('u32', 0, 'r');
          const b = k.var('u32', 0, 'b');
          const load = () => {
            const e = k.let(offsets.load(b), 'e');
            const q = k.let(order.load(b), 'q');
            first.set(byteAt(e, w, sh));
            cnt.set(select(d.lt(DIGITS - 1), byteAt(e, w1, sh1), q.z).sub(first));
            qx.set(q.x);
            qy.set(q.y);
            base.set(b.mul(BLOCK));
          };
          /** Block and rank of the `want`-th key of digit d in superblock s: a binary search of P over its blocks. */
          const locate = (want: Val<'u32'>) => {
            d.set(i.div(supers));
            w.set(d.shr(2));
            sh.set(d.and(3).mul(8));
            w1.set(d.add(1).shr(2));
            sh1.set(d.add(1).and(3).mul(8));
            const s = k.let(i.sub(d.mul(supers)), 's');
            const lo = k.var('u32', s.mul(SUPER).add(1), 'blo');
            const top = k.let(s.mul(SUPER).add(SUPER), 'top');
            const bhi = k.var('u32', select(top.lt(blocks), top, blocks), 'bhi');
            const before = k.var('u32', 0, 'before');
            k.while(
              () => lo.lt(bhi),
              () => {
                const mid = k.let(lo.add(bhi.sub(lo).shr(1)), 'mid');
                const at = k.let(byteAt(prefix.load(mid), w, sh), 'at');
                k.if(
                  at.gt(want),
                  () => bhi.set(mid),
                  () => {
                    lo.set(mid.add(1));
                    before.set(at);
                  },
                );
              },
            );
            b.set(lo.sub(1));
            r.set(want.sub(before));
            load();
          };
          locate(j0.sub(excl));
          const outs: Array<Var<'u32'>> = [];
          const outVals: Array<Var<'u32'>> = [];
          for (let c = 0; c < 4; c++) {
            const j = k.let(j0.add(c), `j${c}`);
            if (c > 0) {
              k.if(j.lt(n).and(r.eq(cnt)), () => {
                k.if(
                  j.lt(end),
                  () => {
                    // The same entry: the next block of the superblock holding digit d.
                    b.set(b.add(1));
                    load();
                    k.while(
                      () => cnt.eq(0),
                      () => {
                        b.set(b.add(1));
                        load();
                      },
                    );
                    r.set(0);
                  },
                  () => {
                    // The next non-empty entry: usually i + 1, else a search past it.
                    i.set(i.add(1));
                    end.set(incl.load(i));
                    k.if(end.le(j), () => {
                      const top = k.var('u32', m, 'top');
                      lowerBound(k, incl, j, i, top);
                      end.set(incl.load(i));
                    });
                    locate(u32(0));
                  },
                );
              });
            }
            const pos = k.let(first.add(r), 'pos');
            const word = select(pos.lt(8), qx, qy);
            const src = k.let(base.add(word.shr(pos.and(7).mul(4)).and(15)), 'src');
            if (sides.keys) outs.push(k.let(sides.keys.load(src), `o${c}`));
            if (sides.vals) outVals.push(k.let(sides.vals.load(src), `ov${c}`));
            r.set(r.add(1));
          }
          if (sides.keysOut) {
            const [a0, a1, a2, a3] = outs as unknown as [Val<'u32'>, Val<'u32'>, Val<'u32'>, Val<'u32'>];
            sides.keysOut.store(t, vec('u32', a0, a1, a2, a3));
          }
          if (sides.valsOut) {
            // Values of any dtype move as they are.
            const [v0, v1, v2, v3] = outVals as unknown as [Val<'u32'>, Val<'u32'>, Val<'u32'>, Val<'u32'>];
            sides.valsOut.store(t, vec(valueType as 'u32', v0, v1, v2, v3));
          }
        });
      },
    }),
  );
}

/**
 * Records the gather radix sort of u32 order keys `keys` (the caller maps i32 / f32
 * keys) into `keysOut`, and `values` into `valuesOut` alongside: the first n
 * elements (the key buffer may be a longer temporary). n >= 1.
 */
export function recordGatherRadixSort(
  device: Device,
  keys: Buffer,
  values: Buffer | undefined,
  keysOut: Buffer,
  valuesOut: Buffer | undefined,
  n: number,
): void {
  const wg = gatherSize(device.caps);
  let src = keys;
  let vsrc = values;
  const blocks = Math.ceil(n / BLOCK);
  const supers = Math.ceil(blocks / SUPER);
  const m = DIGITS * supers;
  const texels = Math.ceil(n / 4);
  const slots = Math.ceil(n / STRIDE) + 1;
  const offsets = scratch(device, 'radixg.offsets', 'u32', 4 * blocks);
  const order = scratch(device, 'radixg.order', 'u32', 4 * blocks);
  const prefix = scratch(device, 'radixg.prefix', 'u32', 4 * blocks);
  const counts = scratch(device, 'radixg.counts', 'u32', m);
  const incl = scratch(device, 'radixg.incl', 'u32', m);
  const samples = scratch(device, 'radixg.samples', 'u32', slots);
  // The last pass writes the outputs directly where they are whole texels (vec4 views), else a copy follows.
  const keysDirect = keysOut.length % 4 === 0;
  const valuesDirect = valuesOut !== undefined && valuesOut.length % 4 === 0;
  for (let pass = 0; pass < PASSES; pass++) {
    const last = pass === PASSES - 1;
    const dst = last && keysDirect ? keysOut : scratch(device, `radixg.k${pass % 2}`, 'u32', n);
    const vdst = values
      ? last && valuesDirect
        ? (valuesOut as Buffer)
        : scratch(device, `radixg.v${pass % 2}`, values.dtype, n)
      : undefined;
    const shift = pass * BITS;
    device.dispatch(blockKernel(src.length % 4 === 0, wg), { invocations: blocks }, { keys: src, offsets, order, n, shift, blocks });
    device.dispatch(prefixKernel(wg), { invocations: blocks }, { offsets, prefix, blocks });
    device.dispatch(countsKernel(wg), { invocations: m }, { offsets, order, prefix, counts, blocks, supers });
    recordGatherBlockScan(device, counts, incl, m, false, 'values', 'radixg.scan');
    device.dispatch(sampleKernel(wg), { invocations: slots }, { incl, samples, n, m, slots });
    const search = { offsets, order, prefix, incl, samples, n, m, blocks, supers };
    const searchBindings = [offsets, order, prefix, incl, samples].reduce((sum, b) => sum + bindingsOf(device, b), 0);
    if (vsrc && vdst) {
      const sides = bindingsOf(device, src) + bindingsOf(device, dst) + bindingsOf(device, vsrc) + bindingsOf(device, vdst);
      if (sides + searchBindings > device.caps.limits.maxBuffersPerKernel) {
        // Keys first: the values' dispatch reads the same search arrays, which the keys' does not change.
        device.dispatch(gatherKernel({ keys: true }, wg), { invocations: texels }, { keys: src, keysOut: dst, ...search } as never);
        device.dispatch(gatherKernel({ keys: false, values: vsrc.dtype }, wg), { invocations: texels }, {
          vals: vsrc,
          valsOut: vdst,
          ...search,
        } as never);
      } else {
        device.dispatch(gatherKernel({ keys: true, values: vsrc.dtype }, wg), { invocations: texels }, {
          keys: src,
          vals: vsrc,
          keysOut: dst,
          valsOut: vdst,
          ...search,
        } as never);
      }
    } else {
      device.dispatch(gatherKernel({ keys: true }, wg), { invocations: texels }, { keys: src, keysOut: dst, ...search } as never);
    }
    src = dst;
    vsrc = vdst;
  }
  if (!keysDirect) device.copyBuffer(src, keysOut, { length: n });
  if (values && valuesOut && !valuesDirect) device.copyBuffer(vsrc as Buffer, valuesOut, { length: n });
}
