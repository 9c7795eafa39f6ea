/**
 * The browser example page (examples/browser) built with Vite from this repository's
 * sources (its vite.config.ts) and opened in headless Chromium: every example on
 * webgpu, webgl2 and cpu, each checked against its reference by the page itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PageResult } from '../examples/browser/main.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../packages/cli/src/browser/chromium.ts';
import { type StaticServer, serveStatic } from './static-server.ts';

const PAGE = fileURLToPath(new URL('../examples/browser', import.meta.url));
const REQUIRED = (process.env.TRIDENT_BROWSER_BACKENDS ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);

describe('examples/browser page (Vite build, headless Chromium)', () => {
  const outDir = mkdtempSync(join(tmpdir(), 'trident-examples-page-'));
  let server: StaticServer | undefined;

  beforeAll(async () => {
    await build({ root: PAGE, configFile: join(PAGE, 'vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } });
    server = await serveStatic(outDir);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  it('runs every example on every backend the page finds, and each agrees with its reference', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      await page.goto(`${server?.origin}/index.html`);
      const handle = await page.waitForFunction(() => (globalThis as { exampleResults?: unknown }).exampleResults, undefined, {
        timeout: 90_000,
      });
      const results = (await handle.jsonValue()) as PageResult[];
      const ran = new Set(results.filter((r) => r.example !== '-').map((r) => r.backend));
      // A backend either ran all four examples or could not give a device (allowed only where CI does not require it).
      for (const r of results.filter((x) => x.example === '-')) {
        expect(REQUIRED, `${r.backend}: ${r.detail}`).not.toContain(r.backend);
        expect(r.detail).toMatch(/^BackendUnavailableError: /);
      }
      for (const backend of REQUIRED) expect(ran).toContain(backend);
      expect(ran).toContain('cpu');
      for (const backend of ran) {
        expect(results.filter((r) => r.backend === backend).map((r) => r.example)).toEqual(['stencil', 'matmul', 'histogram', 'csr']);
      }
      for (const r of results.filter((x) => x.example !== '-')) expect(r.ok, `${r.backend} ${r.example}: ${r.detail}`).toBe(true);
    } finally {
      await browser.close();
    }
  });
});
