import { BackendUnavailableError, DeviceLostError } from '@trident/core';
import type { GlProgram } from './webgl-program.ts';
import { createTexture, type TexFormat } from './webgl-texture.ts';

/** Components [from, to) of a texel. */
export interface TexelPart {
  readonly from: number;
  readonly to: number;
}

/**
 * The GL state a device sets, as last set: the program in use and its uniforms,
 * the texture bound on each unit, blending, the colour mask, the framebuffer's
 * attachments and the viewport. Per-pass state is the fixed cost of every pass,
 * so each setter issues GL calls only for what differs. The cache is only true
 * while nothing else touches the context: its device owns it.
 */
export class GlState {
  private readonly gl: WebGL2RenderingContext;
  /** The framebuffer every pass draws into, bound once and kept bound. */
  private readonly fbo: WebGLFramebuffer;
  private current: GlProgram | undefined;
  private readonly units: Array<WebGLTexture | null> = [];
  private active = 0;
  private blend: number | null = null;
  private mask = '';
  private fboBound = false;
  /** The read side of row copies (copyRows), made on first use. */
  private readFbo: WebGLFramebuffer | undefined;
  private readonly attachedTex: Array<WebGLTexture | null> = [];
  private drawBuffers = -1;
  private viewport: [number, number] = [-1, -1];

