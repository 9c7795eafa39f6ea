import { playwright } from '@vitest/browser-playwright';
import { defaultClientConditions, defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './packages/cli/src/browser/chromium.ts';

/**
 * Two projects run by one `vitest run`:
 * - `node`: the conformance suite in Node (cpu, webgpu through Dawn).
 * - `browser`: the same specs in headless Chromium (webgl2, webgpu, cpu in one page).
 *
 * File naming rule: `*.node.test.ts` runs only in Node (it may use node: APIs);
 * `*.browser.test.ts` and `webgl-*.test.ts` run only in the browser; every other
 * `*.test.ts` runs in both.
 *
 * Env: TRIDENT_BACKENDS names the kinds the Node project must find;
 * TRIDENT_BROWSER_BACKENDS the kinds the browser project must find (CI sets
 * webgl2,webgpu,cpu); CHROMIUM_PATH overrides /usr/bin/chromium.
 */
const NODE_ONLY = 'test/**/*.node.test.ts';
const BROWSER_ONLY = ['test/**/*.browser.test.ts', 'test/webgl-*.test.ts'];

/**
 * Tests run the packages' TypeScript sources: the `trident-source` export condition
 * (each package.json) points there, where consumers get dist/. Vite takes the browser
 * project's conditions from `resolve`, the Node project's from `ssr.resolve`.
 */
const SOURCE = 'trident-source';
const sourceResolution = {
  resolve: { conditions: [SOURCE, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [SOURCE, ...defaultServerConditions] } },
};

/** The differential fuzzer (test/fuzz): how many seeds from which first seed; `npm run fuzz` sets these. */
const fuzzSettings = {
  fuzzSeeds: process.env.TRIDENT_FUZZ_SEEDS ?? '',
  fuzzFrom: process.env.TRIDENT_FUZZ_FROM ?? '',
};

const shared = {
  // Devices own worker pools and GPU adapters: run files one at a time on 2 cores.
  fileParallelism: false,
  // A limit against hangs, not a speed check (speed belongs in benchmarks). The two projects run
  // side by side, so a test on a software GPU shares 2 cores with the other project's file: in the
  // clean-clone CI runs of 2026-11-27 (870-950 s in all) the WebGL2 chunked histogram took 60+ s
  // where it takes 33 s alone, and a dozen other tests 25-47 s.
  testTimeout: 180_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    projects: [
      {
        ...sourceResolution,
        test: {
          ...shared,
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...BROWSER_ONLY],
          provide: { tridentBackends: process.env.TRIDENT_BACKENDS ?? '', ...fuzzSettings },
          // Dawn (webgpu in Node) on a GPU-less machine runs on SwiftShader's Vulkan driver
          // (Debian's chromium package ships it); an explicit setting wins.
          env: {
            VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? '/usr/lib/chromium/vk_swiftshader_icd.json',
            XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp',
          },
        },
      },
      {
        ...sourceResolution,
        // SharedArrayBuffer (the cpu backend's worker pool) needs a cross-origin isolated page.
        server: {
          host: '127.0.0.1',
          headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
        },
        optimizeDeps: { include: ['twgl.js'] },
        test: {
          ...shared,
          name: 'browser',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', NODE_ONLY],
          provide: { tridentBackends: process.env.TRIDENT_BROWSER_BACKENDS ?? '', ...fuzzSettings },
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({
              launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
            }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
    ],
  },
});
