/**
 * Runs the benchmark in headless Chromium: bundles page.ts with esbuild, serves
 * it from 127.0.0.1 with COOP/COEP headers (SharedArrayBuffer for the cpu
 * backend's workers; a secure context for navigator.gpu), drives the page with
 * playwright-core and hands back its measurements.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { fromWire, type JobOutputs, type JobSpec, toWire } from '../run/execute.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.ts';
import type { PageConfig, PageDeviceEntry, PageResult } from './protocol.ts';

const require = createRequire(import.meta.url);

/**
 * Whether this module runs from the monorepo's TypeScript sources (bin/trident.mjs
 * through tsx) or from the built package: the page is bundled from the same kind,
 * with the `trident-source` condition so that sources need no build.
 */
const FROM_SOURCE = import.meta.url.endsWith('.ts');

/** Bundles the page and its assets into a fresh folder; returns the folder. */
async function bundlePage(): Promise<string> {
  // Imported here, not at the top: a Node-only bundle of the CLI (the H100 run) must load without esbuild.
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'trident-bench-page-'));
  const here = dirname(fileURLToPath(import.meta.url));
  const cpuPackage = dirname(require.resolve('@trident/backend-cpu/package.json'));
  const cpuWorker = join(cpuPackage, FROM_SOURCE ? 'src' : 'dist', 'browser-worker.mjs');
  await build({
    // The worker entry serves the sources' `new URL('./browser-worker.mjs', import.meta.url)`;
    // the built backend inlines its worker (packages/backend-cpu/scripts/inline-worker.mjs).
    entryPoints: { 'bench-page': join(here, FROM_SOURCE ? 'page.ts' : 'page.js'), 'browser-worker': cpuWorker },
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: FROM_SOURCE ? ['trident-source', 'browser'] : ['browser'],
    target: 'es2022',
    logLevel: 'error',
    // Dawn's native addon is only reached from Node (a variable import specifier); never in a page.
    external: ['webgpu'],
  });
  copyFileSync(require.resolve('gpu.js/dist/gpu-browser.min.js'), join(dir, 'gpu-browser.min.js'));
  const wasmDir = join(dir, 'tfjs-wasm');
  mkdirSync(wasmDir);
  const wasmDist = dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
  for (const f of readdirSync(wasmDist).filter((f) => f.endsWith('.wasm'))) copyFileSync(join(wasmDist, f), join(wasmDir, f));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><html><head><meta charset="utf-8"><title>trident bench</title>' +
      '<script src="gpu-browser.min.js"></script><script type="module" src="bench-page.mjs"></script></head><body>trident bench</body></html>',
  );
  return dir;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.mjs': 'text/javascript',
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
};

/** Serves `dir` from 127.0.0.1 on a free port, cross-origin isolated, with any `extraHeaders`. */
export function serve(dir: string, extraHeaders: Readonly<Record<string, string>> = {}): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = normalize(join(dir, decodeURIComponent((req.url ?? '/').split('?')[0] as string)));
    const file = path.endsWith(sep) || path === dir ? join(path, 'index.html') : path;
    if (!file.startsWith(dir)) {
      res.writeHead(403).end();
      return;
    }
    let body: Buffer;
    try {
      body = readFileSync(file);
    } catch {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Resource-Policy': 'same-origin',
      ...extraHeaders,
    });
    res.end(body);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/` });
    });
  });
}

export interface BrowserRun extends PageResult {
  readonly chromiumVersion: string;
}

/** Bundles and serves the page, opens it in headless Chromium and runs `body` on it. */
async function withPage<T>(body: (page: Page, version: string) => Promise<T>, onStep?: (label: string) => void): Promise<T> {
  const dir = await bundlePage();
  const { server, url } = await serve(dir);
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    if (onStep) await page.exposeFunction('tridentProgress', (label: string) => onStep(label));
    await page.goto(url);
    await page
      .waitForFunction(() => typeof window.tridentBench === 'function', undefined, { timeout: 60_000 })
      .catch(() => {
        throw new Error(`the benchmark page did not load${errors.length ? `: ${errors.join('; ')}` : ''}`);
      });
    return await body(page, browser.version());
  } finally {
    await browser.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `config` in headless Chromium; `onStep` is called as each step starts. */
export async function runInChromium(config: PageConfig, onStep: (label: string) => void, timeoutMs = 30 * 60_000): Promise<BrowserRun> {
  return withPage(async (page, version) => {
    page.setDefaultTimeout(timeoutMs);
    const result = await page.evaluate((c) => (window.tridentBench as NonNullable<typeof window.tridentBench>)(c), config);
    return { ...result, chromiumVersion: version };
  }, onStep);
}

/** Runs one `trident run` job on `backend` inside headless Chromium (for backends Node does not have). */
export async function runJobInChromium(
  backend: string,
  spec: JobSpec,
  workers?: number,
): Promise<{ outputs: JobOutputs; backend: string; adapter: string }> {
  return withPage(async (page) => {
    page.setDefaultTimeout(30 * 60_000);
    const wire = { ...spec, inputs: Object.fromEntries(Object.entries(spec.inputs).map(([k, v]) => [k, toWire(v)])) };
    const r = await page.evaluate(([b, job, w]) => (window.tridentRun as NonNullable<typeof window.tridentRun>)(b, job, w), [
      backend,
      wire,
      workers ?? 0,
    ] as const);
    if ('error' in r) throw new Error(r.error);
    return {
      outputs: Object.fromEntries(Object.entries(r.outputs).map(([k, v]) => [k, fromWire(v)])),
      backend: r.backend,
      adapter: r.adapter,
    };
  });
}

/** Probes every backend inside headless Chromium (what `trident run --backend webgl2` would get). */
export async function probeInChromium(workers?: number): Promise<{ entries: PageDeviceEntry[]; chromiumVersion: string }> {
  return withPage(async (page, version) => {
    const entries = await page.evaluate((w) => (window.tridentDevices as NonNullable<typeof window.tridentDevices>)(w), workers ?? 0);
    return { entries, chromiumVersion: version };
  });
}
