/**
 * Histogram by packed counting, for gather-only devices (WebGL2 fragment passes)
 * and few bins: no points, no blending, every kernel writes only its own element.
 *
 * The input is cut into chunks of 63 texels (252 elements), so one chunk's count
 * of a bin fits 8 bits. Invocation f = (chunk c, group g) reads chunk c (vec4 loads
 * where n divides by 4: one fetch brings four values) and counts the 16·W bins of
 * group g into a private array of 4·W words of four 8-bit counters (one
 * read-modify-write per element, indexed by the value), then writes them as W vec4
 * outputs (W = 8 where a kernel may bind 16 buffers: WebGL2 writes them with MRT,
 * so 128 bins a pass and 2 groups for 256 bins). A merge pass sums, for every run of
 * SUPER chunks, each word of each output over the run, four bytes at a time in two
 * 16-bit lanes, and a last pass sums the runs bin by bin.
 *
 * Why this shape (against one scalar load per element per group of 32 bins):
 * LEDGER.md histogram.packed.
 */
import { type Buffer, buffer, type Device, defineKernel, select, u32, uniform, type Val, type Var, vec } from '@trident/core';
import { cachedKernel, gatherSize, scratch } from '../common.ts';

/**
 * Texels (four elements) per chunk: a chunk's count of one bin, at most 4 · 63 = 252,
 * fits an 8-bit counter.
 */
const CHUNK_TEXELS = 63;
/** Chunks summed by one merge invocation: 64 · 252 fits the 16-bit lanes of its sums. */
const SUPER = 64;
/** Largest bin count for which packed counting is used (its reads grow with bins). */
export const PACKED_MAX_BINS = 256;
/** Bins one output word holds (8-bit counters) and one vec4 output texel (4 words). */
const BINS_PER_TEXEL = 16;

/**
 * Output texels per counting invocation: up to 8 (16 bins each; WebGL2 writes them
 * with MRT), no more than the bins need, and few enough that the merge pass, which
 * binds W inputs and W outputs, fits the device's buffers per kernel.
 */
export function packedOutputs(device: Device, bins: number): number {
  const fit = Math.floor(device.caps.limits.maxBuffersPerKernel / 2);
  return Math.max(1, Math.min(8, fit, Math.ceil(bins / BINS_PER_TEXEL)));
}

const wordNames = (w: number) => Array.from({ length: w }, (_, o) => `w${o}`);

type Loader<T extends 'u32' | 'vec4<u32>'> = { load(i: Val<'u32'>): Val<T> };
type Storer<T extends 'u32' | 'vec4<u32>'> = { store(i: Val<'u32'>, v: Val<T>): void };

/**
 * w_o[c·G + g] (a vec4) = the 8-bit counts of bins 16·(W·g + o) … + 15 in chunk c.
 * With `texels`, `values` is bound as vec4s (n divides by 4): one load per four
 * elements; else four scalar loads. The counters live in a private array indexed by
 * the value: one read-modify-write per element, where a compare-and-select per word
 * would cost 4·W operations per element.
 */
