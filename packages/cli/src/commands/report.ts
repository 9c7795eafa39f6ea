/**
 * `trident report [--from results.json ...] [--out report/]`: merges results
 * files (this machine's bench run and others, such as the H100 run) into
 * report/REPORT.md and a self-contained report/index.html.
 */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { list, parse } from '../args.ts';
import { UsageError } from '../errors.ts';
import { commitOutputs } from '../output.ts';
import { analyze } from '../report/analysis.ts';
import { buildDocument } from '../report/document.ts';
import { type LabelledMeasurement, type LoadedResults, loadResultsFile } from '../report/load.ts';
import { renderHtml, renderMarkdown } from '../report/render.ts';

const USAGE = `usage: trident report [--from results.json ...] [--out report/] [--screenshot FILE.png]

  --from FILE        results file(s) or folder(s) of them to merge (repeat or
                     comma-separate). Default: report/results-*.json (this machine's
                     bench runs) and bench/results/*.json (other machines, e.g. H100).
                     Each must be a valid trident-bench/1 file (exit 2 naming the file
                     and the problem otherwise).
  --out DIR          where REPORT.md and index.html go (default: report/)
  --screenshot FILE  also save index.html's first screen (1280×900, headless Chromium) as a PNG`;

export interface ReportFiles {
  readonly markdown: string;
  readonly html: string;
  readonly warnings: string[];
}

/**
 * Re-runs on one machine supersede older ones: where two files with the same
 * label measured the same thing (implementation, backend, runtime, algorithm,
 * variant, dtype, n), the newer file's measurement is kept.
 */
export function newestMeasurements(sources: readonly LoadedResults[]): { measurements: LabelledMeasurement[]; superseded: string[] } {
  const key = (m: LabelledMeasurement): string =>
    [m.label, m.implementation, m.backend, m.runtime, m.algorithm, m.variant, m.dtype, m.n].join('|');
  const newest = new Map<string, { m: LabelledMeasurement; at: string; file: string }>();
  const superseded = new Map<string, number>();
  for (const s of sources) {
    for (const m of s.measurements) {
      const k = key(m);
      const cur = newest.get(k);
      if (cur && cur.file !== s.file) {
        const [keep, drop] = cur.at >= s.createdAt ? [cur, { file: s.file }] : [{ m, at: s.createdAt, file: s.file }, cur];
        superseded.set(drop.file, (superseded.get(drop.file) ?? 0) + 1);
        newest.set(k, keep);
      } else {
        newest.set(k, { m, at: s.createdAt, file: s.file });
      }
    }
  }
  const notes = [...superseded].map(
    ([file, count]) => `${file}: ${count} measurement(s) superseded by a newer run of the same machine label`,
  );
  return { measurements: [...newest.values()].map((v) => v.m), superseded: notes };
}

export async function buildReport(sources: readonly LoadedResults[]): Promise<ReportFiles> {
  const { measurements, superseded } = newestMeasurements(sources);
  const analysis = analyze(measurements);
  const withNotes = sources.map((s) => ({ ...s, warnings: [...s.warnings, ...superseded.filter((w) => w.startsWith(`${s.file}:`))] }));
  const blocks = buildDocument(analysis, withNotes, measurements);
  return {
    markdown: renderMarkdown(blocks),
    html: await renderHtml(blocks, 'Trident portability report'),
    warnings: withNotes.flatMap((s) => s.warnings),
  };
}

/**
 * Without --from: this machine's bench runs (report/results-*.json, written by
 * `trident bench`) and the results committed from other machines
 * (bench/results/*.json, e.g. the H100 run). Missing folders are simply empty.
 */
export function defaultSources(cwd = '.'): string[] {
  const pick = (dir: string, keep: (f: string) => boolean): string[] =>
    existsSync(join(cwd, dir))
      ? readdirSync(join(cwd, dir))
          .filter((f) => f.endsWith('.json') && keep(f))
          .sort()
          .map((f) => join(cwd, dir, f))
      : [];
  return [...pick('report', (f) => f.startsWith('results-')), ...pick('bench/results', () => true)];
}

/** --from entries: files, or folders meaning every *.json in them. */
function expandSources(entries: readonly string[]): string[] {
  return entries.flatMap((e) =>
    existsSync(e) && statSync(e).isDirectory()
      ? readdirSync(e)
          .filter((f) => f.endsWith('.json'))
          .sort()
          .map((f) => join(e, f))
      : [e],
  );
}

export async function reportCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    from: { type: 'string', multiple: true },
    out: { type: 'string' },
    screenshot: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const files = values.from ? expandSources(list(values.from)) : defaultSources();
  if (files.length === 0) throw new UsageError('no results files: pass --from results.json (or run `trident bench` first)');
  // Every file must load (report/load.ts): one that does not is an error naming it, never a skipped source.
  const sources: LoadedResults[] = files.map(loadResultsFile);
  const report = await buildReport(sources);
  const dir = values.out ?? 'report';
  mkdirSync(dir, { recursive: true });
  commitOutputs([
    { path: join(dir, 'REPORT.md'), bytes: report.markdown },
    { path: join(dir, 'index.html'), bytes: report.html },
  ]);
  if (values.screenshot) await screenshot(join(dir, 'index.html'), values.screenshot);
  for (const w of report.warnings) process.stderr.write(`warning: ${w}\n`);
  const count = sources.reduce((s, r) => s + r.measurements.length, 0);
  process.stderr.write(
    `report: ${count} measurements from ${files.length} file(s) -> ${join(dir, 'REPORT.md')}, ${join(dir, 'index.html')}\n`,
  );
  return 0;
}

/** The page's first screen as a reader sees it: 1280×900 in headless Chromium, opened from disk. */
async function screenshot(html: string, png: string): Promise<void> {
  // Loaded only here, so `trident report` alone needs no browser.
  const [{ chromium }, { CHROMIUM_ARGS, CHROMIUM_PATH }] = await Promise.all([import('playwright-core'), import('../browser/chromium.ts')]);
  if (!existsSync(CHROMIUM_PATH)) throw new UsageError(`--screenshot: no Chromium at ${CHROMIUM_PATH} (set CHROMIUM_PATH)`);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(pathToFileURL(resolve(html)).href);
    mkdirSync(dirname(resolve(png)), { recursive: true });
    await page.screenshot({ path: png });
  } finally {
    await browser.close();
  }
  process.stderr.write(`report: first screen -> ${png}\n`);
}
