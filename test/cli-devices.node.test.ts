/** `trident devices --json`: every backend kind, with a reason or an adapter and caps. */
import { BACKEND_KINDS } from 'trident';
import { expect, it } from 'vitest';
import { trident } from './cli-helpers.ts';
import { TEST_BACKENDS } from './harness.ts';

it('devices --json lists every backend kind, available ones with adapter and caps', () => {
  const r = trident(['devices', '--json', '--workers', '2']);
  expect(r.code, r.stderr).toBe(0);
  const report = JSON.parse(r.stdout) as {
    backends: Array<Record<string, unknown>>;
    default: string | null;
  };
  expect(report.backends.map((b) => b.backend)).toEqual([...BACKEND_KINDS]);
  for (const b of report.backends) {
    expect(typeof b.available).toBe('boolean');
    if (!b.available) {
      expect(typeof b.reason).toBe('string');
      expect((b.reason as string).length).toBeGreaterThan(0);
      continue;
    }
    expect(typeof b.adapter).toBe('string');
    expect(typeof b.software).toBe('boolean');
    const caps = b.caps as { limits: Record<string, number>; features: string[]; timerSource: string; concurrency: number };
    expect(['gpu-timestamp', 'wall']).toContain(caps.timerSource);
    expect(caps.features).toContain('gather');
    expect(caps.limits.maxBufferElements).toBeGreaterThan(0);
    // What all buffers may hold together: 0 where the device does not say (WebGPU, WebGL2); the CPU
    // backend's budget holds at least its largest buffer.
    expect(caps.limits.maxTotalBufferBytes).toBeGreaterThanOrEqual(0);
    if (b.backend === 'cpu') expect(caps.limits.maxTotalBufferBytes).toBeGreaterThanOrEqual(4 * (caps.limits.maxBufferElements ?? 0));
    expect(caps.concurrency).toBeGreaterThan(0);
    // The formulation each algorithm runs there: its own answer, or why it refuses.
    const formulations = b.formulations as Record<string, string>;
    expect(Object.keys(formulations)).toEqual(expect.arrayContaining(['reduce', 'scan', 'sort', 'histogram', 'compact', 'nbody']));
    for (const f of Object.values(formulations)) expect(f.length).toBeGreaterThan(0);
  }
  // Every backend the conformance harness found here is available to the CLI too (the CLI may find
  // more: it points Vulkan at SwiftShader on GPU-less machines, see packages/cli/src/environment.ts).
  const available = report.backends.filter((b) => b.available).map((b) => b.backend);
  for (const kind of TEST_BACKENDS) expect(available).toContain(kind);
  expect(available).toContain(report.default);
});

it('devices (text) names the default backend, and for each device its largest buffer and total', () => {
  const r = trident(['devices', '--workers', '1']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^default: (webgpu|webgl2|cpu)$/m);
  expect(r.stdout).toMatch(/^ {8}sort: {7}\S/m);
  const available = r.stdout.split('\n').filter((line) => /^\S/.test(line) && !/unavailable|^default:/.test(line)).length;
  const memory = r.stdout.match(/^ {8}memory: largest buffer \d+\.\d (KiB|MiB|GiB|TiB), all buffers together .+$/gm) ?? [];
  expect(memory.length).toBe(available);
  // The CPU backend says what all its buffers may hold; a device that does not say is named so.
  const cpu = r.stdout.slice(r.stdout.indexOf('\ncpu '));
  expect(cpu).toMatch(/all buffers together \d+\.\d (MiB|GiB|TiB)$/m);
  for (const line of memory) expect(line).toMatch(/together (\d+\.\d (KiB|MiB|GiB|TiB)|not reported by the device)$/);
});

it('devices --json --browser also probes headless Chromium, where webgl2 is', () => {
  const r = trident(['devices', '--json', '--browser', '--workers', '2']);
  expect(r.code, r.stderr).toBe(0);
  const report = JSON.parse(r.stdout) as { chromium?: { version: string; backends: Array<Record<string, unknown>> } };
  expect(report.chromium?.version).toMatch(/^\d+\./);
  expect(report.chromium?.backends.map((b) => b.backend)).toEqual([...BACKEND_KINDS]);
  const webgl2 = report.chromium?.backends.find((b) => b.backend === 'webgl2') ?? {};
  expect(webgl2.available, String(webgl2.reason)).toBe(true);
  expect((webgl2.caps as { features: string[] }).features).toContain('gather');
});
