/**
 * Specs of the sorts' `output` / `valuesOutput` options, run inside alg-sort.test.ts's
 * block (its device has compiled the same sort kernels: software adapters spend most
 * of a first sort compiling; the specs run last there). Results land in the caller's
 * buffers (the same objects come back), a second sort into the same buffers is
 * right whatever they held, the inputs stay untouched, and bad outputs are refused
 * with typed errors before anything is recorded. Every sort of every formulation
 * (the gather-only view included), on every backend.
 */
import { bitonicSort, mergeSort, quickSort, radixSort, type SortOptions, sort, sortReference } from '@trident/algorithms';
import { type Buffer, type BufferDType, type Device, InvalidArgumentError } from 'trident';
import { expect, it } from 'vitest';
import { expectBitsEqual, formulations, isSlow } from './alg-helpers.ts';
import { type BackendContext, randomU32 } from './harness.ts';

type SortFn = (
  device: Device,
  keys: Buffer<'u32'>,
  options?: SortOptions<BufferDType, BufferDType>,
) => { keys: Buffer; values?: Buffer } | Promise<{ keys: Buffer; values?: Buffer }>;

function sortsFor(device: Device): Array<[string, SortFn]> {
  const all: Array<[string, SortFn]> = [
    ['sort', sort as SortFn],
    ['mergeSort', mergeSort as SortFn],
    // Workgroup formulations, or the gather radix sort (radix-gather.ts) on gather-only devices.
    ['radixSort', radixSort as SortFn],
  ];
  if (device.caps.features.has('workgroup')) all.push(['bitonicSort', bitonicSort as SortFn], ['quickSort', quickSort as SortFn]);
  return all;
}

/** The `output` option specs, for a describeEachBackend block. */
export function sortOutputSpecs(ctx: BackendContext): void {
  it('writes keys and values into the given buffers, twice in a row, inputs untouched', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const n = isSlow(device) ? 40 : 2000;
      for (const [name, fn] of sortsFor(device)) {
        const output = device.createBuffer('f32', n);
        const valuesOutput = device.createBuffer('i32', n);
        // Poison: every element must be written.
        output.fill(Number.NaN);
        valuesOutput.fill(-123456);
        // Software adapters run a sort slowly whatever its size: the reuse pass there for the default sorts only.
        const seeds = isSlow(device) && name !== 'sort' && name !== 'radixSort' ? [1] : [1, 2];
        for (const seed of seeds) {
          const raw = randomU32(n, seed * 977 + n);
          // Few distinct keys, so stability shows in the values.
          const keysData = Float32Array.from(raw, (x) => (x % 37) - 18.5);
          const valuesData = Int32Array.from({ length: n }, (_, i) => i - 7);
          const keys = device.createBuffer('f32', keysData);
          const values = device.createBuffer('i32', valuesData);
          const result = await fn(device, keys as unknown as Buffer<'u32'>, { values, output, valuesOutput });
          const what = `${label} ${name} pass ${seed}`;
          expect(result.keys, `${what}: keys come back in options.output`).toBe(output);
          expect(result.values, `${what}: values come back in options.valuesOutput`).toBe(valuesOutput);
          const want = sortReference(keysData, valuesData);
          expectBitsEqual(await output.read(), want.keys, `${what} keys`);
          expectBitsEqual(await valuesOutput.read(), want.values as Int32Array, `${what} values`);
          expectBitsEqual(await keys.read(), keysData, `${what} keys input untouched`);
          expectBitsEqual(await values.read(), valuesData, `${what} values input untouched`);
          if (seed === seeds.length) {
            // Keys only, into the same output.
            output.fill(Number.NaN);
            const keysOnly = await fn(device, keys as unknown as Buffer<'u32'>, { output });
            expect(keysOnly.keys).toBe(output);
            expect(keysOnly.values).toBeUndefined();
            expectBitsEqual(await output.read(), want.keys, `${what} keys only`);
          }
          keys.destroy();
          values.destroy();
        }
        output.destroy();
        valuesOutput.destroy();
      }
    }
  }, 240_000);

  it('an empty input returns the given (empty) output', async () => {
    const device = ctx.device;
    const keys = device.createBuffer('u32', 0);
    const output = device.createBuffer('u32', 0);
    expect(sort(device, keys, { output }).keys).toBe(output);
  });

  it('refuses bad outputs with typed errors before recording anything', async () => {
    const device = ctx.device;
    const keysData = Uint32Array.from([9, 3, 7, 1, 5]);
    const keys = device.createBuffer('u32', keysData);
    const values = device.createBuffer('i32', [1, 2, 3, 4, 5]);
    const output = device.createBuffer('u32', 5);
    output.fill(77);
    const bad: Array<[string, SortOptions<BufferDType, BufferDType>]> = [
      ['output of another dtype', { output: device.createBuffer('f32', 5) }],
      ['output of another length', { output: device.createBuffer('u32', 4) }],
      ['output is the keys', { output: keys }],
      ['valuesOutput without values', { output, valuesOutput: device.createBuffer('i32', 5) }],
      ['valuesOutput of another dtype', { values, valuesOutput: device.createBuffer('u32', 5) }],
      ['valuesOutput of another length', { values, valuesOutput: device.createBuffer('i32', 6) }],
      ['valuesOutput is the values', { values, valuesOutput: values }],
      ['valuesOutput is the output', { values: device.createBuffer('u32', 5), output, valuesOutput: output }],
      ['output not a buffer', { output: [1, 2, 3, 4, 5] as unknown as Buffer }],
    ];
    const sameAsValues = { values: output, output };
    bad.push(['output is the values buffer', sameAsValues]);
    for (const [name, fn] of sortsFor(device)) {
      for (const [what, options] of bad) {
        await expect((async () => fn(device, keys, options))(), `${name}: ${what}`).rejects.toBeInstanceOf(InvalidArgumentError);
      }
    }
    expectBitsEqual(await keys.read(), keysData, 'keys untouched');
    expect([...(await output.read())]).toEqual([77, 77, 77, 77, 77]);
  });
}
