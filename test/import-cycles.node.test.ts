/**
 * The packages' import graph: arrows between packages only point down (core <-
 * backends, core <- algorithms, backends <- trident, anything <- cli), and no
 * import circles among the source files: a module graph without cycles can be read
 * bottom-up, and ES modules in a cycle see each other half initialised. Edges are the relative imports and re-exports that survive
 * compilation: `import type` / `export type` clauses are erased (verbatimModuleSyntax),
 * so they are no edges; `import { type X }` keeps a bare import and counts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';

const ROOT = new URL('../', import.meta.url).pathname;
const PACKAGES = join(ROOT, 'packages');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : sources(p);
    return /\.(ts|mts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Every module specifier of `file` (imports, re-exports and dynamic imports, type-only ones included). */
function allSpecifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      specifiers.push(node.moduleSpecifier.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers;
}

/** The relative specifiers of `file` that are runtime imports or re-exports. */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier))
      specifiers.push(node.moduleSpecifier.text);
    else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      specifiers.push(node.moduleSpecifier.text);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteral(arg)) specifiers.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.filter((s) => s.startsWith('.'));
}

const files = readdirSync(PACKAGES).flatMap((p) => {
  const src = join(PACKAGES, p, 'src');
  return existsSync(src) ? sources(src) : [];
});

/** Every cycle's files (each cycle once, from its first file in DFS order). */
function cycles(): string[][] {
  const edges = new Map(files.map((f) => [f, runtimeImports(f).map((s) => resolve(dirname(f), s))]));
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const walk = (f: string): void => {
    state.set(f, 'open');
    stack.push(f);
    for (const g of edges.get(f) ?? []) {
      if (!edges.has(g)) continue;
      if (state.get(g) === 'open') found.push(stack.slice(stack.indexOf(g)).map((x) => relative(ROOT, x)));
      else if (!state.has(g)) walk(g);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of files) if (!state.has(f)) walk(f);
  return found;
}

it('reads the import graph of every package', () => {
  expect(files.length).toBeGreaterThan(100);
  expect(runtimeImports(join(PACKAGES, 'algorithms', 'src', 'index.ts')).length).toBeGreaterThan(10);
});

/** The workspace packages each package's sources may import (the CLI may import any). */
const MAY_IMPORT: Readonly<Record<string, readonly string[] | 'any'>> = {
  core: [],
  'backend-cpu': ['@trident/core'],
  'backend-webgl': ['@trident/core'],
  'backend-webgpu': ['@trident/core'],
  algorithms: ['@trident/core'],
  trident: ['@trident/core', '@trident/backend-cpu', '@trident/backend-webgl', '@trident/backend-webgpu'],
  cli: 'any',
};

it('imports workspace packages only downwards: no package but trident and the CLI imports a backend', () => {
  const bad: string[] = [];
  for (const file of files) {
    const pkg = relative(PACKAGES, file).split('/')[0] as string;
    const allowed = MAY_IMPORT[pkg];
    expect(allowed, `no rule for package ${pkg}`).toBeDefined();
    if (allowed === 'any') continue;
    for (const s of allSpecifiers(file)) {
      const workspace = s === 'trident' || s.startsWith('trident/') || s.startsWith('@trident/');
      const target = s
        .split('/')
        .slice(0, s.startsWith('@') ? 2 : 1)
        .join('/');
      if (workspace && !(allowed ?? []).includes(target)) bad.push(`${relative(ROOT, file)} imports ${s}`);
    }
  }
  expect(bad).toEqual([]);
});

it('has no import circle among the packages’ source files', () => {
  expect(cycles().map((c) => c.join(' -> '))).toEqual([]);
});
