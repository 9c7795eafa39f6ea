/**
 * Short, readable names for the report's headers and legends. Adapter strings
 * such as "ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero)
 * (0x0000C0DE)), SwiftShader driver)" are shortened here; the full string stays
 * in the Sources table.
 */

/** 'ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device …))' -> 'SwiftShader'; 'NVIDIA H100 80GB HBM3' -> 'NVIDIA H100'. */
export function shortAdapter(adapter: string): string {
  const a = adapter.trim();
  if (a === '') return '';
  if (/swiftshader/i.test(a)) return 'SwiftShader';
  if (/llvmpipe|lavapipe/i.test(a)) return 'llvmpipe';
  const nvidia = /\b(H100|H200|A100|L4|L40S?|T4|V100|RTX\s*\d+\w*|GeForce\s+\w+\s*\d+\w*)\b/i.exec(a);
  if (nvidia) return `NVIDIA ${nvidia[1]?.replace(/\s+/g, ' ')}`;
  if (/^nvidia\b/i.test(a)) return 'NVIDIA GPU';
  // ANGLE (Vendor, Renderer …): the renderer, without its parenthesised detail.
  const angle = /^ANGLE \(([^,]+),\s*([^,(]+)/.exec(a);
  if (angle) return `${angle[2]?.trim()} (ANGLE)`;
  const cleaned = a
    .replace(/\((R|TM|C)\)/gi, '')
    .replace(/\bCPU\b|\bProcessor\b|@.*$/gi, '')
    .replace(/\s+/g, ' ')
    .trim();
  return cleaned.length > 32 ? `${cleaned.slice(0, 31)}…` : cleaned;
}

/** Display names of implementations. */
export function implementationName(implementation: string): string {
  switch (implementation) {
    case 'tfjs':
      return 'TF.js';
    case 'cub':
      return 'CUB';
    case 'cuda':
      return 'CUDA';
    case 'ir-tuned':
      return 'tuned IR kernel';
    case 'wgsl-hand':
      return 'hand WGSL';
    case 'reference':
      return 'JS ref';
    case 'plain JS threads':
      return 'plain-JS ceiling';
    default:
      return implementation;
  }
}

const BACKEND_ORDER = ['cpu', 'webgl2', 'webgpu'];

/** Platforms in reading order: machine 'local' first, then by machine, runtime (node, chromium) and backend. */
export function comparePlatforms(
  a: { label: string; runtime: string; backend: string },
  b: { label: string; runtime: string; backend: string },
): number {
  const local = (l: string): number => (l === 'local' ? 0 : 1);
  const runtime = (r: string): number => ['node', 'chromium', 'native'].indexOf(r);
  const backend = (x: string): number => {
    const i = BACKEND_ORDER.indexOf(x);
    return i < 0 ? BACKEND_ORDER.length : i;
  };
  return (
    local(a.label) - local(b.label) ||
    a.label.localeCompare(b.label) ||
    runtime(a.runtime) - runtime(b.runtime) ||
    backend(a.backend) - backend(b.backend) ||
    a.backend.localeCompare(b.backend)
  );
}

/** Bytes as '32 KiB', '2 GiB'. */
export function fmtBytes(bytes: number): string {
  if (!(bytes > 0)) return '0';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(v >= 10 ? 0 : 1)} ${units[u]}`;
}
