import {
  type BinaryFn,
  type BufferParamDecl,
  type Expr,
  type Kernel,
  KernelBuildError,
  type KernelIR,
  privateArrayLength,
  type Stmt,
  typeInfo,
  type ValueType,
  workgroupShapeOf,
} from '@trident/core';
import type { KernelPlan, PointTarget } from './glsl-plan.ts';
import { GlslRuntime } from './glsl-runtime.ts';

/**
 * GLSL ES 3.00 code generation for the WebGL2 backend: the sibling of the CPU
 * backend's JavaScript generator (backend-cpu codegen/js.ts), lowering the same IR with the same
 * semantics. One kernel yields several programs, one per pass kind:
 *
 * - gather pass: a full-viewport triangle; each fragment owns one texel of the
 *   outputs, four elements, and runs the kernel body for every invocation whose
 *   output elements lie in it (four for scalar outputs, one for vec4), then writes
 *   each output (MRT); elements no invocation stored keep their old value, read
 *   from the pre-dispatch texture (the pass renders into a ping-pong copy) only
 *   where some element of the texel was not stored.
 * - point pass (scatter / atomics): `gl.POINTS`, one vertex per invocation; the
 *   vertex shader runs the body up to the `t_slot`-th write to the target and
 *   places a point on that write's texel. A store writes whole texels (vec4) or a
 *   part of one: the host draws once per part (`t_part`) under a colour mask, and
 *   points of other parts fall outside the clip volume. Atomics blend a vec4 with
 *   the blend identity in the other components, so they need no mask. With
 *   `t_count` set the vertex shader instead emits how many writes the invocation
 *   makes, so the host can bound the slots of kernels that write inside loops.
 *
 * Storage (webgl-texture.ts): element i of a buffer is component i % 4 of texel
 * t = i / 4, at (t & (W - 1), t >> log2 W) for a power-of-two width W. log2 W,
 * the length and the height are uniforms, so one program serves every buffer size.
 */
export type PassSpec =
  | { readonly kind: 'gather'; readonly outputs: readonly string[] }
  | { readonly kind: 'points'; readonly target: PointTarget };

export interface GlslProgram {
  readonly vs: string;
  readonly fs: string;
  /** Point passes only: the fragment shader of the counting pass (a float, blended with MAX). */
  readonly countFs?: string;
}

/** Names of the uniforms the host sets for buffer parameter `name` (`shift`: log2 of the texture width). */
export function bufferUniforms(name: string): { tex: string; shift: string; height: string; length: string } {
  const id = clean(name);
  return { tex: `tex_${id}`, shift: `ts_${id}`, height: `th_${id}`, length: `tn_${id}` };
}
export function uniformName(name: string): string {
  return `u_${clean(name)}`;
}
/** Identifiers with `__` are reserved in GLSL: collapse runs of underscores; a length suffix keeps such names apart. */
function clean(name: string): string {
  return `${name.replace(/_+/g, '_').replace(/_$/, '')}${/_{2,}|_$/.test(name) ? `_${name.length}` : ''}`;
}

const HEADER = [
  '#version 300 es',
  'precision highp float;',
  'precision highp int;',
  'precision highp sampler2D;',
  'precision highp usampler2D;',
  'precision highp isampler2D;',
].join('\n');

/** The vertex shader of gather passes: one triangle covering the viewport, no attributes. */
export const FULLSCREEN_VS = `${HEADER}
void main() {
  vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
`;

/**
 * `vec` (of GLSL type `type`) with lane `lane` (an int expression) replaced by
 * `value` (a name: it is read four times), written with selects: dynamic vector
 * indexing (q[i]) made SwiftShader's shader compiler hang on kernels with many
 * loads, so generated code never uses it.
 */
function setLane(type: string, vec: string, lane: string, value: string): string {
  return `${type}(${['x', 'y', 'z', 'w'].map((c, i) => `${lane} == ${i} ? ${value} : ${vec}.${c}`).join(', ')})`;
}

/** Texel t of a texture whose width is 2^s (every shader has it). */
const TEXEL_AT = 'ivec2 t_at(uint t, uint s) { return ivec2(int(t & ((1u << s) - 1u)), int(t >> s)); }';

/**
 * How a buffer of vector width `w` maps onto texels: `unit` scalars per point
 * write (a vec2 or vec4 element is written whole; vec3 elements straddle texels
 * and are written one scalar at a time), `parts` = 4 / unit writes per texel.
 */
export function writeUnit(w: number): { unit: number; parts: number } {
  const unit = w === 3 ? 1 : w;
  return { unit, parts: 4 / unit };
}

