/**
 * Leak check: 10^4 cycles of create / write / read / destroy of a
 * buffer and 10^3 cycles of createDevice / destroy, per backend: cpu and webgpu
 * in Node, webgl2, webgpu and cpu in headless Chromium. Reports the JS heap
 * (after a full GC) and the RSS after warm-up and after each phase, and, for
 * Node, whether the process exits on its own once the work is done.
 *
 *   npx tsx --conditions=trident-source bench/leaks/leaks.ts [--buffers 10000] [--devices 1000]
 *       [--backends cpu,webgpu] [--browser webgl2,webgpu,cpu] [--out bench/results/reliability/leaks.json]
 *
 * `--browser ''` skips Chromium; `--backends ''` skips Node. test/leaks.node.test.ts
 * runs a short version of the Node part.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { BackendKind } from 'trident';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../packages/cli/src/browser/chromium.ts';
import { serve } from '../../packages/cli/src/browser/host.ts';
import { type LeakReport, type LeakSample, measureLeaks, type PhaseGrowth } from './cycles.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const SELF = fileURLToPath(import.meta.url);

function cliValues() {
  return parseArgs({
    options: {
      buffers: { type: 'string', default: '10000' },
      devices: { type: 'string', default: '1000' },
      backends: { type: 'string', default: 'cpu,webgpu' },
      browser: { type: 'string', default: 'webgl2,webgpu,cpu' },
      out: { type: 'string' },
      child: { type: 'string' },
      'exit-timeout': { type: 'string', default: '20' },
    },
  }).values;
}
const list = (s: string | undefined) => (s ?? '').split(',').filter(Boolean) as BackendKind[];

/** Node child: one backend, JSON on stdout, then it simply returns; the parent sees whether the process ends. */
async function child(kind: BackendKind, counts: { buffers: number; devices: number }): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the child with --expose-gc');
  const report = await measureLeaks(kind, 'node', counts, async (label) => {
    gc();
    await new Promise((r) => setTimeout(r, 10));
    gc();
    const m = process.memoryUsage();
    return { label, heap: m.heapUsed, rss: m.rss, arrayBuffers: m.arrayBuffers };
  });
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

export interface NodeLeakRun {
  readonly report: LeakReport;
  /** Seconds from the report to the process's own exit; null if it had to be killed. */
  readonly exitSeconds: number | null;
}

/** Runs one backend's cycles in a fresh Node process and waits for it to exit by itself. */
export function runNodeLeaks(kind: BackendKind, c: { buffers: number; devices: number }, exitTimeoutS = 20): Promise<NodeLeakRun> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--conditions=trident-source',
        '--import',
        'tsx',
        SELF,
        '--child',
        kind,
        '--buffers',
        String(c.buffers),
        '--devices',
        String(c.devices),
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: {
          ...process.env,
          VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? '/usr/lib/chromium/vk_swiftshader_icd.json',
          XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp',
        },
      },
    );
    let out = '';
    let report: LeakReport | undefined;
    let reportedAt = 0;
    let timer: NodeJS.Timeout | undefined;
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line && !report) {
        report = JSON.parse(line) as LeakReport;
        reportedAt = performance.now();
        timer = setTimeout(() => p.kill('SIGKILL'), exitTimeoutS * 1000);
      }
    });
    p.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (!report) {
        reject(new Error(`leak child for ${kind} ended (${code ?? signal}) without a report`));
        return;
      }
      resolve({ report, exitSeconds: signal === 'SIGKILL' ? null : (performance.now() - reportedAt) / 1000 });
    });
  });
}

/** RSS of every Chromium process, from /proc (Linux). */
function chromiumRss(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

async function runChromiumLeaks(kinds: readonly BackendKind[], c: { buffers: number; devices: number }): Promise<LeakReport[]> {
  const { build } = await import('esbuild');
  const require = createRequire(import.meta.url);
  const dir = mkdtempSync(join(tmpdir(), 'trident-leaks-page-'));
  const cpuWorker = join(dirname(require.resolve('@trident/backend-cpu/package.json')), 'src', 'browser-worker.mjs');
  await build({
    entryPoints: { 'leaks-page': join(HERE, 'page.ts'), 'browser-worker': cpuWorker },
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['trident-source', 'browser'],
    target: 'es2022',
    logLevel: 'error',
    external: ['webgpu'],
  });
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><html><head><script type="module" src="leaks-page.mjs"></script></head><body></body></html>',
  );
  const { server, url } = await serve(dir);
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
  const reports: LeakReport[] = [];
  try {
    const browserCdp = await browser.newBrowserCDPSession();
    for (const kind of kinds) {
      const page = await browser.newPage();
      page.setDefaultTimeout(60 * 60_000);
      const cdp = await page.context().newCDPSession(page);
      await page.exposeFunction('tridentLeakSample', async (label: string): Promise<LeakSample> => {
        await cdp.send('HeapProfiler.collectGarbage');
        const heap = await cdp.send('Runtime.getHeapUsage');
        const info = (await browserCdp.send('SystemInfo.getProcessInfo')) as { processInfo: Array<{ id: number }> };
        return { label, heap: heap.usedSize, rss: chromiumRss(info.processInfo.map((p) => p.id)) };
      });
      await page.goto(url);
      await page.waitForFunction(() => typeof window.tridentLeaks === 'function');
      reports.push(
        await page.evaluate(([k, cc]) => (window.tridentLeaks as NonNullable<typeof window.tridentLeaks>)(k, cc), [kind, c] as const),
      );
      await page.close();
    }
  } finally {
    await browser.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return reports;
}

const MiB = 2 ** 20;
const mib = (x: number) => `${(x / MiB).toFixed(2)} MiB`;

function line(r: LeakReport, exitSeconds?: number | null): string {
  const exit =
    exitSeconds === undefined
      ? ''
      : exitSeconds === null
        ? ', did NOT exit on its own'
        : `, exited on its own ${exitSeconds.toFixed(2)} s after`;
  const g = (p: PhaseGrowth) =>
    `heap ${mib(p.firstHalf.heap)} then ${mib(p.secondHalf.heap)}, rss ${mib(p.firstHalf.rss)} then ${mib(p.secondHalf.rss)}` +
    (p.secondHalf.arrayBuffers !== undefined
      ? `, array buffers ${mib(p.firstHalf.arrayBuffers ?? 0)} then ${mib(p.secondHalf.arrayBuffers)}`
      : '');
  return (
    `${r.environment.padEnd(8)} ${r.backend.padEnd(7)} buffers x${r.bufferCycles} (two halves): ${g(r.growth.buffers)}; ` +
    `devices x${r.deviceCycles}: ${g(r.growth.devices)} (${r.seconds.toFixed(1)} s${exit})`
  );
}

async function main(): Promise<void> {
  const values = cliValues();
  const counts = { buffers: Number(values.buffers), devices: Number(values.devices) };
  if (values.child) {
    await child(values.child as BackendKind, counts);
    return;
  }
  const results: Array<{ report: LeakReport; exitSeconds?: number | null }> = [];
  for (const kind of list(values.backends)) {
    const r = await runNodeLeaks(kind, counts, Number(values['exit-timeout']));
    results.push(r);
    console.log(line(r.report, r.exitSeconds));
  }
  const browserKinds = list(values.browser);
  if (browserKinds.length > 0) {
    for (const report of await runChromiumLeaks(browserKinds, counts)) {
      results.push({ report });
      console.log(line(report));
    }
  }
  if (values.out) writeFileSync(values.out, `${JSON.stringify({ date: new Date().toISOString(), counts, results }, null, 2)}\n`);
}

// Run as a script (not when imported by the test).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