  constructor(gl: WebGL2RenderingContext) {
    this.gl = gl;
    const fbo = gl.createFramebuffer();
    if (!fbo) throw new BackendUnavailableError('webgl2', 'could not create a framebuffer');
    this.fbo = fbo;
    gl.pixelStorei(gl.PACK_ALIGNMENT, 4);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 4);
  }

  /** Records a program just linked: GlProgram's constructor leaves it in use. */
  linked(prog: GlProgram): void {
    this.current = prog;
  }

  /**
   * Makes `prog` current and sets its uniforms from `values` then `extra`: only
   * uniforms the program uses, only values that changed since its last draw, and
   * only texture units whose texture changed.
   */
  useProgram(prog: GlProgram, values: Record<string, unknown>, extra: Record<string, unknown> = {}): void {
    const gl = this.gl;
    if (this.current !== prog) {
      gl.useProgram(prog.program);
      this.current = prog;
    }
    for (const u of prog.uniforms) {
      const v = u.name in extra ? extra[u.name] : values[u.name];
      if (v === undefined) continue;
      if (u.unit >= 0) {
        const tex = v as WebGLTexture;
        if (this.units[u.unit] !== tex) {
          this.activeUnit(u.unit);
          gl.bindTexture(gl.TEXTURE_2D, tex);
          this.units[u.unit] = tex;
        }
        continue;
      }
      if (u.last === v) continue;
      u.last = v;
      if (u.type === gl.UNSIGNED_INT) gl.uniform1ui(u.location, v as number);
      else if (u.type === gl.UNSIGNED_INT_VEC3)
        gl.uniform3uiv(u.location, v as readonly number[]); // t_grid
      else if (u.type === gl.FLOAT) gl.uniform1f(u.location, v as number);
      else if (u.type === gl.BOOL) gl.uniform1i(u.location, v ? 1 : 0);
      else gl.uniform1i(u.location, v as number);
    }
  }

  private activeUnit(unit: number): void {
    if (this.active === unit) return;
    this.gl.activeTexture(this.gl.TEXTURE0 + unit);
    this.active = unit;
  }

  /** Binds `tex` on the active unit for an upload, keeping the unit cache true. */
  bindForUpload(tex: WebGLTexture): void {
    this.gl.bindTexture(this.gl.TEXTURE_2D, tex);
    this.units[this.active] = tex;
  }

  createTexture(fmt: TexFormat, width: number, height: number): WebGLTexture {
    const tex = createTexture(this.gl, fmt, width, height);
    // createTexture leaves the active unit empty.
    this.units[this.active] = null;
    return tex;
  }

  deleteTexture(tex: WebGLTexture): void {
    this.gl.deleteTexture(tex);
    // GL unbinds a deleted texture everywhere: so does the cache.
    for (let i = 0; i < this.units.length; i++) if (this.units[i] === tex) this.units[i] = null;
    for (let i = 0; i < this.attachedTex.length; i++) if (this.attachedTex[i] === tex) this.attachedTex[i] = null;
  }

  /** Blends with ONE, ONE under `equation` (FUNC_ADD, MIN, MAX); null: no blending. */
  setBlend(equation: number | null): void {
    const gl = this.gl;
    if (this.blend === equation) return;
    if (equation === null) gl.disable(gl.BLEND);
    else {
      if (this.blend === null) gl.enable(gl.BLEND);
      gl.blendEquation(equation);
      gl.blendFunc(gl.ONE, gl.ONE);
    }
    this.blend = equation;
  }

  /** Writes only components [from, to) of attachment 0 (undefined: all). */
  setColorMask(part: TexelPart | undefined): void {
    const key = part ? `${part.from}:${part.to}` : '';
    if (this.mask === key) return;
    const on = (c: number) => part === undefined || (c >= part.from && c < part.to);
    this.gl.colorMask(on(0), on(1), on(2), on(3));
    this.mask = key;
  }

  /** Binds the framebuffer with `textures` as colour attachments 0..n-1 and sets the viewport to `size`. */
  attach(textures: readonly WebGLTexture[], size: readonly [number, number]): void {
    const gl = this.gl;
    if (!this.fboBound) {
      gl.bindFramebuffer(gl.FRAMEBUFFER, this.fbo);
      this.fboBound = true;
    }
    // Detach what an earlier MRT pass left beyond this pass's outputs: it may be sampled now.
    for (let i = 0; i < Math.max(textures.length, this.attachedTex.length); i++) {
      const tex = textures[i] ?? null;
      if (this.attachedTex[i] === tex) continue;
      gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0 + i, gl.TEXTURE_2D, tex, 0);
      this.attachedTex[i] = tex;
    }
    this.attachedTex.length = textures.length;
    if (this.drawBuffers !== textures.length) {
      gl.drawBuffers(textures.map((_, i) => gl.COLOR_ATTACHMENT0 + i));
      this.drawBuffers = textures.length;
    }
    if (this.viewport[0] !== size[0] || this.viewport[1] !== size[1]) {
      gl.viewport(0, 0, size[0], size[1]);
      this.viewport = [size[0], size[1]];
    }
  }

  /** Copies rows [y0, y1) of `src` into `dst` (same format and size), through a read framebuffer. */
  copyRows(src: WebGLTexture, dst: WebGLTexture, width: number, y0: number, y1: number): void {
    const gl = this.gl;
    if (!this.readFbo) {
      const fbo = gl.createFramebuffer();
      if (!fbo) throw new DeviceLostError('webgl2', 'could not create a framebuffer');
      this.readFbo = fbo;
    }
    gl.bindFramebuffer(gl.READ_FRAMEBUFFER, this.readFbo);
    gl.framebufferTexture2D(gl.READ_FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, src, 0);
    gl.readBuffer(gl.COLOR_ATTACHMENT0);
    this.bindForUpload(dst);
    gl.copyTexSubImage2D(gl.TEXTURE_2D, 0, 0, y0, 0, y0, width, y1 - y0);
    gl.framebufferTexture2D(gl.READ_FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, null, 0);
    gl.bindFramebuffer(gl.READ_FRAMEBUFFER, this.fboBound ? this.fbo : null);
  }

  /** Deletes the framebuffers (the device deletes its textures and programs first). */
  destroy(): void {
    this.gl.deleteFramebuffer(this.fbo);
    if (this.readFbo) this.gl.deleteFramebuffer(this.readFbo);
  }
}
