/**
 * The browser bench on the GPU machine (bench/h100/run.sh browser): serves the page bundle that
 * bench/h100/browser-build.ts wrote (the page `trident bench` drives locally,
 * packages/cli/src/browser/page.ts) from 127.0.0.1, cross-origin isolated, drives it through
 * playwright-core in the carried headless Chromium ($TRIDENT_CHROMIUM, $TRIDENT_CHROMIUM_FLAGS;
 * without them the local /usr/bin/chromium and the CLI's flags, for a dry run on SwiftShader), and
 * writes a `trident-bench/1` results file that `trident report` merges.
 *
 *   node run.mjs [--scale h100|small] [--parts trident,peers,conformance,read-probe] [--backends webgpu,webgl2,cpu] [--cases key,key]
 *                [--out FILE] [--deadline-s S] [--trident-deadline-s S] [--cub cub.txt] [--gpu "NVIDIA H100 80GB HBM3, 580.x"]
 *   node run.mjs --merge a.json b.json ... --out FILE     (one results file from several calls' parts)
 *
 * What each scale runs and how it is timed is packages/cli/src/browser/bench-plans.ts: Trident's
 * GPU backends by the sustained protocol as the Node suite on the same GPU, the cpu backend and the
 * peers by the adaptive one; each row says which (`protocol`, and `settings.protocol: 'mixed'`).
 * Trident's cases run one size per page call (a fresh device each), so the file is rewritten after
 * every step and a run stopped by --deadline-s (or killed) keeps what finished; each step not
 * started for the deadline gets a row saying so. The peers (TF.js webgl / webgpu / wasm / cpu,
 * gpu.js) run after, with a per-run time budget (PageConfig.peerBudgetMs). --cub adds the CUB
 * anchor's lines (anchors/cub_anchor.cu, same call) as native rows. The conformance specs run in
 * the same browser (conformance.html) once per GPU backend; their counts go into the file's
 * `conformance` field and notes.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium, type Page } from 'playwright-core';
import { type BenchDevice, type BenchResults, fileProtocol, type Measurement } from '../../packages/cli/src/bench/schema.ts';
import { BROWSER_PLANS, type BrowserPlan, peersStep, timingNote, tridentStep } from '../../packages/cli/src/browser/bench-plans.ts';
import { bundlePageInto } from '../../packages/cli/src/browser/bundle.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../packages/cli/src/browser/chromium.ts';
import type { PageResult, ReadProbeConfig, ReadProbeRow } from '../../packages/cli/src/browser/protocol.ts';
import { serve } from '../../packages/cli/src/browser/serve.ts';
import { describeMachine } from '../../packages/cli/src/describe.ts';

const here = dirname(fileURLToPath(import.meta.url));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    scale: { type: 'string', default: 'h100' },
    parts: { type: 'string', default: 'trident,peers,conformance' },
    backends: { type: 'string', default: 'webgpu,webgl2,cpu' },
    out: { type: 'string' },
    'deadline-s': { type: 'string' },
    'trident-deadline-s': { type: 'string' },
    cases: { type: 'string' },
    // The cpu backend's Web Workers (default: navigator.hardwareConcurrency), for worker-count probes.
    workers: { type: 'string' },
    note: { type: 'string', multiple: true },
    cub: { type: 'string' },
    gpu: { type: 'string' },
    commit: { type: 'string' },
    label: { type: 'string', default: 'h100' },
    merge: { type: 'boolean' },
    'conformance-backends': { type: 'string', default: 'webgl2,webgpu' },
  },
});

const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

interface Conformance {
  readonly backend: string;
  readonly passed: number;
  readonly failed: number;
  readonly failures: ReadonlyArray<{ test: string; error: string }>;
  readonly error?: string;
  readonly seconds: number;
  /** The commit the specs were bundled from (set by --merge, from the part's versions). */
  readonly commit?: string;
}

interface BrowserResults extends BenchResults {
  readonly conformance?: readonly Conformance[];
  readonly readProbe?: readonly ReadProbeRow[];
}

