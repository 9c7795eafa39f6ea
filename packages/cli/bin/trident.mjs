#!/usr/bin/env node
// The `trident` launcher. Installed from the package, it runs the built JavaScript
// (dist/). In the monorepo, where src/ sits beside it, it runs the TypeScript sources
// through tsx's loader, resolving every @trident package to its sources (the
// `trident-source` export condition): nothing to build after a change.
import { existsSync } from 'node:fs';
import { register as registerHooks } from 'node:module';

const fromSource = existsSync(new URL('../src/main.ts', import.meta.url));
if (fromSource) {
  const { register } = await import('tsx/esm/api');
  register();
  // Registered after tsx, so it runs first: it adds the condition and hands on to tsx.
  registerHooks('./source-conditions.mjs', import.meta.url);
}
const { main } = await import(fromSource ? '../src/main.ts' : '../dist/main.js');
process.exitCode = await main(process.argv.slice(2));