export function glslType(t: ValueType): string {
  const { scalar, width } = typeInfo(t);
  const base = { u32: 'uint', i32: 'int', f32: 'float', bool: 'bool' }[scalar];
  if (width === 1) return base;
  return `${{ u32: 'u', i32: 'i', f32: '', bool: 'b' }[scalar]}vec${width}`;
}

/**
 * f32 buffers are stored as their bit patterns in R32UI textures, so uploads,
 * copies and readbacks are bit-exact (an R32F texture may quiet signalling NaNs);
 * shaders decode with uintBitsToFloat and encode with floatBitsToUint.
 */
export function samplerType(dtype: 'u32' | 'i32' | 'f32'): string {
  return dtype === 'i32' ? 'isampler2D' : 'usampler2D';
}

/** The GLSL type a buffer's texels hold (four elements, f32 as bits). */
export function storageType(dtype: 'u32' | 'i32' | 'f32'): string {
  return dtype === 'i32' ? 'ivec4' : 'uvec4';
}

/** The scalar type of one stored element (f32 as bits). */
export function storageScalar(dtype: 'u32' | 'i32' | 'f32'): string {
  return dtype === 'i32' ? 'int' : 'uint';
}

export function generateGlsl(kernel: Kernel, plan: KernelPlan, pass: PassSpec): GlslProgram {
  return new GlslGenerator(kernel.ir, plan, pass).generate();
}

class GlslGenerator {
  private readonly ir: KernelIR;
  private readonly plan: KernelPlan;
  private readonly pass: PassSpec;
  private readonly rt = new GlslRuntime();
  private readonly decls = new Map<string, BufferParamDecl>();
  private readonly varName = new Map<number, string>();
  private readonly loops: Array<{ brk: string }> = [];
  private labels = 0;

  constructor(ir: KernelIR, plan: KernelPlan, pass: PassSpec) {
    this.ir = ir;
    this.plan = plan;
    this.pass = pass;
    for (const [name, decl] of ir.params) if (decl.kind === 'buffer') this.decls.set(name, decl);
    for (const v of ir.vars) this.varName.set(v.id, `v_${v.name}`);
  }

  generate(): GlslProgram {
    const body = this.block(this.ir.body, '  ');
    const isGather = this.pass.kind === 'gather';
    const lines: string[] = [HEADER];
    lines.push(`// Trident kernel '${this.ir.name}' (generated GLSL ES 3.00, ${this.describePass()})`);
    lines.push('uniform uint t_total; // invocations in the dispatch', 'uniform uint t_nwg; // workgroups in the dispatch');
    lines.push('uniform uvec3 t_grid; // workgroups along x, y, z');
    const [sx, sy] = workgroupShapeOf(this.ir);
    lines.push(
      `uvec3 t_localId(uint l) { return uvec3(l % ${sx}u, (l / ${sx}u) % ${sy}u, l / ${sx * sy}u); }`,
      'uvec3 t_workgroupId(uint w) { return uvec3(w % t_grid.x, (w / t_grid.x) % t_grid.y, w / (t_grid.x * t_grid.y)); }',
    );
    for (const [name, decl] of this.ir.params) {
      if (decl.kind === 'uniform') lines.push(`uniform ${glslType(decl.dtype)} ${uniformName(name)};`);
    }
    for (const [name, decl] of this.decls) {
      const u = bufferUniforms(name);
      lines.push(`uniform uint ${u.length}; // '${name}': ${decl.dtype} x${decl.vector}, length in elements of the view`);
      if (this.needsTexture(name)) lines.push(`uniform highp ${samplerType(decl.dtype)} ${u.tex};`, `uniform uint ${u.shift};`);
    }
    lines.push('uint gid;', TEXEL_AT);
    if (isGather) {
      lines.push("uniform uint t_outS; // log2 of the texture width shared by this pass's outputs");
      for (const o of this.gatherOutputs()) {
        lines.push(`${glslType(this.elemType(o))} o_${clean(o)};`, `bool w_${clean(o)} = false;`);
      }
    } else {
      const t = (this.pass as { target: PointTarget }).target;
      const u = bufferUniforms(t.buffer);
      if (!this.needsTexture(t.buffer)) lines.push(`uniform uint ${u.shift};`);
      lines.push(`uniform uint ${u.height};`);
      lines.push('uniform int t_slot; // which write of each invocation this draw places', 'uniform bool t_count; // counting pass');
      if (t.mode === 'store') lines.push('uniform uint t_part; // which part of a texel this draw writes (colour mask)');
      lines.push('int s_n = 0;', 'bool s_hit = false;', 'uint s_idx = 0u;', `${this.pointValueType()} s_val;`);
    }
    const runtime = this.rt.emit();
    if (runtime) lines.push(runtime);
    for (const name of this.decls.keys()) if (this.plan.sampled.has(name)) lines.push(this.loader(name));
    lines.push('void kernel_main() {');
    for (const v of this.ir.vars) lines.push(`  ${glslType(v.type)} ${this.varName.get(v.id)} = ${zero(v.type)};`);
    // Private arrays: locals of kernel_main (GLSL leaves them undefined), zeroed here.
    for (const a of this.ir.privateArrays ?? []) {
      lines.push(`  ${glslType(a.type)} pa_${a.id}[${a.length}];`);
      lines.push(`  for (int i = 0; i < ${a.length}; i++) pa_${a.id}[i] = ${zero(a.type)};`);
    }
    lines.push(body, '}');
    if (isGather) return { vs: FULLSCREEN_VS, fs: `${lines.join('\n')}\n${this.gatherMain()}` };
    return {
      vs: `${lines.join('\n')}\n${this.pointMain()}`,
      fs: this.pointFragment(this.pointValueType(), 'p_val'),
      countFs: this.pointFragment('float', 'p_cnt'),
    };
  }

