/**
 * The work the leak check repeats, shared by Node (bench/leaks/leaks.ts)
 * and the Chromium page (bench/leaks/page.ts): buffer cycles on one device, and
 * device cycles. Environment-agnostic: no node: imports.
 */
import { type BackendKind, type CreateDeviceOptions, createDevice, type Device } from 'trident';

export const DEVICE_OPTIONS: CreateDeviceOptions['options'] = { cpu: { workers: 1 } };

/** Elements per buffer: small, so the figures show per-buffer bookkeeping, not data. */
export const BUFFER_ELEMENTS = 1024;

/** `count` cycles of create / write / read / destroy of a u32 buffer; checks every read. */
export async function bufferCycles(device: Device, count: number): Promise<void> {
  const data = new Uint32Array(BUFFER_ELEMENTS);
  for (let i = 0; i < count; i++) {
    data[0] = i;
    const b = device.createBuffer('u32', BUFFER_ELEMENTS);
    b.write(data);
    const back = await b.read();
    if (back[0] !== i) throw new Error(`buffer cycle ${i}: read ${back[0]}, wrote ${i}`);
    b.destroy();
  }
}

/** `count` cycles of createDevice / destroy. */
export async function deviceCycles(kind: BackendKind, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const d = await createDevice({ backend: kind, options: DEVICE_OPTIONS });
    await d.destroy();
  }
}

export interface LeakSample {
  readonly label: string;
  /** JS heap in use after a full GC, bytes. */
  readonly heap: number;
  /** Resident set of the process(es), bytes (Node: process RSS; Chromium: all its processes). */
  readonly rss: number;
  /** Node only: bytes held by ArrayBuffers and SharedArrayBuffers (the CPU backend's buffers live there, off the heap). */
  readonly arrayBuffers?: number;
}

export interface PhaseGrowth {
  /** Growth over the first and the second half of the measured cycles: a leak grows in both, an allocator filling up only in the first. */
  readonly firstHalf: Growth;
  readonly secondHalf: Growth;
}

export interface LeakReport {
  readonly backend: string;
  readonly environment: 'node' | 'chromium';
  readonly bufferCycles: number;
  readonly deviceCycles: number;
  readonly samples: readonly LeakSample[];
  readonly growth: { readonly buffers: PhaseGrowth; readonly devices: PhaseGrowth };
  readonly seconds: number;
}

export interface Growth {
  readonly heap: number;
  readonly rss: number;
  readonly arrayBuffers?: number;
}

const diff = (a: LeakSample, b: LeakSample): Growth => ({
  heap: b.heap - a.heap,
  rss: b.rss - a.rss,
  ...(a.arrayBuffers !== undefined && b.arrayBuffers !== undefined ? { arrayBuffers: b.arrayBuffers - a.arrayBuffers } : {}),
});

/**
 * Runs both phases with samples around them: warm-up (a tenth of the cycles, so
 * caches, pools and JIT settle), then the measured cycles in two halves. `sample`
 * forces a GC and measures.
 */
export async function measureLeaks(
  kind: BackendKind,
  environment: LeakReport['environment'],
  counts: { buffers: number; devices: number },
  sample: (label: string) => Promise<LeakSample>,
): Promise<LeakReport> {
  const start = performance.now();
  const samples: LeakSample[] = [];
  const take = async (label: string) => {
    const s = await sample(label);
    samples.push(s);
    return s;
  };
  const halves = async (what: string, total: number, cycles: (n: number) => Promise<void>): Promise<PhaseGrowth> => {
    await cycles(Math.max(1, Math.floor(total / 10)));
    const s0 = await take(`${what}: after warm-up`);
    const half = Math.floor(total / 2);
    await cycles(half);
    const s1 = await take(`${what}: after ${half} cycles`);
    await cycles(total - half);
    const s2 = await take(`${what}: after ${total} cycles`);
    return { firstHalf: diff(s0, s1), secondHalf: diff(s1, s2) };
  };
  const device = await createDevice({ backend: kind, options: DEVICE_OPTIONS });
  const buffers = await halves('buffers', counts.buffers, (n) => bufferCycles(device, n));
  await device.destroy();
  const devices = await halves('devices', counts.devices, (n) => deviceCycles(kind, n));
  return {
    backend: kind,
    environment,
    bufferCycles: counts.buffers,
    deviceCycles: counts.devices,
    samples,
    growth: { buffers, devices },
    seconds: (performance.now() - start) / 1000,
  };
}
