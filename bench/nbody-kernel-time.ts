/**
 * The CPU backend's N-body kernels on one thread, in CPU time: the JavaScript that
 * `nbodyAccelerations` dispatches first is generated, then run over the whole grid
 * on this thread, and `process.cpuUsage()` around each run gives ns per interaction.
 * CPU time of one thread is what the kernel itself costs, and it stays put when
 * other processes load the machine (wall-clock figures do not); the figures in
 * nbody.ts's comments come from here.
 *
 *   npx tsx --conditions=trident-source bench/nbody-kernel-time.ts [--n 2048] [--runs 10]
 *     [--forms serial1,serial2,serial4,serial8,lanes4,lanes8,tiled,gather]
 *
 * serialB: the serial formulation, B bodies per invocation; lanesB: the same on a
 * 'simd' device (vec4 lanes; here as JavaScript, which scalarises the vectors);
 * tiled: the workgroup formulation at 256 invocations × 1 body, unroll 16 (its
 * default at 2048 bodies on 2 workers); gather: the gather-only devices' kernel.
 * Each result is also checked against the device's own run of the same kernel.
 */
import { parseArgs } from 'node:util';
import { type NBodyAccelerationOptions, nbodyAccelerations } from '@trident/algorithms';
import { cpuAdapter } from '@trident/backend-cpu';
import { generateJs } from '@trident/backend-cpu/internal';
import { type Device, type DeviceCaps, Device as DeviceClass, type Kernel } from '@trident/core';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '2048' },
    runs: { type: 'string', default: '10' },
    forms: { type: 'string', default: 'serial1,serial2,serial4,serial8,lanes4,lanes8,tiled,gather' },
  },
});
const n = Number(values.n);
const runs = Number(values.runs);
const softening2 = 1e-4;
const host = Float32Array.from({ length: 4 * n }, (_, e) => (e % 4 === 3 ? 1 + (e % 7) / 7 : Math.sin(e * 12.9898) * 0.5));

type Run = (b: Record<string, Float32Array>, u: Record<string, number>, start: number, end: number, nwg: number) => void;

/** The device with its caps changed (features added or removed), every call going to the real one. */
function withFeatures(device: Device, add: string[], remove: string[]): Device {
  const impl = device.impl;
  const features = new Set([...impl.caps.features].filter((f) => !remove.includes(f)).concat(add as never[]));
  const caps: DeviceCaps = { ...impl.caps, features };
  return new DeviceClass(Object.assign(Object.create(Object.getPrototypeOf(impl)), impl, { caps }));
}

async function measure(form: string): Promise<string> {
  const base = new DeviceClass(await cpuAdapter.create({ workers: 2 }));
  const lanes = form.startsWith('lanes');
  const device = lanes
    ? withFeatures(base, ['simd'], [])
    : form === 'gather'
      ? withFeatures(base, [], ['workgroup', 'serial-workgroups'])
      : base;
  const B = Number(form.replace(/\D/g, '')) || 1;
  const options: NBodyAccelerationOptions =
    form === 'tiled'
      ? { softening2, tiling: { workgroupSize: 256, bodiesPerInvocation: 1, unroll: 16 } }
      : form === 'gather'
        ? { softening2 }
        : { softening2, blocking: { bodiesPerInvocation: B } };
  // The first dispatch's kernel, grid and arguments, as the device records them.
  let first: { kernel: Kernel; workgroups: number; args: Record<string, unknown> } | undefined;
  const dispatch = device.dispatch.bind(device);
  device.dispatch = ((kernel: Kernel, grid: { invocations: number }, args: Record<string, unknown>) => {
    first ??= { kernel, workgroups: Math.ceil(grid.invocations / kernel.ir.workgroupSize), args };
    return dispatch(kernel as never, grid, args as never);
  }) as typeof device.dispatch;
  const got = nbodyAccelerations(device, device.createBuffer('f32', host), options);
  await device.flush();
  if (!first) throw new Error(`${form}: nothing dispatched`);
  const { kernel, workgroups, args } = first;
  // Host copies of the buffers the kernel takes, and its uniforms as numbers.
  const buffers: Record<string, Float32Array> = {};
  const uniforms: Record<string, number> = {};
  for (const [name, value] of Object.entries(args)) {
    if (typeof value === 'number') uniforms[name] = value;
    else buffers[name] = Float32Array.from(await (value as { read(): Promise<Float32Array> }).read());
  }
  const deviceResult = form === 'gather' ? undefined : await got.read();
  await base.destroy();
  const run = new Function(`return ${generateJs(kernel).source};`)() as Run;
  const ms: number[] = [];
  for (let r = 0; r < runs + 3; r++) {
    const t = process.cpuUsage();
    run(buffers, uniforms, 0, workgroups, workgroups);
    if (r >= 3) ms.push(process.cpuUsage(t).user / 1000);
  }
  ms.sort((a, b) => a - b);
  const median = ms[ms.length >> 1] as number;
  let same = 'not compared (the gather kernel writes four partial outputs)';
  if (deviceResult) {
    const acc = buffers.acc as Float32Array;
    same = acc.every((x, e) => Object.is(x, deviceResult[e])) ? 'bit-identical to the device run' : 'DIFFERS from the device run';
  }
  return `${form.padEnd(8)} n=${n}: ${median.toFixed(1)} ms CPU, ${((median * 1e6) / n / n).toFixed(2)} ns/interaction (kernel ${kernel.ir.name}; ${same})`;
}

for (const form of values.forms.split(',').filter((f) => f.length > 0)) console.log(await measure(form));
