/**
 * Why does the same reduce kernel time at 0.35 ms in one row of the suite and 0.62 ms
 * in the next? One device call, one change at a time, each row the median of 7
 * single-dispatch `device.time` runs after ~100 ms of back-to-back warm-up:
 *
 *   - reduce sum / max into fresh output buffers, in both orders;
 *   - the same after the output buffer was read back to the host;
 *   - the same with the host idle for a second before the row;
 *   - one `device.time` around 10 back-to-back dispatches (per-dispatch mean);
 *   - histogram (256 bins) single vs batched.
 *
 * Bundle like the other checks (--alias:trident=./bench/h100/trident-webgpu-only.mjs) and run:
 *   node .gpu/timing-check.mjs
 */
import { histogram, randomU32, reduceInto } from '@trident/algorithms';
import { type Buffer, createDevice, type Device } from 'trident';
import { median, summarize } from '../../packages/cli/src/bench/stats.ts';

const device: Device = await createDevice({ backend: 'webgpu' });
const N = 2 ** 28;
const data = randomU32(N, 7);
const input = device.createBuffer('u32', data);
const bytes = device.createBuffer(
  'u32',
  data.map((x) => x & 255),
);

async function warm(body: () => void): Promise<void> {
  let ms = 0;
  for (let b = 0; b < 20 && ms < 100; b++)
    ms += (
      await device.time('warm', () => {
        for (let i = 0; i < 4; i++) body();
      })
    ).ms;
}

async function single(label: string, body: () => void): Promise<void> {
  await warm(body);
  const ms: number[] = [];
  for (let r = 0; r < 7; r++) ms.push((await device.time(label, body)).ms);
  const s = summarize(ms);
  console.log(JSON.stringify({ label, single: s.median, min: s.min, max: s.max }));
}

async function batched(label: string, body: () => void): Promise<void> {
  await warm(body);
  const ms: number[] = [];
  for (let r = 0; r < 5; r++)
    ms.push(
      (
        await device.time(label, () => {
          for (let i = 0; i < 10; i++) body();
        })
      ).ms / 10,
    );
  console.log(JSON.stringify({ label, batchedMean: median(ms) }));
}

const fresh = (): Buffer<'u32'> => device.createBuffer('u32', 1);
const sum = (out: Buffer<'u32'>) => () => void reduceInto(device, input, { op: 'sum', output: out });
const max = (out: Buffer<'u32'>) => () => void reduceInto(device, input, { op: 'max', output: out });

const a = fresh();
await single('1 sum, fresh output', sum(a));
const b = fresh();
await single('2 max, fresh output', max(b));
await single('3 sum again, same output (never read)', sum(a));
await a.read();
await single('4 sum, output read back before', sum(a));
await new Promise((r) => setTimeout(r, 1000));
await single('5 sum after 1 s host idle', sum(fresh()));
await single('6 max, fresh output', max(fresh()));
await batched('7 sum batched x10', sum(fresh()));
await batched('8 max batched x10', max(fresh()));
const hist = device.createBuffer('u32', 256);
await single('9 histogram single', () => void histogram(device, bytes, { bins: 256, output: hist }));
await batched('10 histogram batched x10', () => void histogram(device, bytes, { bins: 256, output: hist }));
await single('11 sum single (after histogram)', sum(fresh()));
await device.destroy();
process.exit(0);
