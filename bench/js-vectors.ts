/**
 * Vector kernels in the CPU backend's generated JavaScript, on one thread in CPU
 * time: a vec4 saxpy (y = a·x + y) and a vec4 sum loop over 2^20 f32. The same
 * script run on a tree from before the JavaScript generator scalarised vectors
 * gives the before figures beside these.
 *
 *   npx tsx --conditions=trident-source bench/js-vectors.ts
 */
import { generateJs } from '@trident/backend-cpu/internal';
import { buffer, defineKernel, type Kernel, uniform } from '@trident/core';

const saxpy4 = defineKernel({
  name: 'saxpy4',
  workgroupSize: 64,
  params: { x: buffer('f32', 'read', { vector: 4 }), y: buffer('f32', 'read_write', { vector: 4 }), a: uniform('f32') },
  body: ({ x, y, a }, k) => {
    const i = k.let(k.globalIndex);
    y.store(i, x.load(i).mul(a).add(y.load(i)));
  },
});
const sum4 = defineKernel({
  name: 'sum4',
  workgroupSize: 1,
  params: { x: buffer('f32', 'read', { vector: 4 }), out: buffer('f32', 'write'), n: uniform('u32') },
  body: ({ x, out, n }, k) => {
    const acc = k.var('vec4<f32>', 0, 'acc');
    k.for({ from: 0, to: n, type: 'u32' }, (j) => acc.set(acc.add(x.load(j))));
    out.store(0, acc.x.add(acc.y).add(acc.z.add(acc.w)));
  },
});

type Run = (b: Record<string, Float32Array>, u: Record<string, number>, start: number, end: number, nwg: number) => void;
const n = 1 << 20;
const x = Float32Array.from({ length: n }, (_, i) => (i % 17) * 0.25);
const cases: Array<[string, Kernel, Record<string, number>, Record<string, Float32Array>, number]> = [
  ['saxpy vec4 (2^20 f32)', saxpy4 as unknown as Kernel, { a: 2 }, { x, y: new Float32Array(n) }, n / 4 / 64],
  ['sum vec4 loop (2^20 f32)', sum4 as unknown as Kernel, { n: n / 4 }, { x, out: new Float32Array(1) }, 1],
];
for (const [name, kernel, uniforms, buffers, workgroups] of cases) {
  const run = new Function(`return ${generateJs(kernel).source};`)() as Run;
  const ms: number[] = [];
  for (let r = 0; r < 15; r++) {
    const t = process.cpuUsage();
    run(buffers, uniforms, 0, workgroups, workgroups);
    if (r >= 5) ms.push(process.cpuUsage(t).user / 1000);
  }
  ms.sort((a, b) => a - b);
  console.log(`${name}: median ${ms[ms.length >> 1]?.toFixed(2)} ms CPU (one thread, 10 runs after 5 warm-ups)`);
}