  private describePass(): string {
    if (this.pass.kind === 'gather') return `gather pass writing ${this.pass.outputs.join(', ')}`;
    return `point pass: ${this.pass.target.mode} into ${this.pass.target.buffer}`;
  }

  private gatherOutputs(): readonly string[] {
    return this.pass.kind === 'gather' ? this.pass.outputs : [];
  }

  private needsTexture(name: string): boolean {
    return this.plan.sampled.has(name) || this.gatherOutputs().includes(name);
  }

  private elemType(buffer: string): ValueType {
    const d = this.decls.get(buffer);
    if (!d) throw new KernelBuildError(this.ir.name, `internal: unknown buffer ${buffer}`);
    return (d.vector === 1 ? d.dtype : `vec${d.vector}<${d.dtype}>`) as ValueType;
  }

  /** The type a point carries: a whole texel (the unit written, repeated across it) or a float for blending. */
  private pointValueType(): string {
    const t = (this.pass as { target: PointTarget }).target;
    return t.mode === 'store' ? storageType((this.decls.get(t.buffer) as BufferParamDecl).dtype) : 'vec4';
  }

  /** `ld_x(i)`: element i of buffer x, 0 outside [0, length); a gather output forwards this invocation's own store. */
  private loader(name: string): string {
    const decl = this.decls.get(name) as BufferParamDecl;
    const u = bufferUniforms(name);
    const scalarT = glslType(decl.dtype);
    const t = glslType(this.elemType(name));
    const id = clean(name);
    const decode = (x: string) => (decl.dtype === 'f32' ? `uintBitsToFloat(${x})` : x);
    const texel = (at: string) => `texelFetch(${u.tex}, t_at(${at}, ${u.shift}), 0)`;
    const w = decl.vector;
    const out: string[] = [];
    let value: string;
    if (w === 4) value = decode(texel('i'));
    else if (w === 2) value = decode(`((i & 1u) == 0u ? ${texel('i >> 1u')}.xy : ${texel('i >> 1u')}.zw)`);
    else {
      // Scalar element s: component s & 3 of texel s >> 2.
      // A select chain, not q[s & 3]: dynamic vector indexing made SwiftShader's compiler hang on kernels with many loads.
      out.push(
        `${scalarT} tf_${id}(uint s) {\n  ${storageType(decl.dtype)} q = ${texel('s >> 2u')};\n  uint c = s & 3u;\n  return ${decode('(c < 2u ? (c == 0u ? q.x : q.y) : (c == 2u ? q.z : q.w))')};\n}`,
      );
      value = w === 1 ? `tf_${id}(i)` : `${t}(tf_${id}(3u * i), tf_${id}(3u * i + 1u), tf_${id}(3u * i + 2u))`;
    }
    const forward = this.gatherOutputs().includes(name) ? `  if (w_${id} && i == gid) return o_${id};\n` : '';
    out.push(`${t} ld_${id}(uint i) {\n${forward}  if (i >= ${u.length}) return ${zero(this.elemType(name))};\n  return ${value};\n}`);
    return out.join('\n');
  }

