/**
 * Issue 10's N-body tuning run on the CPU backend: `nbodyAccelerations` at n bodies
 * with the serial formulation at each blocking factor B and with the tiled
 * (workgroup) formulation, interleaved round by round so that the machine's drift
 * hits them alike, after warm-up rounds. Times are `device.time` (wall clock around
 * dispatch + join), as `trident bench` takes them; the report gives medians.
 *
 *   npx tsx --conditions=trident-source bench/nbody-serial.ts [--n 2048] [--rounds 9] [--warmup 10]
 *     [--blocks 1,2,4,8] [--tiling 'wg,B,unroll;…' (default 256,1,16: the tiled default at 2048 bodies on 2 workers)] [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { type NBodyAccelerationOptions, nbodyAccelerations } from '@trident/algorithms';
import { cpuAdapter } from '@trident/backend-cpu';
import { Device } from '@trident/core';
import { median } from '../packages/cli/src/bench/stats.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '2048' },
    rounds: { type: 'string', default: '9' },
    warmup: { type: 'string', default: '10' },
    blocks: { type: 'string', default: '1,2,4,8' },
    tiling: { type: 'string', default: '256,1,16' },
    out: { type: 'string' },
  },
});
const n = Number(values.n);
const rounds = Number(values.rounds);
const warmup = Number(values.warmup);
const softening2 = 1e-4;

const variants: Array<{ label: string; options: NBodyAccelerationOptions }> = values.blocks
  .split(',')
  .filter((b) => b.length > 0)
  .map((b) => ({ label: `serial B=${b}`, options: { softening2, blocking: { bodiesPerInvocation: Number(b) } } }));
for (const t of values.tiling.split(';').filter((x) => x.length > 0)) {
  const [workgroupSize, bodiesPerInvocation, unroll] = t.split(',').map(Number) as [number, number, number];
  variants.push({ label: `tiled ${t}`, options: { softening2, tiling: { workgroupSize, bodiesPerInvocation, unroll } } });
}

const device = new Device(await cpuAdapter.create({}));
const data = Float32Array.from({ length: 4 * n }, (_, e) => (e % 4 === 3 ? 1 + (e % 7) / 7 : Math.sin(e * 12.9898) * 0.5));
const bodies = device.createBuffer('f32', data);
const times = variants.map(() => [] as number[]);
for (let r = 0; r < warmup + rounds; r++) {
  for (const [v, { options }] of variants.entries()) {
    let out: ReturnType<typeof nbodyAccelerations> | undefined;
    const t = await device.time('nbody', () => {
      out = nbodyAccelerations(device, bodies, options);
    });
    out?.destroy();
    if (r >= warmup) times[v]?.push(t.ms);
  }
}
const rows = variants.map((v, i) => ({ variant: v.label, medianMs: median(times[i] as number[]), samplesMs: times[i] }));
for (const row of rows) console.log(`n=${n} ${row.variant.padEnd(24)} ${row.medianMs.toFixed(2)} ms`);
if (values.out) {
  const machine = { host: hostname(), cpu: cpus()[0]?.model, cores: cpus().length, node: process.version };
  writeFileSync(values.out, `${JSON.stringify({ createdAt: new Date().toISOString(), machine, n, rounds, warmup, rows }, null, 1)}\n`);
}
device.destroy();
