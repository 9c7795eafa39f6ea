#!/usr/bin/env node
// The `trident` launcher. Trident's packages ship TypeScript sources (their
// exports point at src/*.ts), so the CLI runs them through tsx's loader rather
// than a build step: this works straight after `npm ci`, with nothing to rebuild
// when a package changes.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2));
