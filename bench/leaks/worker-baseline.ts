/**
 * Chromium's own cost of creating and terminating Web Workers, without Trident:
 * the baseline for the leak check's "chromium cpu" device cycles (each
 * createDevice / destroy of the CPU backend starts and terminates its workers).
 * A page creates two trivial Blob-URL workers, exchanges one message with each,
 * terminates them, and repeats; the RSS of every Chromium process (from /proc) is
 * read after a warm-up and after each half.
 *
 *   npx tsx bench/leaks/worker-baseline.ts [--cycles 400]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../packages/cli/src/browser/chromium.ts';

const { values } = parseArgs({ options: { cycles: { type: 'string', default: '400' } } });
const cycles = Number(values.cycles);
if (!Number.isInteger(cycles) || cycles < 2) throw new Error(`--cycles must be an integer >= 2, got ${values.cycles}`);

/** MiB of RSS summed over the processes whose name starts with "chrom" (this machine runs no other Chromium). */
function chromiumRssMiB(): number {
  let kib = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      if (/^Name:\s+chrom/m.test(status)) kib += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return kib / 1024;
}

const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage();
  await page.goto('about:blank');
  const run = (n: number) =>
    page.evaluate(async (count) => {
      const url = URL.createObjectURL(new Blob(['onmessage = (e) => postMessage(e.data);'], { type: 'text/javascript' }));
      for (let i = 0; i < count; i++) {
        const workers = [new Worker(url), new Worker(url)];
        await Promise.all(
          workers.map(
            (w) =>
              new Promise((resolve) => {
                w.onmessage = resolve;
                w.postMessage(i);
              }),
          ),
        );
        for (const w of workers) w.terminate();
      }
      URL.revokeObjectURL(url);
    }, n);
  await run(Math.ceil(cycles / 10));
  const half = Math.floor(cycles / 2);
  const a = chromiumRssMiB();
  await run(half);
  const b = chromiumRssMiB();
  await run(half);
  const c = chromiumRssMiB();
  const perCycle = (x: number) => ((x * 1024) / half).toFixed(0);
  console.log(
    `chromium, 2 plain workers a cycle, ${half} + ${half} cycles: rss ${(b - a).toFixed(1)} then ${(c - b).toFixed(1)} MiB ` +
      `(${perCycle(b - a)} then ${perCycle(c - b)} KiB a cycle)`,
  );
} finally {
  await browser.close();
}
