/**
 * Radix sort (after Zervudakis 2018, standard parallel algorithms on the GPU; extended): stable LSD sort of u32 / i32 / f32 keys, with
 * optional values carried along. Two formulations, chosen from caps:
 * - devices with subgroups whose counter rows fit workgroup memory: 8-bit digits,
 *   4 passes, ballot multisplit and a locally sorted tile (radix-multisplit.ts),
 *   each pass either count + scan + scatter (radixSort's default: sortShape) or,
 *   with atomics on buffers, one onesweep dispatch after an up-front histogram
 *   (radix-onesweep.ts);
 * - the rest (no subgroups, or subgroups of width 1 as on the CPU backend): the
 *   packed-count formulation below, 4-bit digits, 8 passes; each pass:
 *   1. per-tile digit counts (one workgroup per tile of wg × 4 keys),
 *   2. an exclusive scan of the counts laid out digit-major (digit d of tile t at
 *      d · tiles + t), which gives every (digit, tile) its first output slot in
 *      stable order,
 *   3. a stable scatter: each invocation owns 4 consecutive keys; a workgroup scan
 *      of per-invocation digit counts ranks each key among equal digits of the tile.
 * Digit counts are packed two 16-bit fields per u32 (16 digits in two vec4<u32>),
 * so the workgroup scans move 8 words per invocation; the IR has no workgroup
 * atomics, and this needs none. i32 and f32 keys are mapped to u32 keys with
 * order-preserving bit transforms first and mapped back after.
 * Devices without workgroups (WebGL2) run the gather formulation of radix-gather.ts.
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
  vec,
} from '@trident/core';
import {
  blockSize,
  cachedKernel,
  dispatchGroups,
  gatherSize,
  i32ToKey,
  keyToI32,
  scratch,
  workgroupReduce,
  workgroupScan,
} from '../../common.ts';
import { chooseFamily, type Formulation } from '../../plan.ts';
import { recordScan } from '../../scan/scan.ts';
import { prepareSort, type SortKeyType, type SortOptions, type SortResult, validateSort } from '../sort-args.ts';
import { f32ToSortKey, sortKeyToF32 } from '../sort-keys.ts';
import { recordChunkedRadix } from './radix-chunked.ts';
import { recordGatherRadixSort } from './radix-gather.ts';
import { type MultisplitShape, sortShape } from './radix-multisplit.ts';
import { recordMultisplitPasses } from './radix-passes.ts';

const BITS = 4;
const DIGITS = 1 << BITS;
const PASSES = 32 / BITS;
/** Consecutive keys per invocation. */
const ITEMS = 4;

type V4 = Val<'vec4<u32>'>;

/** The packed increment (lo, hi) of digit d: 1 in the 16-bit field of d. */
function increment(d: Val<'u32'>): [V4, V4] {
  const inc = u32(1).shl(d.and(1).mul(16));
  const w = d.shr(1);
  const at = (c: number) => select(w.eq(c), inc, 0);
  return [vec('u32', at(0), at(1), at(2), at(3)), vec('u32', at(4), at(5), at(6), at(7))];
}

/** The 16-bit count of digit d in the packed pair (lo, hi). */
function extract(lo: V4, hi: V4, d: Val<'u32'>): Val<'u32'> {
  const w = d.shr(1);
  const words = [lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w];
  let word: Val<'u32'> = words[7] as Val<'u32'>;
  for (let c = 6; c >= 0; c--) word = select(w.eq(c), words[c] as Val<'u32'>, word);
  return word.shr(d.and(1).mul(16)).and(0xffff);
}

/** Packed digit counts of this invocation's valid keys. */
function countItems(k: KernelBuilder, digits: Array<Val<'u32'>>, valid: Array<Val<'bool'>>): [V4, V4] {
  const lo = k.var('vec4<u32>', 0, 'lo');
  const hi = k.var('vec4<u32>', 0, 'hi');
  digits.forEach((d, j) => {
    k.if(valid[j] as Val<'bool'>, () => {
      const [a, b] = increment(d);
      lo.set(lo.add(a));
      hi.set(hi.add(b));
    });
  });
  return [lo, hi];
}

function loadItems(k: KernelBuilder, keys: { load(i: Val<'u32'>): Val<'u32'> }, n: Val<'u32'>, first: Val<'u32'>, shift: Val<'u32'>) {
  const idx: Array<Val<'u32'>> = [];
  const key: Array<Val<'u32'>> = [];
  const digit: Array<Val<'u32'>> = [];
  const valid: Array<Val<'bool'>> = [];
  for (let j = 0; j < ITEMS; j++) {
    const i = k.let(j === 0 ? first : first.add(j), `i${j}`);
    const x = k.let(keys.load(i), `k${j}`);
    idx.push(i);
    key.push(x);
    digit.push(k.let(x.shr(shift).and(DIGITS - 1), `d${j}`));
    valid.push(i.lt(n));
  }
  return { idx, key, digit, valid };
}

