/**
 * docs/kernels.md shows the current text of its snippet files (docs/snippets/*.ts, which
 * `npm run check` type-checks and test/docs-snippets.test.ts runs): every TypeScript block
 * in the docs is a marked snippet, every marked snippet matches its region, and every
 * region is shown somewhere. `node scripts/sync-doc-snippets.mjs` brings the docs up to date.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { syncedDocs } from '../scripts/sync-doc-snippets.mjs';

const DOCS = fileURLToPath(new URL('../docs/', import.meta.url));

describe('docs snippets', () => {
  it('every snippet block in docs/*.md matches its region of docs/snippets/', () => {
    const stale = syncedDocs().flatMap((d) => d.stale);
    expect(stale, 'run node scripts/sync-doc-snippets.mjs').toEqual([]);
  });

  it('every ```ts block of docs/kernels.md is a snippet, and every region is shown', () => {
    const doc = readFileSync(`${DOCS}kernels.md`, 'utf8');
    const fences = [...doc.matchAll(/(.*)\n```ts\n/g)].map((m) => m[1] ?? '');
    expect(fences.filter((line) => !line.startsWith('<!-- snippet: '))).toEqual([]);
    const shown = new Set([...doc.matchAll(/<!-- snippet: ([\w.-]+#[\w-]+) -->/g)].map((m) => m[1]));
    for (const file of readdirSync(`${DOCS}snippets`).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(`${DOCS}snippets/${file}`, 'utf8');
      const regions = [...source.matchAll(/^\/\/ #region ([\w-]+)$/gm)].map((m) => `${file}#${m[1]}`);
      expect(regions.length, file).toBeGreaterThan(0);
      for (const r of regions) expect(shown, `${r} is not shown in docs/kernels.md`).toContain(r);
    }
  });
});
