import {
  type BackendAdapter,
  type BackendBuffer,
  type BackendDevice,
  BackendUnavailableError,
  type BufferDType,
  type CompiledKernel,
  type DeviceCaps,
  type DeviceInfo,
  DeviceLostError,
  type Feature,
  type Grid,
  type HostArray,
  type Kernel,
  KernelBuildError,
  LimitExceededError,
  typedArrayConstructor,
} from '@trident/core';
import * as twgl from 'twgl.js';
import { bufferUniforms, FULLSCREEN_VS, type GlslProgram, generateGlsl, type PassSpec, uniformName, writeUnit } from './glsl.ts';
import { type KernelPlan, type PointTarget, planKernel } from './glsl-plan.ts';
import { GlProgram } from './webgl-program.ts';
import { copyShader, foldShader } from './webgl-shaders.ts';
import { createTexture, floorPow2, GlBuffer, LANES, spans, type TexFormat, texelRange, texFormat, textureShape } from './webgl-texture.ts';

export interface WebGLBackendOptions {
  /** A canvas to draw with (default: a 1x1 OffscreenCanvas, or a detached <canvas>). */
  readonly canvas?: OffscreenCanvas | HTMLCanvasElement;
  /**
   * Atomic operations blended into one float shadow before it is folded into the
   * integer buffer (default 2^24). Partial sums stay exact while they stay below
   * 2^24, so unit increments (counts, histograms) are exact for any total.
   */
  readonly atomicChunk?: number;
}

declare module '@trident/core' {
  interface BackendOptionsMap {
    webgl2: WebGLBackendOptions;
  }
}

type TimerExt = { readonly TIME_ELAPSED_EXT: number; readonly GPU_DISJOINT_EXT: number };

interface GlCompiled extends CompiledKernel {
  readonly plan: KernelPlan;
  /** Programs by pass key, built on first use (and the first pass of each kind at compile time). */
  readonly programs: Map<string, GlProgram>;
  readonly sources: Map<string, GlslProgram>;
}

const MAX_EXACT = 2 ** 24;

/**
 * The WebGL2 backend: buffers are RGBA32 textures, four elements a texel
 * (webgl-texture.ts), kernels are fragment passes (gather, a fragment running
 * every invocation whose elements share its texel) and point passes (scatter
 * under colour masks, atomics by blending). GL executes commands
 * in call order, so every command is issued at once and stream order holds by
 * construction; `read` and `flush` wait on a fence without blocking the page.
 */
export class WebGLDevice implements BackendDevice {
  readonly kind = 'webgl2' as const;
  readonly info: DeviceInfo;
  readonly caps: DeviceCaps;
  private readonly gl: WebGL2RenderingContext;
  private readonly maxTex: number;
  private readonly maxDrawBuffers: number;
  private readonly floatBlend: boolean;
  private readonly timer: TimerExt | null;
  private readonly atomicChunk: number;
  private readonly fbo: WebGLFramebuffer;
  private readonly buffers = new Set<GlBuffer>();
  /** Spare textures for ping-pong, by format and size. */
  private readonly spares = new Map<string, WebGLTexture[]>();
  private readonly kernels = new Map<string, GlCompiled>();
  private readonly utilPrograms = new Map<string, GlProgram>();
  private countTex: WebGLTexture | undefined;
  // GL state as last set, so that passes change only what differs (this device owns its context).
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
  private lost: string | undefined;
  private destroyed = false;

  constructor(gl: WebGL2RenderingContext, canvas: OffscreenCanvas | HTMLCanvasElement, options: WebGLBackendOptions | undefined) {
    this.gl = gl;
    canvas.addEventListener('webglcontextlost', (e: Event) => {
      e.preventDefault();
      this.lost ??= 'the WebGL2 context was lost';
    });
    this.maxTex = gl.getParameter(gl.MAX_TEXTURE_SIZE) as number;
    this.maxDrawBuffers = Math.min(gl.getParameter(gl.MAX_DRAW_BUFFERS) as number, gl.getParameter(gl.MAX_COLOR_ATTACHMENTS) as number);
    // Atomics blend into R32F shadows: rendering to them needs EXT_color_buffer_float, blending EXT_float_blend.
    this.floatBlend = gl.getExtension('EXT_color_buffer_float') !== null && gl.getExtension('EXT_float_blend') !== null;
    this.timer = gl.getExtension('EXT_disjoint_timer_query_webgl2') as TimerExt | null;
    this.atomicChunk = options?.atomicChunk ?? MAX_EXACT;
    const fbo = gl.createFramebuffer();
    if (!fbo) throw new BackendUnavailableError('webgl2', 'could not create a framebuffer');
    this.fbo = fbo;
    gl.pixelStorei(gl.PACK_ALIGNMENT, 4);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 4);

