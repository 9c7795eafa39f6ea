import type { GlState } from './webgl-state.ts';
import { type GlBuffer, type TexFormat, texFormat } from './webgl-texture.ts';

/** Spares kept per format and size; more are deleted, so the pool never hoards memory. */
const SPARES_PER_SIZE = 2;

/**
 * Spare textures for ping-pong, by format and size: every gather output, cloned
 * scatter target and atomic shadow is drawn into a spare, and the texture it
 * replaces goes back here, so a run of dispatches over the same buffers
 * allocates no textures after its first.
 */
export class TexturePool {
  private readonly gl: WebGL2RenderingContext;
  private readonly state: GlState;
  private readonly spares = new Map<string, WebGLTexture[]>();

  constructor(gl: WebGL2RenderingContext, state: GlState) {
    this.gl = gl;
    this.state = state;
  }

  /** A texture of `b`'s format and size, its contents undefined. */
  spare(b: GlBuffer): WebGLTexture {
    return this.spareOf(texFormat(this.gl, b.dtype), b.width, b.height);
  }

  spareOf(fmt: TexFormat, width: number, height: number): WebGLTexture {
    return this.spares.get(poolKey(fmt, width, height))?.pop() ?? this.state.createTexture(fmt, width, height);
  }

  /** Returns a texture of `b`'s format and size to the pool. */
  release(b: GlBuffer, tex: WebGLTexture): void {
    this.releaseOf(texFormat(this.gl, b.dtype), b.width, b.height, tex);
  }

  /** Returns a texture to the pool, or deletes it where the pool holds enough of its size. */
  releaseOf(fmt: TexFormat, width: number, height: number, tex: WebGLTexture): void {
    const key = poolKey(fmt, width, height);
    const list = this.spares.get(key) ?? [];
    if (list.length >= SPARES_PER_SIZE) {
      this.state.deleteTexture(tex);
      return;
    }
    list.push(tex);
    this.spares.set(key, list);
  }

  /**
   * Deletes every spare where the context still lives (a lost context took its
   * textures with it) and forgets them all. The device is going away, so the
   * state cache is left as it is.
   */
  destroy(): void {
    if (!this.gl.isContextLost()) for (const list of this.spares.values()) for (const t of list) this.gl.deleteTexture(t);
    this.spares.clear();
  }
}

function poolKey(fmt: TexFormat, width: number, height: number): string {
  return `${fmt.internal}:${width}x${height}`;
}
