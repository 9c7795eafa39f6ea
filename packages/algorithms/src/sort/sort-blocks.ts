/**
 * Sorting in registers for the gather sorts (merge path, bitonic): a fragment
 * holds a block of 16 keys (four texels) in variables and runs a compare-exchange
 * network on them, unrolled at kernel build time. Keys are u32 order keys; with
 * values they travel as (key, index) pairs compared as pairs (indices are
 * distinct, so the order is total and the sorts stay stable).
 */
import { buffer, defineKernel, type KernelBuilder, max, min, select, uniform, type Val, vec } from '@trident/core';
import { cachedKernel, i32ToKey } from '../common.ts';
import type { SortKeyType } from './sort-args.ts';
import { f32ToSortKey } from './sort-keys.ts';

/** Keys a fragment sorts in registers (four texels). */
export const BLOCK = 16;

export interface Slot {
  key: Val<'u32'>;
  idx?: Val<'u32'>;
}

type Storer = { store(i: Val<'u32'>, v: Val<'vec4<u32>'>): void };
type TexelLoader = { load(i: Val<'u32'>): Val<'vec4<u32>'> };

/** Orders slots `lo` < `hi` of `slots` ascending (the smaller pair to `lo`). */
function compareExchange(k: KernelBuilder, slots: Slot[], lo: number, hi: number, pairs: boolean): void {
  const a = slots[lo] as Slot;
  const b = slots[hi] as Slot;
  if (!pairs) {
    slots[lo] = { key: k.let(min(a.key, b.key), 'kmin') };
    slots[hi] = { key: k.let(max(a.key, b.key), 'kmax') };
    return;
  }
  const ai = a.idx as Val<'u32'>;
  const bi = b.idx as Val<'u32'>;
  const bFirst = k.let(b.key.lt(a.key).or(b.key.eq(a.key).and(bi.lt(ai))), 'swap');
  slots[lo] = { key: k.let(select(bFirst, b.key, a.key), 'ka'), idx: k.let(select(bFirst, bi, ai), 'ia') };
  slots[hi] = { key: k.let(select(bFirst, a.key, b.key), 'kb'), idx: k.let(select(bFirst, ai, bi), 'ib') };
}

/** The full bitonic network: the 16 slots end ascending. */
export function sortNetwork(k: KernelBuilder, slots: Slot[], pairs: boolean): void {
  for (let kk = 2; kk <= BLOCK; kk *= 2) {
    for (let j = kk / 2; j >= 1; j /= 2) {
      for (let i = 0; i < BLOCK; i++) {
        const l = i ^ j;
        if (l <= i) continue;
        if ((i & kk) === 0) compareExchange(k, slots, i, l, pairs);
        else compareExchange(k, slots, l, i, pairs);
      }
    }
  }
}

/** The last steps of a bitonic merge (distances 8, 4, 2, 1, all ascending): a bitonic run of 16 ends sorted. */
export function mergeNetwork(k: KernelBuilder, slots: Slot[], pairs: boolean): void {
  for (let j = BLOCK / 2; j >= 1; j /= 2) {
    for (let i = 0; i < BLOCK; i++) if ((i & j) === 0) compareExchange(k, slots, i, i ^ j, pairs);
  }
}

/** Stores texel `f & 3` of the 16 slots (fragment f's share of its block). */
function storeOwnTexel(k: KernelBuilder, f: Val<'u32'>, slots: Slot[], keys: Storer, idx: Storer | undefined): void {
  const part = k.let(f.and(3), 'part');
  const pick = (c: number, field: 'key' | 'idx'): Val<'u32'> => {
    const at = (q: number) => (slots[4 * q + c] as Slot)[field] as Val<'u32'>;
    return select(part.lt(2), select(part.eq(0), at(0), at(1)), select(part.eq(2), at(2), at(3)));
  };
  const texel = (field: 'key' | 'idx') => vec('u32', pick(0, field), pick(1, field), pick(2, field), pick(3, field));
  keys.store(f, texel('key'));
  if (idx) idx.store(f, texel('idx'));
}

/**
 * keys / idx texel f = elements 4f … 4f + 3 of their 16-element block sorted (keys
 * made order keys, padding past n with 0xFFFFFFFF and its own index, which sorts
 * after every real key). With `texels` the input is read as vec4s (n divides by 4).
 */