/** Pass step 1: counts[d * tiles + t] = keys of tile t with digit d. */
function countKernel(wg: number, subgroups: boolean) {
  return cachedKernel(`radix-count:${wg}:${subgroups}`, () =>
    defineKernel({
      name: 'radix_count',
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        counts: buffer('u32', 'write'),
        n: uniform('u32'),
        shift: uniform('u32'),
        tiles: uniform('u32'),
      },
      body: ({ keys, counts, n, shift, tiles }, k) => {
        const t = k.let(k.workgroupIndex, 't');
        const first = k.let(t.mul(wg * ITEMS).add(k.localIndex.mul(ITEMS)), 'first');
        const items = loadItems(k, keys, n, first, shift);
        const [lo, hi] = countItems(k, items.digit, items.valid);
        // Only the tile totals are needed here: a reduction, not a scan.
        const add = (x: V4, y: V4) => x.add(y);
        const totalLo = k.let(
          workgroupReduce(k, lo as V4, wg, subgroups, add, (v) => k.subgroupAdd(v)),
          'tlo',
        );
        const totalHi = k.let(
          workgroupReduce(k, hi as V4, wg, subgroups, add, (v) => k.subgroupAdd(v)),
          'thi',
        );
        const d = k.let(k.localIndex, 'd');
        // Grids past maxComputeWorkgroupsPerDimension are rounded up: extra workgroups must not write.
        k.if(d.lt(DIGITS).and(t.lt(tiles)), () => counts.store(d.mul(tiles).add(t), extract(totalLo, totalHi, d)));
      },
    }),
  );
}

/** Pass step 3: stable scatter of keys (and values) to offsets[d * tiles + t] + rank. */
function scatterKernel(wg: number, subgroups: boolean, valueType: BufferDType | undefined) {
  return cachedKernel(`radix-scatter:${wg}:${subgroups}:${valueType ?? 'none'}`, () =>
    defineKernel({
      name: `radix_scatter${valueType ? `_pairs_${valueType}` : ''}`,
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
      },
      body: ({ keys, keysOut, vals, valsOut, offsets, n, shift, tiles }, k) => {
        const t = k.let(k.workgroupIndex, 't');
        const base = k.workgroupArray('u32', DIGITS);
        const lid = k.localIndex;
        k.if(lid.lt(DIGITS), () => base.store(lid, offsets.load(lid.mul(tiles).add(t))));
        const first = k.let(t.mul(wg * ITEMS).add(lid.mul(ITEMS)), 'first');
        const items = loadItems(k, keys, n, first, shift);
        const [lo, hi] = countItems(k, items.digit, items.valid);
        const zero = k.var('vec4<u32>', 0);
        const a = workgroupScan(k, lo as V4, wg, subgroups, zero);
        const b = workgroupScan(k, hi as V4, wg, subgroups, zero);
        // Ranks before this invocation, then advanced key by key (stable order).
        const runLo = k.let(a.exclusive, 'runLo');
        const runHi = k.let(b.exclusive, 'runHi');
        for (let j = 0; j < ITEMS; j++) {
          const d = items.digit[j] as Val<'u32'>;
          k.if(items.valid[j] as Val<'bool'>, () => {
            const pos = k.let(base.load(d).add(extract(runLo, runHi, d)), 'pos');
            keysOut.store(pos, items.key[j] as Val<'u32'>);
            if (valueType) valsOut.store(pos, vals.load(items.idx[j] as Val<'u32'>) as never);
            const [incLo, incHi] = increment(d);
            runLo.set(runLo.add(incLo));
            runHi.set(runHi.add(incHi));
          });
        }
      },
    }),
  );
}

/** out[i] = key(in[i]) or its inverse, for i32 / f32 keys (gather). */
function transformKernel(dtype: 'i32' | 'f32', toKeys: boolean, wg: number) {
  return cachedKernel(`radix-transform:${dtype}:${toKeys}:${wg}`, () =>
    defineKernel({
      name: `sort_${toKeys ? 'to' : 'from'}_keys_${dtype}`,
      workgroupSize: wg,
      params: { src: buffer(toKeys ? dtype : 'u32', 'read'), dst: buffer(toKeys ? 'u32' : dtype, 'write'), n: uniform('u32') },
      body: ({ src, dst, n }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(n), () => {
          const x = src.load(i);
          let y: Val<'u32'> | Val<'i32'> | Val<'f32'>;
          if (toKeys) y = dtype === 'f32' ? f32ToSortKey(x as Val<'f32'>) : i32ToKey(x as Val<'i32'>);
          else y = dtype === 'f32' ? sortKeyToF32(x as Val<'u32'>) : keyToI32(x as Val<'u32'>);
          dst.store(i, y as never);
        });
      },
    }),
  );
}

