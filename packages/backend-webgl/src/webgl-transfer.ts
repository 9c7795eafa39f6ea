import { type BufferDType, type HostArray, typedArrayConstructor } from '@trident/core';
import type { ProgramCache } from './webgl-program-cache.ts';
import { copyShader } from './webgl-shaders.ts';
import type { GlState, TexelPart } from './webgl-state.ts';
import { waitFence } from './webgl-sync.ts';
import { GlBuffer, LANES, spans, texelRange, texFormat } from './webgl-texture.ts';
import type { TexturePool } from './webgl-texture-pool.ts';

/**
 * Reads up to this many bytes block on readPixels (WebGLBackendOptions.blockingReadBytes):
 * LEDGER.md, webgl2.blockingRead.
 */
export const BLOCKING_READ_BYTES = 4096;

/**
 * Elements into, out of and between buffer textures. Whole texels move with
 * texSubImage2D, scissored clears and a copy pass; the partial texels at either
 * end of a range are written under a colour mask, so the other elements of those
 * texels keep their values. Every command is issued in call order (stream order);
 * only `read` waits, on a fence.
 */
export class BufferTransfers {
  private readonly gl: WebGL2RenderingContext;
  private readonly state: GlState;
  private readonly pool: TexturePool;
  private readonly programs: ProgramCache;
  private readonly check: () => void;

  constructor(gl: WebGL2RenderingContext, state: GlState, pool: TexturePool, programs: ProgramCache, check: () => void) {
    this.gl = gl;
    this.state = state;
    this.pool = pool;
    this.programs = programs;
    this.check = check;
  }

  write(b: GlBuffer, offset: number, data: HostArray): void {
    const gl = this.gl;
    const fmt = texFormat(gl, b.dtype);
    const elements = data instanceof Float32Array ? new Uint32Array(data.buffer, data.byteOffset, data.length) : data;
    const range = texelRange(offset, data.length);
    if (range.whole.count > 0) {
      this.state.bindForUpload(b.texture);
      const start = range.whole.first * LANES - offset;
      for (const s of spans(range.whole.first, range.whole.count, b.width)) {
        gl.texSubImage2D(gl.TEXTURE_2D, 0, s.x, s.y, s.w, s.h, fmt.format, fmt.type, elements, start + s.start * LANES);
      }
    }
    // Partial texels: a masked one-texel clear with the new values in their components.
    for (const p of range.partial) {
      const values = new Array<number>(LANES).fill(0);
      for (let c = p.from; c < p.to; c++) values[c] = elements[p.texel * LANES + c - offset] as number;
      this.clearTexels(b, p.texel, 1, values, p);
    }
  }

  fill(b: GlBuffer, value: number, offset: number, length: number): void {
    const bits = b.dtype === 'f32' ? (new Uint32Array(new Float32Array([value]).buffer)[0] as number) : value;
    const values = [bits, bits, bits, bits];
    const range = texelRange(offset, length);
    if (range.whole.count > 0) this.clearTexels(b, range.whole.first, range.whole.count, values);
    for (const p of range.partial) this.clearTexels(b, p.texel, 1, values, p);
  }

  copy(s: GlBuffer, srcOffset: number, d: GlBuffer, dstOffset: number, length: number): void {
    // Device refuses overlapping ranges, but a texture cannot be sampled while it is drawn into.
    const from = s === d ? this.clone(s) : s.texture;
    this.copyInto(s.dtype, from, s.shape.shift, srcOffset, d, d.texture, dstOffset, length);
    if (from !== s.texture) this.pool.release(s, from);
  }

