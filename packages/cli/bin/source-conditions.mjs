// Module resolution hook for bin/trident.mjs in the monorepo (not published): resolve
// with the `trident-source` condition, so each @trident package's exports map
// points at its src/*.ts instead of a dist/ that may not be built.
/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, { ...context, conditions: [...context.conditions, 'trident-source'] });
}
