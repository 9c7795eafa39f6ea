// `npx vite examples/browser`: serves the page cross-origin isolated (the CPU backend's
// SharedArrayBuffers need it) and resolves the @trident packages to this repository's sources.
import { defaultClientConditions, defineConfig } from 'vite';

const isolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

export default defineConfig({
  resolve: { conditions: ['trident-source', ...defaultClientConditions] },
  server: { headers: isolation },
  preview: { headers: isolation },
  build: { target: 'es2022' },
});
