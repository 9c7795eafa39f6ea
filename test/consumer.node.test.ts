/**
 * The published packages as a consumer gets them: build the library packages,
 * `npm pack` them, install the tarballs into a fresh project outside the workspace, then
 * - check each tarball holds built JavaScript, declarations, source maps, README and LICENSE
 *   (no TypeScript sources, no scripts);
 * - (a) run a plain `node` ESM script on cpu and webgpu;
 * - (b) `tsc --noEmit` a consumer file under strict settings (noPropertyAccessFromIndexSignature,
 *   exactOptionalPropertyTypes, no skipLibCheck), with NodeNext and with Bundler resolution;
 * - (c) build a page with Vite (and the same page with esbuild), open it in headless Chromium and
 *   run a kernel on webgl2, webgpu and cpu (Web Workers); a second page whose CSP forbids Blob workers must fail with an error
 *   that names the worker's URL.
 *
 * The fixture files are in test/fixtures/consumer. `npm install` runs with --prefer-offline
 * (the npm cache first, the registry only for what it lacks: piscina, twgl.js, webgpu,
 * @webgpu/types). TypeScript, Vite and playwright-core are the workspace's own: they are the
 * consumer's tools, not what is under test. The cli package (an application with heavy
 * optional peers) is not installed here.
 */
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as esbuild } from 'esbuild';
import { chromium } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../packages/cli/src/browser/chromium.ts';
import { type StaticServer, serveStatic } from './static-server.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = join(ROOT, 'test/fixtures/consumer');
const PACKAGES = ['core', 'backend-cpu', 'backend-webgpu', 'backend-webgl', 'algorithms', 'trident'];
/** What the fixture's kernel computes on every backend: saxpy with a = 2, and a u32 sum. */
const EXPECTED = { y: [12, 24, 36, 48], sum: 18 };

const listed = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
/** Backends CI requires (a missing one fails); elsewhere an unavailable backend may say so instead. */
const REQUIRED_NODE = listed(inject('tridentBackends'));
const REQUIRED_BROWSER = listed(process.env.TRIDENT_BROWSER_BACKENDS);

/**
 * The child processes' environment: the workspace's npm scripts add `--conditions=trident-source`
 * (resolve @trident packages to their sources) through NODE_OPTIONS and npm_config_*; a consumer
 * has neither, and the packed packages have no sources to resolve to.
 */
function consumerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key === 'NODE_OPTIONS' || key.toLowerCase().startsWith('npm_')) continue;
    env[key] = value;
  }
  return env;
}