export { transformKernel };

/**
 * Stable LSD radix sort (see radix-sort.ts) of `keys` (u32 / i32 / f32), with
 * optional `values` reordered alongside. Records the work and returns the sorted
 * keys (and values): `options.output` (`options.valuesOutput`) or new buffers.
 *
 * Complexity: O(n) work. With subgroups, 4 passes of 8-bit digits: for keys alone
 * count, scan of 256 · n / tile counts, rank + scatter (2 reads and 1 write of each
 * key per pass); with values, one read of the keys up front for all four digit
 * histograms, then per pass one dispatch that ranks, looks back over the earlier
 * tiles' digit counts and scatters (1 read and 1 write of each key and value). Otherwise 8 passes of 4-bit digits (scan of
 * 16 · n / (4 · wg) counts), about 3 reads and 1 write of each key per pass. i32 /
 * f32 keys add one transform before and one after. On 'serial-workgroups' devices (a
 * CPU): 4 passes of 8-bit digits over one chunk per worker with private histograms
 * (radix-chunked.ts), 2 reads and 1 write of each key per pass. On devices without
 * 'workgroup' or 'scatter' (WebGL2): the gather formulation (radix-gather.ts), 8 passes
 * of 4-bit digits in which every output finds its key; slower there than merge
 * sort by merge path, which `sort` uses (sort.ts has the figures). Memory: with
 * subgroups, one pooled temporary of n keys (and one of n values) beside the outputs,
 * the passes alternating between it and the output. Edge cases: n = 0
 * returns empty buffers. Needs 'gather' at least (UnsupportedFeatureError otherwise).
 * Throws InvalidArgumentError for bad buffers, a key dtype other than u32 / i32 /
 * f32, or a values length mismatch.
 */
export function radixSort<K extends SortKeyType, V extends BufferDType = BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options?: SortOptions<V, K>,
): SortResult<K, V> {
  validateSort(device, keys, options);
  const formulation = radixFormulation(device, { pairs: options?.values !== undefined });
  const { keysOut, valuesOut, values } = prepareSort(device, keys, options, keys.length);
  if (keys.length > 0) {
    if (formulation.family === 'gather') recordGatherRadix(device, keys, values, keysOut, valuesOut);
    else recordRadixSort(device, keys, values, keysOut, valuesOut);
  }
  return valuesOut ? { keys: keysOut, values: valuesOut } : { keys: keysOut };
}

export type RadixFormulationName = 'chunked' | 'multisplit' | 'packed-counts' | 'gather';

/**
 * The formulation `radixSort` runs on `device` (with values when `pairs`): 8-bit digits
 * over per-worker chunks on serial-workgroup devices; the multisplit (8-bit digits,
 * subgroup ranking) where the device has subgroups and room for its tile, else 4-bit
 * digits with packed counts, on workgroup devices; 4-bit gather passes elsewhere
 * (software GPUs included).
 */
export function radixFormulation(
  device: Device,
  { pairs = false }: { readonly pairs?: boolean } = {},
): Formulation<RadixFormulationName, MultisplitShape | undefined> {
  const family = chooseFamily(device, 'radixSort', { families: ['serial', 'workgroup', 'gather'] });
  if (family === 'serial')
    return {
      family,
      name: 'chunked',
      shape: undefined,
      summary: 'LSD radix sort, 8-bit digits over per-worker chunks with private histograms',
    };
  if (family === 'gather')
    return {
      family,
      name: 'gather',
      shape: undefined,
      summary: 'LSD radix sort, 4-bit digits, every output finds its key (gather passes)',
    };
  const shape = sortShape(device.caps, pairs);
  if (shape) return { family, name: 'multisplit', shape, summary: 'radix sort (workgroup digits, scatter)' };
  return { family, name: 'packed-counts', shape: undefined, summary: 'radix sort, 4-bit digits with packed workgroup counts, scatter' };
}

/**
 * Runs `sortU32(src, sorted)` over order-preserving u32 keys: i32 / f32 keys are mapped
 * to u32 keys before it and back into `keysOut` after it; u32 keys go straight through.
 */
