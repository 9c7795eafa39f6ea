/**
 * The HTML report renders in headless Chromium: made from the fixture results and
 * the committed H100 results, opened from disk, screenshotted; the scoreboard, the
 * scaling curves (Vega-Lite compiled to static SVG) and the capability matrix are
 * present and non-empty, and the page asks for nothing but itself. The committed
 * screenshot of a Quick-start report's first screen (docs/) is checked too.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { expect, it } from 'vitest';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../packages/cli/src/browser/chromium.ts';
import { tempDir, trident } from './cli-helpers.ts';

const LOCAL = fileURLToPath(new URL('./fixtures/cli/results-local.json', import.meta.url));
const H100_SUITE = fileURLToPath(new URL('../bench/results/archive/h100-suite-2026-11-27-1005.json', import.meta.url));
const SCREENSHOT = fileURLToPath(new URL('../docs/report-first-screen.png', import.meta.url));

it('index.html shows the scoreboard, the curves and the capability matrix in headless Chromium', async () => {
  const out = tempDir();
  const r = trident(['report', '--from', LOCAL, '--from', H100_SUITE, '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const requests: string[] = [];
    page.on('request', (req) => requests.push(req.url()));
    await page.goto(pathToFileURL(join(out, 'index.html')).href);
    const shot = join(out, 'report.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    // Self-contained: the page asked for nothing but itself.
    expect(requests.filter((u) => !u.startsWith('file:'))).toEqual([]);

    // Scoreboard: first on the page, one row per algorithm, a platform column per machine · runtime · backend.
    const board = page.locator('table#scoreboard');
    const box = await board.boundingBox();
    expect(box?.y).toBeLessThan(400);
    const platforms = await board.locator('thead th').allTextContents();
    expect(platforms.some((t) => t.includes('h100 · node') && t.includes('NVIDIA H100'))).toBe(true);
    expect(platforms.some((t) => t.includes('fixture · node') && t.includes('cpu'))).toBe(true);
    const algorithms = await board.locator('td.algo').allTextContents();
    expect(algorithms).toEqual(expect.arrayContaining(['zcopy', 'reduce', 'scan', 'histogram', 'sort', 'nbody']));
    // The H100 column: figures, and both colours of the peer speedup (histogram beats CUB, sort does not).
    const h100Cells = board.locator('td.score:has(.fig)');
    expect(await h100Cells.count()).toBeGreaterThanOrEqual(8);
    expect(await board.locator('.vs.win').count()).toBeGreaterThan(0);
    expect(await board.locator('.vs.loss').count()).toBeGreaterThan(0);
    // Both sides' timers in the tooltip of a compared cell.
    const titles = await board.locator('td.score').evaluateAll((tds) => tds.map((td) => td.getAttribute('title') ?? ''));
    expect(titles.some((t) => /Trident .* ms \(gpu-timestamp\), CUB .* ms \(gpu-timestamp\)/.test(t))).toBe(true);
    expect(titles.some((t) => /Trident .* ms \(wall\), TF\.js .* ms \(wall\)/.test(t))).toBe(true);
    for (const cell of await h100Cells.all()) expect(((await cell.textContent()) ?? '').trim().length).toBeGreaterThan(0);

    // Curves: one static SVG per algorithm, drawn (non-empty boxes), with points that carry hover titles.
    const charts = page.locator('#curves svg.chart');
    expect(await charts.count()).toBeGreaterThanOrEqual(6);
    for (const chart of await charts.all()) {
      const b = await chart.boundingBox();
      expect(b?.width).toBeGreaterThan(300);
      expect(b?.height).toBeGreaterThan(150);
      const points = chart.locator('path[aria-roledescription="point"]');
      expect(await points.count()).toBeGreaterThan(0);
      const pb = await points.first().boundingBox();
      expect(pb?.width).toBeGreaterThan(0);
      expect(await points.first().locator('title').textContent()).toMatch(/@ n=.* ms/);
    }
    // The H100 TF.js call-latency rows: one point per size.
    expect(await page.locator('#curve-reduce path[aria-roledescription="point"][aria-label^="h100 · node · TF.js"]').count()).toBe(5);

    // Capability matrix: a column per described device, every cell filled.
    const matrix = page.locator('table#capabilities');
    expect(await matrix.locator('thead th').count()).toBe(2 + 2);
    const rows = matrix.locator('tbody tr');
    expect(await rows.count()).toBeGreaterThanOrEqual(20);
    const capCells = await matrix.locator('td.cap').allTextContents();
    expect(capCells.length).toBe(2 * (await rows.count()));
    expect(capCells.every((t) => t.trim().length > 0)).toBe(true);
    expect(capCells).toContain('zero-copy host memory');

    // The rest is collapsed.
    expect(await page.locator('details#details-reduce').getAttribute('open')).toBeNull();
  } finally {
    await browser.close();
  }
});

it('docs/report-first-screen.png is a 1280×900 screenshot of a report', () => {
  expect(existsSync(SCREENSHOT)).toBe(true);
  const png = readFileSync(SCREENSHOT);
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  // IHDR: width and height, big-endian, at bytes 16..23.
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 900]);
  expect(png.length).toBeGreaterThan(30_000);
});
