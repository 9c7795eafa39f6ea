/**
 * A linked program and its uniforms, found once at link time: each sampler gets
 * a fixed texture unit (set once), and each other uniform remembers the value it
 * was last set to, so that a pass sets only what changed (webgl-state.ts).
 */
export interface UniformSlot {
  readonly name: string;
  readonly location: WebGLUniformLocation;
  /** GL type enum (UNSIGNED_INT, INT, FLOAT, BOOL, or a sampler type). */
  readonly type: number;
  /** Texture unit of a sampler; -1 for other uniforms. */
  readonly unit: number;
  last: unknown;
}

export class GlProgram {
  readonly program: WebGLProgram;
  readonly uniforms: readonly UniformSlot[];

  /** Leaves `program` in use (its sampler units are set through it). */
  constructor(gl: WebGL2RenderingContext, program: WebGLProgram) {
    this.program = program;
    const samplers = new Set<number>([gl.SAMPLER_2D, gl.INT_SAMPLER_2D, gl.UNSIGNED_INT_SAMPLER_2D]);
    const slots: UniformSlot[] = [];
    const count = gl.getProgramParameter(program, gl.ACTIVE_UNIFORMS) as number;
    gl.useProgram(program);
    let units = 0;
    for (let i = 0; i < count; i++) {
      const info = gl.getActiveUniform(program, i);
      if (!info) continue;
      const location = gl.getUniformLocation(program, info.name);
      if (!location) continue;
      const unit = samplers.has(info.type) ? units++ : -1;
      if (unit >= 0) gl.uniform1i(location, unit);
      slots.push({ name: info.name, location, type: info.type, unit, last: undefined });
    }
    this.uniforms = slots;
  }
}