  /**
   * The fragment owns texel t of its outputs (all of one vector width w): scalars
   * 4t .. 4t + 3, which belong to invocations 4t / w .. (4t + 3) / w. It starts from
   * the old texel and overwrites the components each invocation stored.
   */
  private gatherMain(): string {
    const outs = this.gatherOutputs();
    const w = (this.decls.get(outs[0] as string) as BufferParamDecl).vector;
    const dtype = (o: string) => (this.decls.get(o) as BufferParamDecl).dtype;
    const lines = outs.map((o, k) => `layout(location = ${k}) out highp ${storageType(dtype(o))} out_${k};`);
    const bits = (o: string, x: string) => (dtype(o) === 'f32' ? `floatBitsToUint(${x})` : x);
    const sc = (o: string) => storageScalar(dtype(o));
    lines.push('void main() {');
    lines.push('  uvec2 p = uvec2(gl_FragCoord.xy);', '  uint t = (p.y << t_outS) + p.x;');
    // r_k collects the stored components, m_k marks them (bit c: component c); the old texel is
    // fetched only where some component was not stored, so passes that store every element
    // (the common case) read no texel of their outputs.
    outs.forEach((o, k) => {
      lines.push(`  ${storageType(dtype(o))} r_${k} = ${storageType(dtype(o))}(0);`, `  uint m_${k} = 0u;`);
    });
    const invocations = w === 3 ? 2 : 4 / w;
    const first = w === 1 ? 't * 4u' : w === 2 ? 't * 2u' : w === 4 ? 't' : '(t * 4u) / 3u';
    // The bound depends on t_total, so the compiler keeps one copy of the body (unrolling it
    // four times made SwiftShader's shader compile run for seconds on large kernels).
    lines.push(`  uint g0 = ${first};`, `  uint g1 = min(g0 + ${invocations}u, t_total);`);
    lines.push('  for (uint g = g0; g < g1; g++) {', '    int j = int(g - g0);', '    gid = g;');
    for (const o of outs) lines.push(`    w_${clean(o)} = false;`);
    lines.push('    kernel_main();');
    outs.forEach((o, k) => {
      const id = clean(o);
      const v = bits(o, `o_${id}`);
      const put =
        w === 1
          ? `${sc(o)} e_ = ${v}; r_${k} = ${setLane(storageType(dtype(o)), `r_${k}`, 'j', 'e_')}; m_${k} |= 1u << uint(j);`
          : w === 2
            ? `if (j == 0) r_${k}.xy = ${v}; else r_${k}.zw = ${v}; m_${k} |= 3u << uint(2 * j);`
            : w === 4
              ? `r_${k} = ${v}; m_${k} = 15u;`
              : // vec3: scalar 4t + c is component (4t + c) % 3 of invocation (4t + c) / 3.
                `${storageType(dtype(o)).replace('4', '3')} e_ = ${v}; for (int c = 0; c < 4; c++) { uint s = t * 4u + uint(c); uint m = s % 3u; ${sc(o)} x_ = m == 0u ? e_.x : m == 1u ? e_.y : e_.z; if (s / 3u == gid) { r_${k} = ${setLane(storageType(dtype(o)), `r_${k}`, 'c', 'x_')}; m_${k} |= 1u << uint(c); } }`;
      lines.push(`    if (w_${id}) { ${put} }`);
    });
    lines.push('  }');
    outs.forEach((o, k) => {
      const keep = ['x', 'y', 'z', 'w'].map((c, i) => `(m_${k} & ${1 << i}u) != 0u ? r_${k}.${c} : q_.${c}`).join(', ');
      lines.push(
        `  if (m_${k} != 15u) { ${storageType(dtype(o))} q_ = texelFetch(${bufferUniforms(o).tex}, ivec2(p), 0); r_${k} = ${storageType(dtype(o))}(${keep}); }`,
        `  out_${k} = r_${k};`,
      );
    });
    lines.push('}');
    return lines.join('\n');
  }

