/**
 * How the browser CPU backend starts a worker when running from the monorepo's
 * sources (the `trident-source` condition of the `#spawn-worker` import). The
 * literal `new Worker(new URL(…, import.meta.url))` form is what Vite's dev server
 * (the browser test project) recognises; the CLI's esbuild page bundle emits
 * browser-worker.mjs beside the page. The published package resolves
 * `#spawn-worker` to dist/spawn-worker-inline.js instead (scripts/inline-worker.mjs):
 * the worker's code embedded as a string, so no bundler has to find a file.
 */
export function spawnCpuWorker(name: string): { readonly worker: Worker; readonly source: string } {
  const worker = new Worker(new URL('./browser-worker.mjs', import.meta.url), { type: 'module', name });
  return { worker, source: new URL('./browser-worker.mjs', import.meta.url).href };
}
