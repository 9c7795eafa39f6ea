import type { BackendBuffer, BufferDType } from '@trident/core';

/**
 * Buffers as textures, four elements to a texel: element i of a buffer lives in
 * component i % 4 of texel t = i / 4, and texel t at (t % width, t / width) of a
 * four-channel 32-bit texture (RGBA32UI for u32 and f32 bits, RGBA32I for i32).
 * So one texelFetch brings four consecutive elements, and a vec4 element is
 * exactly one texel. The width is a power of two (shaders find a texel with a
 * shift and a mask, never an integer division): the texel count rounded up to a
 * power of two, at most the largest power of two <= MAX_TEXTURE_SIZE.
 */
export interface TexFormat {
  readonly internal: number;
  readonly format: number;
  readonly type: number;
}

/** Elements held by one texel. */
export const LANES = 4;

export function texFormat(gl: WebGL2RenderingContext, dtype: BufferDType | 'shadow'): TexFormat {
  switch (dtype) {
    case 'i32':
      return { internal: gl.RGBA32I, format: gl.RGBA_INTEGER, type: gl.INT };
    case 'shadow':
      // The float shadows that atomics blend into (and the counting pass's texel).
      return { internal: gl.RGBA32F, format: gl.RGBA, type: gl.FLOAT };
    default:
      // u32, and f32 stored as its bits so that every transfer is bit-exact (glsl.ts).
      return { internal: gl.RGBA32UI, format: gl.RGBA_INTEGER, type: gl.UNSIGNED_INT };
  }
}

/** The largest power of two <= x (x >= 1). */
export function floorPow2(x: number): number {
  return 2 ** Math.floor(Math.log2(Math.max(1, x)));
}

export interface TextureShape {
  /** Texels that hold elements: ceil(length / 4), at least 1. */
  readonly texels: number;
  /** Texture width, a power of two. */
  readonly width: number;
  /** log2(width). */
  readonly shift: number;
  readonly height: number;
}

/**
 * The texture shape of a buffer of `length` elements: about square (a power-of-two
 * width near the square root of the texels, wider only where the height would pass
 * the size limit). Rasterisers split a pass by rows and shade 2x2 quads: one-row
 * textures (what a width of the next power of two gave every buffer of up to
 * 4 · MAX_TEXTURE_SIZE elements) ran each pass on one of SwiftShader's threads with
 * half of every quad empty.
 */
export function textureShape(length: number, maxTextureSize: number): TextureShape {
  const texels = Math.max(1, Math.ceil(length / LANES));
  const widest = floorPow2(maxTextureSize);
  let width = Math.min(2 ** Math.ceil(Math.log2(texels) / 2), widest);
  while (width < widest && Math.ceil(texels / width) > maxTextureSize) width *= 2;
  return { texels, width, shift: Math.log2(width), height: Math.ceil(texels / width) };
}

/** A buffer's storage. `texture` changes when a dispatch swaps in its ping-pong copy. */
export class GlBuffer implements BackendBuffer {
  readonly dtype: BufferDType;
  readonly length: number;
  readonly shape: TextureShape;
  texture: WebGLTexture;
  constructor(dtype: BufferDType, length: number, shape: TextureShape, texture: WebGLTexture) {
    this.dtype = dtype;
    this.length = length;
    this.shape = shape;
    this.texture = texture;
  }
  get width(): number {
    return this.shape.width;
  }
  get height(): number {
    return this.shape.height;
  }
  /** The part of the texture a full-buffer pass must cover: the used texels' rows (one row: only its used texels). */
  get extent(): [number, number] {
    const { texels, width, height } = this.shape;
    return [height === 1 ? texels : width, height];
  }
}

export function createTexture(gl: WebGL2RenderingContext, fmt: TexFormat, width: number, height: number): WebGLTexture {
  const tex = gl.createTexture();
  if (!tex) throw new Error('createTexture returned null (context lost?)');
  gl.bindTexture(gl.TEXTURE_2D, tex);
  // Immutable storage; WebGL zero-initialises it. Integer and float textures are read with texelFetch only.
  gl.texStorage2D(gl.TEXTURE_2D, 1, fmt.internal, width, height);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
  gl.bindTexture(gl.TEXTURE_2D, null);
  return tex;
}

/** A rectangle of texels covering part of a texel range, and where it starts in the range. */
export interface Span {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
  readonly start: number;
}

/** Splits texels [offset, offset + length) of a texture of `width` into at most three rectangles. */
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

/**
 * An element range split at texel boundaries: whole texels [first, first + count)
 * and at most two partial texels (head before, tail after), each with the
 * components it covers. Partial texels are written under a colour mask.
 */
export interface TexelRange {
  readonly whole: { readonly first: number; readonly count: number };
  readonly partial: ReadonlyArray<{ readonly texel: number; readonly from: number; readonly to: number }>;
}

export function texelRange(offset: number, length: number): TexelRange {
  const end = offset + length;
  const partial: Array<{ texel: number; from: number; to: number }> = [];
  if (length === 0) return { whole: { first: 0, count: 0 }, partial };
  const firstWhole = Math.ceil(offset / LANES);
  const endWhole = Math.floor(end / LANES);
  if (firstWhole > endWhole) {
    // The range lies inside one texel.
    const t = Math.floor(offset / LANES);
    partial.push({ texel: t, from: offset - t * LANES, to: end - t * LANES });
    return { whole: { first: 0, count: 0 }, partial };
  }
  if (offset % LANES !== 0) partial.push({ texel: firstWhole - 1, from: offset % LANES, to: LANES });
  if (end % LANES !== 0) partial.push({ texel: endWhole, from: 0, to: end % LANES });
  return { whole: { first: firstWhole, count: endWhole - firstWhole }, partial };
}