  private pointMain(): string {
    const t = (this.pass as { target: PointTarget }).target;
    const u = bufferUniforms(t.buffer);
    const { parts } = writeUnit((this.decls.get(t.buffer) as BufferParamDecl).vector);
    // s_idx counts write units: texel s_idx / parts, part s_idx % parts. Blending writes scalars (parts = 4)
    // and needs no mask: the point carries the identity in the other components.
    const texelIdx = parts === 1 ? 's_idx' : `(s_idx >> ${Math.log2(parts)}u)`;
    const inPart = t.mode === 'store' && parts > 1 ? ` && (s_idx & ${parts - 1}u) == t_part` : '';
    return [
      `flat out highp ${this.pointValueType()} p_val;`,
      'flat out highp float p_cnt;',
      'void main() {',
      '  gid = uint(gl_VertexID);',
      '  if (gid < t_total) kernel_main();',
      '  gl_PointSize = 1.0;',
      '  if (t_count) {',
      '    // Counting pass: every invocation lands on texel 0, blended with MAX.',
      '    gl_Position = vec4(0.0, 0.0, 0.0, 1.0);',
      '    p_cnt = float(s_n);',
      `  } else if (s_hit${inPart}) {`,
      `    ivec2 at = t_at(${texelIdx}, ${u.shift});`,
      `    vec2 texel = vec2(at) + 0.5;`,
      `    gl_Position = vec4(texel / vec2(float(1u << ${u.shift}), float(${u.height})) * 2.0 - 1.0, 0.0, 1.0);`,
      '    p_val = s_val;',
      '  } else {',
      '    gl_Position = vec4(2.0, 2.0, 2.0, 1.0); // outside the clip volume: no write',
      '  }',
      '}',
    ].join('\n');
  }

  private pointFragment(type: string, varying: string): string {
    const out = type === 'float' ? 'vec4' : type;
    const value = type === 'float' ? `vec4(${varying})` : varying;
    return `${HEADER}\nflat in highp ${type} ${varying};\nlayout(location = 0) out highp ${out} o;\nvoid main() { o = ${value}; }\n`;
  }

  // ---------- statements ----------

  private block(stmts: readonly Stmt[], ind: string): string {
    return stmts
      .map((s) => this.stmt(s, ind))
      .filter((l) => l.length > 0)
      .join('\n');
  }

  private stmt(s: Stmt, ind: string): string {
    switch (s.op) {
      case 'let':
        if (s.init.op === 'atomic')
          return this.write(s.init.buffer, s.init.index, s.init.value, ind, `${this.var(s.id)} = ${zero(s.type)};`);
        return `${ind}${this.var(s.id)} = ${this.expr(s.init)};`;
      case 'assign':
        return `${ind}${this.var(s.id)} = ${this.expr(s.value)};`;
      case 'store':
        return this.write(s.buffer, s.index, s.value, ind, '');
      case 'privStore':
        return `${ind}{ uint i_ = ${this.index(s.index)}; if (i_ < ${this.privateLength(s.array)}u) pa_${s.array}[i_] = ${this.expr(s.value)}; }`;
      case 'eval':
        if (s.expr.op === 'atomic') return this.write(s.expr.buffer, s.expr.index, s.expr.value, ind, '');
        return '';
      case 'if': {
        const parts = [`${ind}if (${this.expr(s.cond)}) {`, this.block(s.thenBlock, `${ind}  `)];
        if (s.elseBlock.length) parts.push(`${ind}} else {`, this.block(s.elseBlock, `${ind}  `));
        parts.push(`${ind}}`);
        return parts.filter((p) => p.length > 0).join('\n');
      }
      case 'loop': {
        // GLSL's `continue` would skip the update block: the body runs inside a
        // `do { } while (false)` that `continue` leaves, and `break` sets a flag first.
        const brk = `brk_${this.labels++}`;
        this.loops.unshift({ brk });
        const parts = [
          `${ind}while (true) {`,
          this.block(s.condPrelude, `${ind}  `),
          `${ind}  if (!(${this.expr(s.cond)})) break;`,
          `${ind}  bool ${brk} = false;`,
          `${ind}  do {`,
          this.block(s.body, `${ind}    `),
          `${ind}  } while (false);`,
          `${ind}  if (${brk}) break;`,
          this.block(s.update, `${ind}  `),
          `${ind}}`,
        ];
        this.loops.shift();
        return parts.filter((p) => p.length > 0).join('\n');
      }
      case 'expectRange':
        // Textures are not split over bindings: the hint has nothing to choose.
        return this.block(s.body, ind);
      case 'break': {
        const loop = this.loops[0];
        if (!loop) throw new KernelBuildError(this.ir.name, 'break outside a loop');
        return `${ind}{ ${loop.brk} = true; break; }`;
      }
      case 'continue':
        if (!this.loops[0]) throw new KernelBuildError(this.ir.name, 'continue outside a loop');
        return `${ind}break; // continue: leave the body, run the update`;
      case 'return':
        return `${ind}return;`;
      case 'barrier':
      case 'wgStore':
        throw new KernelBuildError(this.ir.name, `internal: '${s.op}' reached the GLSL generator (the plan refuses workgroup kernels)`);
    }
  }

