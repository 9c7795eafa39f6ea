/**
 * `trident devices [--json]`: probes every backend kind, says which give a
 * device here (adapter, caps, and the formulation each algorithm runs there) and
 * why the others do not, and which one `run` picks by default.
 */
import { BACKEND_KINDS, type BackendKind, probeBackends } from 'trident';
import { parse, workerCount } from '../args.ts';
import { type DeviceDescription, describeDevice } from '../device-description.ts';
import { deviceOptions } from '../device-options.ts';
import { formatBytes } from '../run/host-budget.ts';

export type DeviceEntry = ({ available: true } & DeviceDescription) | { backend: BackendKind; available: false; reason: string };

export interface DevicesReport {
  readonly backends: DeviceEntry[];
  /** With --browser: the same probe inside headless Chromium, where `run --backend webgl2` goes. */
  readonly chromium?: { readonly version: string; readonly backends: DeviceEntry[] };
  /** The backend `createDevice()` (and so `trident run`) picks without --backend; null if none works. */
  readonly default: BackendKind | null;
}

export async function listDevices(workers?: number): Promise<DevicesReport> {
  const backends: DeviceEntry[] = [];
  for (const r of await probeBackends(BACKEND_KINDS, deviceOptions(workers))) {
    if (r.available) {
      backends.push({ available: true, ...describeDevice(r.device) });
      await r.device.destroy();
    } else {
      backends.push({ backend: r.backend, available: false, reason: r.reason });
    }
  }
  return { backends, default: defaultBackend(backends) };
}

/** Mirrors createDevice's default order: webgpu -> webgl2 -> cpu, software adapters after cpu. */
function defaultBackend(entries: readonly DeviceEntry[]): BackendKind | null {
  const order: BackendKind[] = ['webgpu', 'webgl2', 'cpu'];
  const ok = order.map((k) => entries.find((e) => e.backend === k)).filter((e): e is DeviceEntry & { available: true } => !!e?.available);
  return (ok.find((e) => !e.software) ?? ok[0])?.backend ?? null;
}

export async function devicesCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    json: { type: 'boolean' },
    browser: { type: 'boolean' },
    workers: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(
      'usage: trident devices [--json] [--browser] [--workers N]\n\n  --browser  also probe inside headless Chromium (where --backend webgl2 runs)\n',
    );
    return 0;
  }
  const workers = workerCount(values.workers);
  let report = await listDevices(workers);
  if (values.browser) {
    const { probeInChromium } = await import('../browser/host.ts');
    const probe = await probeInChromium(workers);
    report = { ...report, chromium: { version: probe.chromiumVersion, backends: probe.entries as DeviceEntry[] } };
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  const lines: string[] = [];
  describeEntries(report.backends, report.default, lines);
  lines.push(report.default ? `default: ${report.default}` : 'default: none (no backend gives a device here)');
  if (report.chromium) {
    lines.push('', `in headless Chromium ${report.chromium.version} (trident run --backend webgl2, and webgpu where Node has none):`);
    describeEntries(report.chromium.backends, null, lines);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

function describeEntries(entries: readonly DeviceEntry[], defaultKind: BackendKind | null, lines: string[]): void {
  for (const e of entries) {
    if (!e.available) {
      lines.push(`${e.backend.padEnd(7)} unavailable: ${e.reason}`);
      continue;
    }
    const mark = e.backend === defaultKind ? ' (default)' : '';
    lines.push(`${e.backend.padEnd(7)} ${e.adapter}${e.software ? ' [software]' : ''}${mark}`);
    const l = e.caps.limits;
    lines.push(`        timer: ${e.caps.timerSource}; concurrency: ${e.caps.concurrency}; features: ${e.caps.features.join(', ')}`);
    lines.push(
      `        limits: buffer ${l.maxBufferElements} elements, workgroup ${l.maxComputeInvocationsPerWorkgroup} invocations, ` +
        `${l.maxComputeWorkgroupStorageSize} B shared, subgroup ${l.minSubgroupSize}-${l.maxSubgroupSize}`,
    );
    lines.push(`        memory: ${memoryLine(l.maxBufferElements, l.maxTotalBufferBytes)}`);
    const details = Object.entries(e.details)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ');
    if (details) lines.push(`        ${details}`);
    for (const [algorithm, formulation] of Object.entries(e.formulations))
      lines.push(`        ${`${algorithm}:`.padEnd(12)}${formulation}`);
  }
}

/** The largest single buffer and what all buffers may hold together (0: the device does not say, as WebGPU and WebGL2 do not). */
export function memoryLine(maxBufferElements: number, maxTotalBufferBytes: number): string {
  const total = maxTotalBufferBytes > 0 ? formatBytes(maxTotalBufferBytes) : 'not reported by the device';
  return `largest buffer ${formatBytes(4 * maxBufferElements)}, all buffers together ${total}`;
}
