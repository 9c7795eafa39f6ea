/**
 * The examples in a page: webgpu, webgl2 and cpu (Web Workers) in turn, each example
 * checked against its reference, one table row each. Build and serve it with Vite from
 * the repository root:
 *
 *   npx vite examples/browser
 *
 * The CPU backend needs a cross-origin isolated page (SharedArrayBuffer): serve it
 * with `Cross-Origin-Opener-Policy: same-origin` and
 * `Cross-Origin-Embedder-Policy: require-corp` (examples/browser/vite.config.ts does).
 * Results also go to `window.exampleResults` (the test reads them there).
 */
import { BACKEND_KINDS, createDevice, isTridentError } from 'trident';
import { EXAMPLES, type ExampleName } from '../index.ts';

export interface PageResult {
  readonly backend: string;
  readonly example: ExampleName | '-';
  readonly ok: boolean;
  readonly detail: string;
}

const rows = document.getElementById('results');
const results: PageResult[] = [];

function report(r: PageResult): void {
  results.push(r);
  const tr = document.createElement('tr');
  for (const text of [r.backend, r.example, r.detail]) {
    const td = document.createElement('td');
    td.textContent = text;
    tr.append(td);
  }
  tr.className = r.ok ? 'ok' : 'fail';
  rows?.append(tr);
}

for (const backend of BACKEND_KINDS) {
  let device: Awaited<ReturnType<typeof createDevice>>;
  try {
    device = await createDevice({ backend });
  } catch (err) {
    report({ backend, example: '-', ok: false, detail: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    continue;
  }
  for (const [name, run] of Object.entries(EXAMPLES) as Array<[ExampleName, (typeof EXAMPLES)[ExampleName]]>) {
    try {
      const result = await run(device);
      report({ backend, example: name, ok: result.ok, detail: JSON.stringify(result) });
    } catch (err) {
      const detail = isTridentError(err) ? `${err.name}: ${err.message}` : String(err);
      report({ backend, example: name, ok: false, detail });
    }
  }
  await device.destroy();
}
(globalThis as { exampleResults?: PageResult[] }).exampleResults = results;