  /** A store or atomic: what it does depends on the pass (the others ignore it). */
  private write(buffer: string, index: Expr, value: Expr, ind: string, after: string): string {
    const tail = after ? ` ${after}` : '';
    const u = bufferUniforms(buffer);
    const id = clean(buffer);
    if (this.pass.kind === 'gather') {
      if (!this.pass.outputs.includes(buffer)) return after ? `${ind}${after}` : '';
      return `${ind}{ uint i_ = ${this.index(index)}; if (i_ == gid && i_ < ${u.length}) { o_${id} = ${this.expr(value)}; w_${id} = true; } }${tail}`;
    }
    const target = this.pass.target;
    if (target.buffer !== buffer) return after ? `${ind}${after}` : '';
    const decl = this.decls.get(buffer) as BufferParamDecl;
    const w = decl.vector;
    const { unit } = writeUnit(w);
    const vt = glslType(value.type);
    const lines = [`${ind}{`, `${ind}  uint i_ = ${this.index(index)};`, `${ind}  ${vt} x_ = ${this.expr(value)};`];
    const st = storageType(decl.dtype);
    const bits = (x: string) => (decl.dtype === 'f32' ? `floatBitsToUint(${x})` : x);
    if (target.mode !== 'store') {
      // Atomics (scalar buffers): the value in component i_ & 3, the blend identity in the others.
      const id =
        target.mode === 'add'
          ? decl.dtype === 'f32'
            ? 'uintBitsToFloat(0x80000000u)'
            : '0.0'
          : target.mode === 'min'
            ? 'uintBitsToFloat(0x7f800000u)'
            : 'uintBitsToFloat(0xff800000u)';
      lines.push(
        `${ind}  if (s_n == t_slot) { s_hit = i_ < ${u.length}; s_idx = i_; float f_ = float(x_); uint c_ = i_ & 3u; s_val = vec4(c_ == 0u ? f_ : ${id}, c_ == 1u ? f_ : ${id}, c_ == 2u ? f_ : ${id}, c_ == 3u ? f_ : ${id}); return; }`,
        `${ind}  s_n++;`,
      );
    } else if (unit === w) {
      // A whole element per point, repeated across the texel (the colour mask keeps its part).
      const rep = w === 1 ? `${st}(${bits('x_')})` : w === 2 ? `${st}(${bits('x_')}, ${bits('x_')})` : bits('x_');
      lines.push(`${ind}  if (s_n == t_slot) { s_hit = i_ < ${u.length}; s_idx = i_; s_val = ${rep}; return; }`, `${ind}  s_n++;`);
    } else {
      // vec3: one scalar per point.
      for (let c = 0; c < w; c++) {
        lines.push(
          `${ind}  if (s_n == t_slot) { s_hit = i_ < ${u.length}; s_idx = i_ * ${w}u + ${c}u; s_val = ${st}(${bits(`x_.${'xyzw'[c]}`)}); return; }`,
          `${ind}  s_n++;`,
        );
      }
    }
    lines.push(`${ind}}${tail}`);
    return lines.join('\n');
  }

  private privateLength(id: number): number {
    const n = privateArrayLength(this.ir, id);
    if (n === undefined) throw new KernelBuildError(this.ir.name, `internal: unknown private array ${id}`);
    return n;
  }

  /** An index as uint; negative i32 indices become 0xffffffff, which is out of range everywhere. */
  private index(e: Expr): string {
    const code = this.expr(e);
    return e.type === 'i32' ? `uint(max(${code}, -1))` : code;
  }

  private var(id: number): string {
    const name = this.varName.get(id);
    if (name === undefined) throw new KernelBuildError(this.ir.name, `internal: unknown variable ${id}`);
    return name;
  }

  // ---------- expressions ----------

