/**
 * The HTML report renders its charts: open report/index.html (made from the
 * fixture results) in headless Chromium, take a screenshot, and check that every
 * SVG chart and its bars have a non-empty box on the page.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { expect, it } from 'vitest';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../packages/cli/src/browser/chromium.ts';
import { tempDir, trident } from './cli-helpers.ts';

const LOCAL = fileURLToPath(new URL('./fixtures/cli/results-local.json', import.meta.url));
const H100 = fileURLToPath(new URL('./fixtures/cli/other-h100.json', import.meta.url));

it('index.html renders its SVG charts in headless Chromium', async () => {
  const out = tempDir();
  const r = trident(['report', '--from', LOCAL, '--from', H100, '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const requests: string[] = [];
    page.on('request', (req) => requests.push(req.url()));
    await page.goto(pathToFileURL(join(out, 'index.html')).href);
    const shot = join(out, 'report.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(existsSync(shot)).toBe(true);
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    // Self-contained: the page asked for nothing but itself.
    expect(requests.filter((u) => !u.startsWith('file:'))).toEqual([]);

    const charts = page.locator('svg.chart');
    // PP, zcopy, reduce, nbody.
    expect(await charts.count()).toBeGreaterThanOrEqual(4);
    for (const chart of await charts.all()) {
      const box = await chart.boundingBox();
      expect(box?.width).toBeGreaterThan(100);
      expect(box?.height).toBeGreaterThan(40);
    }
    const reduceBars = page.locator('#chart-reduce rect.bar');
    // Trident cpu, webgpu, h100 webgpu, tfjs cpu, tfjs webgpu, CUB.
    expect(await reduceBars.count()).toBe(6);
    for (const bar of await reduceBars.all()) {
      const box = await bar.boundingBox();
      expect(box?.width).toBeGreaterThan(0);
      expect(box?.height).toBeGreaterThan(0);
    }
    expect(await page.locator('#chart-pp rect.bar').count()).toBeGreaterThan(0);
  } finally {
    await browser.close();
  }
});
