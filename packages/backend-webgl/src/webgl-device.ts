import {
  type BackendBuffer,
  type BackendDevice,
  type BufferDType,
  type CompiledKernel,
  type DeviceCaps,
  type DeviceInfo,
  DeviceLostError,
  type Grid,
  type HostArray,
  type Kernel,
  KernelBuildError,
  LimitExceededError,
} from '@trident/core';
import { bufferUniforms, uniformName, writeUnit } from './glsl.ts';
import { type PointTarget, planKernel } from './glsl-plan.ts';
import { MAX_EXACT, readContextCaps, type TimerExt } from './webgl-caps.ts';
import type { GlProgram } from './webgl-program.ts';
import { type GlCompiled, ProgramCache } from './webgl-program-cache.ts';
import { foldShader } from './webgl-shaders.ts';
import { GlState } from './webgl-state.ts';
import { waitFence, waitQuery } from './webgl-sync.ts';
import { GlBuffer, LANES, texFormat, textureShape } from './webgl-texture.ts';
import { TexturePool } from './webgl-texture-pool.ts';
import { BLOCKING_READ_BYTES, BufferTransfers } from './webgl-transfer.ts';

/**
 * The WebGL2 backend: buffers are RGBA32 textures, four elements a texel
 * (webgl-texture.ts), kernels are fragment passes (gather, a fragment running
 * every invocation whose elements share its texel) and point passes (scatter
 * under colour masks, atomics by blending). GL executes commands
 * in call order, so every command is issued at once and stream order holds by
 * construction; `flush` and large reads wait on a fence without blocking the page,
 * while small reads (`blockingReadBytes`) block on readPixels: one round trip.
 * The pieces it drives: webgl-caps.ts (what the context offers), webgl-state.ts
 * (the GL state cache), webgl-texture-pool.ts (spare textures),
 * webgl-program-cache.ts (linking), webgl-transfer.ts (write, fill, copy, read) and
 * webgl-sync.ts (waiting on fences and timer queries).
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
  private readonly blockingReadBytes: number;
  private readonly state: GlState;
  private readonly pool: TexturePool;
  private readonly programs: ProgramCache;
  private readonly transfers: BufferTransfers;
  private readonly buffers = new Set<GlBuffer>();
  private readonly kernels = new Map<string, GlCompiled>();
  private countTex: WebGLTexture | undefined;
  private lost: string | undefined;
  private destroyed = false;

  /** `options.atomicChunk` is checked by the adapter (webgl-adapter.ts). */
  constructor(
    gl: WebGL2RenderingContext,
    canvas: OffscreenCanvas | HTMLCanvasElement,
    options: { readonly atomicChunk?: number; readonly blockingReadBytes?: number } | undefined,
  ) {
    this.gl = gl;
    canvas.addEventListener('webglcontextlost', (e: Event) => {
      e.preventDefault();
      this.lost ??= 'the WebGL2 context was lost';
    });
    this.atomicChunk = options?.atomicChunk ?? MAX_EXACT;
    this.blockingReadBytes = options?.blockingReadBytes ?? BLOCKING_READ_BYTES;
    const context = readContextCaps(gl, this.atomicChunk);
    this.info = context.info;
    this.caps = context.caps;
    this.maxTex = context.maxTextureSize;
    this.maxDrawBuffers = context.maxDrawBuffers;
    this.floatBlend = context.floatBlend;
    this.timer = context.timer;
    this.state = new GlState(gl);
    this.pool = new TexturePool(gl, this.state);
    const check = () => this.check();
    this.programs = new ProgramCache(gl, this.state, check);
    this.transfers = new BufferTransfers(gl, this.state, this.pool, this.programs, check);
  }

  // ---------- buffers ----------

  createBuffer(dtype: BufferDType, length: number): GlBuffer {
    this.check();
    const limit = this.caps.limits.maxBufferElements;
    if (length > limit) throw new LimitExceededError('webgl2', 'maxBufferElements', length, limit, 'buffer length');
    const shape = textureShape(length, this.maxTex);
    const b = new GlBuffer(dtype, length, shape, this.state.createTexture(texFormat(this.gl, dtype), shape.width, shape.height));
    this.buffers.add(b);
    return b;
  }

  destroyBuffer(buffer: BackendBuffer): void {
    const b = buffer as GlBuffer;
    if (!this.buffers.delete(b)) return;
    this.state.deleteTexture(b.texture);
  }

  write(buffer: BackendBuffer, offset: number, data: HostArray): void {
    this.check();
    this.transfers.write(buffer as GlBuffer, offset, data);
  }

  fill(buffer: BackendBuffer, value: number, offset: number, length: number): void {
    this.check();
    this.transfers.fill(buffer as GlBuffer, value, offset, length);
  }

  copy(src: BackendBuffer, srcOffset: number, dst: BackendBuffer, dstOffset: number, length: number): void {
    this.check();
    this.transfers.copy(src as GlBuffer, srcOffset, dst as GlBuffer, dstOffset, length);
  }

  async read(buffer: BackendBuffer, offset: number, length: number, into?: HostArray): Promise<HostArray> {
    this.check();
    return this.transfers.read(buffer as GlBuffer, offset, length, into, this.blockingReadBytes);
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
        this.programs.pass(compiled, { kind: 'gather', outputs: outs.slice(i, i + this.maxDrawBuffers) });
    }
    for (const target of plan.pointTargets) this.programs.pass(compiled, { kind: 'points', target });
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
    this.state.setBlend(null);

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
        const targets = chunk.map((o) => this.pool.spare(buf(o)));
        // Texels past the longest output's last element hold nothing: one-row textures draw only the used ones.
        const width = first.height === 1 ? Math.max(...chunk.map((o) => buf(o).shape.texels)) : first.width;
        // Invocations store only at globalIndex: rows past the last texel they reach are copied, not shaded
        // (a pooled temporary far larger than the dispatch would otherwise cost a fragment per texel).
        const rows = Math.min(first.height, Math.ceil(storedTexels(total, this.vectorOf(k.kernel, chunk[0] as string)) / first.width));
        this.state.attach(targets, [width, rows]);
        const prog = this.programs.pass(k, { kind: 'gather', outputs: chunk });
        this.state.useProgram(prog, uniforms, { t_outS: first.shape.shift });
        gl.drawArrays(gl.TRIANGLES, 0, 3);
        for (const [j, o] of chunk.entries()) {
          const b = buf(o);
          if (rows < b.height) this.state.copyRows(b.texture, targets[j] as WebGLTexture, b.width, rows, b.height);
          swaps.push([b, targets[j] as WebGLTexture]);
        }
      }
    }

    // Scatter and atomic targets: point passes.
    for (const target of k.plan.pointTargets) {
      const b = buf(target.buffer);
      const prog = this.programs.pass(k, { kind: 'points', target });
      const slots = target.inLoop ? this.countWrites(k, target, uniforms, total) : target.staticOps;
      if (slots === 0) continue;
      if (target.mode === 'store') {
        // In place unless the kernel also samples the buffer (a texture cannot be read while drawn into).
        const dest = k.plan.sampled.has(target.buffer) ? this.transfers.clone(b) : b.texture;
        this.state.attach([dest], [b.width, b.height]);
        // A point writes one part of a texel (a scalar, a vec2 or a whole vec4): one draw per part, under its mask.
        const { unit, parts } = writeUnit(this.vectorOf(k.kernel, target.buffer));
        for (let slot = 0; slot < slots; slot++) {
          for (let part = 0; part < parts; part++) {
            this.state.setColorMask(parts === 1 ? undefined : { from: part * unit, to: part * unit + unit });
            this.state.useProgram(prog, uniforms, { t_count: false, t_slot: slot, t_part: part });
            gl.drawArrays(gl.POINTS, 0, total);
          }
        }
        this.state.setColorMask(undefined);
        if (dest !== b.texture) swaps.push([b, dest]);
      } else {
        this.blendPoints(target, b, prog, uniforms, total, slots);
      }
    }
    for (const [b, tex] of swaps) {
      const old = b.texture;
      b.texture = tex;
      this.pool.release(b, old);
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
    const shadow = this.pool.spareOf(shadowFmt, b.width, b.height);
    // f32 add starts from -0, the exact identity (-0 + x == x for every x, -0 included), and marks untouched elements.
    const addIdentity = b.dtype === 'f32' ? -0 : 0;
    const identity = target.mode === 'add' ? addIdentity : target.mode === 'min' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
    const clear = () => {
      this.state.setBlend(null);
      this.state.attach([shadow], [b.width, b.height]);
      gl.clearBufferfv(gl.COLOR, 0, new Float32Array([identity, identity, identity, identity]));
    };
    const fold = () => {
      this.state.setBlend(null);
      const next = this.pool.spare(b);
      this.state.attach([next], b.extent);
      const f = this.programs.util(`fold-${b.dtype}-${target.mode}`, () => foldShader(b.dtype, target.mode as 'add'));
      this.state.useProgram(f, { f_old: b.texture, f_acc: shadow });
      gl.drawArrays(gl.TRIANGLES, 0, 3);
      const old = b.texture;
      b.texture = next;
      this.pool.release(b, old);
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
        this.state.attach([shadow], [b.width, b.height]);
        this.state.setBlend(equation);
        this.state.useProgram(prog, uniforms, { t_count: false, t_slot: slot });
        gl.drawArrays(gl.POINTS, first, count);
        first += count;
        pending += count;
      }
    }
    fold();
    this.pool.releaseOf(shadowFmt, b.width, b.height, shadow);
  }

  /**
   * How many writes to `target` the busiest invocation makes: a counting pass
   * (every invocation blends its count into one texel with MAX) read back at once.
   * Only kernels that write inside loops need it.
   */
  private countWrites(k: GlCompiled, target: PointTarget, uniforms: Record<string, unknown>, total: number): number {
    const gl = this.gl;
    if (!this.floatBlend) throw new KernelBuildError(k.kernel.name, 'internal: the plan admitted a loop write without float blending');
    this.countTex ??= this.state.createTexture(texFormat(gl, 'shadow'), 1, 1);
    this.state.setBlend(null);
    this.state.attach([this.countTex], [1, 1]);
    gl.clearBufferfv(gl.COLOR, 0, new Float32Array([0, 0, 0, 0]));
    const prog = this.programs.pass(k, { kind: 'points', target }, true);
    this.state.setBlend(gl.MAX);
    this.state.useProgram(prog, uniforms, { t_count: true, t_slot: -1, t_part: 0 });
    gl.drawArrays(gl.POINTS, 0, total);
    this.state.setBlend(null);
    const px = new Float32Array(4);
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.FLOAT, px);
    return px[0] as number;
  }

  async flush(): Promise<void> {
    this.check();
    await waitFence(this.gl, () => this.check());
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
      if (!(await waitQuery(gl, query, () => this.check()))) return { ms: performance.now() - start, source: 'wall' };
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
      for (const c of this.kernels.values()) for (const p of c.programs.values()) gl.deleteProgram(p.program);
      this.programs.destroy();
      if (this.countTex) gl.deleteTexture(this.countTex);
      this.state.destroy();
    }
    this.pool.destroy();
    this.buffers.clear();
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
}

/** Texels of an output of vector width `w` that `total` invocations can store (one element each, at globalIndex). */
function storedTexels(total: number, w: number): number {
  return Math.ceil((total * (w === 3 ? 3 : w)) / LANES);
}
