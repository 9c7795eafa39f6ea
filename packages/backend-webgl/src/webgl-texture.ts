import type { BackendBuffer, BufferDType } from '@trident/core';

/**
 * Buffers as textures: element i of a buffer lives at texel (i % width, i / width)
 * of a one-channel 32-bit texture (R32UI for u32 and f32 bits, R32I for i32). The width is the length up
 * to MAX_TEXTURE_SIZE, so buffers hold up to MAX_TEXTURE_SIZE^2 elements.
 */
export interface TexFormat {
  readonly internal: number;
  readonly format: number;
  readonly type: number;
}

export function texFormat(gl: WebGL2RenderingContext, dtype: BufferDType | 'shadow'): TexFormat {
  switch (dtype) {
    case 'i32':
      return { internal: gl.R32I, format: gl.RED_INTEGER, type: gl.INT };
    case 'shadow':
      // The float shadows that atomics blend into.
      return { internal: gl.R32F, format: gl.RED, type: gl.FLOAT };
    default:
      // u32, and f32 stored as its bits so that every transfer is bit-exact (glsl.ts).
      return { internal: gl.R32UI, format: gl.RED_INTEGER, type: gl.UNSIGNED_INT };
  }
}

export function textureSize(length: number, maxTextureSize: number): { width: number; height: number } {
  const n = Math.max(1, length);
  const width = Math.min(n, maxTextureSize);
  return { width, height: Math.ceil(n / width) };
}

/** A buffer's storage. `texture` changes when a dispatch swaps in its ping-pong copy. */
export class GlBuffer implements BackendBuffer {
  readonly dtype: BufferDType;
  readonly length: number;
  readonly width: number;
  readonly height: number;
  texture: WebGLTexture;
  constructor(dtype: BufferDType, length: number, width: number, height: number, texture: WebGLTexture) {
    this.dtype = dtype;
    this.length = length;
    this.width = width;
    this.height = height;
    this.texture = texture;
  }
}

export function createTexture(gl: WebGL2RenderingContext, fmt: TexFormat, width: number, height: number): WebGLTexture {
  const tex = gl.createTexture();
  if (!tex) throw new Error('createTexture returned null (context lost?)');
  gl.bindTexture(gl.TEXTURE_2D, tex);
  // Immutable storage; WebGL zero-initialises it. Integer and R32F textures are read with texelFetch only.
  gl.texStorage2D(gl.TEXTURE_2D, 1, fmt.internal, width, height);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
  gl.bindTexture(gl.TEXTURE_2D, null);
  return tex;
}

/** A rectangle of texels covering part of an element range, and where it starts in the range. */
export interface Span {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
  readonly start: number;
}

/** Splits elements [offset, offset + length) of a texture of `width` into at most three rectangles. */
export function spans(offset: number, length: number, width: number): Span[] {
  const out: Span[] = [];
  const end = offset + length;
  let i = offset;
  if (i % width !== 0 && i < end) {
    const n = Math.min(width - (i % width), end - i);
    out.push({ x: i % width, y: Math.floor(i / width), w: n, h: 1, start: i - offset });
    i += n;
  }
  const full = Math.floor((end - i) / width);
  if (full > 0) {
    out.push({ x: 0, y: i / width, w: width, h: full, start: i - offset });
    i += full * width;
  }
  if (i < end) out.push({ x: 0, y: i / width, w: end - i, h: 1, start: i - offset });
  return out;
}
