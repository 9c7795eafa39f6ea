/**
 * Radix sort for devices with 'serial-workgroups' (a CPU's few, fat, serial
 * workgroups): LSD over four 8-bit digits, the keys split into one contiguous chunk
 * per worker (reduce's chunk plan). Per pass, three dispatches: each chunk counts
 * its digits into a private 256-bin histogram; one invocation turns the histograms
 * into exclusive offsets, digit-major then chunk (so equal digits keep chunk order);
 * each chunk walks its keys in order and scatters each to its digit's next slot
 * (stable). 2 reads and 1 write of each key per pass; no workgroup memory, no atomics.
 */
import { type Buffer, buffer, type Device, defineKernel, min, uniform, type Val, type Var } from '@trident/core';
import { cachedKernel, scratch } from '../../common.ts';
import { chunkPlan } from '../../reduce/reduce.ts';

/** Tuning as data: digit width (8 bits: 4 passes, 256-bin histograms that stay in L1). */
const RADIX = { bits: 8, digits: 256, passes: 4 } as const;

function histogramKernel() {
  return cachedKernel('radix-chunk:hist', () =>
    defineKernel({
      name: 'radix_chunk_histogram',
      workgroupSize: 1,
      params: {
        keys: buffer('u32', 'read'),
        hist: buffer('u32', 'read_write'),
        n: uniform('u32'),
        chunk: uniform('u32'),
        shift: uniform('u32'),
      },
      body: ({ keys, hist, n, chunk, shift }, k) => {
        const c = k.let(k.globalIndex, 'c');
        const base = k.let(c.mul(RADIX.digits), 'base');
        k.for({ from: 0, to: RADIX.digits }, (d) => hist.store(base.add(d), 0));
        const start = k.let(c.mul(chunk), 'start');
        k.for({ from: start, to: min(n, start.add(chunk)) }, (i) => {
          const slot = k.let(
            base.add(
              keys
                .load(i)
                .shr(shift)
                .and(RADIX.digits - 1),
            ),
            'slot',
          );
          hist.store(slot, hist.load(slot).add(1));
        });
      },
    }),
  );
}

/** hist (chunk-major) -> exclusive offsets in place, digit-major then chunk: one invocation. */
function offsetsKernel() {
  return cachedKernel('radix-chunk:offsets', () =>
    defineKernel({
      name: 'radix_chunk_offsets',
      workgroupSize: 1,
      params: { hist: buffer('u32', 'read_write'), chunks: uniform('u32') },
      body: ({ hist, chunks }, k) => {
        const running = k.var('u32', 0, 'running') as Var<'u32'>;
        k.if(k.globalIndex.eq(0), () => {
          k.for({ from: 0, to: RADIX.digits }, (d) => {
            k.for({ from: 0, to: chunks }, (c) => {
              const slot = k.let(c.mul(RADIX.digits).add(d), 'slot');
              const count = k.let(hist.load(slot), 'count');
              hist.store(slot, running);
              running.set(running.add(count));
            });
          });
        });
      },
    }),
  );
}

function scatterKernel(valueType: Buffer['dtype'] | undefined) {
  return cachedKernel(`radix-chunk:scatter:${valueType ?? 'keys'}`, () =>
    defineKernel({
      name: `radix_chunk_scatter${valueType ? `_pairs_${valueType}` : ''}`,
      workgroupSize: 1,
      params: {
        keys: buffer('u32', 'read'),
        keysOut: buffer('u32', 'write'),
        vals: buffer(valueType ?? 'u32', 'read'),
        valsOut: buffer(valueType ?? 'u32', 'write'),
        hist: buffer('u32', 'read_write'),
        n: uniform('u32'),
        chunk: uniform('u32'),
        shift: uniform('u32'),
      },
      body: ({ keys, keysOut, vals, valsOut, hist, n, chunk, shift }, k) => {
        const c = k.let(k.globalIndex, 'c');
        const base = k.let(c.mul(RADIX.digits), 'base');
        const start = k.let(c.mul(chunk), 'start');
        k.for({ from: start, to: min(n, start.add(chunk)) }, (i) => {
          const key = k.let(keys.load(i), 'key');
          const slot = k.let(base.add(key.shr(shift).and(RADIX.digits - 1)), 'slot');
          const at = k.let(hist.load(slot), 'at');
          hist.store(slot, at.add(1));
          keysOut.store(at, key);
          if (valueType) valsOut.store(at, vals.load(i) as Val<'u32'>);
        });
      },
    }),
  );
}

/**
 * Records the sort of u32 `keys` (order keys already: the caller transforms i32/f32)
 * into `keysOut`, `values` into `valuesOut` alongside. n >= 1.
 */
export function recordChunkedRadix(
  device: Device,
  keys: Buffer,
  values: Buffer | undefined,
  keysOut: Buffer,
  valuesOut: Buffer | undefined,
  n: number,
): void {
  const { chunks, chunk } = chunkPlan(device, n);
  const hist = scratch(device, 'radix.chunkHist', 'u32', chunks * RADIX.digits);
  const dummy = scratch(device, 'radix.dummy', 'u32', 1);
  let src = keys;
  let vsrc = values;
  for (let p = 0; p < RADIX.passes; p++) {
    const last = p === RADIX.passes - 1;
    const dst = last ? keysOut : scratch(device, `radix.k${p % 2}`, 'u32', n);
    const vdst = values ? (last ? (valuesOut as Buffer) : scratch(device, `radix.v${p % 2}`, values.dtype, n)) : undefined;
    const shift = p * RADIX.bits;
    device.dispatch(histogramKernel(), { invocations: chunks }, { keys: src, hist, n, chunk, shift });
    device.dispatch(offsetsKernel(), { invocations: 1 }, { hist, chunks });
    device.dispatch(
      scatterKernel(values?.dtype),
      { invocations: chunks },
      {
        keys: src,
        keysOut: dst,
        vals: vsrc ?? dummy,
        valsOut: vdst ?? scratch(device, 'radix.dummyOut', 'u32', 1),
        hist,
        n,
        chunk,
        shift,
      },
    );
    src = dst;
    vsrc = vdst;
  }
}
