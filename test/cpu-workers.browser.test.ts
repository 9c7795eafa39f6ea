/**
 * The CPU backend in the browser (browser only, by the `*.browser.test.ts` rule):
 * a Web Worker pool over SharedArrayBuffer in a cross-origin isolated page, reached
 * through the "browser" export condition of @trident/backend-cpu (Web Workers, no node: modules).
 */

import { buffer, createDevice, defineKernel, uniform } from 'trident';
import { describe, expect, it } from 'vitest';

describe('cpu backend in the browser', () => {
  it('runs in a cross-origin isolated page on a Web Worker pool', async () => {
    expect(crossOriginIsolated).toBe(true);
    const d = await createDevice({ backend: 'cpu', options: { cpu: { workers: 3 } } });
    try {
      expect(d.info.adapter).toBe('3 Web Workers');
      expect(d.caps.concurrency).toBe(3);
      // Three workers add into one SharedArrayBuffer element at once: Atomics keep every count.
      const k = defineKernel({
        name: 'browser_cpu_atomics',
        workgroupSize: 64,
        params: { c: buffer('u32', 'atomic'), n: uniform('u32') },
        body: ({ c, n }, k) => {
          const i = k.globalIndex;
          k.if(i.lt(n), () => c.atomicAdd(0, i.and(1).add(1)));
        },
      });
      const c = d.createBuffer('u32', 1);
      d.dispatch(k, { invocations: 30_000 }, { c, n: 30_000 });
      expect(await c.read()).toEqual(new Uint32Array([45_000]));
    } finally {
      await d.destroy();
    }
  });
});