function sh(command: string, args: readonly string[], cwd: string, timeoutMs = 120_000): string {
  const r = spawnSync(command, args, { cwd, env: consumerEnv(), encoding: 'utf8', timeout: timeoutMs });
  if (r.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

const npm = (args: readonly string[], cwd: string): string => sh('npm', args, cwd);

interface PackedFile {
  readonly path: string;
}
interface Packed {
  readonly name: string;
  readonly filename: string;
  readonly files: readonly PackedFile[];
}

type Outcome = { backend: string; y: number[]; sum: number } | { backend: string; error: string };

/** Every backend must give the expected result, or (when not required here) say it is unavailable. */
function checkOutcomes(outcomes: readonly Outcome[], backends: readonly string[], required: readonly string[]): void {
  expect(outcomes.map((o) => o.backend)).toEqual(backends);
  for (const o of outcomes) {
    if ('error' in o && !required.includes(o.backend)) {
      expect(o.error, o.backend).toMatch(/^(BackendUnavailableError|NoBackendAvailableError): /);
      continue;
    }
    expect(o, o.backend).toEqual({ backend: o.backend, ...EXPECTED });
  }
  // Something ran: cpu has no driver to miss.
  expect(outcomes.find((o) => o.backend === 'cpu')).toEqual({ backend: 'cpu', ...EXPECTED });
}

describe('consumer: the packed packages installed outside the workspace', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trident-consumer-'));
  const tarballs = join(dir, 'tarballs');
  const app = join(dir, 'app');
  let packed: Packed[] = [];

  beforeAll(() => {
    // The library packages only (not the cli): the inlined browser worker, then tsc -b.
    sh(process.execPath, ['packages/backend-cpu/scripts/inline-worker.mjs'], ROOT);
    sh(
      process.execPath,
      ['node_modules/typescript/bin/tsc', '-b', 'packages/trident/tsconfig.build.json', 'packages/algorithms/tsconfig.build.json'],
      ROOT,
    );
    mkdirSync(tarballs);
    const workspaces = PACKAGES.flatMap((p) => ['-w', `packages/${p}`]);
    packed = JSON.parse(npm(['pack', '--json', '--pack-destination', tarballs, ...workspaces], ROOT)) as Packed[];

    mkdirSync(app);
    cpSync(FIXTURE, app, { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'trident-consumer', private: true, type: 'module' }));
    const files = packed.map((p) => `../tarballs/${p.filename}`);
    npm(['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...files], app);
  }, 180_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('each tarball holds ESM JavaScript, declarations, source maps, README and LICENSE, and nothing else', () => {
    expect(packed.map((p) => p.name).sort()).toEqual(PACKAGES.map((p) => (p === 'trident' ? p : `@trident/${p}`)).sort());
    for (const p of packed) {
      const paths = p.files.map((f) => f.path);
      expect(paths, p.name).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts']));
      const unexpected = paths.filter(
        (f) => !['package.json', 'README.md', 'LICENSE'].includes(f) && !/^dist\/.+\.(m?js|d\.m?ts|m?js\.map)$/.test(f),
      );
      expect(unexpected, p.name).toEqual([]);
      for (const js of paths.filter((f) => /\.m?js$/.test(f) && !f.endsWith('spawn-worker-inline.js'))) {
        expect(paths, `${p.name}: source map of ${js}`).toContain(`${js}.map`);
      }
    }
    // The installed copies resolve through the exports map, not through sources.
    const cpu = JSON.parse(readFileSync(join(app, 'node_modules/@trident/backend-cpu/package.json'), 'utf8')) as {
      exports: Record<string, Record<string, unknown>>;
    };
    expect(cpu.exports['.']?.browser).toEqual({ types: './dist/browser.d.ts', default: './dist/browser.js' });
    expect(readdirSync(join(app, 'node_modules/@trident/core'))).not.toContain('src');
  });

  it('(a) a plain node ESM script runs a kernel and reduce on cpu and webgpu', () => {
    const out = sh(process.execPath, ['app.mjs', 'cpu', 'webgpu'], app);
    checkOutcomes(JSON.parse(out) as Outcome[], ['cpu', 'webgpu'], REQUIRED_NODE);
  });

  it('(b) tsc --noEmit type-checks a consumer file under a strict tsconfig (NodeNext and Bundler)', async () => {
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    // Both at once: each is mostly one core's work.
    const runs = ['tsconfig.json', 'tsconfig.bundler.json'].map(
      (config) =>
        new Promise<{ config: string; code: number | null; output: string }>((resolve) => {
          execFile(process.execPath, [tsc, '-p', config], { cwd: app, env: consumerEnv() }, (err, stdout, stderr) =>
            resolve({ config, code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, output: `${stdout}${stderr}` }),
          );
        }),
    );
    for (const r of await Promise.all(runs)) {
      expect(r.output, r.config).toBe('');
      expect(r.code, r.config).toBe(0);
    }
  });

  describe('(c) a page built with Vite (and with esbuild) in headless Chromium', () => {
    let server: StaticServer | undefined;
    let origin = '';

    beforeAll(async () => {
      const outDir = join(app, 'dist-page');
      await build({
        root: app,
        configFile: false,
        logLevel: 'warn',
        build: {
          outDir,
          emptyOutDir: true,
          target: 'es2022',
          rollupOptions: { input: [join(app, 'index.html'), join(app, 'blocked.html')] },
        },
      });
      // The same page bundled by esbuild, as a second bundler: the inlined worker needs no asset handling.
      await esbuild({
        entryPoints: [join(app, 'page.ts')],
        bundle: true,
        format: 'esm',
        platform: 'browser',
        target: 'es2022',
        minify: true,
        outfile: join(outDir, 'esbuild-page.js'),
        logLevel: 'warning',
      });
      writeFileSync(
        join(outDir, 'esbuild.html'),
        readFileSync(join(app, 'index.html'), 'utf8').replace('src="./page.ts"', 'src="./esbuild-page.js"'),
      );
      // blocked.html may not start Blob workers: the CPU backend's inlined worker cannot load there.
      const csp: Record<string, string> = { 'content-security-policy': "worker-src 'self'" };
      server = await serveStatic(outDir, (path) => (path.endsWith('blocked.html') ? csp : {}));
      origin = server.origin;
    }, 180_000);

    afterAll(() => server?.close());

    it('runs the kernel on webgl2, webgpu and cpu (Vite and esbuild builds); a blocked worker names its URL', async () => {
      const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
      try {
        const page = await browser.newPage();
        for (const html of ['index.html', 'esbuild.html']) {
          await page.goto(`${origin}/${html}`);
          const outcomes = await page.waitForFunction(() => (globalThis as { tridentOutcomes?: unknown }).tridentOutcomes, undefined, {
            timeout: 60_000,
          });
          checkOutcomes((await outcomes.jsonValue()) as Outcome[], ['webgl2', 'webgpu', 'cpu'], REQUIRED_BROWSER);
        }

        await page.goto(`${origin}/blocked.html`);
        const blocked = await page.waitForFunction(() => (globalThis as { tridentOutcomes?: unknown }).tridentOutcomes, undefined, {
          timeout: 30_000,
        });
        // Error names are kept through minification; the message says which script failed to load.
        expect(await blocked.jsonValue()).toMatch(
          /^KernelExecutionError: kernel 'saxpy' failed on backend 'cpu': CPU worker trident-cpu-0 could not load its script from the inlined CPU worker \(Blob URL blob:http:\/\/127\.0\.0\.1:\d+\/[-0-9a-f]+\)/,
        );
      } finally {
        await browser.close();
      }
    });
  });
});