/** CUB anchor lines (anchors/cub_anchor.cu): `n=2^<log2 n> CUB <operation>: <time> ms <throughput> GB/s`, as native rows. */
function cubRows(text: string, adapter: string): Measurement[] {
  const rows: Measurement[] = [];
  const names: ReadonlyArray<[RegExp, { implementation: string; algorithm: string; variant: string; bytes: (n: number) => number }]> = [
    [/^memcpy d2d$/, { implementation: 'cuda', algorithm: 'zcopy', variant: 'copy', bytes: (n) => 8 * n }],
    [/^CUB reduce sum u32$/, { implementation: 'cub', algorithm: 'reduce', variant: 'sum', bytes: (n) => 4 * n + 4 }],
    [/^CUB inclusive scan u32$/, { implementation: 'cub', algorithm: 'scan', variant: 'inclusive', bytes: (n) => 8 * n }],
    [/^CUB radix sort keys u32$/, { implementation: 'cub', algorithm: 'sort', variant: 'radix keys', bytes: (n) => 8 * n }],
    [/^CUB histogram 256 bins$/, { implementation: 'cub', algorithm: 'histogram', variant: '256 bins', bytes: (n) => 4 * n + 1024 }],
  ];
  for (const line of text.split('\n')) {
    const m = /^n=2\^(\d+) (.+?): ([\d.]+) ms/.exec(line.trim());
    if (!m) continue;
    const op = names.find(([re]) => re.test(m[2] as string))?.[1];
    if (!op) continue;
    const n = 2 ** Number(m[1]);
    const ms = Number(m[3]);
    rows.push({
      algorithm: op.algorithm,
      variant: op.variant,
      implementation: op.implementation,
      backend: 'cuda',
      runtime: 'native',
      adapter,
      n,
      dtype: 'u32',
      timer: 'gpu-timestamp',
      warmup: 1,
      repeats: 1,
      ms: { median: ms, min: ms, max: ms, q1: ms, q3: ms, samples: [ms] },
      bytes: op.bytes(n),
      throughput: { value: op.bytes(n) / (ms * 1e6), unit: 'GB/s' },
    });
  }
  return rows;
}

/** `settings` with the protocol its rows were timed by (bench/schema.ts fileProtocol): 'mixed' where they differ. */
function withProtocol(settings: BenchResults['settings'], measurements: readonly Measurement[]): BenchResults['settings'] {
  const { protocol: _earlier, ...rest } = settings;
  const protocol = fileProtocol(measurements);
  return { ...rest, ...(protocol ? { protocol } : {}) };
}

/**
 * One results file from several calls' files (in call order): measurements, devices, conformance and
 * notes together; each part's commit kept; --cub adds the anchor's rows from a call whose own file
 * lacks them (one stopped at its time limit before its last write), --note adds lines.
 */
function merge(files: readonly string[], out: string): void {
  const parts = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as BrowserResults);
  const first = parts[0];
  if (!first) throw new Error('--merge: no files');
  const commits = [...new Set(parts.map((p) => p.versions['trident commit']).filter((c): c is string => c !== undefined))];
  const cub = values.cub ? cubRows(readFileSync(values.cub, 'utf8'), (values.gpu ?? 'NVIDIA GPU').split(',')[0] as string) : [];
  const hasCub = parts.some((p) => p.measurements.some((m) => m.implementation === 'cub'));
  // Anchor rows only at the sizes Trident ran here: a larger one (2^28) would stand, under the same machine
  // label, in place of the anchor that the Node suite's call measured beside its own rows.
  const largest = Math.max(...parts.flatMap((p) => p.measurements.filter((m) => m.implementation === 'trident').map((m) => m.n)));
  const anchors = hasCub ? [] : cub.filter((m) => m.n <= largest);
  const devices = new Map<string, BenchDevice>();
  for (const p of parts) for (const d of p.devices ?? []) devices.set(`${d.runtime}/${d.backend}`, d);
  const merged: BrowserResults = {
    ...first,
    adapters: { ...Object.assign({}, ...parts.map((p) => p.adapters)), ...(anchors.length > 0 ? { 'native/cuda': values.gpu ?? '' } : {}) },
    versions: {
      ...Object.assign({}, ...parts.map((p) => p.versions)),
      ...(commits.length > 0 ? { 'trident commit': commits.join(', ') } : {}),
    },
    settings: withProtocol(
      {
        ...first.settings,
        command: parts.map((p) => p.settings.command).join(' ; '),
        sizes: Object.assign({}, ...parts.map((p) => p.settings.sizes)),
      },
      parts.flatMap((p) => p.measurements),
    ),
    measurements: [...parts.flatMap((p) => p.measurements), ...anchors],
    devices: [...devices.values()],
    unavailable: parts
      .flatMap((p) => p.unavailable ?? [])
      .filter((u, i, all) => all.findIndex((x) => x.backend === u.backend && x.runtime === u.runtime) === i),
    notes: [
      ...new Set([
        ...parts.flatMap((p) => p.notes ?? []),
        ...(anchors.length > 0
          ? [
              'CUB rows: anchors/cub_anchor.cu, built with nvcc and run in the same device call as the Trident rows, timed with CUDA events.',
            ]
          : []),
        ...(values.note ?? []),
      ]),
    ],
    conformance: parts.flatMap((p) =>
      (p.conformance ?? []).map((c) => ({ ...c, ...(p.versions['trident commit'] ? { commit: p.versions['trident commit'] } : {}) })),
    ),
  };
  writeFileSync(out, `${JSON.stringify(merged, null, 1)}\n`);
  log(`merged ${files.length} file(s) -> ${out}: ${merged.measurements.length} measurements`);
}

