import type { BufferDType } from '@trident/core';
import { glslType, samplerType, storageType } from './glsl.ts';
import type { TargetMode } from './glsl-plan.ts';

/** The device's own fragment shaders (drawn with glsl.ts's FULLSCREEN_VS). */
const HEADER = `#version 300 es
precision highp float;
precision highp int;
precision highp sampler2D;
precision highp usampler2D;
precision highp isampler2D;`;

/**
 * Copies elements [srcOff, srcOff + len) of `src` to [dstOff, ...) of the bound
 * target; other texels are discarded (kept). Texture widths may differ.
 */
export function copyShader(dtype: BufferDType): string {
  // Texels are copied as stored (f32 as bits): copies are bit-exact.
  const t = storageType(dtype);
  return `${HEADER}
uniform highp ${samplerType(dtype)} c_src;
uniform uint c_srcW;
uniform uint c_dstW;
uniform uint c_srcOff;
uniform uint c_dstOff;
uniform uint c_len;
layout(location = 0) out highp ${t} o;
void main() {
  uvec2 p = uvec2(gl_FragCoord.xy);
  uint t = p.y * c_dstW + p.x;
  if (t < c_dstOff || t - c_dstOff >= c_len) discard;
  uint s = t - c_dstOff + c_srcOff;
  o = texelFetch(c_src, ivec2(int(s % c_srcW), int(s / c_srcW)), 0).r;
}
`;
}

/**
 * Folds a blended float shadow into an integer buffer: add adds the (exact, below
 * 2^24) sum with integer wrap-around; min/max combine with the old value, where the
 * shadow's initial +-Inf means "no atomic touched this element".
 */
export function foldShader(dtype: 'u32' | 'i32', mode: Exclude<TargetMode, 'store'>): string {
  const t = glslType(dtype);
  const toInt = dtype === 'u32' ? 'uint(s)' : 'int(s)';
  const body =
    mode === 'add'
      ? dtype === 'u32'
        ? 'o = a + uint(s);'
        : 'o = int(uint(a) + uint(int(s)));'
      : `o = s == uintBitsToFloat(${mode === 'min' ? '0x7f800000u' : '0xff800000u'}) ? a : ${mode}(a, ${toInt});`;
  return `${HEADER}
uniform highp ${samplerType(dtype)} f_old;
uniform highp sampler2D f_acc;
layout(location = 0) out highp ${t} o;
void main() {
  ivec2 p = ivec2(gl_FragCoord.xy);
  ${t} a = texelFetch(f_old, p, 0).r;
  float s = texelFetch(f_acc, p, 0).r;
  ${body}
}
`;
}
