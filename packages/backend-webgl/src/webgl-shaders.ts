import type { BufferDType } from '@trident/core';
import { samplerType, storageType } from './glsl.ts';
import type { TargetMode } from './glsl-plan.ts';

/** The device's own fragment shaders (drawn with glsl.ts's FULLSCREEN_VS). */
const HEADER = `#version 300 es
precision highp float;
precision highp int;
precision highp sampler2D;
precision highp usampler2D;
precision highp isampler2D;
ivec2 t_at(uint t, uint s) { return ivec2(int(t & ((1u << s) - 1u)), int(t >> s)); }`;

/**
 * Copies elements [srcOff, srcOff + len) of `src` to [dstOff, ...) of the bound
 * target, texels [c_t0, c_t1) of it (others are discarded, so they keep their
 * values); the host masks the components of partial texels. When srcOff and
 * dstOff agree mod 4 each texel is one fetch; otherwise each element is fetched.
 */
export function copyShader(dtype: BufferDType): string {
  // Texels are copied as stored (f32 as bits): copies are bit-exact.
  const t = storageType(dtype);
  return `${HEADER}
uniform highp ${samplerType(dtype)} c_src;
uniform uint c_srcS;
uniform uint c_dstS;
uniform uint c_srcOff;
uniform uint c_dstOff;
uniform uint c_t0;
uniform uint c_t1;
layout(location = 0) out highp ${t} o;
void main() {
  uvec2 p = uvec2(gl_FragCoord.xy);
  uint t = (p.y << c_dstS) + p.x;
  if (t < c_t0 || t >= c_t1) discard;
  uint s = t * 4u - c_dstOff + c_srcOff;
  if ((s & 3u) == 0u) {
    o = texelFetch(c_src, t_at(s >> 2u, c_srcS), 0);
  } else {
    // Element by element; lanes picked with selects (dynamic vector indexing hangs SwiftShader's compiler).
    ${t} q0 = texelFetch(c_src, t_at(s >> 2u, c_srcS), 0);
    ${t} q1 = texelFetch(c_src, t_at((s + 3u) >> 2u, c_srcS), 0); // (s >> 2) + 1, also where s wrapped below 0
    uint k = s & 3u;
    o = k == 1u ? ${t}(q0.yzw, q1.x) : k == 2u ? ${t}(q0.zw, q1.xy) : ${t}(q0.w, q1.xyz);
  }
}
`;
}

/**
 * Folds a blended float shadow into an integer buffer, four elements a texel: add
 * adds the (exact, below 2^24) sum with integer wrap-around (f32: the float sum); min/max combine with
 * the old value, where the shadow's initial +-Inf means "no atomic touched this element".
 */
export function foldShader(dtype: 'u32' | 'i32' | 'f32', mode: Exclude<TargetMode, 'store'>): string {
  const t = storageType(dtype);
  if (dtype === 'f32' && mode !== 'add') throw new Error(`internal: f32 atomic ${mode} has no fold`);
  const body =
    dtype === 'f32'
      ? // f32 add (bits in the texel): a shadow still at its -0 identity was not touched, keep the bits exactly.
        'bvec4 hit = notEqual(floatBitsToUint(s), uvec4(0x80000000u));\n  uvec4 m = floatBitsToUint(uintBitsToFloat(a) + s);\n  o = uvec4(hit.x ? m.x : a.x, hit.y ? m.y : a.y, hit.z ? m.z : a.z, hit.w ? m.w : a.w);'
      : mode === 'add'
        ? dtype === 'u32'
          ? 'o = a + uvec4(s);'
          : 'o = ivec4(uvec4(a) + uvec4(ivec4(s)));'
        : // Fragment outputs take constant indices only: combine in r.
          `bvec4 hit = notEqual(s, vec4(uintBitsToFloat(${mode === 'min' ? '0x7f800000u' : '0xff800000u'})));\n  ${t} m = ${mode}(a, ${t}(s));\n  o = ${t}(hit.x ? m.x : a.x, hit.y ? m.y : a.y, hit.z ? m.z : a.z, hit.w ? m.w : a.w);`;
  return `${HEADER}
uniform highp ${samplerType(dtype)} f_old;
uniform highp sampler2D f_acc;
layout(location = 0) out highp ${t} o;
void main() {
  ivec2 p = ivec2(gl_FragCoord.xy);
  ${t} a = texelFetch(f_old, p, 0);
  vec4 s = texelFetch(f_acc, p, 0);
  ${body}
}
`;
}