    const dbg = gl.getExtension('WEBGL_debug_renderer_info');
    const renderer = String(dbg ? gl.getParameter(dbg.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER));
    const vendor = String(dbg ? gl.getParameter(dbg.UNMASKED_VENDOR_WEBGL) : gl.getParameter(gl.VENDOR));
    const units = Math.min(
      gl.getParameter(gl.MAX_TEXTURE_IMAGE_UNITS) as number,
      gl.getParameter(gl.MAX_VERTEX_TEXTURE_IMAGE_UNITS) as number,
    );
    this.info = {
      backend: 'webgl2',
      adapter: renderer,
      software: /swiftshader|llvmpipe|softpipe|software/i.test(renderer),
      details: {
        vendor,
        version: String(gl.getParameter(gl.VERSION)),
        maxTextureSize: this.maxTex,
        maxDrawBuffers: this.maxDrawBuffers,
        floatBlend: this.floatBlend,
        atomicChunk: this.atomicChunk,
      },
    };
    const features = new Set<Feature>(['gather', 'scatter']);
    if (this.floatBlend) {
      features.add('atomic');
      features.add('atomics-via-blending');
    }
    if (this.timer) features.add('timestamp');
    this.caps = {
      limits: {
        // Four elements a texel, power-of-two widths (webgl-texture.ts).
        maxBufferElements: LANES * floorPow2(this.maxTex) * this.maxTex,
        maxStorageBufferBindingSize: LANES * floorPow2(this.maxTex) * this.maxTex * 4,
        maxBuffersPerKernel: units,
        maxComputeInvocationsPerWorkgroup: 1024,
        maxComputeWorkgroupStorageSize: 0,
        maxComputeWorkgroupsPerDimension: 65535,
        minSubgroupSize: 0,
        maxSubgroupSize: 0,
        maxExactAtomicCount: this.floatBlend ? MAX_EXACT : 0,
      },
      features,
      timerSource: this.timer ? 'gpu-timestamp' : 'wall',
      preferredWorkgroupSize: 64,
      // Every texel of a pass is an invocation: grid-stride kernels should use many.
      concurrency: 1 << 16,
      // Program, framebuffer and uniform changes plus a draw; software rasterisers pay far more.
      dispatchCostMicros: this.info.software ? 300 : 30,
    };
  }

  // ---------- buffers ----------

  createBuffer(dtype: BufferDType, length: number): GlBuffer {
    this.check();
    const limit = this.caps.limits.maxBufferElements;
    if (length > limit) throw new LimitExceededError('webgl2', 'maxBufferElements', length, limit, 'buffer length');
    const shape = textureShape(length, this.maxTex);
    const b = new GlBuffer(dtype, length, shape, this.newTexture(texFormat(this.gl, dtype), shape.width, shape.height));
    this.buffers.add(b);
    return b;
  }

  destroyBuffer(buffer: BackendBuffer): void {
    const b = buffer as GlBuffer;
    if (!this.buffers.delete(b)) return;
    this.deleteTexture(b.texture);
  }

  write(buffer: BackendBuffer, offset: number, data: HostArray): void {
    this.check();
    const gl = this.gl;
    const b = buffer as GlBuffer;
    const fmt = texFormat(gl, b.dtype);
    const elements = data instanceof Float32Array ? new Uint32Array(data.buffer, data.byteOffset, data.length) : data;
    const range = texelRange(offset, data.length);
    if (range.whole.count > 0) {
      this.bindForUpload(b.texture);
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

  fill(buffer: BackendBuffer, value: number, offset: number, length: number): void {
    this.check();
    const b = buffer as GlBuffer;
    const bits = b.dtype === 'f32' ? (new Uint32Array(new Float32Array([value]).buffer)[0] as number) : value;
    const values = [bits, bits, bits, bits];
    const range = texelRange(offset, length);
    if (range.whole.count > 0) this.clearTexels(b, range.whole.first, range.whole.count, values);
    for (const p of range.partial) this.clearTexels(b, p.texel, 1, values, p);
  }

  copy(src: BackendBuffer, srcOffset: number, dst: BackendBuffer, dstOffset: number, length: number): void {
    this.check();
    const s = src as GlBuffer;
    const d = dst as GlBuffer;
    // Device refuses overlapping ranges, but a texture cannot be sampled while it is drawn into.
    const from = s === d ? this.cloneTexture(s) : s.texture;
    this.copyInto(s.dtype, from, s.shape.shift, srcOffset, d, d.texture, dstOffset, length);
    if (from !== s.texture) this.release(s, from);
  }

  async read(buffer: BackendBuffer, offset: number, length: number, into?: HostArray): Promise<HostArray> {
    this.check();
    const gl = this.gl;
    const b = buffer as GlBuffer;
    const out = into ?? new (typedArrayConstructor(b.dtype))(length);
    if (length === 0) return out;
    // f32 texels hold bits: read them as u32 into the same bytes.
    const outElements = b.dtype === 'f32' ? new Uint32Array(out.buffer, out.byteOffset, length) : out;
    const rowElements = b.width * LANES;
    const y0 = Math.floor(offset / rowElements);
    const y1 = Math.floor((offset + length - 1) / rowElements);
    const rows = y1 - y0 + 1;
    this.attach([b.texture], [b.width, b.height]);
    // RGBA_INTEGER with UNSIGNED_INT / INT: the combination every integer colour buffer can be read with.
    const fmt = texFormat(gl, b.dtype);
    const pbo = gl.createBuffer();
    gl.bindBuffer(gl.PIXEL_PACK_BUFFER, pbo);
    gl.bufferData(gl.PIXEL_PACK_BUFFER, rowElements * rows * 4, gl.STREAM_READ);
    gl.readPixels(0, y0, b.width, rows, fmt.format, fmt.type, 0);
    gl.bindBuffer(gl.PIXEL_PACK_BUFFER, null);
    try {
      await this.waitFence();
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

  // ---------- kernels ----------

  compile(kernel: Kernel): GlCompiled {
    this.check();
    let compiled = this.kernels.get(kernel.key);
    if (compiled) return compiled;
    const plan = planKernel(kernel, this.floatBlend);
    compiled = { kernel, plan, source: '', programs: new Map(), sources: new Map() };
    // Build every pass now so GLSL problems surface at compile time, with the source to inspect.
    const byWidth = new Map<number, string[]>();
    for (const o of plan.gatherOutputs) {
      const w = this.vectorOf(kernel, o);
      byWidth.set(w, [...(byWidth.get(w) ?? []), o]);
    }
    for (const outs of byWidth.values()) {
      for (let i = 0; i < outs.length; i += this.maxDrawBuffers)
        this.program(compiled, { kind: 'gather', outputs: outs.slice(i, i + this.maxDrawBuffers) });
    }
    for (const target of plan.pointTargets) this.program(compiled, { kind: 'points', target });
    const source = [...compiled.sources.entries()].map(([key, p]) => `// ===== ${key} =====\n${p.vs}\n${p.fs}`).join('\n');
    compiled = { ...compiled, source };
    this.kernels.set(kernel.key, compiled);
    return compiled;
  }

  dispatch(compiled: CompiledKernel, grid: Grid, args: ReadonlyMap<string, BackendBuffer | number>): void {
    this.check();
    const k = compiled as GlCompiled;
    const gl = this.gl;
    const nwg = grid[0] * grid[1] * grid[2];
    const total = nwg * k.kernel.ir.workgroupSize;
    if (total === 0) return;
    const buf = (name: string) => args.get(name) as GlBuffer;
    // Every pass reads the textures as they were before the dispatch; new contents are swapped in at the end.
    const uniforms: Record<string, unknown> = { t_total: total, t_nwg: nwg, t_grid: [...grid] };
    for (const [name, decl] of k.kernel.ir.params) {
      const v = args.get(name);
      if (decl.kind === 'uniform') uniforms[uniformName(name)] = v;
      else {
        const b = v as GlBuffer;
        const u = bufferUniforms(name);
        uniforms[u.tex] = b.texture;
        uniforms[u.shift] = b.shape.shift;
        uniforms[u.height] = b.height;
        uniforms[u.length] = b.length / decl.vector;
      }
    }
    const swaps: Array<[GlBuffer, WebGLTexture]> = [];
    this.setBlend(null);

    // Gather outputs: one fragment pass per group of outputs sharing texture shape and vector width (MRT).
    const groups = new Map<string, string[]>();
    for (const o of k.plan.gatherOutputs) {
      const b = buf(o);
      const key = `${b.width}x${b.height}/${this.vectorOf(k.kernel, o)}`;
      groups.set(key, [...(groups.get(key) ?? []), o]);
    }
    for (const outs of groups.values()) {
      for (let i = 0; i < outs.length; i += this.maxDrawBuffers) {
        const chunk = outs.slice(i, i + this.maxDrawBuffers);
        const first = buf(chunk[0] as string);
        const targets = chunk.map((o) => this.spare(buf(o)));
        // Texels past the longest output's last element hold nothing: one-row textures draw only the used ones.
        const width = first.height === 1 ? Math.max(...chunk.map((o) => buf(o).shape.texels)) : first.width;
        // Invocations store only at globalIndex: rows past the last texel they reach are copied, not shaded
        // (a pooled temporary far larger than the dispatch would otherwise cost a fragment per texel).
        const rows = Math.min(first.height, Math.ceil(storedTexels(total, this.vectorOf(k.kernel, chunk[0] as string)) / first.width));
        this.attach(targets, [width, rows]);
        const prog = this.program(k, { kind: 'gather', outputs: chunk });
        this.useProgram(prog, uniforms, { t_outS: first.shape.shift });
        gl.drawArrays(gl.TRIANGLES, 0, 3);
        for (const [j, o] of chunk.entries()) {
          const b = buf(o);
          if (rows < b.height) this.copyRows(b.texture, targets[j] as WebGLTexture, b.width, rows, b.height);
          swaps.push([b, targets[j] as WebGLTexture]);
        }
      }
    }

    // Scatter and atomic targets: point passes.
    for (const target of k.plan.pointTargets) {
      const b = buf(target.buffer);
      const prog = this.program(k, { kind: 'points', target });
      const slots = target.inLoop ? this.countWrites(k, target, uniforms, total) : target.staticOps;
      if (slots === 0) continue;
      if (target.mode === 'store') {
        // In place unless the kernel also samples the buffer (a texture cannot be read while drawn into).
        const dest = k.plan.sampled.has(target.buffer) ? this.cloneTexture(b) : b.texture;
        this.attach([dest], [b.width, b.height]);
        // A point writes one part of a texel (a scalar, a vec2 or a whole vec4): one draw per part, under its mask.
        const { unit, parts } = writeUnit(this.vectorOf(k.kernel, target.buffer));
        for (let slot = 0; slot < slots; slot++) {
          for (let part = 0; part < parts; part++) {
            this.setColorMask(parts === 1 ? undefined : { from: part * unit, to: part * unit + unit });
            this.useProgram(prog, uniforms, { t_count: false, t_slot: slot, t_part: part });
            gl.drawArrays(gl.POINTS, 0, total);
          }
        }
        this.setColorMask(undefined);
        if (dest !== b.texture) swaps.push([b, dest]);
      } else {
        this.blendPoints(target, b, prog, uniforms, total, slots);
      }
    }
    for (const [b, tex] of swaps) {
      const old = b.texture;
      b.texture = tex;
      this.release(b, old);
    }
  }

  /** Atomics: points blended into a float shadow, folded into the integer buffer every `atomicChunk` points. */
  private blendPoints(
    target: PointTarget,
    b: GlBuffer,
    prog: GlProgram,
    uniforms: Record<string, unknown>,
    total: number,
    slots: number,
  ): void {
    const gl = this.gl;
    const shadowFmt = texFormat(gl, 'shadow');
    const shadow = this.spareOf(shadowFmt, b.width, b.height);
    // f32 add starts from -0, the exact identity (-0 + x == x for every x, -0 included), and marks untouched elements.
    const addIdentity = b.dtype === 'f32' ? -0 : 0;
    const identity = target.mode === 'add' ? addIdentity : target.mode === 'min' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
    const clear = () => {
      this.setBlend(null);
      this.attach([shadow], [b.width, b.height]);
      gl.clearBufferfv(gl.COLOR, 0, new Float32Array([identity, identity, identity, identity]));
    };
    const fold = () => {
      this.setBlend(null);
      const next = this.spare(b);
      this.attach([next], b.extent);
      const f = this.util(`fold-${b.dtype}-${target.mode}`, () => foldShader(b.dtype, target.mode as 'add'));
      this.useProgram(f, { f_old: b.texture, f_acc: shadow });
      gl.drawArrays(gl.TRIANGLES, 0, 3);
      const old = b.texture;
      b.texture = next;
      this.release(b, old);
    };
    clear();
    let pending = 0;
    const chunk = target.mode === 'add' ? this.atomicChunk : Number.POSITIVE_INFINITY;
    const equation = target.mode === 'add' ? gl.FUNC_ADD : target.mode === 'min' ? gl.MIN : gl.MAX;
    for (let slot = 0; slot < slots; slot++) {
      for (let first = 0; first < total; ) {
        const count = Math.min(total - first, chunk - pending);
        if (count <= 0) {
          fold();
          clear();
          pending = 0;
          continue;
        }
        this.attach([shadow], [b.width, b.height]);
        this.setBlend(equation);
        this.useProgram(prog, uniforms, { t_count: false, t_slot: slot });
        gl.drawArrays(gl.POINTS, first, count);
        first += count;
        pending += count;
      }
    }
    fold();
    this.releaseTex(`${shadowFmt.internal}:${b.width}x${b.height}`, shadow);
  }

  /**
   * How many writes to `target` the busiest invocation makes: a counting pass
   * (every invocation blends its count into one texel with MAX) read back at once.
   * Only kernels that write inside loops need it.
   */
  private countWrites(k: GlCompiled, target: PointTarget, uniforms: Record<string, unknown>, total: number): number {
    const gl = this.gl;
    if (!this.floatBlend) throw new KernelBuildError(k.kernel.name, 'internal: the plan admitted a loop write without float blending');
    this.countTex ??= this.newTexture(texFormat(gl, 'shadow'), 1, 1);
    this.setBlend(null);
    this.attach([this.countTex], [1, 1]);
    gl.clearBufferfv(gl.COLOR, 0, new Float32Array([0, 0, 0, 0]));
    const prog = this.program(k, { kind: 'points', target }, true);
    this.setBlend(gl.MAX);
    this.useProgram(prog, uniforms, { t_count: true, t_slot: -1, t_part: 0 });
    gl.drawArrays(gl.POINTS, 0, total);
    this.setBlend(null);
    const px = new Float32Array(4);
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.FLOAT, px);
    return px[0] as number;
  }

  async flush(): Promise<void> {
    this.check();
    await this.waitFence();
  }

  async measure(body: () => void | Promise<void>): Promise<{ ms: number; source: 'gpu-timestamp' | 'wall' }> {
    const gl = this.gl;
    const start = performance.now();
    const query = this.timer ? gl.createQuery() : null;
    try {
      if (this.timer && query) gl.beginQuery(this.timer.TIME_ELAPSED_EXT, query);
      try {
        await body();
      } finally {
        if (this.timer && query) gl.endQuery(this.timer.TIME_ELAPSED_EXT);
      }
      if (!this.timer || !query) {
        await this.flush();
        return { ms: performance.now() - start, source: 'wall' };
      }
      // The query's result is available once the GPU has run everything up to endQuery, so it is
      // the wait: waiting for the fence first added a round of polling (about 1 ms of wall on
      // SwiftShader). The fence still bounds the wait: a result not available 2000 polls after it
      // signalled voids the timing. Results only become available after the page returns to its
      // event loop.
      this.check();
      const sync = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
      if (!sync) throw new DeviceLostError('webgl2', 'fenceSync failed');
      gl.flush();
      const polled = performance.now();
      try {
        let after = 0;
        while (!gl.getQueryParameter(query, gl.QUERY_RESULT_AVAILABLE)) {
          this.check();
          const status = gl.clientWaitSync(sync, 0, 0);
          if (status === gl.WAIT_FAILED) throw new DeviceLostError('webgl2', 'clientWaitSync failed');
          if ((status === gl.ALREADY_SIGNALED || status === gl.CONDITION_SATISFIED) && ++after > 2000) {
            return { ms: performance.now() - start, source: 'wall' };
          }
          await tick(polled);
        }
      } finally {
        gl.deleteSync(sync);
      }
      const wall = performance.now() - start;
      // A disjoint event (clock change, GPU reset) voids the measurement: fall back to the wall clock, labelled.
      const disjoint = gl.getParameter(this.timer.GPU_DISJOINT_EXT) as boolean;
      const ns = gl.getQueryParameter(query, gl.QUERY_RESULT) as number;
      return disjoint ? { ms: wall, source: 'wall' } : { ms: ns / 1e6, source: 'gpu-timestamp' };
    } finally {
      if (query) gl.deleteQuery(query);
    }
  }

  lostReason(): string | undefined {
    if (this.destroyed) return 'the device was destroyed';
    if (this.lost === undefined && this.gl.isContextLost()) this.lost = 'the WebGL2 context was lost';
    return this.lost;
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    const gl = this.gl;
    if (!gl.isContextLost()) {
      for (const b of this.buffers) gl.deleteTexture(b.texture);
      for (const list of this.spares.values()) for (const t of list) gl.deleteTexture(t);
      for (const c of this.kernels.values()) for (const p of c.programs.values()) gl.deleteProgram(p.program);
      for (const p of this.utilPrograms.values()) gl.deleteProgram(p.program);
      if (this.countTex) gl.deleteTexture(this.countTex);
      gl.deleteFramebuffer(this.fbo);
      if (this.readFbo) gl.deleteFramebuffer(this.readFbo);
    }
    this.buffers.clear();
    this.spares.clear();
    this.kernels.clear();
    this.destroyed = true;
    // Browsers keep only a few live contexts (Chromium: 16); give this one back now.
    if (!gl.isContextLost()) gl.getExtension('WEBGL_lose_context')?.loseContext();
  }

  // ---------- internals ----------

  private check(): void {
    const reason = this.lostReason();
    if (reason !== undefined) throw new DeviceLostError('webgl2', reason);
  }

  private vectorOf(kernel: Kernel, buffer: string): number {
    const decl = kernel.ir.params.find(([n]) => n === buffer)?.[1];
    return decl?.kind === 'buffer' ? decl.vector : 1;
  }

  private program(k: GlCompiled, pass: PassSpec, counting = false): GlProgram {
    const key = pass.kind === 'gather' ? `gather:${pass.outputs.join(',')}` : `points:${pass.target.buffer}${counting ? ':count' : ''}`;
    const cached = k.programs.get(key);
    if (cached) return cached;
    const baseKey = key.replace(/:count$/, '');
    let src = k.sources.get(baseKey);
    if (!src) {
      src = generateGlsl(k.kernel, k.plan, pass);
      k.sources.set(baseKey, src);
    }
    const fs = counting ? (src.countFs as string) : src.fs;
    const prog = this.link(k.kernel.name, src.vs, fs);
    k.programs.set(key, prog);
    return prog;
  }

  private util(key: string, fs: () => string): GlProgram {
    let p = this.utilPrograms.get(key);
    if (!p) {
      p = this.link(`<${key}>`, FULLSCREEN_VS, fs());
      this.utilPrograms.set(key, p);
    }
    return p;
  }

  private link(kernel: string, vs: string, fs: string): GlProgram {
    let log = '';
    const info = twgl.createProgramInfo(this.gl, [vs, fs], {
      errorCallback: (msg: string) => {
        log += `${msg}\n`;
      },
    });
    if (!info) {
      this.check();
      throw new KernelBuildError(kernel, `the generated GLSL did not compile on webgl2 (a Trident bug): ${log.slice(0, 4000)}`);
    }
    const prog = new GlProgram(this.gl, info.program);
    this.current = prog;
    return prog;
  }

  /**
   * Makes `prog` current and sets its uniforms from `values` then `extra`: only
   * uniforms the program uses, only values that changed since its last draw, and
   * only texture units whose texture changed (per-pass state is the fixed cost of
   * every pass: it is kept to what differs).
   */
  private useProgram(prog: GlProgram, values: Record<string, unknown>, extra: Record<string, unknown> = {}): void {
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
  private bindForUpload(tex: WebGLTexture): void {
    this.gl.bindTexture(this.gl.TEXTURE_2D, tex);
    this.units[this.active] = tex;
  }

  private newTexture(fmt: TexFormat, width: number, height: number): WebGLTexture {
    const tex = createTexture(this.gl, fmt, width, height);
    // createTexture leaves the active unit empty.
    this.units[this.active] = null;
    return tex;
  }

  private setBlend(equation: number | null): void {
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
  private setColorMask(part: { from: number; to: number } | undefined): void {
    const key = part ? `${part.from}:${part.to}` : '';
    if (this.mask === key) return;
    const on = (c: number) => part === undefined || (c >= part.from && c < part.to);
    this.gl.colorMask(on(0), on(1), on(2), on(3));
    this.mask = key;
  }

  /** Sets texels [first, first + count) of `b` to `values` (components [from, to) only, if given): scissored clears. */
  private clearTexels(b: GlBuffer, first: number, count: number, values: readonly number[], part?: { from: number; to: number }): void {
    const gl = this.gl;
    this.attach([b.texture], [b.width, b.height]);
    this.setColorMask(part);
    gl.enable(gl.SCISSOR_TEST);
    for (const s of spans(first, count, b.width)) {
      gl.scissor(s.x, s.y, s.w, s.h);
      if (b.dtype === 'i32') gl.clearBufferiv(gl.COLOR, 0, new Int32Array(values));
      else gl.clearBufferuiv(gl.COLOR, 0, new Uint32Array(values));
    }
    gl.disable(gl.SCISSOR_TEST);
    this.setColorMask(undefined);
  }

  /** Binds the framebuffer with `textures` as colour attachments 0..n-1 and sets the viewport to `size`. */
  private attach(textures: readonly WebGLTexture[], size: readonly [number, number]): void {
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
  private copyRows(src: WebGLTexture, dst: WebGLTexture, width: number, y0: number, y1: number): void {
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

  private spare(b: GlBuffer): WebGLTexture {
    return this.spareOf(texFormat(this.gl, b.dtype), b.width, b.height);
  }

  private spareOf(fmt: TexFormat, width: number, height: number): WebGLTexture {
    const key = `${fmt.internal}:${width}x${height}`;
    return this.spares.get(key)?.pop() ?? this.newTexture(fmt, width, height);
  }

  /** Returns a texture of `b`'s format and size to the spare pool (two spares per size are kept). */
  private release(b: GlBuffer, tex: WebGLTexture): void {
    this.releaseTex(`${texFormat(this.gl, b.dtype).internal}:${b.width}x${b.height}`, tex);
  }

  private releaseTex(key: string, tex: WebGLTexture): void {
    const list = this.spares.get(key) ?? [];
    if (list.length >= 2) {
      this.deleteTexture(tex);
      return;
    }
    list.push(tex);
    this.spares.set(key, list);
  }

  private deleteTexture(tex: WebGLTexture): void {
    this.gl.deleteTexture(tex);
    // GL unbinds a deleted texture everywhere: so does the cache.
    for (let i = 0; i < this.units.length; i++) if (this.units[i] === tex) this.units[i] = null;
    for (let i = 0; i < this.attachedTex.length; i++) if (this.attachedTex[i] === tex) this.attachedTex[i] = null;
  }

  /** A full copy of `b`'s texture in a spare (ping-pong source or destination). */
  private cloneTexture(b: GlBuffer): WebGLTexture {
    const tex = this.spare(b);
    const shadow = new GlBuffer(b.dtype, b.shape.texels * LANES, b.shape, tex);
    this.copyInto(b.dtype, b.texture, b.shape.shift, 0, shadow, tex, 0, b.shape.texels * LANES);
    return tex;
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
    this.attach([dstTex], [dst.width, dst.height]);
    this.setBlend(null);
    const p = this.util(`copy-${dtype}`, () => copyShader(dtype));
    const base = { c_src: src, c_srcS: srcShift, c_dstS: dst.shape.shift, c_srcOff: srcOff, c_dstOff: dstOff };
    const range = texelRange(dstOff, len);
    const pieces: Array<{ first: number; count: number; part?: { from: number; to: number } }> = [];
    if (range.whole.count > 0) pieces.push(range.whole);
    for (const q of range.partial) pieces.push({ first: q.texel, count: 1, part: q });
    gl.enable(gl.SCISSOR_TEST);
    for (const piece of pieces) {
      this.setColorMask(piece.part);
      this.useProgram(p, base, { c_t0: piece.first, c_t1: piece.first + piece.count });
      // Only the rows holding the texels.
      const y0 = piece.first >> dst.shape.shift;
      const y1 = (piece.first + piece.count - 1) >> dst.shape.shift;
      gl.scissor(0, y0, dst.width, y1 - y0 + 1);
      gl.drawArrays(gl.TRIANGLES, 0, 3);
    }
    gl.disable(gl.SCISSOR_TEST);
    this.setColorMask(undefined);
  }

  /** Resolves once the GPU has executed every command issued so far, polling a fence. */
  private async waitFence(): Promise<void> {
    const gl = this.gl;
    const sync = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
    if (!sync) {
      this.check();
      throw new DeviceLostError('webgl2', 'fenceSync failed');
    }
    gl.flush();
    const since = performance.now();
    try {
      for (;;) {
        const status = gl.clientWaitSync(sync, 0, 0);
        if (status === gl.ALREADY_SIGNALED || status === gl.CONDITION_SATISFIED) return;
        if (status === gl.WAIT_FAILED) {
          this.check();
          throw new DeviceLostError('webgl2', 'clientWaitSync failed');
        }
        this.check();
        await tick(since);
      }
    } finally {
      gl.deleteSync(sync);
    }
  }
}

/** How long a wait polls back to back before it sleeps a millisecond between polls. */
const EAGER_POLL_MS = 16;

/**
 * Yields to the event loop, where the browser updates fence and query status: a
 * message on a channel, then (once the wait, started at `since`, passed
 * EAGER_POLL_MS) a 1 ms timer set from that message's task. Not setTimeout(0) in a
 * chain: nested timeouts are clamped to 4 ms from the fifth on (HTML's timer rules).
 * Measured on SwiftShader (one 4096-element pass, device.time, median of 9): wall
 * 3.1-3.8 ms against 0.3 ms of GPU time with timers after 2 ms of messages, 2.0 ms
 * with 20 ms of messages; with setTimeout(0) alone a 4096-element histogram took
 * 12 ms of wall for 2 ms of GPU time. The sleeps keep long waits from holding a
 * core that a software GPU needs.
 */
function tick(since: number): Promise<void> {
  if (typeof MessageChannel === 'undefined') return new Promise((resolve) => setTimeout(resolve, 0));
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      if (performance.now() - since < EAGER_POLL_MS) resolve();
      else setTimeout(resolve, 1);
    };
    channel.port2.postMessage(undefined);
  });
}

function makeCanvas(): OffscreenCanvas | HTMLCanvasElement | undefined {
  if (typeof OffscreenCanvas !== 'undefined') return new OffscreenCanvas(1, 1);
  if (typeof document !== 'undefined') return document.createElement('canvas');
  return undefined;
}

export const webglAdapter: BackendAdapter<'webgl2'> = {
  kind: 'webgl2',
  async create(options?: WebGLBackendOptions): Promise<BackendDevice> {
    const canvas = options?.canvas ?? makeCanvas();
    if (!canvas) {
      throw new BackendUnavailableError(
        'webgl2',
        'WebGL2 needs a browser: this runtime has neither OffscreenCanvas nor document (Node has no WebGL2)',
      );
    }
    const gl = canvas.getContext('webgl2', {
      antialias: false,
      depth: false,
      stencil: false,
      alpha: true,
      preserveDrawingBuffer: false,
      powerPreference: 'high-performance',
    }) as WebGL2RenderingContext | null;
    if (!gl) throw new BackendUnavailableError('webgl2', 'canvas.getContext("webgl2") returned null (WebGL2 disabled or unsupported)');
    if (
      options?.atomicChunk !== undefined &&
      !(Number.isInteger(options.atomicChunk) && options.atomicChunk >= 1 && options.atomicChunk <= MAX_EXACT)
    ) {
      throw new BackendUnavailableError(
        'webgl2',
        `option 'atomicChunk' must be an integer in [1, 2^24], got ${String(options.atomicChunk)}`,
      );
    }
    return new WebGLDevice(gl, canvas, options);
  },
};

/** Texels of an output of vector width `w` that `total` invocations can store (one element each, at globalIndex). */
function storedTexels(total: number, w: number): number {
  return Math.ceil((total * (w === 3 ? 3 : w)) / LANES);
}
