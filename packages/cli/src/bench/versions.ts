/** Versions of what ran, for the results file's `versions`. */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** A dependency's version, from its package.json next to its resolved entry (exports may hide package.json). */
export function packageVersion(name: string): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    let dir = dirname(require.resolve(name));
    for (let i = 0; i < 4; i++, dir = dirname(dir)) {
      const file = join(dir, 'package.json');
      if (!existsSync(file)) continue;
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name) return pkg.version;
    }
  } catch {
    // Not installed (or bundled, as on the GPU machine): the version is simply not recorded.
  }
  return undefined;
}

/** The versions of Trident and the packages a run may use that are installed here. */
export function installedVersions(): Record<string, string> {
  const versions: Record<string, string> = {};
  for (const name of ['trident', '@trident/algorithms', 'webgpu', 'gpu.js', '@tensorflow/tfjs', 'playwright-core', 'graphology']) {
    const v = packageVersion(name);
    if (v) versions[name] = v;
  }
  return versions;
}
