/**
 * The benchmark page's script (bundled by esbuild, run in headless Chromium):
 * the same cases and runner as in Node, on the backends a browser has (webgl2,
 * webgpu, cpu over Web Workers), then the peers.
 */
import * as tf from '@tensorflow/tfjs';
import { randomU32, reduce } from '@trident/algorithms';
import { BACKEND_KINDS, type BackendKind, createDevice, probeBackends } from 'trident';
import { CASES } from '../bench/cases.ts';
import { CEILING_THREAD_SOURCE, type CeilingThread, CeilingThreads, isCeilingCase, measureCeiling } from '../bench/ceiling.ts';
import { RADIX_CASES } from '../bench/radix-cases.ts';
import { measureCase, warmDevice } from '../bench/runner.ts';
import type { BenchDevice, Measurement } from '../bench/schema.ts';
import { describeDevice } from '../device-description.ts';
import { executeJob, fromWire, toWire } from '../run/execute.ts';
import { runPeers } from './peers.ts';
import type { PageConfig, PageDeviceEntry, PageResult, ReadProbeConfig, ReadProbeRow } from './protocol.ts';

const progress = async (label: string): Promise<void> => {
  await window.tridentProgress?.(label);
};

window.tridentBench = async (config: PageConfig): Promise<PageResult> => {
  const measurements: Measurement[] = [];
  const unavailable: PageResult['unavailable'] = [];
  const adapters: Record<string, string> = {};
  const devices: BenchDevice[] = [];
  const versions: Record<string, string> = { userAgent: navigator.userAgent };
  for (const kind of config.backends as BackendKind[]) {
    let device: Awaited<ReturnType<typeof createDevice>>;
    try {
      const cpu = { ...(config.workers ? { workers: config.workers } : {}), ...(config.wasm === false ? { wasm: false } : {}) };
      device = await createDevice({ backend: kind, ...(Object.keys(cpu).length > 0 ? { options: { cpu } } : {}) });
    } catch (err) {
      const reasons = (err as { reasons?: Array<{ reason: string }> }).reasons;
      unavailable.push({ backend: kind, runtime: 'chromium', reason: reasons?.[0]?.reason ?? String(err) });
      for (const c of config.cases) for (const n of c.sizes) await progress(`chromium ${kind} ${c.key} n=${n} (unavailable)`);
      continue;
    }
    adapters[`chromium/${kind}`] = device.info.adapter;
    devices.push({ ...describeDevice(device), runtime: 'chromium' });
    try {
      if (config.deviceWarmupMs) {
        await progress(`chromium ${kind} device warm-up`);
        const largest = Math.max(0, ...config.cases.flatMap((c) => c.sizes));
        await warmDevice(device, Math.min(2 ** 26, Math.max(2 ** 16, largest)), config.deviceWarmupMs);
      }
      for (const pc of config.cases) {
        const c = [...CASES, ...RADIX_CASES].find((x) => `${x.algorithm}:${x.variant}` === pc.key);
        if (!c) throw new Error(`unknown case ${pc.key}`);
        for (const n of pc.sizes) {
          await progress(`chromium ${kind} ${pc.key} n=${n}`);
          measurements.push(await measureCase(device, c, n, config.settings, 'chromium'));
        }
      }
    } finally {
      await device.destroy();
    }
    // The plain-JS ceiling beside the cpu backend, on as many Web Workers as it had (bench/ceiling.ts).
    if (kind === 'cpu') measurements.push(...(await measureCeilings(config, device.caps.concurrency)));
  }
  if (config.peers) {
    const peers = await runPeers(config, progress);
    measurements.push(...peers.measurements);
    unavailable.push(...peers.unavailable);
    Object.assign(adapters, peers.adapters);
    Object.assign(versions, peers.versions);
  }
  return { measurements, unavailable, adapters, versions, devices };
};

function webWorkerThreads(count: number, url: string): CeilingThreads {
  const threads = Array.from({ length: count }, (): CeilingThread => {
    const w = new Worker(url);
    return {
      post: (m) => w.postMessage(m),
      onReply: (listener) => w.addEventListener('message', (e: MessageEvent<number>) => listener(e.data)),
      onError: (listener) => w.addEventListener('error', (e: ErrorEvent) => listener(new Error(e.message))),
      terminate: () => {
        w.terminate();
        return undefined;
      },
    };
  });
  return new CeilingThreads(threads);
}

async function measureCeilings(config: PageConfig, threads: number): Promise<Measurement[]> {
  const keys = config.cases.filter((c) => isCeilingCase(c.key));
  if (keys.length === 0) return [];
  const url = URL.createObjectURL(new Blob([CEILING_THREAD_SOURCE], { type: 'text/javascript' }));
  const pool = webWorkerThreads(threads, url);
  const out: Measurement[] = [];
  try {
    for (const pc of keys) {
      if (!isCeilingCase(pc.key)) continue;
      for (const n of pc.sizes) {
        await progress(`chromium plain-JS ceiling ${pc.key} n=${n}`);
        // Timed by the adaptive protocol whatever Trident's rows used: the row says so for a file of mixed protocols.
        out.push({ ...(await measureCeiling(pc.key, n, pool, config.settings, 'chromium', 'Web Workers')), protocol: 'adaptive' });
      }
    }
  } finally {
    await pool.terminate();
    URL.revokeObjectURL(url);
  }
  return out;
}