  private expr(e: Expr): string {
    switch (e.op) {
      case 'const':
        return constant(e.type, e.value);
      case 'uniform':
        return uniformName(e.name);
      case 'builtin':
        switch (e.name) {
          case 'globalIndex':
            return 'gid';
          case 'localIndex':
            return `(gid % ${this.ir.workgroupSize}u)`;
          case 'workgroupIndex':
            return `(gid / ${this.ir.workgroupSize}u)`;
          case 'workgroupSize':
            return `${this.ir.workgroupSize}u`;
          case 'numWorkgroups':
            return 't_nwg';
          // The 3-D ids, derived from gid and the grid's extent (the WGSL built-ins' definitions).
          case 'localId':
            return `t_localId(gid % ${this.ir.workgroupSize}u)`;
          case 'workgroupId':
            return `t_workgroupId(gid / ${this.ir.workgroupSize}u)`;
          case 'globalId':
            return `(t_workgroupId(gid / ${this.ir.workgroupSize}u) * uvec3(${workgroupShapeOf(this.ir)
              .map((d) => `${d}u`)
              .join(', ')}) + t_localId(gid % ${this.ir.workgroupSize}u))`;
          case 'workgroupCount':
            return 't_grid';
          default:
            throw new KernelBuildError(this.ir.name, `internal: builtin ${e.name} reached the GLSL generator`);
        }
      case 'var':
        return this.var(e.id);
      case 'unary':
        return this.unary(e.fn, e.type, this.expr(e.a));
      case 'binary':
        return this.binary(e.fn, e.a.type, this.expr(e.a), this.expr(e.b));
      case 'call':
        return this.call(
          e.fn,
          e.type,
          e.args.map((a) => this.expr(a)),
        );
      case 'select':
        return `(${this.expr(e.cond)} ? ${this.expr(e.ifTrue)} : ${this.expr(e.ifFalse)})`;
      case 'convert':
        return this.convert(e.a.type, e.type, this.expr(e.a));
      case 'bitcast':
        return this.bitcast(e.a.type, e.type, this.expr(e.a));
      case 'load':
        return `ld_${clean(e.buffer)}(${this.index(e.index)})`;
      case 'privLoad': {
        const n = this.privateLength(e.array);
        const i = this.index(e.index);
        return `(${i} < ${n}u ? pa_${e.array}[min(${i}, ${n - 1}u)] : ${zero(e.type)})`;
      }
      case 'length':
        return bufferUniforms(e.buffer).length;
      case 'construct':
        return `${glslType(e.type)}(${e.args.map((a) => this.expr(a)).join(', ')})`;
      case 'extract':
        return `(${this.expr(e.a)}).${'xyzw'[e.component]}`;
      case 'atomic':
      case 'wgLoad':
      case 'wgAtomic':
      case 'subgroup':
        throw new KernelBuildError(this.ir.name, `internal: '${e.op}' reached the GLSL generator outside a statement`);
    }
  }

  private unary(fn: string, type: ValueType, a: string): string {
    const { scalar, width } = typeInfo(type);
    if (fn === 'not') return `(!${a})`;
    if (fn === 'bitnot') return `(~${a})`;
    if (scalar === 'f32') return `(-${a})`;
    const ut = width === 1 ? 'uint' : `uvec${width}`;
    if (scalar === 'u32') return `(${ut}(0u) - ${a})`;
    return `${glslType(type)}(${ut}(0u) - ${ut}(${a}))`;
  }

  private binary(fn: BinaryFn, type: ValueType, a: string, b: string): string {
    const { scalar, width } = typeInfo(type);
    const cmp: Partial<Record<BinaryFn, string>> = { eq: '==', ne: '!=', lt: '<', le: '<=', gt: '>', ge: '>=' };
    const c = cmp[fn];
    if (c) return `(${a} ${c} ${b})`;
    if (scalar === 'bool') return `(${a} ${{ and: '&&', or: '||', xor: '!=' }[fn as 'and']} ${b})`;
    const arith: Partial<Record<BinaryFn, string>> = { add: '+', sub: '-', mul: '*' };
    const bits: Partial<Record<BinaryFn, string>> = { and: '&', or: '|', xor: '^' };
    const ut = width === 1 ? 'uint' : `uvec${width}`;
    const mask = width === 1 ? '31u' : `${ut}(31u)`;
    if (scalar === 'f32') {
      if (fn === 'rem') return `${this.rt.use('t_frem', width)}(${a}, ${b})`;
      return `(${a} ${{ add: '+', sub: '-', mul: '*', div: '/' }[fn as 'add']} ${b})`;
    }
    if (scalar === 'u32') {
      if (arith[fn]) return `(${a} ${arith[fn]} ${b})`;
      if (bits[fn]) return `(${a} ${bits[fn]} ${b})`;
      if (fn === 'div') return `${this.rt.use('t_udiv', width)}(${a}, ${b})`;
      if (fn === 'rem') return `${this.rt.use('t_urem', width)}(${a}, ${b})`;
      if (fn === 'shl') return `(${a} << (${b} & ${mask}))`;
      if (fn === 'shr') return `(${a} >> (${b} & ${mask}))`;
    }
    // i32: wrap through uint so overflow never depends on the driver; >> on int is arithmetic.
    const it = glslType(type);
    if (arith[fn]) return `${it}(${ut}(${a}) ${arith[fn]} ${ut}(${b}))`;
    if (bits[fn]) return `(${a} ${bits[fn]} ${b})`;
    if (fn === 'div') return `${this.rt.use('t_idiv', width)}(${a}, ${b})`;
    if (fn === 'rem') return `${this.rt.use('t_irem', width)}(${a}, ${b})`;
    if (fn === 'shl') return `${it}(${ut}(${a}) << (${b} & ${mask}))`;
    if (fn === 'shr') return `(${a} >> (${b} & ${mask}))`;
    throw new KernelBuildError(this.ir.name, `internal: binary ${fn} on ${type}`);
  }