function countKernel(w: number, texels: boolean, wg: number) {
  return cachedKernel(`hist-packed-count:${w}:${texels}:${wg}`, () =>
    defineKernel({
      name: `histogram_packed_count_w${w}${texels ? '_vec4' : ''}`,
      workgroupSize: wg,
      params: {
        values: texels ? buffer('u32', 'read', { vector: 4 }) : buffer('u32', 'read'),
        ...Object.fromEntries(wordNames(w).map((name) => [name, buffer('u32', 'write', { vector: 4 })])),
        n: uniform('u32'),
        groups: uniform('u32'),
        work: uniform('u32'),
      },
      body: (p, k) => {
        const { n, groups, work } = p as unknown as { n: Val<'u32'>; groups: Val<'u32'>; work: Val<'u32'> };
        const outs = wordNames(w).map((name) => (p as unknown as Record<string, Storer<'vec4<u32>'>>)[name] as Storer<'vec4<u32>'>);
        const f = k.let(k.globalIndex, 'f');
        k.if(f.lt(work), () => {
          const c = k.let(f.div(groups), 'c');
          const base = k.let(f.sub(c.mul(groups)).mul(BINS_PER_TEXEL * w), 'base');
          const acc = k.privateArray('u32', 4 * w);
          const count = (x: Val<'u32'>, inRange: Val<'bool'>) => {
            // Values below this group's bins wrap to large d; a branch, so that lanes counting
            // nothing skip the array access.
            const d = k.let(x.sub(base), 'd');
            k.if(d.lt(BINS_PER_TEXEL * w).and(inRange), () => {
              const word = k.let(d.shr(2), 'word');
              acc.store(word, acc.load(word).add(u32(1).shl(d.and(3).mul(8))));
            });
          };
          // A constant trip count (the same loop in every fragment; the last chunk masks by n).
          k.for({ from: 0, to: CHUNK_TEXELS }, (tt) => {
            const t = k.let(c.mul(CHUNK_TEXELS).add(tt), 't');
            if (texels) {
              const q = k.let((p as unknown as { values: Loader<'vec4<u32>'> }).values.load(t), 'q');
              const inside = k.let(t.mul(4).lt(n), 'inside');
              for (const x of [q.x, q.y, q.z, q.w]) count(x, inside);
            } else {
              const values = (p as unknown as { values: Loader<'u32'> }).values;
              for (let e = 0; e < 4; e++) {
                const i = k.let(t.mul(4).add(e), 'i');
                count(values.load(i), i.lt(n));
              }
            }
          });
          for (const [o, out] of outs.entries()) {
            out.store(f, vec('u32', acc.load(4 * o), acc.load(4 * o + 1), acc.load(4 * o + 2), acc.load(4 * o + 3)));
          }
        });
      },
    }),
  );
}

/** Component `q` (dynamic) of `v`, by selects. */
function component(v: Val<'vec4<u32>'>, q: Val<'u32'>): Val<'u32'> {
  return select(q.lt(2), select(q.eq(0), v.x, v.y), select(q.eq(2), v.z, v.w));
}

const partialNames = (w: number) => Array.from({ length: w }, (_, o) => `p${o}`);

/**
 * p_o[(s·G + g)·4 + q] (a vec4: the four bins of word q of w_o's texels of group g)
 * = Σ over the chunks c of run s. Every invocation reads one texel of each w_o (no
 * buffer chosen at run time) and keeps its word q; the four bytes of a word are
 * summed two at a time in the 16-bit lanes of `lo` (bytes 0 and 2) and `hi`
 * (bytes 1 and 3).
 */
function mergeKernel(w: number, wg: number) {
  return cachedKernel(`hist-packed-merge:${w}:${wg}`, () =>
    defineKernel({
      name: `histogram_packed_merge_w${w}`,
      workgroupSize: wg,
      params: {
        ...Object.fromEntries(wordNames(w).map((name) => [name, buffer('u32', 'read', { vector: 4 })])),
        ...Object.fromEntries(partialNames(w).map((name) => [name, buffer('u32', 'write', { vector: 4 })])),
        groups: uniform('u32'),
        chunks: uniform('u32'),
        work: uniform('u32'),
      },
      body: (p, k) => {
        const { groups, chunks, work } = p as unknown as { groups: Val<'u32'>; chunks: Val<'u32'>; work: Val<'u32'> };
        const texels = wordNames(w).map((name) => (p as unknown as Record<string, Loader<'vec4<u32>'>>)[name] as Loader<'vec4<u32>'>);
        const partials = partialNames(w).map((name) => (p as unknown as Record<string, Storer<'vec4<u32>'>>)[name] as Storer<'vec4<u32>'>);
        const e = k.let(k.globalIndex, 'e');
        k.if(e.lt(work), () => {
          const q = k.let(e.and(3), 'q');
          const sg = k.let(e.shr(2), 'sg');
          const s = k.let(sg.div(groups), 's');
          const g = k.let(sg.sub(s.mul(groups)), 'g');
          const first = k.let(s.mul(SUPER), 'first');
          const last = k.let(select(first.add(SUPER).lt(chunks), first.add(SUPER), chunks), 'last');
          const lo = texels.map((_, o) => k.var('u32', 0, `lo${o}`));
          const hi = texels.map((_, o) => k.var('u32', 0, `hi${o}`));
          k.for({ from: first, to: last }, (c) => {
            const at = k.let(c.mul(groups).add(g), 'at');
            for (const [o, t] of texels.entries()) {
              const word = k.let(component(t.load(at), q), 'word');
              (lo[o] as Var<'u32'>).set((lo[o] as Var<'u32'>).add(word.and(0x00ff00ff)));
              (hi[o] as Var<'u32'>).set((hi[o] as Var<'u32'>).add(word.shr(8).and(0x00ff00ff)));
            }
          });
          for (const [o, out] of partials.entries()) {
            const l = lo[o] as Var<'u32'>;
            const h = hi[o] as Var<'u32'>;
            out.store(e, vec('u32', l.and(0xffff), h.and(0xffff), l.shr(16), h.shr(16)));
          }
        });
      },
    }),
  );
}

