/**
 * bench/h100/vitest-shim.mjs for a page: the same describe / it / expect / run, with `inject`
 * reading the backends from the page's address (conformance.html?backends=webgl2), since a page
 * has no process.env. Used by the browser conformance bundle (bench/h100/browser-build.ts).
 */
export * from './vitest-shim.mjs';

export function inject(key) {
  return key === 'tridentBackends' ? (new URLSearchParams(globalThis.location?.search ?? '').get('backends') ?? '') : undefined;
}
