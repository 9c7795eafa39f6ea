/**
 * A first Trident program: define a kernel once, run it on the best device this
 * machine offers (the CPU backend where no GPU is available), and check the result.
 *
 *   npx tsx examples/cpu-quickstart.ts [--backend cpu|webgpu|webgl2]
 */
import { parseArgs } from 'node:util';
import { type BackendKind, buffer, createDevice, defineKernel, uniform } from 'trident';

const { values } = parseArgs({ options: { backend: { type: 'string' } } });

// y[i] = a * x[i] + y[i], guarded because the grid rounds up to whole workgroups.
const saxpy = defineKernel({
  name: 'saxpy',
  workgroupSize: 64,
  params: { x: buffer('f32', 'read'), y: buffer('f32', 'read_write'), a: uniform('f32') },
  body: ({ x, y, a }, k) => {
    const i = k.globalIndex;
    k.if(i.lt(y.length), () => y.store(i, a.mul(x.load(i)).add(y.load(i))));
  },
});

const device = await createDevice(values.backend ? { backend: values.backend as BackendKind } : {});
console.log(`device: ${device.backend} (${device.info.adapter})`);
for (const s of device.skipped) console.log(`  skipped ${s.backend}: ${s.reason}`);

const n = 1_000_000;
const x = device.createBuffer(
  'f32',
  Float32Array.from({ length: n }, (_, i) => i),
);
const y = device.createBuffer('f32', new Float32Array(n).fill(1));
// The first dispatch compiles the kernel (and, on the CPU backend, warms up the JIT in each worker).
await device.time('warm-up', () => device.dispatch(saxpy, { invocations: n }, { x, y, a: 0 }));
const timing = await device.time('saxpy', () => device.dispatch(saxpy, { invocations: n }, { x, y, a: 2 }));
const result = await y.read();

let wrong = 0;
for (let i = 0; i < n; i++) if (result[i] !== Math.fround(2 * i + 1)) wrong++;
console.log(`saxpy over ${n} elements: ${timing.ms.toFixed(2)} ms (${timing.source}); y[12345] = ${result[12345]}`);
console.log(wrong === 0 ? 'result matches the sequential reference' : `${wrong} elements differ from the reference`);
await device.destroy();
process.exitCode = wrong === 0 ? 0 : 1;
