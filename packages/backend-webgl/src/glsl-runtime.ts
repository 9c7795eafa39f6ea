/**
 * GLSL ES 3.00 helpers the generated shaders call, one per IR rule that GLSL does
 * not give for free (ir/nodes.ts): integer division by zero, i32 MIN / -1, the
 * signed remainder, saturating f32 -> integer conversion with NaN -> 0, and
 * popcount (bitCount is GLSL ES 3.10). Signed arithmetic goes through uint so
 * that wrapping never depends on the driver. Only helpers a shader uses are emitted.
 */
const SCALAR_HELPERS: Record<string, { code: string; deps?: readonly string[] }> = {
  t_isnan: { code: 'bool t_isnan(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }' },
  t_udiv: { code: 'uint t_udiv(uint a, uint b) { return b == 0u ? a : a / b; }' },
  t_urem: { code: 'uint t_urem(uint a, uint b) { return b == 0u ? 0u : a % b; }' },
  t_uabs: { code: 'uint t_uabs(int a) { return a < 0 ? 0u - uint(a) : uint(a); }' },
  t_idiv: {
    deps: ['t_uabs'],
    code: [
      'int t_idiv(int a, int b) {',
      '  if (b == 0 || (a == int(0x80000000u) && b == -1)) return a;',
      '  uint q = t_uabs(a) / t_uabs(b);',
      '  return (a < 0) != (b < 0) ? int(0u - q) : int(q);',
      '}',
    ].join('\n'),
  },
  t_irem: {
    deps: ['t_uabs'],
    code: [
      'int t_irem(int a, int b) {',
      '  if (b == 0 || (a == int(0x80000000u) && b == -1)) return 0;',
      '  uint r = t_uabs(a) % t_uabs(b);',
      '  return a < 0 ? int(0u - r) : int(r);',
      '}',
    ].join('\n'),
  },
  // a - b * trunc(a / b), as WGSL defines f32 % (the sign of the dividend), not GLSL's floored mod().
  t_frem: { code: 'float t_frem(float a, float b) { return a - b * trunc(a / b); }' },
  t_f2u: {
    deps: ['t_isnan'],
    code: 'uint t_f2u(float x) { return t_isnan(x) || x <= 0.0 ? 0u : x >= 4294967296.0 ? 4294967295u : uint(x); }',
  },
  t_f2i: {
    deps: ['t_isnan'],
    code: [
      'int t_f2i(float x) {',
      '  if (t_isnan(x)) return 0;',
      '  if (x <= -2147483648.0) return int(0x80000000u);',
      '  return x >= 2147483648.0 ? 2147483647 : int(x);',
      '}',
    ].join('\n'),
  },
  // u32 -> f32 rounding to nearest: two exact parts and one rounding add (some drivers,
  // SwiftShader among them, convert values >= 2^31 through a double-rounding path).
  t_u2f: { code: 'float t_u2f(uint x) { return float(x >> 8u) * 256.0 + float(x & 0xffu); }' },
  t_popcnt: {
    code: [
      'uint t_popcnt(uint x) {',
      '  x = x - ((x >> 1u) & 0x55555555u);',
      '  x = (x & 0x33333333u) + ((x >> 2u) & 0x33333333u);',
      '  return (((x + (x >> 4u)) & 0x0f0f0f0fu) * 0x01010101u) >> 24u;',
      '}',
    ].join('\n'),
  },
};

/** Scalar GLSL types of each helper's parameters and result, for vector overloads. */
const SIGNATURES: Record<string, { params: readonly string[]; result: string }> = {
  t_udiv: { params: ['uint', 'uint'], result: 'uint' },
  t_urem: { params: ['uint', 'uint'], result: 'uint' },
  t_idiv: { params: ['int', 'int'], result: 'int' },
  t_irem: { params: ['int', 'int'], result: 'int' },
  t_frem: { params: ['float', 'float'], result: 'float' },
  t_f2u: { params: ['float'], result: 'uint' },
  t_f2i: { params: ['float'], result: 'int' },
  t_popcnt: { params: ['uint'], result: 'uint' },
  t_u2f: { params: ['uint'], result: 'float' },
};

const VEC_PREFIX: Record<string, string> = { uint: 'u', int: 'i', float: '' };

/** Collects the helpers (and vector overloads) one shader needs, in dependency order. */
export class GlslRuntime {
  private readonly used = new Set<string>();
  private readonly overloads = new Set<string>();

  /** Marks `name` used at vector width `width` and returns the name to call. */
  use(name: string, width = 1): string {
    this.add(name);
    if (width > 1) {
      if (!SIGNATURES[name]) throw new Error(`internal: helper ${name} has no vector form`);
      this.overloads.add(`${name}/${width}`);
    }
    return name;
  }

  private add(name: string): void {
    if (this.used.has(name)) return;
    const h = SCALAR_HELPERS[name];
    if (!h) throw new Error(`internal: unknown GLSL helper ${name}`);
    for (const d of h.deps ?? []) this.add(d);
    this.used.add(name);
  }

  emit(): string {
    const out: string[] = [];
    for (const name of this.used) out.push((SCALAR_HELPERS[name] as { code: string }).code);
    for (const o of this.overloads) {
      const [name, w] = o.split('/') as [string, string];
      const sig = SIGNATURES[name] as { params: readonly string[]; result: string };
      const vt = (s: string) => `${VEC_PREFIX[s]}vec${w}`;
      const params = sig.params.map((p, i) => `${vt(p)} p${i}`).join(', ');
      const comps = ['x', 'y', 'z', 'w'].slice(0, Number(w)).map((c) => `${name}(${sig.params.map((_, i) => `p${i}.${c}`).join(', ')})`);
      out.push(`${vt(sig.result)} ${name}(${params}) { return ${vt(sig.result)}(${comps.join(', ')}); }`);
    }
    return out.join('\n');
  }
}