  /**
   * Elements [offset, offset + length) of `b`. Reads of at most `blockingBytes` (and within one
   * texture row) wait by a blocking readPixels: one round trip, in which the page's thread also
   * waits for the work issued before the read. Other reads copy into a pixel-pack buffer and
   * poll a fence from the event loop, never blocking the page.
   */
  async read(b: GlBuffer, offset: number, length: number, into: HostArray | undefined, blockingBytes: number): Promise<HostArray> {
    const gl = this.gl;
    const out = into ?? new (typedArrayConstructor(b.dtype))(length);
    if (length === 0) return out;
    // f32 texels hold bits: read them as u32 into the same bytes.
    const outElements = b.dtype === 'f32' ? new Uint32Array(out.buffer, out.byteOffset, length) : out;
    const firstTexel = Math.floor(offset / LANES);
    const texels = Math.floor((offset + length - 1) / LANES) - firstTexel + 1;
    if (texels * LANES * 4 <= blockingBytes && firstTexel >> b.shape.shift === (firstTexel + texels - 1) >> b.shape.shift) {
      this.state.attach([b.texture], [b.width, b.height]);
      const fmt = texFormat(gl, b.dtype);
      const staging = new (typedArrayConstructor(b.dtype === 'i32' ? 'i32' : 'u32'))(texels * LANES);
      gl.readPixels(firstTexel % b.width, firstTexel >> b.shape.shift, texels, 1, fmt.format, fmt.type, staging);
      this.check();
      outElements.set(staging.subarray(offset - firstTexel * LANES, offset - firstTexel * LANES + length));
      return out;
    }
    const rowElements = b.width * LANES;
    const y0 = Math.floor(offset / rowElements);
    const y1 = Math.floor((offset + length - 1) / rowElements);
    const rows = y1 - y0 + 1;
    this.state.attach([b.texture], [b.width, b.height]);
    // RGBA_INTEGER with UNSIGNED_INT / INT: the combination every integer colour buffer can be read with.
    const fmt = texFormat(gl, b.dtype);
    const pbo = gl.createBuffer();
    gl.bindBuffer(gl.PIXEL_PACK_BUFFER, pbo);
    gl.bufferData(gl.PIXEL_PACK_BUFFER, rowElements * rows * 4, gl.STREAM_READ);
    gl.readPixels(0, y0, b.width, rows, fmt.format, fmt.type, 0);
    gl.bindBuffer(gl.PIXEL_PACK_BUFFER, null);
    try {
      await waitFence(gl, this.check);
      const first = offset - y0 * rowElements;
      const staging = new (typedArrayConstructor(b.dtype === 'i32' ? 'i32' : 'u32'))(first + length);
      gl.bindBuffer(gl.PIXEL_PACK_BUFFER, pbo);
      gl.getBufferSubData(gl.PIXEL_PACK_BUFFER, 0, staging);
      gl.bindBuffer(gl.PIXEL_PACK_BUFFER, null);
      outElements.set(staging.subarray(first));
      return out;
    } finally {
      gl.deleteBuffer(pbo);
    }
  }

  /** A full copy of `b`'s texture in a spare (ping-pong source or destination). */
  clone(b: GlBuffer): WebGLTexture {
    const tex = this.pool.spare(b);
    const shadow = new GlBuffer(b.dtype, b.shape.texels * LANES, b.shape, tex);
    this.copyInto(b.dtype, b.texture, b.shape.shift, 0, shadow, tex, 0, b.shape.texels * LANES);
    return tex;
  }

  /** Sets texels [first, first + count) of `b` to `values` (components [from, to) only, if given): scissored clears. */
  private clearTexels(b: GlBuffer, first: number, count: number, values: readonly number[], part?: TexelPart): void {
    const gl = this.gl;
    this.state.attach([b.texture], [b.width, b.height]);
    this.state.setColorMask(part);
    gl.enable(gl.SCISSOR_TEST);
    for (const s of spans(first, count, b.width)) {
      gl.scissor(s.x, s.y, s.w, s.h);
      if (b.dtype === 'i32') gl.clearBufferiv(gl.COLOR, 0, new Int32Array(values));
      else gl.clearBufferuiv(gl.COLOR, 0, new Uint32Array(values));
    }
    gl.disable(gl.SCISSOR_TEST);
    this.state.setColorMask(undefined);
  }

  /** Copies `len` elements of `src` (texture width 2^srcShift) from `srcOff` to `dstOff` of `dstTex` (shaped as `dst`). */
  private copyInto(
    dtype: BufferDType,
    src: WebGLTexture,
    srcShift: number,
    srcOff: number,
    dst: GlBuffer,
    dstTex: WebGLTexture,
    dstOff: number,
    len: number,
  ): void {
    if (len === 0) return;
    const gl = this.gl;
    this.state.attach([dstTex], [dst.width, dst.height]);
    this.state.setBlend(null);
    const p = this.programs.util(`copy-${dtype}`, () => copyShader(dtype));
    const base = { c_src: src, c_srcS: srcShift, c_dstS: dst.shape.shift, c_srcOff: srcOff, c_dstOff: dstOff };
    const range = texelRange(dstOff, len);
    const pieces: Array<{ first: number; count: number; part?: TexelPart }> = [];
    if (range.whole.count > 0) pieces.push(range.whole);
    for (const q of range.partial) pieces.push({ first: q.texel, count: 1, part: q });
    gl.enable(gl.SCISSOR_TEST);
    for (const piece of pieces) {
      this.state.setColorMask(piece.part);
      this.state.useProgram(p, base, { c_t0: piece.first, c_t1: piece.first + piece.count });
      // Only the rows holding the texels.
      const y0 = piece.first >> dst.shape.shift;
      const y1 = (piece.first + piece.count - 1) >> dst.shape.shift;
      gl.scissor(0, y0, dst.width, y1 - y0 + 1);
      gl.drawArrays(gl.TRIANGLES, 0, 3);
    }
    gl.disable(gl.SCISSOR_TEST);
    this.state.setColorMask(undefined);
  }
}
