/**
 * Bundles the benchmark page (page.ts) and its assets into a folder: the page and the cpu
 * backend's worker as ES modules, gpu.js's browser build, TF.js's wasm files and index.html.
 * Used by the CLI's browser runs (host.ts) and by the H100 browser bench
 * (bench/h100/browser-build.ts), which carries the folder to the GPU machine.
 * No Trident imports: this module must load in plain Node (tsx) without a build.
 */
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

export interface BundleOptions {
  /** Bundle from the TypeScript sources (the `trident-source` condition) rather than the built package. */
  readonly fromSource: boolean;
  /** Minify (smaller to carry; the H100 run); default false. */
  readonly minify?: boolean;
  /** Extra entry points (name -> file), bundled beside the page (e.g. the conformance page). */
  readonly extraEntries?: Readonly<Record<string, string>>;
  /** Module aliases for the extra entries (e.g. vitest -> the browser shim). */
  readonly alias?: Readonly<Record<string, string>>;
}

/** Writes the page bundle into `dir` (which must exist). */
export async function bundlePageInto(dir: string, options: BundleOptions): Promise<void> {
  // Imported here, not at the top: a Node-only bundle of the CLI (the H100 run) must load without esbuild.
  const { build } = await import('esbuild');
  const here = dirname(fileURLToPath(import.meta.url));
  const cpuPackage = dirname(require.resolve('@trident/backend-cpu/package.json'));
  const cpuWorker = join(cpuPackage, options.fromSource ? 'src' : 'dist', 'browser-worker.mjs');
  await build({
    // The worker entry serves the sources' `new URL('./browser-worker.mjs', import.meta.url)`;
    // the built backend inlines its worker (packages/backend-cpu/scripts/inline-worker.mjs).
    entryPoints: {
      'bench-page': join(here, options.fromSource ? 'page.ts' : 'page.js'),
      'browser-worker': cpuWorker,
      ...(options.extraEntries ?? {}),
    },
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: options.fromSource ? ['trident-source', 'browser'] : ['browser'],
    target: 'es2022',
    logLevel: 'error',
    minify: options.minify === true,
    ...(options.alias ? { alias: { ...options.alias } } : {}),
    // Dawn's native addon is only reached from Node (a variable import specifier); never in a page.
    external: ['webgpu'],
  });
  copyFileSync(require.resolve('gpu.js/dist/gpu-browser.min.js'), join(dir, 'gpu-browser.min.js'));
  const wasmDir = join(dir, 'tfjs-wasm');
  mkdirSync(wasmDir, { recursive: true });
  const wasmDist = dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
  for (const f of readdirSync(wasmDist).filter((f) => f.endsWith('.wasm'))) copyFileSync(join(wasmDist, f), join(wasmDir, f));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><html><head><meta charset="utf-8"><title>trident bench</title>' +
      '<script src="gpu-browser.min.js"></script><script type="module" src="bench-page.mjs"></script></head><body>trident bench</body></html>',
  );
}