export function blockSortKernel(dtype: SortKeyType, pairs: boolean, texels: boolean, wg: number) {
  return cachedKernel(`sort-block:${dtype}:${pairs}:${texels}:${wg}`, () =>
    defineKernel({
      name: `sort_block16_${dtype}${pairs ? '_pairs' : ''}${texels ? '_vec4' : ''}`,
      workgroupSize: wg,
      params: {
        input: texels ? buffer(dtype, 'read', { vector: 4 }) : buffer(dtype, 'read'),
        keys: buffer('u32', 'write', { vector: 4 }),
        ...(pairs ? { idx: buffer('u32', 'write', { vector: 4 }) } : {}),
        n: uniform('u32'),
        work: uniform('u32'),
      },
      body: (p, k) => {
        const { n, work } = p as unknown as { n: Val<'u32'>; work: Val<'u32'> };
        const f = k.let(k.globalIndex, 'f');
        k.if(f.lt(work), () => {
          const base = k.let(f.shr(2).mul(BLOCK), 'base');
          const toKey = (x: Val<'u32'> | Val<'i32'> | Val<'f32'>): Val<'u32'> =>
            dtype === 'f32' ? f32ToSortKey(x as Val<'f32'>) : dtype === 'i32' ? i32ToKey(x as Val<'i32'>) : (x as Val<'u32'>);
          const raw: Array<Val<'u32'> | Val<'i32'> | Val<'f32'>> = [];
          if (texels) {
            const input = (p as unknown as { input: TexelLoader }).input;
            for (let q = 0; q < BLOCK / 4; q++) {
              const v = k.let(
                input.load(
                  f
                    .shr(2)
                    .mul(BLOCK / 4)
                    .add(q),
                ),
                `q${q}`,
              );
              raw.push(v.x, v.y, v.z, v.w);
            }
          } else {
            const input = (p as unknown as { input: { load(i: Val<'u32'>): Val<'u32'> } }).input;
            for (let j = 0; j < BLOCK; j++) raw.push(input.load(base.add(j)));
          }
          const slots: Slot[] = raw.map((x, j) => {
            const i = k.let(base.add(j), `i${j}`);
            const key = k.let(select(i.lt(n), toKey(x), 0xffffffff), `k${j}`);
            return pairs ? { key, idx: i } : { key };
          });
          sortNetwork(k, slots, pairs);
          storeOwnTexel(k, f, slots, (p as unknown as { keys: Storer }).keys, pairs ? (p as unknown as { idx: Storer }).idx : undefined);
        });
      },
    }),
  );
}

/**
 * The last four steps of every bitonic merge level (distances 8, 4, 2, 1) in one
 * pass: fragment f reads the four texels of its 16-element group, merges them in
 * registers and keeps its own texel.
 */
export function bitonicTailKernel(pairs: boolean, wg: number) {
  return cachedKernel(`bitonic-tail:${pairs}:${wg}`, () =>
    defineKernel({
      name: `bitonic_tail16${pairs ? '_pairs' : ''}`,
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read', { vector: 4 }),
        ...(pairs ? { idx: buffer('u32', 'read', { vector: 4 }) } : {}),
        keysOut: buffer('u32', 'write', { vector: 4 }),
        ...(pairs ? { idxOut: buffer('u32', 'write', { vector: 4 }) } : {}),
        work: uniform('u32'),
      },
      body: (p, k) => {
        const { keys, work } = p as unknown as { keys: TexelLoader; work: Val<'u32'> };
        const f = k.let(k.globalIndex, 'f');
        k.if(f.lt(work), () => {
          const first = k.let(f.shr(2).mul(BLOCK / 4), 'first');
          const slots: Slot[] = [];
          for (let q = 0; q < BLOCK / 4; q++) {
            const kv = k.let(keys.load(first.add(q)), `kq${q}`);
            const iv = pairs ? k.let((p as unknown as { idx: TexelLoader }).idx.load(first.add(q)), `iq${q}`) : undefined;
            const ks = [kv.x, kv.y, kv.z, kv.w];
            const is = iv ? [iv.x, iv.y, iv.z, iv.w] : [];
            for (let c = 0; c < 4; c++)
              slots.push(pairs ? { key: ks[c] as Val<'u32'>, idx: is[c] as Val<'u32'> } : { key: ks[c] as Val<'u32'> });
          }
          mergeNetwork(k, slots, pairs);
          storeOwnTexel(
            k,
            f,
            slots,
            (p as unknown as { keysOut: Storer }).keysOut,
            pairs ? (p as unknown as { idxOut: Storer }).idxOut : undefined,
          );
        });
      },
    }),
  );
}
