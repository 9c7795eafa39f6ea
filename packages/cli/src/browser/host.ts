/**
 * Runs the benchmark in headless Chromium: bundles page.ts with esbuild, serves
 * it from 127.0.0.1 with COOP/COEP headers (SharedArrayBuffer for the cpu
 * backend's workers; a secure context for navigator.gpu), drives the page with
 * playwright-core and hands back its measurements.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { fromWire, type JobOutputs, type JobSpec, toWire } from '../run/execute.ts';
import { bundlePageInto } from './bundle.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.ts';
import type { PageConfig, PageDeviceEntry, PageResult } from './protocol.ts';
import { serve } from './serve.ts';

/**
 * Whether this module runs from the monorepo's TypeScript sources (bin/trident.mjs
 * through tsx) or from the built package: the page is bundled from the same kind,
 * with the `trident-source` condition so that sources need no build.
 */
const FROM_SOURCE = import.meta.url.endsWith('.ts');

/** Bundles the page and its assets into a fresh folder; returns the folder. */
async function bundlePage(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'trident-bench-page-'));
  await bundlePageInto(dir, { fromSource: FROM_SOURCE });
  return dir;
}

export { serve };

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