window.tridentRun = async (backend, job, workers) => {
  let device: Awaited<ReturnType<typeof createDevice>> | undefined;
  try {
    device = await createDevice({ backend: backend as BackendKind, ...(workers > 0 ? { options: { cpu: { workers } } } : {}) });
    const inputs = Object.fromEntries(Object.entries(job.inputs).map(([k, v]) => [k, fromWire(v)]));
    const outputs = await executeJob(device, { ...job, inputs });
    return {
      outputs: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, toWire(v)])),
      backend: device.backend,
      adapter: device.info.adapter,
    };
  } catch (err) {
    const reasons = (err as { reasons?: Array<{ backend: string; reason: string }> }).reasons;
    const message = reasons
      ? `${backend} is unavailable in Chromium: ${reasons[0]?.reason ?? ''}`
      : err instanceof Error
        ? `${err.name}: ${err.message}`
        : String(err);
    return { error: message };
  } finally {
    await device?.destroy();
  }
};

window.tridentDevices = async (workers) => {
  const entries: PageDeviceEntry[] = [];
  for (const r of await probeBackends(BACKEND_KINDS, workers > 0 ? { cpu: { workers } } : undefined)) {
    if (r.available) {
      entries.push({ available: true, ...describeDevice(r.device) });
      await r.device.destroy();
    } else {
      entries.push({ backend: r.backend, available: false, reason: r.reason });
    }
  }
  return entries;
};

/**
 * What a small result costs to reach the host on each browser GPU backend: the wall time of
 * `reduce` (the call and the read of its value), back to back, per read-wait setting of the
 * WebGL2 backend (`blockingReadBytes`) and on WebGPU, measured in interleaved rounds; TF.js's
 * `sum(x).data()` in the same page beside it. bench/h100/browser-run.ts --parts read-probe.
 */
window.tridentReadProbe = async (config: ReadProbeConfig): Promise<ReadProbeRow[]> => {
  const rows: ReadProbeRow[] = [];
  const variants: Array<{ label: string; backend: BackendKind; options?: Record<string, unknown> }> = [
    ...config.blockingReadBytes.map((bytes) => ({
      label: `webgl2 blockingReadBytes=${bytes}`,
      backend: 'webgl2' as const,
      options: { webgl2: { blockingReadBytes: bytes } },
    })),
    { label: 'webgpu', backend: 'webgpu' },
  ];
  for (const log2n of config.sizes) {
    const n = 2 ** log2n;
    const host = randomU32(n, 7);
    const runs: Array<{ label: string; call: () => Promise<number>; samples: number[]; dispose: () => Promise<void> }> = [];
    for (const v of variants) {
      await progress(`read probe ${v.label} n=2^${log2n}`);
      try {
        const device = await createDevice({ backend: v.backend, ...(v.options ? { options: v.options } : {}) });
        const input = device.createBuffer('u32', n);
        input.write(host);
        runs.push({
          label: `trident ${v.label}`,
          call: () => reduce(device, input, { op: 'sum' }),
          samples: [],
          dispose: async () => {
            input.destroy();
            await device.destroy();
          },
        });
      } catch (err) {
        rows.push({ label: `trident ${v.label}`, log2n, error: String(err) });
      }
    }
    for (const backend of ['webgl', 'webgpu']) {
      try {
        if (!(await tf.setBackend(backend))) throw new Error(`tf.setBackend('${backend}') failed`);
        const x = tf.tensor1d(
          Int32Array.from(host, (v) => v & 0xffff),
          'int32',
        );
        runs.push({
          label: `tfjs ${backend} sum().data()`,
          call: async () => {
            const y = tf.sum(x);
            const d = await y.data();
            y.dispose();
            return d[0] as number;
          },
          samples: [],
          dispose: async () => x.dispose(),
        });
      } catch (err) {
        rows.push({ label: `tfjs ${backend}`, log2n, error: String(err) });
      }
    }
    // Warm each, then interleave rounds so a slow spell of the machine hits every variant alike.
    for (const r of runs) for (let i = 0; i < config.warmup; i++) await r.call();
    for (let round = 0; round < config.rounds; round++) {
      for (const r of runs) {
        for (let i = 0; i < config.perRound; i++) {
          const t0 = performance.now();
          await r.call();
          r.samples.push(performance.now() - t0);
        }
      }
    }
    for (const r of runs) {
      const sorted = [...r.samples].sort((a, b) => a - b);
      rows.push({
        label: r.label,
        log2n,
        medianMs: sorted[Math.floor(sorted.length / 2)] as number,
        p10Ms: sorted[Math.floor(sorted.length / 10)] as number,
        p90Ms: sorted[Math.floor((sorted.length * 9) / 10)] as number,
        samples: sorted.length,
      });
      await r.dispose();
    }
  }
  return rows;
};