  private call(fn: string, type: ValueType, args: string[]): string {
    const { scalar, width } = typeInfo(type);
    const [a = '', b = '', c = ''] = args;
    switch (fn) {
      case 'abs':
        return scalar === 'u32' ? a : `abs(${a})`;
      case 'min':
      case 'max':
      case 'clamp':
      case 'sqrt':
      case 'exp':
      case 'exp2':
      case 'log':
      case 'log2':
      case 'pow':
      case 'sin':
      case 'cos':
      case 'floor':
      case 'ceil':
      case 'trunc':
        return `${fn}(${args.join(', ')})`;
      case 'inverseSqrt':
        return `inversesqrt(${a})`;
      case 'fma':
        return `(${a} * ${b} + ${c})`;
      case 'countOneBits': {
        const f = this.rt.use('t_popcnt', width);
        if (scalar === 'u32') return `${f}(${a})`;
        const ut = width === 1 ? 'uint' : `uvec${width}`;
        return `${glslType(type)}(${f}(${ut}(${a})))`;
      }
      default:
        throw new KernelBuildError(this.ir.name, `internal: math function ${fn}`);
    }
  }

  private convert(fromT: ValueType, toT: ValueType, a: string): string {
    const from = typeInfo(fromT).scalar;
    const { scalar: to, width } = typeInfo(toT);
    if (from === to) return a;
    if (to === 'bool') return `(${a} != ${zero(fromT)})`;
    if (from === 'f32' && to === 'u32') return `${this.rt.use('t_f2u', width)}(${a})`;
    if (from === 'f32' && to === 'i32') return `${this.rt.use('t_f2i', width)}(${a})`;
    if (from === 'u32' && to === 'f32') return `${this.rt.use('t_u2f', width)}(${a})`;
    // bool -> 0/1, integer -> float (rounds), u32 <-> i32 (GLSL keeps the bit pattern).
    return `${glslType(toT)}(${a})`;
  }

  private bitcast(fromT: ValueType, toT: ValueType, a: string): string {
    const from = typeInfo(fromT).scalar;
    const to = typeInfo(toT).scalar;
    if (from === to) return a;
    if (from === 'f32') return `${to === 'u32' ? 'floatBitsToUint' : 'floatBitsToInt'}(${a})`;
    if (to === 'f32') return `${from === 'u32' ? 'uintBitsToFloat' : 'intBitsToFloat'}(${a})`;
    return `${glslType(toT)}(${a})`;
  }
}

export function zero(t: ValueType): string {
  const { scalar, width } = typeInfo(t);
  const z = { u32: '0u', i32: '0', f32: '0.0', bool: 'false' }[scalar];
  return width === 1 ? z : `${glslType(t)}(${z})`;
}

function scalarConst(scalar: string, v: number | boolean): string {
  if (typeof v === 'boolean') return String(v);
  if (scalar === 'u32') return `${v >>> 0}u`;
  if (scalar === 'i32') return v === -2147483648 ? 'int(0x80000000u)' : v < 0 ? `(${v})` : `${v}`;
  return floatConst(v);
}

/** f32 literals: exact decimal for normal numbers; bit patterns for NaN, infinities, -0 and subnormals. */
export function floatConst(v: number): string {
  const f = Math.fround(v);
  if (Number.isFinite(f) && !Object.is(f, -0) && (f === 0 || Math.abs(f) >= 1.1754943508222875e-38)) {
    let s = String(f);
    if (!/[.eE]/.test(s)) s += '.0';
    return f < 0 ? `(${s})` : s;
  }
  const bits = new Uint32Array(new Float32Array([f]).buffer)[0] as number;
  return `uintBitsToFloat(0x${bits.toString(16)}u)`;
}

function constant(type: ValueType, value: number | boolean | readonly number[]): string {
  const { scalar } = typeInfo(type);
  if (typeof value === 'number' || typeof value === 'boolean') return scalarConst(scalar, value);
  return `${glslType(type)}(${value.map((v) => scalarConst(scalar, v)).join(', ')})`;
}
