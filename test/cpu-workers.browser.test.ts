/**
 * The CPU backend in the browser (browser only, by the `*.browser.test.ts` rule):
 * a Web Worker pool over a shared WebAssembly.Memory in a cross-origin isolated page, reached
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
      // Three workers add into one element of the shared memory at once: atomics keep every count.
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
      // The kernel ran as WebAssembly (i32.atomic.rmw.add on the shared memory) in the Web Workers.
      expect(d.info.details.wasm).toBe(true);
      expect((d.compile(k) as { path?: string }).path).toBe('wasm');
      expect(d.caps.features.has('simd')).toBe(true);
    } finally {
      await d.destroy();
    }
  });
});