/**
 * out[b] = Σ_s of bin b's count in run s: bin b = 16·(W·g + o) + 4·q + byte is
 * component `byte` of p_o[(s·G + g)·4 + q].
 */
function sumRunsKernel(w: number, wg: number) {
  return cachedKernel(`hist-packed-runs:${w}:${wg}`, () =>
    defineKernel({
      name: `histogram_packed_sum_runs_w${w}`,
      workgroupSize: wg,
      params: {
        ...Object.fromEntries(partialNames(w).map((name) => [name, buffer('u32', 'read')])),
        out: buffer('u32', 'write'),
        bins: uniform('u32'),
        groups: uniform('u32'),
        runs: uniform('u32'),
      },
      body: (p, k) => {
        const { out, bins, groups, runs } = p as unknown as {
          out: Storer<'u32'>;
          bins: Val<'u32'>;
          groups: Val<'u32'>;
          runs: Val<'u32'>;
        };
        const partials = partialNames(w).map((name) => (p as unknown as Record<string, Loader<'u32'>>)[name] as Loader<'u32'>);
        const b = k.let(k.globalIndex, 'b');
        k.if(b.lt(bins), () => {
          const g = k.let(b.div(BINS_PER_TEXEL * w), 'g');
          const r = k.let(b.sub(g.mul(BINS_PER_TEXEL * w)), 'r');
          const o = k.let(r.shr(4), 'o');
          // Scalar index of the count within its run's block: ((g·4 + q)·4 + byte) = g·16 + (r & 15).
          const within = k.let(g.mul(BINS_PER_TEXEL).add(r.and(15)), 'within');
          const stride = k.let(groups.mul(BINS_PER_TEXEL), 'stride');
          const sum = k.var('u32', 0, 'sum');
          for (const [idx, part] of partials.entries()) {
            k.if(o.eq(idx), () => {
              k.for({ from: 0, to: runs }, (s) => sum.set(sum.add(part.load(s.mul(stride).add(within)))));
            });
          }
          out.store(b, sum);
        });
      },
    }),
  );
}

/** Records the packed histogram of `values` (n > 0) into `out` (bins counters, bins <= PACKED_MAX_BINS). */
export function recordPackedHistogram(device: Device, values: Buffer<'u32'>, out: Buffer<'u32'>, bins: number): void {
  const n = values.length;
  const w = packedOutputs(device, bins);
  const wg = gatherSize(device.caps);
  const groups = Math.ceil(bins / (BINS_PER_TEXEL * w));
  const chunks = Math.ceil(n / (4 * CHUNK_TEXELS));
  const work = chunks * groups;
  const texels = n % 4 === 0;
  const outs = wordNames(w).map((name) => [name, scratch(device, `histogram.packed.${name}`, 'u32', 4 * work)] as const);
  device.dispatch(countKernel(w, texels, wg), { invocations: work }, { values, ...Object.fromEntries(outs), n, groups, work } as never);
  const runs = Math.ceil(chunks / SUPER);
  const mergeWork = runs * groups * 4;
  const partials = partialNames(w).map((name) => [name, scratch(device, `histogram.packed.${name}`, 'u32', 4 * mergeWork)] as const);
  device.dispatch(mergeKernel(w, wg), { invocations: mergeWork }, {
    ...Object.fromEntries(outs),
    ...Object.fromEntries(partials),
    groups,
    chunks,
    work: mergeWork,
  } as never);
  device.dispatch(sumRunsKernel(w, wg), { invocations: bins }, { ...Object.fromEntries(partials), out, bins, groups, runs } as never);
}