function withOrderKeys(device: Device, keys: Buffer, keysOut: Buffer, sortU32: (src: Buffer, sorted: Buffer) => void): void {
  const n = keys.length;
  const keyType = keys.dtype as 'u32' | 'i32' | 'f32';
  const gw = gatherSize(device.caps);
  let src: Buffer = keys;
  if (keyType !== 'u32') {
    src = scratch(device, 'radix.in', 'u32', n);
    device.dispatch(transformKernel(keyType, true, gw), { invocations: n }, { src: keys, dst: src, n });
  }
  const sorted = keyType === 'u32' ? keysOut : scratch(device, 'radix.out', 'u32', n);
  sortU32(src, sorted);
  if (keyType !== 'u32') device.dispatch(transformKernel(keyType, false, gw), { invocations: n }, { src: sorted, dst: keysOut, n });
}

/** The gather formulation (radix-gather.ts) with the i32 / f32 key maps around it. */
function recordGatherRadix(device: Device, keys: Buffer, values: Buffer | undefined, keysOut: Buffer, valuesOut: Buffer | undefined): void {
  withOrderKeys(device, keys, keysOut, (src, sorted) => recordGatherRadixSort(device, src, values, sorted, valuesOut, keys.length));
}

/**
 * Records the radix sort of `keys` (and `values`) into `keysOut` (and `valuesOut`).
 * Arguments are validated by the caller (sort.ts); n >= 1. `shape` picks the
 * formulation: the multisplit shape for the device by default, null for the
 * packed-count one (benchmarks and tests pass their own); pairs default to a
 * larger tile (MULTISPLIT_PAIR_ITEMS keys per invocation).
 */
export function recordRadixSort(
  device: Device,
  keys: Buffer,
  values: Buffer | undefined,
  keysOut: Buffer,
  valuesOut: Buffer | undefined,
  shape: MultisplitShape | null | 'default' = 'default',
): void {
  const shapeIsDefault = shape === 'default';
  if (shape === 'default') shape = sortShape(device.caps, values !== undefined) ?? null;
  const n = keys.length;
  const keyType = keys.dtype as 'u32' | 'i32' | 'f32';
  if (shapeIsDefault && radixFormulation(device).family === 'serial') {
    // Few fat serial workgroups: one chunk per worker, private histograms (radix-chunked.ts).
    withOrderKeys(device, keys, keysOut, (src, sorted) => recordChunkedRadix(device, src, values, sorted, valuesOut, n));
    return;
  }
  if (shape) {
    const multisplit = shape;
    withOrderKeys(device, keys, keysOut, (src, sorted) => recordMultisplitPasses(device, multisplit, src, values, sorted, valuesOut, n));
    return;
  }
  const wg = blockSize(device.caps, 40);
  const subgroups = device.caps.features.has('subgroup');
  const tiles = Math.ceil(n / (wg * ITEMS));
  const gw = gatherSize(device.caps);
  let src: Buffer = keys;
  if (keyType !== 'u32') {
    src = scratch(device, 'radix.in', 'u32', n);
    device.dispatch(transformKernel(keyType, true, gw), { invocations: n }, { src: keys, dst: src, n });
  }
  let vsrc: Buffer | undefined = values;
  const counts = scratch(device, 'radix.counts', 'u32', DIGITS * tiles);
  const offsets = scratch(device, 'radix.offsets', 'u32', DIGITS * tiles);
  const dummy = scratch(device, 'radix.dummy', 'u32', 1);
  for (let p = 0; p < PASSES; p++) {
    const last = p === PASSES - 1;
    const dst = last && keyType === 'u32' ? keysOut : scratch(device, `radix.k${p % 2}`, 'u32', n);
    const vdst = values ? (last ? (valuesOut as Buffer) : scratch(device, `radix.v${p % 2}`, values.dtype, n)) : undefined;
    const shift = p * BITS;
    dispatchGroups(device, countKernel(wg, subgroups), tiles, { keys: src, counts, n, shift, tiles });
    recordScan(device, counts, offsets, DIGITS * tiles, true);
    dispatchGroups(device, scatterKernel(wg, subgroups, values?.dtype), tiles, {
      keys: src,
      keysOut: dst,
      vals: vsrc ?? dummy,
      valsOut: vdst ?? scratch(device, 'radix.dummyOut', 'u32', 1),
      offsets,
      n,
      shift,
      tiles,
    });
    src = dst;
    vsrc = vdst;
  }
  if (keyType !== 'u32') device.dispatch(transformKernel(keyType, false, gw), { invocations: n }, { src, dst: keysOut, n });
}
