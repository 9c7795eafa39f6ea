import { type CompiledKernel, KernelBuildError } from '@trident/core';
import * as twgl from 'twgl.js';
import { FULLSCREEN_VS, type GlslProgram, generateGlsl, type PassSpec } from './glsl.ts';
import type { KernelPlan } from './glsl-plan.ts';
import { GlProgram } from './webgl-program.ts';
import type { GlState } from './webgl-state.ts';

/** A kernel compiled for WebGL2: its plan, and the GLSL and programs of its passes. */
export interface GlCompiled extends CompiledKernel {
  readonly plan: KernelPlan;
  /** Programs by pass key, built on first use (and the first pass of each kind at compile time). */
  readonly programs: Map<string, GlProgram>;
  readonly sources: Map<string, GlslProgram>;
}

/**
 * Links programs: the passes of compiled kernels (kept on each kernel's
 * GlCompiled) and the device's own full-viewport shaders (copy, fold), kept here
 * by name. A shader that does not link is a code generator bug, reported with
 * the driver's log.
 */
export class ProgramCache {
  private readonly gl: WebGL2RenderingContext;
  private readonly state: GlState;
  /** Throws DeviceLostError once the context is lost: a lost context fails every link, which is no bug. */
  private readonly check: () => void;
  private readonly utilPrograms = new Map<string, GlProgram>();

  constructor(gl: WebGL2RenderingContext, state: GlState, check: () => void) {
    this.gl = gl;
    this.state = state;
    this.check = check;
  }

  /** The program of one pass of `k` (its counting variant where `counting`), generated and linked on first use. */
  pass(k: GlCompiled, pass: PassSpec, counting = false): GlProgram {
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

  /** One of the device's own shaders, drawn with FULLSCREEN_VS; `fs` makes its source on first use. */
  util(key: string, fs: () => string): GlProgram {
    let p = this.utilPrograms.get(key);
    if (!p) {
      p = this.link(`<${key}>`, FULLSCREEN_VS, fs());
      this.utilPrograms.set(key, p);
    }
    return p;
  }

  /** Deletes the device's own programs (kernels' programs belong to their GlCompiled). */
  destroy(): void {
    for (const p of this.utilPrograms.values()) this.gl.deleteProgram(p.program);
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
    this.state.linked(prog);
    return prog;
  }
}
