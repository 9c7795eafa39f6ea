#!/usr/bin/env node
/**
 * `npm run fuzz -- --seeds N [--from S] [--project node|browser]`: the differential
 * fuzzer (test/fuzz) over more seeds than CI runs, on every backend of the chosen
 * vitest projects (default both: cpu and webgpu in Node; webgl2, webgpu and cpu in
 * headless Chromium). Mismatches are shrunk and printed as small kernels.
 * The reference (test/fuzz/interpret.ts) compares integers bit for bit and f32
 * within bounds: WGSL's accuracy, flushed subnormals, and every grouping of an f32
 * chain that a shader compiler may reassociate (docs/kernels.md); a mismatch is an
 * answer outside those bounds.
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '500' },
    from: { type: 'string', default: '1' },
    project: { type: 'string', multiple: true },
  },
});
for (const flag of /** @type {const} */ (['seeds', 'from'])) {
  if (!/^\d+$/.test(values[flag]) || Number(values[flag]) < 1) {
    console.error(`fuzz: --${flag} must be a positive integer, got '${values[flag]}'`);
    process.exit(2);
  }
}
const projects = values.project ?? ['node', 'browser'];
const args = ['vitest', 'run', 'test/fuzz/fuzz.test.ts', ...projects.flatMap((p) => ['--project', p])];
const r = spawnSync('npx', args, {
  stdio: 'inherit',
  env: { ...process.env, TRIDENT_FUZZ_SEEDS: values.seeds, TRIDENT_FUZZ_FROM: values.from },
});
process.exit(r.status ?? 1);