async function main(): Promise<void> {
  const out = values.out ?? join(process.env.OUT ?? '.', 'h100-browser.json');
  if (values.merge) {
    merge(positionals, out);
    return;
  }
  const plan: BrowserPlan = values.scale === 'small' ? BROWSER_PLANS.small : BROWSER_PLANS.h100;
  const parts = new Set((values.parts ?? '').split(',').filter(Boolean));
  const backends = (values.backends ?? '').split(',').filter(Boolean);
  const started = Date.now();
  const deadline = values['deadline-s'] ? started + 1000 * Number(values['deadline-s']) : Number.POSITIVE_INFINITY;
  const executablePath = process.env.TRIDENT_CHROMIUM ?? CHROMIUM_PATH;
  // playwright adds --headless itself.
  const args = process.env.TRIDENT_CHROMIUM_FLAGS
    ? process.env.TRIDENT_CHROMIUM_FLAGS.split(/\s+/).filter((a) => a && a !== '--headless')
    : [...CHROMIUM_ARGS];
  const pageDir = await pageFolder();
  const { server, url } = await serve(pageDir.dir);
  const browser = await chromium.launch({ executablePath, args, headless: true });
  const chromiumVersion = browser.version();
  const gpu = values.gpu?.trim();
  const measurements: Measurement[] = [];
  const devices = new Map<string, BenchDevice>();
  const adapters: Record<string, string> = {};
  const versions: Record<string, string> = {
    node: process.version,
    chromium: chromiumVersion,
    ...(values.commit ? { 'trident commit': values.commit } : {}),
  };
  const unavailable: Array<{ backend: string; runtime: string; reason: string }> = [];
  const conformance: Conformance[] = [];
  const readProbe: ReadProbeRow[] = [];
  const notes: string[] = [
    `The browser bench: the page \`trident bench\` drives locally (packages/cli/src/browser/page.ts), bundled by bench/h100/browser-build.ts and run by bench/h100/browser-run.ts in headless Chromium ${chromiumVersion} (${executablePath}) through playwright-core, served cross-origin isolated from 127.0.0.1; flags: ${args.join(' ')}.`,
    timingNote(plan),
  ];
  const sizes: Record<string, number[]> = {};
  const write = (): void => {
    const results: BrowserResults = {
      schema: 'trident-bench/1',
      createdAt: new Date(started).toISOString(),
      label: values.label ?? 'h100',
      machine: {
        ...describeMachine(),
        ...(gpu ? { gpu, label: values.label } : {}),
        browser: `Chromium ${chromiumVersion} (headless shell)`,
      } as BenchResults['machine'],
      adapters,
      versions,
      settings: withProtocol(
        {
          command: `bash bench/h100/run.sh browser (node run.mjs ${process.argv.slice(2).join(' ')})`,
          warmup: plan.settings.warmup,
          warmupMs: plan.settings.warmupMs,
          repeats: plan.settings.repeats,
          sizes,
        },
        measurements,
      ),
      measurements,
      devices: [...devices.values()],
      unavailable,
      notes,
      ...(conformance.length > 0 ? { conformance } : {}),
      ...(readProbe.length > 0 ? { readProbe } : {}),
    };
    writeFileSync(out, `${JSON.stringify(results, null, 1)}\n`);
  };
  const absorb = (r: PageResult): void => {
    measurements.push(...r.measurements);
    for (const d of r.devices ?? []) devices.set(`${d.runtime}/${d.backend}`, d);
    Object.assign(adapters, r.adapters);
    Object.assign(versions, r.versions);
    for (const u of r.unavailable) if (!unavailable.some((x) => x.backend === u.backend && x.runtime === u.runtime)) unavailable.push(u);
  };
  const timeLeft = (): boolean => Date.now() < deadline;
  // Trident's steps may stop earlier than the call, leaving the peers their time (they run as one page call).
  const tridentDeadline = values['trident-deadline-s']
    ? Math.min(deadline, started + 1000 * Number(values['trident-deadline-s']))
    : deadline;
  try {
    const page = await openPage(browser, url);
    log(`chromium ${chromiumVersion}; page ${url}`);
    const probe = await page.evaluate(() => (window.tridentDevices as NonNullable<typeof window.tridentDevices>)(0));
    for (const e of probe) log(`  ${e.backend}: ${e.available ? `${e.adapter}` : `unavailable: ${e.reason}`}`);
    if (parts.has('trident')) {
      // Size by size, every backend in turn: one graph or data set serves all three (the page caches the graph),
      // and a deadline cuts the largest sizes rather than a whole backend.
      const only = values.cases ? new Set(values.cases.split(',').map((k) => k.trim())) : undefined;
      const warmed = new Set<string>();
      for (const [key, list] of Object.entries(plan.cases).filter(([k]) => !only || only.has(k))) {
        sizes[key] = [...list];
        for (const n of list) {
          for (const kind of backends) {
            if (Date.now() >= tridentDeadline) {
              const [algorithm, variant] = key.split(':') as [string, string];
              measurements.push({
                algorithm,
                variant,
                implementation: 'trident',
                backend: kind,
                runtime: 'chromium',
                adapter: adapters[`chromium/${kind}`] ?? '',
                n,
                dtype: 'u32',
                timer: 'wall',
                warmup: 0,
                repeats: 0,
                error: 'not run: the call reached its time limit for Trident\u2019s steps first',
              });
              continue;
            }
            const t0 = Date.now();
            const workers = values.workers ? Number(values.workers) : 0;
            const config = { ...tridentStep(plan, key, n, kind, !warmed.has(kind)), ...(workers > 0 ? { workers } : {}) };
            warmed.add(kind);
            const r = await page.evaluate((c) => (window.tridentBench as NonNullable<typeof window.tridentBench>)(c), config);
            absorb(r);
            for (const m of r.measurements)
              log(
                `${kind} ${m.implementation} ${m.algorithm}:${m.variant} n=${m.n} ${m.error ? `ERROR ${m.error}` : `${m.ms?.median.toFixed(4)} ms (${m.timer}, ${m.protocol ?? 'adaptive'})${m.wallMs ? ` wall ${m.wallMs.median.toFixed(3)}` : ''}${m.wallWithReadMs ? ` call+read ${m.wallWithReadMs.median.toFixed(3)}` : ''}${m.verified === false ? ' UNVERIFIED' : ''}`} [${((Date.now() - t0) / 1000).toFixed(1)} s]`,
              );
            write();
          }
        }
      }
    }
    if (parts.has('peers')) {
      if (timeLeft()) {
        const t0 = Date.now();
        const config = peersStep(plan);
        const r = await page.evaluate((c) => (window.tridentBench as NonNullable<typeof window.tridentBench>)(c), config);
        absorb(r);
        for (const m of r.measurements)
          log(
            `peer ${m.implementation} ${m.backend} ${m.algorithm} n=${m.n} ${m.error ? `ERROR ${m.error}` : `${m.ms?.median.toFixed(3)} ms`}`,
          );
        log(`peers: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        write();
      } else {
        notes.push('The peers did not run: the call reached its time limit (--deadline-s) first.');
      }
    }
    if (parts.has('read-probe') && timeLeft()) {
      // What a small result costs to reach the host (page.ts tridentReadProbe): rows into the file's readProbe field.
      const config: ReadProbeConfig = { sizes: [10, 16, 20, 24], blockingReadBytes: [0, 4096], warmup: 20, rounds: 5, perRound: 10 };
      readProbe.push(...(await page.evaluate((c) => (window.tridentReadProbe as NonNullable<typeof window.tridentReadProbe>)(c), config)));
      for (const r of readProbe) {
        log(
          `read probe 2^${r.log2n} ${r.label}: ${'error' in r ? r.error : `median ${r.medianMs.toFixed(3)} ms (p10 ${r.p10Ms.toFixed(3)}, p90 ${r.p90Ms.toFixed(3)}, ${r.samples} calls)`}`,
        );
      }
      notes.push(
        'readProbe: wall time of reduce sum (the call and the read of its value) back to back, per WebGL2 blockingReadBytes setting and on WebGPU, beside TF.js sum().data(), in interleaved rounds (page.ts tridentReadProbe).',
      );
      write();
    }
    await page.close();
    if (parts.has('conformance')) {
      for (const backend of (values['conformance-backends'] ?? '').split(',').filter(Boolean)) {
        if (!timeLeft()) {
          notes.push(`Conformance on ${backend} did not run: the call reached its time limit first.`);
          continue;
        }
        const c = await runConformance(browser, url, backend, deadline);
        conformance.push(c);
        log(`conformance ${backend}: ${c.passed} passed, ${c.failed} failed${c.error ? ` (${c.error})` : ''} in ${c.seconds.toFixed(0)} s`);
        for (const f of c.failures) log(`  FAIL ${f.test}: ${f.error.split('\n')[0]}`);
        notes.push(
          `Conformance specs (the browser project's, bundled with bench/h100/vitest-shim-browser.mjs) in this Chromium on ${backend}: ${c.passed} passed, ${c.failed} failed${c.error ? `; ${c.error}` : ''}.`,
        );
        write();
      }
    }
  } finally {
    if (values.cub) {
      try {
        const rows = cubRows(readFileSync(values.cub, 'utf8'), gpu?.split(',')[0] ?? 'NVIDIA GPU');
        measurements.push(...rows);
        if (rows.length > 0) {
          adapters['native/cuda'] = gpu ?? '';
          notes.push('CUB rows: anchors/cub_anchor.cu, built with nvcc and run in the same device call, timed with CUDA events.');
        }
      } catch (err) {
        log(`no CUB rows: ${String(err)}`);
      }
    }
    write();
    await browser.close();
    server.close();
    if (pageDir.temporary) rmSync(pageDir.dir, { recursive: true, force: true });
    log(`wrote ${out}: ${measurements.length} measurements in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
}

/**
 * The page bundle beside this script (bench/h100/browser-build.ts puts it there), or, run from the
 * sources (`npx tsx bench/h100/browser-run.ts`, a dry run here), the page bundled from them into a
 * temporary folder (no conformance page: --parts conformance needs the built folder).
 */
async function pageFolder(): Promise<{ dir: string; temporary: boolean }> {
  const beside = join(here, 'page');
  if (existsSync(join(beside, 'index.html'))) return { dir: beside, temporary: false };
  const dir = mkdtempSync(join(tmpdir(), 'trident-browser-bench-'));
  await bundlePageInto(dir, { fromSource: true });
  log(`no page bundle beside ${here}: bundled the page from the sources (a temporary folder)`);
  return { dir, temporary: true };
}

async function openPage(browser: Awaited<ReturnType<typeof chromium.launch>>, url: string): Promise<Page> {
  const page = await browser.newPage();
  page.setDefaultTimeout(15 * 60_000);
  page.on('pageerror', (e) => log(`[page error] ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') log(`[page] ${m.text()}`);
  });
  await page.exposeFunction('tridentProgress', (_label: string) => undefined);
  await page.goto(url);
  await page.waitForFunction(() => typeof window.tridentBench === 'function', undefined, { timeout: 60_000 });
  return page;
}

async function runConformance(
  browser: Awaited<ReturnType<typeof chromium.launch>>,
  url: string,
  backend: string,
  deadline: number,
): Promise<Conformance> {
  const t0 = Date.now();
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // The shim logs each spec ('  ok   name (ms)' / '  FAIL name: message'): counts survive a timeout.
  const seen = { passed: 0, failures: [] as Array<{ test: string; error: string }> };
  page.on('console', (m) => {
    const t = m.text();
    if (t.startsWith('  ok ')) seen.passed++;
    else if (t.startsWith('  FAIL ')) {
      const [test, ...rest] = t.slice(7).split(': ');
      seen.failures.push({ test: test ?? '', error: rest.join(': ').slice(0, 600) });
    }
  });
  try {
    await page.goto(`${url}conformance.html?backends=${encodeURIComponent(backend)}`);
    const limit = Math.max(10_000, Math.min(8 * 60_000, deadline - Date.now()));
    await page.waitForFunction(() => (window as { tridentConformance?: unknown }).tridentConformance !== undefined, undefined, {
      timeout: limit,
      polling: 500,
    });
    const s = (await page.evaluate(() => (window as { tridentConformance?: unknown }).tridentConformance)) as {
      passed: number;
      failed: number;
      failures: Array<{ test: string; error: string }>;
    };
    return {
      backend,
      passed: s.passed,
      failed: s.failed,
      failures: s.failures.map((f) => ({ test: f.test, error: f.error.slice(0, 600) })),
      seconds: (Date.now() - t0) / 1000,
    };
  } catch (err) {
    const error = `${err instanceof Error ? err.message.split('\n')[0] : String(err)}${errors.length ? `; page errors: ${errors.join('; ').slice(0, 400)}` : ''}`;
    return {
      backend,
      passed: seen.passed,
      failed: seen.failures.length,
      failures: seen.failures,
      error: `incomplete: ${error}`,
      seconds: (Date.now() - t0) / 1000,
    };
  } finally {
    await page.close();
  }
}

await main();
