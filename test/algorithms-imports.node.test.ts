/**
 * The portability rule: packages/algorithms imports @trident/core only (plus its
 * own relative modules) and never selects a formulation by backend name.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = new URL('../packages/algorithms/src/', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.(ts|js|mjs)$/.test(e.name) ? [p] : [];
  });
}

/** Comments say why; only code counts. */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

const files = sources(ROOT);

it('finds the algorithm sources', () => {
  expect(files.length).toBeGreaterThan(3);
});

it('imports nothing but @trident/core and relative modules', () => {
  const bad: string[] = [];
  for (const file of files) {
    const code = stripComments(readFileSync(file, 'utf8'));
    const specifiers = [
      ...code.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g),
      ...code.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g),
      ...code.matchAll(/\bimport\s+['"]([^'"]+)['"]/g),
      ...code.matchAll(/\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g),
    ].map((m) => m[1] as string);
    for (const s of specifiers)
      if (s !== '@trident/core' && !s.startsWith('./') && !s.startsWith('../')) bad.push(`${relative(ROOT, file)}: ${s}`);
    // Dynamic imports with computed specifiers would dodge the check.
    if (/\bimport\s*\(\s*[^'"\s]/.test(code)) bad.push(`${relative(ROOT, file)}: computed dynamic import`);
  }
  expect(bad).toEqual([]);
});

it('never looks at the backend name', () => {
  const bad: string[] = [];
  for (const file of files) {
    const code = stripComments(readFileSync(file, 'utf8'));
    if (/\.backend\b/.test(code) || /\[\s*['"`]backend['"`]\s*\]/.test(code)) bad.push(`${relative(ROOT, file)}: reads .backend`);
    if (/\bBackendKind\b|\bBACKEND_KINDS\b/.test(code)) bad.push(`${relative(ROOT, file)}: uses backend kinds`);
    for (const m of code.matchAll(/['"`](webgpu|webgl2?|cpu)['"`]/gi)) bad.push(`${relative(ROOT, file)}: string literal ${m[0]}`);
  }
  expect(bad).toEqual([]);
});
