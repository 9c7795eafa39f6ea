/**
 * The conformance suite's histogram kernel (kernel-classes.test.ts: one atomicAdd per
 * element) on WebGL2, where atomics are points blended (FUNC_ADD) into a float shadow.
 * A float counts exactly only up to 2^24; the backend folds the shadow into the u32
 * buffer every 2^24 points (`atomicChunk`), so one bin stays exact beyond 2^24.
 * Browser only (the `webgl-*.test.ts` rule).
 */

import { buffer, createDevice, type Device, defineKernel } from 'trident';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const histogram = defineKernel({
  name: 'webgl_histogram',
  workgroupSize: 64,
  params: { x: buffer('u32', 'read'), bins: buffer('u32', 'atomic') },
  body: ({ x, bins }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(x.length), () => bins.atomicAdd(x.load(i).rem(bins.length), 1));
  },
});

let d: Device;
beforeAll(async () => {
  d = await createDevice({ backend: 'webgl2' });
});
afterAll(async () => {
  await d?.destroy();
});

/** `bin0` elements for bin 0, with `others` elements for bins 1..4 spread among them. */
function data(bin0: number, others: number): { x: Uint32Array; expected: Uint32Array } {
  const n = bin0 + others;
  const every = Math.floor(n / others);
  const x = new Uint32Array(n);
  const expected = new Uint32Array(5);
  let left = others;
  for (let i = 0; i < n; i++) {
    const other = left > 0 && (i % every === 0 || n - i <= left);
    if (other) left--;
    const bin = other ? 1 + (i % 4) : 0;
    x[i] = bin + 5 * (i & 0xffff); // a value whose remainder mod 5 is the bin
    expected[bin] = (expected[bin] as number) + 1;
  }
  return { x, expected };
}

describe('histogram on webgl2 by blending', () => {
  it('runs as blended atomics: the device claims atomics only by blending, exact to 2^24 per chunk', () => {
    expect(d.caps.features.has('atomics-via-blending')).toBe(true);
    expect(d.caps.limits.maxExactAtomicCount).toBe(2 ** 24);
    expect(() => d.compile(histogram)).not.toThrow();
  });

  for (const [label, bin0] of [
    ['up to 2^24 counts in one bin', 2 ** 24],
    ['beyond 2^24 counts in one bin', 2 ** 24 + 2 ** 20 + 3],
  ] as const) {
    it(`is exact ${label} (bin 0 gets ${bin0})`, async () => {
      const { x, expected } = data(bin0, 10_001);
      const n = x.length;
      expect(expected[0]).toBe(bin0);
      const xs = d.createBuffer('u32', x);
      const bins = d.createBuffer('u32', [0, 0, 0, 0, 7]);
      expected[4] = (expected[4] as number) + 7;
      d.dispatch(histogram, { invocations: n }, { x: xs, bins });
      expect(await bins.read()).toEqual(expected);
      xs.destroy();
      bins.destroy();
    }, 240_000);
  }
});
