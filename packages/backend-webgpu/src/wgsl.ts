import {
  type BinaryFn,
  containsBarrier,
  type Expr,
  IndexBounds,
  type Kernel,
  KernelBuildError,
  type KernelIR,
  privateArrayLength,
  type Stmt,
  typeInfo,
  UnsupportedFeatureError,
  type ValueType,
  walkExpr,
  walkStmts,
  workgroupShapeOf,
} from '@trident/core';

/**
 * WGSL code generation: the sibling of the CPU backend's JavaScript generator (backend-cpu codegen/js.ts).
 *
 * Layout of a generated module:
 * - every buffer parameter is `@group(0) @binding(i)` in parameter order, as
 *   `var<storage, read>` (access 'read') or `var<storage, read_write>`; atomic
 *   buffers are `array<atomic<u32|i32>>`, vec2/vec4 views `array<vecN<T>>`, vec3
 *   views a scalar array (a WGSL vec3 array has a 16-byte stride);
 * - one uniform struct `P` at the binding after the buffers holds the scalar
 *   uniforms (`u_<name>`) and the logical length of every buffer (`len_<name>`,
 *   in view elements): bounds come from there, not from `arrayLength`, because a
 *   pooled or padded allocation may be longer than the buffer it holds. `main`
 *   reads them once into `let`s of the same names;
 * - workgroup arrays are `var<workgroup> wg_<id>: array<T, N>`, atomic ones
 *   `array<atomic<u32|i32>, N>` reached only through atomic built-ins;
 * - every IR variable is declared at the top of `main` (WGSL scoping never gets
 *   in the way) and assigned where the IR's `let` stands.
 *
 * IR semantics (ir/nodes.ts) that WGSL does not give by itself are made explicit:
 * loads, stores and atomics are bounds-checked in small helper functions (WGSL's
 * robustness may clamp an index into range instead of dropping the access), except
 * workgroup-array accesses whose index provably passes (core ir/index-ranges.ts);
 * shift amounts are masked with 31; f32 -> integer conversions saturate with NaN
 * -> 0 by a bit test (drivers may assume no NaN in float compares); u32 <-> i32
 * are `bitcast`s. Integer division and remainder by zero and MIN / -1 are already
 * WGSL's rules (Tint polyfills them), which the IR adopted. Operations on constants
 * only are routed through identity functions (`rt_<type>`), because WGSL would
 * evaluate them at shader creation, where wrapping, division by zero and NaN are
 * errors instead of values.
 *
 * A buffer parameter held as several segments (`WgslOptions.segments`: the WebGPU
 * device splits a buffer past one storage binding into GPUBuffers of at most one
 * binding each) is declared as one binding per segment, `b_<name>_0` ...
 * `b_<name>_<count-1>`, all but the last of `size` 32-bit elements. Every helper
 * that touches it picks the segment by dividing the index by the segment's size in
 * view elements (a WGSL literal, so a multiply and a shift) and repeats its access
 * for each segment (WGSL cannot return a pointer into storage from a function): in one
 * `switch` arm per segment (a load may also take an if / else chain, or read every
 * segment and select: `WgslOptions.segmentLoads`; a store an if / else chain:
 * `WgslOptions.segmentStores`). Inside an `expectRange` hint whose
 * range lies in one segment, the body is emitted once per segment and its accesses go
 * to that segment directly (rangeHint). The allocation's spare element sits in the
 * last segment. Parameters without segments are emitted exactly as when no segments
 * are given.
 *
 * A kernel with barriers and `return` lowers `return` to a `done` flag: the
 * invocation skips all further work but still reaches the barriers, which is
 * what "takes no part in later barriers" means observably, and what WGSL's
 * uniformity rules allow.
 */

export interface WgslOptions {
  /** The device has the 'subgroups' feature. */
  readonly subgroups: boolean;
  /** Backend name for errors. */
  readonly backend?: string;
  /** Buffer parameters bound as several segments, by name (see the header); the others bind as one. */
  readonly segments?: Readonly<Record<string, BufferSegments>>;
  /** How a load from a segmented buffer picks its segment (WgslGenerator.segmentedLoad; default 'switch'). */
  readonly segmentLoads?: SegmentLoads;
  /** How a store to a segmented buffer picks its segment (WgslGenerator.storeHelper; default 'switch'). */
  readonly segmentStores?: SegmentStores;
  /**
   * 'use' (default): a body under an `expectRange` hint over a segmented buffer picks the
   * segment once for the range (WgslGenerator.rangeHint); 'ignore': the body is emitted
   * alone, every access picking its own segment (for probes that time the difference).
   */
  readonly rangeHints?: RangeHints;
}

/** Whether `expectRange` hints shape the WGSL (see WgslOptions.rangeHints). */
export type RangeHints = 'use' | 'ignore';

/** The forms of a load from a buffer split over bindings (see WgslGenerator.segmentedLoad). */
export type SegmentLoads = 'switch' | 'branches' | 'select';

/** The forms of a store to a buffer split over bindings (see WgslGenerator.storeHelper). */
export type SegmentStores = 'switch' | 'branches';

/** How a buffer parameter is split over bindings. */
export interface BufferSegments {
  /** Bindings (at least 2). */
  readonly count: number;
  /**
   * 32-bit elements in every segment but the last: a positive multiple of 12, so that
   * vec2, vec3 and vec4 views never straddle two segments.
   */
  readonly size: number;
}

/** One 32-bit member of the per-dispatch uniform struct. */
export type UniformSlot =
  | { readonly kind: 'uniform'; readonly param: string; readonly dtype: 'u32' | 'i32' | 'f32' }
  | { readonly kind: 'length'; readonly param: string; readonly vector: number };

export interface WgslKernel {
  readonly source: string;
  /**
   * Buffer parameters in binding order: each takes one binding, or `segments` consecutive
   * bindings when it is split (binding i = bufferParams[i] when none is).
   */
  readonly bufferParams: readonly { readonly name: string; readonly readOnly: boolean; readonly segments?: number }[];
  /** Members of the uniform struct, 4 bytes each, in order. */
  readonly uniforms: readonly UniformSlot[];
  /** The binding of the uniform struct. */
  readonly uniformBinding: number;
  /** Bytes of workgroup memory the kernel declares. */
  readonly workgroupStorageBytes: number;
}

/**
 * Which element an atomic helper's access reaches (see `WgslGenerator.atomicHelper`):
 * - 'plain': element `i` itself (the helper has checked that `i` is in range);
 * - 'clamped': `i` clamped into the array;
 * - 'spare': `i`, or an element past the logical length that nothing reads when `i` is
 *   out of range (buffers only).
 */
type AtomicIndex = 'plain' | 'clamped' | 'spare';

/** Where an atomic helper works: see `WgslGenerator.atomicHelper`. */
interface AtomicTarget {
  /**
   * The lines that run `stmt` on a pointer to the element `index` reaches: the
   * statement itself, or, on a segmented buffer, a switch over the segments with the
   * statement in each arm.
   */
  readonly access: (index: AtomicIndex, stmt: (ptr: string) => string[]) => string[];
  /** WGSL: the helper's `i` is inside the logical length. */
  readonly inRange: string;
  /** The helper's length parameter, if the length is not a constant. */
  readonly lenParam: string;
  /** The target has a spare element past its logical length (buffers, not workgroup arrays). */
  readonly spare: boolean;
}

/** The value `v` for which atomic `fn` leaves any element as it is (`x op v == x`), if one exists. */
function atomicIdentity(fn: string, t: string): string | undefined {
  switch (fn) {
    case 'add':
    case 'sub':
    case 'or':
    case 'xor':
      return `${t}(0)`;
    case 'and':
      return t === 'u32' ? '0xffffffffu' : '-1i';
    case 'min':
      return t === 'u32' ? '0xffffffffu' : '0x7fffffffi';
    case 'max':
      return t === 'u32' ? '0u' : 'bitcast<i32>(0x80000000u)';
    default:
      return undefined;
  }
}

export function generateWgsl(kernel: Kernel, options: WgslOptions): WgslKernel {
  return new WgslGenerator(kernel, options).generate();
}

/** Bytes one workgroup-array element takes (WGSL alignment rules: vec3 is padded to 16). */
export function workgroupElementBytes(type: ValueType): number {
  const { width } = typeInfo(type);
  return width === 1 ? 4 : width === 2 ? 8 : 16;
}

const I32_MIN = -2147483648;

/** WGSL subgroups have at most 128 invocations (what bounds subgroup_size and subgroup_invocation_id). */
const WGSL_MAX_SUBGROUP_SIZE = 128;

type LoopKind = 'none' | 'barrier' | 'free';
interface Ctx {
  /** The innermost enclosing loop: none, one containing a barrier, or a barrier-free one. */
  readonly loop: LoopKind;
  /** `done` may already be set here (flag mode): barrier-free code must be guarded. */
  readonly guard: boolean;
}

class WgslGenerator {
  private readonly ir: KernelIR;
  private readonly kernel: Kernel;
  private readonly backend: string;
  private readonly subgroups: boolean;
  private readonly varName = new Map<number, string>();
  private readonly bufferDecl = new Map<string, { dtype: string; access: string; vector: number }>();
  /** Buffer parameters bound as several segments. */
  private readonly segments = new Map<string, BufferSegments>();
  private readonly segmentLoads: SegmentLoads;
  private readonly segmentStores: SegmentStores;
  private readonly rangeHints: RangeHints;
  /** Segmented buffers whose segment an enclosing `expectRange` arm has fixed, by name. */
  private readonly pinned = new Map<string, number>();
  /** Hints emitted so far, to name each one's locals apart. */
  private hintCount = 0;
  private readonly arrayDecl = new Map<number, { type: ValueType; length: number; atomic: boolean }>();
  /** Helper functions, by name, emitted once each before `main`. */
  private readonly helpers = new Map<string, string>();
  /** Bounds of index expressions: workgroup accesses they prove in range go unchecked. */
  private readonly bounds: IndexBounds;
  /** Barriers and `return` together: lower `return` to the `done` flag. */
  private readonly flagMode: boolean;
  private readonly storageBarrier: boolean;

  constructor(kernel: Kernel, options: WgslOptions) {
    this.kernel = kernel;
    this.ir = kernel.ir;
    this.backend = options.backend ?? 'webgpu';
    this.subgroups = options.subgroups;
    this.segmentLoads = options.segmentLoads ?? 'switch';
    this.segmentStores = options.segmentStores ?? 'switch';
    this.rangeHints = options.rangeHints ?? 'use';
    for (const v of this.ir.vars) this.varName.set(v.id, /^[0-9]/.test(v.name) ? `v${v.name}` : v.name);
    for (const [name, decl] of this.ir.params) {
      if (decl.kind === 'buffer') this.bufferDecl.set(name, { dtype: decl.dtype, access: decl.access, vector: decl.vector });
    }
    for (const a of this.ir.workgroupArrays) this.arrayDecl.set(a.id, { type: a.type, length: a.length, atomic: a.atomic === true });
    for (const [name, seg] of Object.entries(options.segments ?? {})) {
      const d = this.bufferDecl.get(name);
      if (!d) throw new KernelBuildError(this.ir.name, `segments given for '${name}', which is not a buffer parameter`);
      if (!Number.isSafeInteger(seg.count) || !Number.isSafeInteger(seg.size) || seg.size <= 0 || seg.size % 12 !== 0) {
        throw new KernelBuildError(this.ir.name, `segments of '${name}': size ${seg.size} is not a positive multiple of 12`);
      }
      if (seg.count < 2) continue;
      for (let k = 0; k < seg.count; k++) {
        if (this.bufferDecl.has(`${name}_${k}`)) {
          throw new KernelBuildError(this.ir.name, `segment binding b_${name}_${k} would clash with buffer parameter '${name}_${k}'`);
        }
      }
      this.segments.set(name, seg);
    }
    this.bounds = new IndexBounds(this.ir, WGSL_MAX_SUBGROUP_SIZE);
    let hasReturn = false;
    walkStmts(this.ir.body, (s) => {
      if (s.op === 'return') hasReturn = true;
    });
    this.flagMode = hasReturn && containsBarrier(this.ir.body);
    // Barriers order workgroup memory; where invocations may also exchange data
    // through a storage buffer they both read and write, order that too, as the
    // CPU backend's phases do.
    this.storageBarrier = [...this.bufferDecl.values()].some((b) => b.access === 'read_write' || b.access === 'atomic');
  }

  generate(): WgslKernel {
    const ir = this.ir;
    if (this.kernel.info.classes.has('subgroup') && !this.subgroups) {
      throw new UnsupportedFeatureError(this.backend, 'subgroup', ir.name, "the adapter lacks the WebGPU 'subgroups' feature");
    }
    const body = this.block(ir.body, '  ', { loop: 'none', guard: false });

    const bufferParams: Array<{ name: string; readOnly: boolean; segments?: number }> = [];
    const uniforms: UniformSlot[] = [];
    const bindings: string[] = [];
    for (const [name, decl] of ir.params) {
      if (decl.kind === 'uniform') uniforms.push({ kind: 'uniform', param: name, dtype: decl.dtype });
    }
    for (const [name, decl] of ir.params) {
      if (decl.kind !== 'buffer') continue;
      const access = decl.access === 'read' ? 'read' : 'read_write';
      const seg = this.segments.get(name);
      uniforms.push({ kind: 'length', param: name, vector: decl.vector });
      if (seg) {
        bufferParams.push({ name, readOnly: decl.access === 'read', segments: seg.count });
        for (let k = 0; k < seg.count; k++) {
          const binding = bindings.length;
          bindings.push(`@group(0) @binding(${binding}) var<storage, ${access}> b_${name}_${k}: array<${this.storageElement(name)}>;`);
        }
        continue;
      }
      const binding = bindings.length;
      bufferParams.push({ name, readOnly: decl.access === 'read' });
      bindings.push(`@group(0) @binding(${binding}) var<storage, ${access}> b_${name}: array<${this.storageElement(name)}>;`);
    }
    const uniformBinding = bindings.length;
    const members = uniforms.map((u) => (u.kind === 'uniform' ? `  u_${u.param}: ${u.dtype},` : `  len_${u.param}: u32,`));
    if (members.length === 0) members.push('  pad: u32,');

    let workgroupStorageBytes = 0;
    const wgDecls: string[] = [];
    for (const a of ir.workgroupArrays) {
      workgroupStorageBytes += workgroupElementBytes(a.type) * a.length;
      wgDecls.push(`var<workgroup> wg_${a.id}: array<${a.atomic ? `atomic<${a.type}>` : a.type}, ${a.length}>;`);
    }

    const usesSubgroups = this.kernel.info.classes.has('subgroup');
    const out: string[] = [];
    out.push(`// Trident kernel '${ir.name}' (generated WGSL, workgroup size ${ir.workgroupSize})`);
    if (usesSubgroups) {
      out.push('enable subgroups;');
      // Subgroup operations after an early return or in a guarded branch run over
      // the active invocations, which is what the IR means; WGSL would reject them.
      out.push('diagnostic(off, subgroup_uniformity);');
    }
    out.push('', 'struct Params {', ...members, '}', '');
    out.push(...bindings, `@group(0) @binding(${uniformBinding}) var<uniform> P: Params;`);
    if (wgDecls.length) out.push('', ...wgDecls);
    for (const h of this.helpers.values()) out.push('', h);

    const entry = [
      '@builtin(workgroup_id) wid: vec3<u32>',
      '@builtin(num_workgroups) nwg3: vec3<u32>',
      '@builtin(local_invocation_index) lid: u32',
      '@builtin(local_invocation_id) lid3: vec3<u32>',
    ];
    if (usesSubgroups) entry.push('@builtin(subgroup_size) sg_size: u32', '@builtin(subgroup_invocation_id) sg_id: u32');
    const [sx, sy, sz] = workgroupShapeOf(ir);
    const size = sy === 1 && sz === 1 ? `${sx}` : `${sx}, ${sy}, ${sz}`;
    out.push('', `@compute @workgroup_size(${size})`, `fn main(${entry.join(', ')}) {`);
    out.push('  // The linear ids: a 1-D grid past the per-dimension limit folds into y and z (globalId, localId,');
    out.push('  // workgroupId and workgroupCount are the built-ins themselves).');
    out.push('  let wgi = wid.x + wid.y * nwg3.x + wid.z * nwg3.x * nwg3.y;');
    out.push('  let nwg = nwg3.x * nwg3.y * nwg3.z;');
    out.push(`  let gid = wgi * ${ir.workgroupSize}u + lid;`);
    // Uniforms and lengths read once into registers, passed to the bounds-checking helpers.
    for (const u of uniforms) {
      out.push(u.kind === 'uniform' ? `  let u_${u.param} = P.u_${u.param};` : `  let len_${u.param} = P.len_${u.param};`);
    }
    for (const v of ir.vars) out.push(`  var ${this.name(v.id)}: ${v.type};`);
    // Private arrays: function-scope, zero-initialised per invocation by WGSL.
    for (const a of ir.privateArrays ?? []) out.push(`  var pa_${a.id}: array<${a.type}, ${a.length}>;`);
    if (this.flagMode) out.push('  var done = false;');
    if (body) out.push(body);
    out.push('}', '');
    return { source: out.join('\n'), bufferParams, uniforms, uniformBinding, workgroupStorageBytes };
  }

  private storageElement(name: string): string {
    const d = this.decl(name);
    // f32 has no WGSL atomics: its bits live in atomic<u32> (add is a compare-exchange loop).
    if (d.access === 'atomic') return `atomic<${d.dtype === 'f32' ? 'u32' : d.dtype}>`;
    return d.vector === 1 || d.vector === 3 ? d.dtype : `vec${d.vector}<${d.dtype}>`;
  }

  private decl(name: string): { dtype: string; access: string; vector: number } {
    const d = this.bufferDecl.get(name);
    if (!d) throw new KernelBuildError(this.ir.name, `unknown buffer '${name}'`);
    return d;
  }

  private name(id: number): string {
    const n = this.varName.get(id);
    if (n === undefined) throw new KernelBuildError(this.ir.name, `internal: unknown variable ${id}`);
    return n;
  }

  // ---------- statements ----------

  private block(stmts: readonly Stmt[], ind: string, ctx: Ctx): string {
    if (!this.flagMode || ctx.loop === 'free') {
      // Plain lowering; inside a barrier-free loop, flag mode leaves the loop at once after a return.
      const out: string[] = [];
      for (const s of stmts) {
        out.push(this.stmt(s, ind, ctx));
        if (this.flagMode && ctx.loop === 'free' && s.op !== 'return' && mayReturn(s)) out.push(`${ind}if (done) { break; }`);
      }
      return join(out);
    }
    // Flag mode outside barrier-free loops: once `done` may be set, barrier-free
    // statements run under `if (!done)`, and barriers are still reached by all.
    const out: string[] = [];
    let guard = ctx.guard;
    let run: string[] = [];
    const endRun = () => {
      if (run.length) out.push(`${ind}if (!done) {`, ...run, `${ind}}`);
      run = [];
    };
    for (const s of stmts) {
      const barrier = containsBarrier([s]);
      if (guard && !barrier) {
        run.push(this.stmt(s, `${ind}  `, ctx));
      } else {
        endRun();
        out.push(this.stmt(s, ind, { ...ctx, guard }));
      }
      if (mayReturn(s)) guard = true;
    }
    endRun();
    return join(out);
  }

  private stmt(s: Stmt, ind: string, ctx: Ctx): string {
    switch (s.op) {
      case 'let':
        return `${ind}${this.name(s.id)} = ${this.expr(s.init)};`;
      case 'assign':
        return `${ind}${this.name(s.id)} = ${this.expr(s.value)};`;
      case 'store':
        return `${ind}${this.pinnedHelper(s.buffer, 'store')}(${this.index(s.index)}, ${this.expr(s.value)}, len_${s.buffer});`;
      case 'wgStore':
        if (this.bounds.within(s.index, this.array(s.array).length))
          return `${ind}wg_${s.array}[${this.index(s.index)}] = ${this.expr(s.value)};`;
        return `${ind}${this.wgStoreHelper(s.array)}(${this.index(s.index)}, ${this.expr(s.value)});`;
      case 'privStore': {
        const n = this.privateLength(s.array);
        return `${ind}{ let i_ = ${this.index(s.index)}; if (i_ < ${n}u) { pa_${s.array}[i_] = ${this.expr(s.value)}; } }`;
      }
      case 'eval':
        // Helper calls (atomics) may stand as statements; anything else is evaluated for nothing.
        return s.expr.op === 'atomic' || s.expr.op === 'wgAtomic' ? `${ind}${this.expr(s.expr)};` : `${ind}_ = ${this.expr(s.expr)};`;
      case 'if': {
        const parts = [`${ind}if (${this.expr(s.cond)}) {`, this.block(s.thenBlock, `${ind}  `, ctx)];
        if (s.elseBlock.length) parts.push(`${ind}} else {`, this.block(s.elseBlock, `${ind}  `, ctx));
        parts.push(`${ind}}`);
        return join(parts);
      }
      case 'loop': {
        for (const u of s.update) {
          walkStmts([u], (x) => {
            if (x.op === 'break' || x.op === 'continue' || x.op === 'return') {
              throw new UnsupportedFeatureError(
                this.backend,
                'loop',
                this.ir.name,
                `'${x.op}' in a loop's update step (WGSL forbids it there)`,
              );
            }
          });
        }
        const barrier = containsBarrier([s]);
        const loop: LoopKind = barrier ? 'barrier' : 'free';
        // In a barrier loop the loop control is run by every invocation, done or not.
        const control: Ctx = { loop, guard: false };
        const bodyCtx: Ctx = { loop, guard: ctx.guard || (this.flagMode && mayReturn(s)) };
        const parts = [
          `${ind}loop {`,
          this.block(s.condPrelude, `${ind}  `, control),
          `${ind}  if (!(${this.expr(s.cond)})) { break; }`,
          this.block(s.body, `${ind}  `, bodyCtx),
        ];
        const update = this.block(s.update, `${ind}    `, control);
        if (update) parts.push(`${ind}  continuing {`, update, `${ind}  }`);
        parts.push(`${ind}}`);
        return join(parts);
      }
      case 'expectRange':
        return this.rangeHint(s, ind, ctx);
      case 'break':
        return `${ind}break;`;
      case 'continue':
        return `${ind}continue;`;
      case 'return':
        if (!this.flagMode) return `${ind}return;`;
        return ctx.loop === 'free' ? `${ind}done = true;\n${ind}break;` : `${ind}done = true;`;
      case 'barrier':
        return this.storageBarrier && !s.workgroupOnly ? `${ind}storageBarrier();\n${ind}workgroupBarrier();` : `${ind}workgroupBarrier();`;
    }
  }

  // ---------- expressions ----------

  /** An index as u32: negative i32 indices become huge and fail the bounds check. */
  private index(e: Expr): string {
    return e.type === 'i32' ? `bitcast<u32>(${this.expr(e)})` : this.expr(e);
  }

  private expr(e: Expr, opaque = false): string {
    // Operations on constants alone would be evaluated at shader creation (see the header).
    const rt = opaque || (e.op !== 'const' && isConstTree(e));
    const sub = (x: Expr) => this.expr(x, rt);
    switch (e.op) {
      case 'const':
        return this.constant(e.type, e.value, opaque);
      case 'uniform':
        return `u_${e.name}`;
      case 'builtin':
        switch (e.name) {
          case 'globalIndex':
            return 'gid';
          case 'localIndex':
            return 'lid';
          case 'workgroupIndex':
            return 'wgi';
          case 'workgroupSize':
            // A literal, so a constant for WGSL's shader-creation folding too (isConstTree).
            return opaque ? `${this.runtimeHelper('u32')}(${this.ir.workgroupSize}u)` : `${this.ir.workgroupSize}u`;
          case 'numWorkgroups':
            return 'nwg';
          case 'subgroupSize':
            return 'sg_size';
          case 'subgroupInvocation':
            return 'sg_id';
          case 'globalId':
            return `(wid * vec3<u32>(${workgroupShapeOf(this.ir)
              .map((d) => `${d}u`)
              .join(', ')}) + lid3)`;
          case 'localId':
            return 'lid3';
          case 'workgroupId':
            return 'wid';
          case 'workgroupCount':
            return 'nwg3';
        }
        break;
      case 'var':
        return this.name(e.id);
      case 'unary':
        if (e.fn === 'not') return `(!${sub(e.a)})`;
        if (e.fn === 'bitnot') return `(~${sub(e.a)})`;
        // Runtime i32 negation wraps (-MIN == MIN), as the IR says.
        return `(-(${sub(e.a)}))`;
      case 'binary':
        return this.binary(e.fn, e.a, e.b, rt);
      case 'call':
        if (e.fn === 'sin' || e.fn === 'cos') return `${this.trigHelper(e.type, e.fn)}(${e.args.map(sub).join(', ')})`;
        return `${e.fn}(${e.args.map(sub).join(', ')})`;
      case 'select':
        // WGSL's select(ifFalse, ifTrue, cond) evaluates both sides, as the IR does.
        return `select(${sub(e.ifFalse)}, ${sub(e.ifTrue)}, ${sub(e.cond)})`;
      case 'convert':
        return this.convert(e.a, e.type, rt);
      case 'bitcast':
        return `bitcast<${e.type}>(${sub(e.a)})`;
      case 'load':
        return `${this.pinnedHelper(e.buffer, 'load')}(${this.index(e.index)}, len_${e.buffer})`;
      case 'length':
        return `len_${e.buffer}`;
      case 'atomic':
        return this.atomic(e);
      case 'wgAtomic':
        return this.wgAtomic(e);
      case 'wgLoad':
        if (this.bounds.within(e.index, this.array(e.array).length)) return `wg_${e.array}[${this.index(e.index)}]`;
        return `${this.wgLoadHelper(e.array)}(${this.index(e.index)})`;
      case 'privLoad': {
        // Function-scope arrays cannot be passed to helpers by value cheaply: inline the
        // bounds check, clamping the index so the access itself stays in range.
        const n = this.privateLength(e.array);
        const i = this.index(e.index);
        return `select(${e.type}(), pa_${e.array}[min(${i}, ${n - 1}u)], ${i} < ${n}u)`;
      }
      case 'subgroup':
        return this.subgroup(e.fn, e.a, e.lane);
      case 'construct':
        return `${e.type}(${e.args.map(sub).join(', ')})`;
      case 'extract':
        return `(${sub(e.a)}).${'xyzw'[e.component]}`;
    }
    throw new KernelBuildError(this.ir.name, `internal: unknown expression ${(e as Expr).op}`);
  }

  private constant(type: ValueType, value: number | boolean | readonly number[], opaque: boolean): string {
    const { scalar, width } = typeInfo(type);
    let code: string;
    if (typeof value === 'boolean') code = String(value);
    else if (typeof value === 'number') code = this.scalarLiteral(scalar, value);
    else code = `${type}(${value.map((v) => this.scalarLiteral(scalar, v)).join(', ')})`;
    void width;
    return opaque ? `${this.runtimeHelper(type)}(${code})` : code;
  }

  private scalarLiteral(scalar: string, v: number | boolean): string {
    if (typeof v === 'boolean') return String(v);
    switch (scalar) {
      case 'u32':
        return `${v >>> 0}u`;
      case 'i32':
        if (v === I32_MIN) return 'i32(-2147483648)';
        return v < 0 ? `(${v}i)` : `${v}i`;
      case 'f32': {
        // No NaN or infinity literals, and a constant NaN or infinity is a creation
        // error: build them from bits at run time. -0 likewise keeps its sign bit.
        if (Number.isNaN(v)) return `bitcast<f32>(${this.runtimeHelper('u32')}(0x7fc00000u))`;
        if (v === Number.POSITIVE_INFINITY) return `bitcast<f32>(${this.runtimeHelper('u32')}(0x7f800000u))`;
        if (v === Number.NEGATIVE_INFINITY) return `bitcast<f32>(${this.runtimeHelper('u32')}(0xff800000u))`;
        if (Object.is(v, -0)) return 'bitcast<f32>(0x80000000u)';
        // The shortest decimal of the (f32-valued) double parses back to the same f32.
        return v < 0 ? `(${v}f)` : `${v}f`;
      }
      default:
        return String(v);
    }
  }

  private binary(fn: BinaryFn, a: Expr, b: Expr, rt: boolean): string {
    const scalar = typeInfo(a.type).scalar;
    const x = this.expr(a, rt);
    // A constant zero divisor is a shader-creation error in WGSL; at run time it is defined.
    const zeroDivisor = (fn === 'div' || fn === 'rem') && scalar !== 'f32' && b.op === 'const' && isZeroConst(b.value);
    const y = this.expr(b, rt || zeroDivisor);
    switch (fn) {
      case 'add':
        return `(${x} + ${y})`;
      case 'sub':
        return `(${x} - ${y})`;
      case 'mul':
        return `(${x} * ${y})`;
      case 'div':
        return `(${x} / ${y})`;
      case 'rem':
        return `(${x} % ${y})`;
      case 'and':
        // On bools `&` evaluates both operands, as the IR does.
        return `(${x} & ${y})`;
      case 'or':
        return `(${x} | ${y})`;
      case 'xor':
        return scalar === 'bool' ? `(${x} != ${y})` : `(${x} ^ ${y})`;
      case 'shl':
      case 'shr': {
        const { width } = typeInfo(a.type);
        const mask = width === 1 ? '31u' : `vec${width}<u32>(31u)`;
        return `(${x} ${fn === 'shl' ? '<<' : '>>'} (${y} & ${mask}))`;
      }
      case 'eq':
        return `(${x} == ${y})`;
      case 'ne':
        return `(${x} != ${y})`;
      case 'lt':
        return `(${x} < ${y})`;
      case 'le':
        return `(${x} <= ${y})`;
      case 'gt':
        return `(${x} > ${y})`;
      case 'ge':
        return `(${x} >= ${y})`;
    }
  }

  private convert(a: Expr, to: ValueType, rt: boolean): string {
    const from = typeInfo(a.type).scalar;
    const target = typeInfo(to).scalar;
    const x = this.expr(a, rt);
    if (from === target) return x;
    if (from === 'bool' || target === 'bool') return `${to}(${x})`; // bool -> 0/1; number -> (x != 0)
    if (target === 'f32') return `${this.intToFloatHelper(a.type, to)}(${x})`;
    if (from !== 'f32') return `bitcast<${to}>(${x})`; // u32 <-> i32 keep the bits
    return `${this.floatToIntHelper(a.type, to)}(${x})`;
  }

  private subgroup(fn: string, a: Expr, lane: Expr | undefined): string {
    const x = this.expr(a);
    switch (fn) {
      case 'add':
        return `subgroupAdd(${x})`;
      case 'min':
        return `subgroupMin(${x})`;
      case 'max':
        return `subgroupMax(${x})`;
      case 'inclusiveAdd':
        return `subgroupInclusiveAdd(${x})`;
      case 'exclusiveAdd':
        return `subgroupExclusiveAdd(${x})`;
      case 'broadcastFirst':
        return `subgroupBroadcastFirst(${x})`;
      case 'shuffle':
        return `subgroupShuffle(${x}, ${this.expr(lane as Expr)})`;
      case 'ballot':
        return `subgroupBallot(${x})`;
      default:
        throw new KernelBuildError(this.ir.name, `internal: unknown subgroup op ${fn}`);
    }
  }

  private atomic(e: Extract<Expr, { op: 'atomic' }>): string {
    const t = this.decl(e.buffer).dtype;
    const name = `atomic_${e.fn}_${e.buffer}`;
    const buffer = e.buffer;
    const array = `b_${buffer}`;
    // The logical length travels as an argument (see the header); the element at the
    // logical length is the allocation's spare one (webgpu-buffer.ts), inside the binding
    // (of the last segment, where the buffer is split).
    const target: AtomicTarget = {
      access: (index, stmt) => {
        if (!this.segments.has(buffer)) {
          const i = index === 'clamped' ? `min(i, arrayLength(&${array}) - 1u)` : index === 'spare' ? 'min(i, len)' : 'i';
          return stmt(`&${array}[${i}]`);
        }
        // 'plain' runs in range only, so its segment needs no clamp; the others may be past the last.
        return this.segmentSwitch(buffer, index === 'spare' ? 'min(i, len)' : 'i', index !== 'plain', (seg) =>
          stmt(index === 'clamped' ? `&${seg}[min(j, arrayLength(&${seg}) - 1u)]` : `&${seg}[j]`),
        );
      },
      inRange: 'i < len',
      lenParam: ', len: u32',
      spare: true,
    };
    if (t === 'f32') this.f32AtomicHelper(name, e.fn, target);
    else this.atomicHelper(name, e.fn, t, target);
    return this.atomicCall(name, e, `, len_${e.buffer}`);
  }

  /** Atomics on an atomic workgroup array: bounds from its declared length, no spare element. */
  private wgAtomic(e: Extract<Expr, { op: 'wgAtomic' }>): string {
    const a = this.array(e.array);
    if (!a.atomic) throw new KernelBuildError(this.ir.name, `internal: workgroup array ${e.array} is not atomic`);
    // An index proven in range needs no helper (compare-exchange keeps its retry loop).
    if (e.fn !== 'compareExchange' && this.bounds.within(e.index, a.length)) {
      const at = `&wg_${e.array}[${this.index(e.index)}]`;
      const builtin = `atomic${e.fn[0]?.toUpperCase()}${e.fn.slice(1)}`;
      return e.fn === 'load' ? `${builtin}(${at})` : `${builtin}(${at}, ${this.expr(e.value)})`;
    }
    const name = `wgatomic_${e.fn}_${e.array}`;
    const target: AtomicTarget = {
      access: (index, stmt) => stmt(`&wg_${e.array}[${index === 'clamped' ? `min(i, ${a.length - 1}u)` : 'i'}]`),
      inRange: `i < ${a.length}u`,
      lenParam: '',
      spare: false,
    };
    this.atomicHelper(name, e.fn, a.type, target);
    return this.atomicCall(name, e, '');
  }

  private atomicCall(name: string, e: Extract<Expr, { op: 'atomic' | 'wgAtomic' }>, tail: string): string {
    const i = this.index(e.index);
    if (e.fn === 'load') return `${name}(${i}${tail})`;
    if (e.fn === 'compareExchange') return `${name}(${i}, ${this.expr(e.compare as Expr)}, ${this.expr(e.value)}${tail})`;
    return `${name}(${i}, ${this.expr(e.value)}${tail})`;
  }

  /** add, load and store on an f32 atomic buffer, its bits held in atomic<u32> (forms as in atomicHelper). */
  private f32AtomicHelper(name: string, fn: string, target: AtomicTarget): void {
    const { access, inRange } = target;
    switch (fn) {
      case 'load':
        this.helper(
          name,
          fnLines(
            `fn ${name}(i: u32, len: u32) -> f32 {`,
            access('clamped', (p) => [`return select(0.0, bitcast<f32>(atomicLoad(${p})), ${inRange});`]),
          ),
        );
        return;
      case 'store':
        this.helper(
          name,
          fnLines(
            `fn ${name}(i: u32, v: f32, len: u32) {`,
            access('spare', (p) => [`atomicStore(${p}, bitcast<u32>(v));`]),
          ),
        );
        return;
      case 'add':
        // Read, add, and publish the sum only if the bits are unchanged; otherwise retry
        // from the value another invocation left (a weak compare-exchange may also fail spuriously).
        this.helper(
          name,
          fnLines(`fn ${name}(i: u32, v: f32, len: u32) -> f32 {`, [
            `if (!(${inRange})) { return 0.0; }`,
            ...access('plain', (p) => [
              `var old = atomicLoad(${p});`,
              'loop {',
              `  let r = atomicCompareExchangeWeak(${p}, old, bitcast<u32>(bitcast<f32>(old) + v));`,
              '  if (r.exchanged) { return bitcast<f32>(old); }',
              '  old = r.old_value;',
              '}',
            ]),
          ]),
        );
        return;
      default:
        throw new KernelBuildError(this.ir.name, `internal: f32 atomic ${fn}`);
    }
  }

  /**
   * A helper `name` doing atomic `fn` on the element `i` of `target` when `i` is in range,
   * without a branch around the atomic where a form without one exists. On the H100 a
   * branch around each atomic load kept NVIDIA's compiler from issuing a look-back's
   * loads together (scan of 2^28 u32: 1.023 ms with the branches, 0.886 without), and a
   * branch around the look-back's status stores cost as much again (1.008 ms guarded in
   * the helper, 1.104 guarded at the call site, 0.886 with the index clamped; bench/h100/
   * scan-check.ts --raw). So:
   * - loads read the element clamped into the array and keep the value only in range;
   * - stores and read-modify-writes on a buffer go to the spare element past the logical
   *   length when out of range (`target.spare`), where nothing reads them, and an RMW
   *   returns its old value only in range;
   * - read-modify-writes on a workgroup array (no spare element) apply their identity
   *   (x + 0, x | 0, min(x, MAX) ...) to the clamped element when out of range;
   * - what has no such form (workgroup store and exchange, compare-exchange's loop) keeps
   *   the guard.
   */
  private atomicHelper(name: string, fn: string, t: string, target: AtomicTarget): void {
    const { access, inRange, lenParam, spare } = target;
    if (fn === 'load') {
      this.helper(
        name,
        fnLines(
          `fn ${name}(i: u32${lenParam}) -> ${t} {`,
          access('clamped', (p) => [`return select(${t}(), atomicLoad(${p}), ${inRange});`]),
        ),
      );
      return;
    }
    if (fn === 'store') {
      const store = spare
        ? access('spare', (p) => [`atomicStore(${p}, v);`])
        : access('plain', (p) => [`if (${inRange}) { atomicStore(${p}, v); }`]);
      this.helper(name, fnLines(`fn ${name}(i: u32, v: ${t}${lenParam}) {`, store));
      return;
    }
    if (fn === 'compareExchange') {
      // WGSL only has the weak form, which may fail spuriously: retry until the
      // element differs from `expected` or the exchange happened (a strong CAS).
      this.helper(
        name,
        fnLines(`fn ${name}(i: u32, expected: ${t}, v: ${t}${lenParam}) -> ${t} {`, [
          `if (!(${inRange})) { return ${t}(); }`,
          ...access('plain', (p) => [
            'loop {',
            `  let r = atomicCompareExchangeWeak(${p}, expected, v);`,
            '  if (r.exchanged || r.old_value != expected) { return r.old_value; }',
            '}',
          ]),
        ]),
      );
      return;
    }
    const builtin = `atomic${fn[0]?.toUpperCase()}${fn.slice(1)}`;
    const identity = atomicIdentity(fn, t);
    let body: string[];
    if (spare) body = access('spare', (p) => [`return select(${t}(), ${builtin}(${p}, v), ${inRange});`]);
    else if (identity)
      body = access('clamped', (p) => [`return select(${t}(), ${builtin}(${p}, select(${identity}, v, ${inRange})), ${inRange});`]);
    else body = [...access('plain', (p) => [`if (${inRange}) { return ${builtin}(${p}, v); }`]), `return ${t}();`];
    this.helper(name, fnLines(`fn ${name}(i: u32, v: ${t}${lenParam}) -> ${t} {`, body));
  }

  /**
   * The lines of a switch over the segments of `buffer` (see the header): `s` is the
   * segment of element `index` (clamped to the last one where `clamp`, for indices that
   * may be out of range), `j` its index within that segment, and each arm runs
   * `arm(<the segment's binding>)`. The last segment is the default arm.
   */
  private segmentSwitch(buffer: string, index: string, clamp: boolean, arm: (segment: string) => string[]): string[] {
    const seg = this.segments.get(buffer);
    if (!seg) throw new KernelBuildError(this.ir.name, `internal: buffer '${buffer}' is not segmented`);
    // Segment sizes in view elements: a multiple of 12 scalars divides by every view width.
    const per = `${seg.size / this.decl(buffer).vector}u`;
    const lines: string[] = [];
    let at = index;
    if (index !== 'i') {
      lines.push(`let e = ${index};`);
      at = 'e';
    }
    lines.push(clamp ? `let s = min(${at} / ${per}, ${seg.count - 1}u);` : `let s = ${at} / ${per};`);
    lines.push(`let j = ${at} - s * ${per};`, 'switch s {');
    for (let k = 0; k < seg.count; k++) {
      const label = k === seg.count - 1 ? 'default' : `case ${k}u`;
      const body = arm(`b_${buffer}_${k}`);
      if (body.length === 1) lines.push(`  ${label}: { ${body[0]} }`);
      else lines.push(`  ${label}: {`, ...body.map((l) => `    ${l}`), '  }');
    }
    lines.push('}');
    return lines;
  }

  /**
   * The lines of an if / else-if chain over the segments of a buffer (the 'branches' forms):
   * `s` is the segment of element `i`, `j` its index there, and branch k runs `arm(k)`
   * (the last segment's is the final else).
   */
  private segmentChain(buffer: string, arm: (k: number) => string): string[] {
    const seg = this.segments.get(buffer);
    if (!seg) throw new KernelBuildError(this.ir.name, `internal: buffer '${buffer}' is not segmented`);
    const per = `${seg.size / this.decl(buffer).vector}u`;
    const last = seg.count - 1;
    const chain = [`let s = i / ${per};`, `let j = i - s * ${per};`];
    for (let k = 0; k < last; k++) chain.push(`${k === 0 ? 'if' : '} else if'} (s == ${k}u) {`, `  ${arm(k)}`);
    chain.push('} else {', `  ${arm(last)}`, '}');
    return chain;
  }

  /**
   * A body under an `expectRange` hint. Where the buffer is segmented and the range's first
   * and last elements share a segment, the body runs in that segment's switch arm, where its
   * accesses to the buffer go straight to the segment's binding (pinnedHelper); otherwise, or
   * unsegmented, it runs as written. The body is emitted once per segment and once more.
   */
  private rangeHint(s: Extract<Stmt, { op: 'expectRange' }>, ind: string, ctx: Ctx): string {
    const seg = this.segments.get(s.buffer);
    if (!seg || this.rangeHints === 'ignore' || this.pinned.has(s.buffer)) return this.block(s.body, ind, ctx);
    const per = `${seg.size / this.decl(s.buffer).vector}u`;
    const h = this.hintCount++;
    const lines = [
      `${ind}{`,
      `${ind}  let hs_${h} = ${this.index(s.first)} / ${per};`,
      `${ind}  if (${this.index(s.last)} / ${per} == hs_${h}) {`,
      `${ind}    switch min(hs_${h}, ${seg.count - 1}u) {`,
    ];
    for (let k = 0; k < seg.count; k++) {
      this.pinned.set(s.buffer, k);
      lines.push(
        `${ind}      ${k === seg.count - 1 ? 'default' : `case ${k}u`}: {`,
        this.block(s.body, `${ind}        `, ctx),
        `${ind}      }`,
      );
    }
    this.pinned.delete(s.buffer);
    lines.push(`${ind}    }`, `${ind}  } else {`, this.block(s.body, `${ind}    `, ctx), `${ind}  }`, `${ind}}`);
    return join(lines);
  }

  /**
   * The load or store helper for `buffer` at this point of the program: inside an
   * `expectRange` arm that fixed its segment, one that reaches that segment's binding
   * directly when the element lies there and falls back to the general helper when not
   * (a hint is not a promise); the general helper elsewhere.
   */
  private pinnedHelper(buffer: string, kind: 'load' | 'store'): string {
    const general = kind === 'load' ? this.loadHelper(buffer) : this.storeHelper(buffer);
    const k = this.pinned.get(buffer);
    const seg = this.segments.get(buffer);
    if (k === undefined || !seg) return general;
    const d = this.decl(buffer);
    const t = this.elementType(buffer);
    const per = seg.size / d.vector;
    const base = `${k * per}u`;
    const a = `b_${buffer}_${k}`;
    // j < span and i < len: the element lies in this segment (j wraps past span when i < base).
    const span = k === seg.count - 1 ? 'len - min(len, base)' : `${per}u`;
    const head = [`let base = ${base};`, `let j = i - base;`, `let span = ${span};`];
    const name = `${kind === 'load' ? 'ld' : 'st'}_${buffer}_in${k}`;
    if (kind === 'load') {
      const value = d.vector === 3 ? `${t}(${a}[3u * j], ${a}[3u * j + 1u], ${a}[3u * j + 2u])` : `${a}[j]`;
      this.helper(
        name,
        fnLines(`fn ${name}(i: u32, len: u32) -> ${t} {`, [
          ...head,
          `if (j < span && i < len) { return ${value}; }`,
          `return ${general}(i, len);`,
        ]),
      );
    } else {
      const write = d.vector === 3 ? `${a}[3u * j] = v.x; ${a}[3u * j + 1u] = v.y; ${a}[3u * j + 2u] = v.z;` : `${a}[j] = v;`;
      this.helper(
        name,
        fnLines(`fn ${name}(i: u32, v: ${t}, len: u32) {`, [
          ...head,
          `if (j < span && i < len) { ${write} } else { ${general}(i, v, len); }`,
        ]),
      );
    }
    return name;
  }

  // ---------- helper functions ----------

  private helper(name: string, code: string): void {
    if (!this.helpers.has(name)) this.helpers.set(name, code);
  }

  private elementType(buffer: string): string {
    const d = this.decl(buffer);
    return d.vector === 1 ? d.dtype : `vec${d.vector}<${d.dtype}>`;
  }

  private loadHelper(buffer: string): string {
    const d = this.decl(buffer);
    const t = this.elementType(buffer);
    const name = `ld_${buffer}`;
    const value = (a: string, i: string) =>
      d.vector === 3 ? `${t}(${a}[3u * ${i}], ${a}[3u * ${i} + 1u], ${a}[3u * ${i} + 2u])` : `${a}[${i}]`;
    const seg = this.segments.get(buffer);
    if (seg) {
      this.helper(name, fnLines(`fn ${name}(i: u32, len: u32) -> ${t} {`, this.segmentedLoad(buffer, seg, t, value)));
      return name;
    }
    this.helper(
      name,
      `fn ${name}(i: u32, len: u32) -> ${t} {\n  if (i < len) { return ${value(`b_${buffer}`, 'i')}; }\n  return ${t}();\n}`,
    );
    return name;
  }

  /**
   * The body of a load helper over a segmented buffer, in the form `options.segmentLoads` names:
   * - 'switch': a switch arm per segment, each returning its load;
   * - 'branches': an if / else-if chain, each returning its load;
   * - 'select': every segment read (at element 0 where the element lies in another: one address
   *   for the other lanes of a subgroup) and the right value selected, no branch between loads.
   */
  private segmentedLoad(buffer: string, seg: BufferSegments, t: string, value: (a: string, i: string) => string): string[] {
    const form = this.segmentLoads;
    const per = `${seg.size / this.decl(buffer).vector}u`;
    const last = seg.count - 1;
    if (form === 'select') {
      // An index past the length reads element 0 (and returns zero): every index read is in range.
      const lines = ['let ok = i < len;', 'let e = select(0u, i, ok);', `let s = min(e / ${per}, ${last}u);`, `let j = e - s * ${per};`];
      const at = (k: number) => `select(0u, j, s == ${k}u)`;
      lines.push(`var v = ${value(`b_${buffer}_${last}`, at(last))};`);
      for (let k = 0; k < last; k++) lines.push(`v = select(v, ${value(`b_${buffer}_${k}`, at(k))}, s == ${k}u);`);
      return [...lines, `return select(${t}(), v, ok);`];
    }
    if (form === 'branches') {
      const chain = this.segmentChain(buffer, (k) => `return ${value(`b_${buffer}_${k}`, 'j')};`);
      return ['if (i < len) {', ...indent(chain), '}', `return ${t}();`];
    }
    const arms = this.segmentSwitch(buffer, 'i', false, (a) => [`return ${value(a, 'j')};`]);
    return ['if (i < len) {', ...indent(arms), '}', `return ${t}();`];
  }

  private storeHelper(buffer: string): string {
    const d = this.decl(buffer);
    const t = this.elementType(buffer);
    const name = `st_${buffer}`;
    const body = (a: string, i: string) =>
      d.vector === 3 ? `${a}[3u * ${i}] = v.x; ${a}[3u * ${i} + 1u] = v.y; ${a}[3u * ${i} + 2u] = v.z;` : `${a}[${i}] = v;`;
    const seg = this.segments.get(buffer);
    if (seg) {
      const arms =
        this.segmentStores === 'branches'
          ? this.segmentChain(buffer, (k) => body(`b_${buffer}_${k}`, 'j'))
          : this.segmentSwitch(buffer, 'i', false, (a) => [body(a, 'j')]);
      this.helper(name, fnLines(`fn ${name}(i: u32, v: ${t}, len: u32) {`, ['if (i < len) {', ...indent(arms), '}']));
      return name;
    }
    this.helper(name, `fn ${name}(i: u32, v: ${t}, len: u32) {\n  if (i < len) { ${body(`b_${buffer}`, 'i')} }\n}`);
    return name;
  }

  private wgLoadHelper(array: number): string {
    const a = this.array(array);
    const name = `wgld_${array}`;
    this.helper(name, `fn ${name}(i: u32) -> ${a.type} {\n  if (i < ${a.length}u) { return wg_${array}[i]; }\n  return ${a.type}();\n}`);
    return name;
  }

  private wgStoreHelper(array: number): string {
    const a = this.array(array);
    const name = `wgst_${array}`;
    this.helper(name, `fn ${name}(i: u32, v: ${a.type}) {\n  if (i < ${a.length}u) { wg_${array}[i] = v; }\n}`);
    return name;
  }

  private privateLength(id: number): number {
    const n = privateArrayLength(this.ir, id);
    if (n === undefined) throw new KernelBuildError(this.ir.name, `internal: unknown private array ${id}`);
    return n;
  }

  private array(id: number): { type: ValueType; length: number; atomic: boolean } {
    const a = this.arrayDecl.get(id);
    if (!a) throw new KernelBuildError(this.ir.name, `internal: unknown workgroup array ${id}`);
    return a;
  }

  /** Identity function that makes its argument a run-time value (see the header). */
  private runtimeHelper(type: ValueType): string {
    const name = `rt_${typeSuffix(type)}`;
    this.helper(name, `fn ${name}(x: ${type}) -> ${type} { return x; }`);
    return name;
  }

  /**
   * sin / cos to a few ulp, as the JS reference computes them. WGSL only promises
   * an absolute error of 2^-11 on [-pi, pi] (SwiftShader is that coarse; NVIDIA's is
   * off by ~2^-17 relative near 0). Cody-Waite reduction by pi/2 in three parts
   * whose leading parts multiply exactly (no fma needed) for |x| below ~2^13, then
   * Cephes' minimax polynomials on [-pi/4, pi/4]. NaN and infinities give NaN.
   */
  private trigHelper(type: ValueType, fn: 'sin' | 'cos'): string {
    const { width } = typeInfo(type);
    const it = width === 1 ? 'i32' : `vec${width}<i32>`;
    const name = `${fn}_${typeSuffix(type)}`;
    const t = type;
    this.helper(
      name,
      [
        `fn ${name}(x: ${t}) -> ${t} {`,
        `  let n = round(x * ${t}(0.63661977236758134f));`,
        `  var r = x - n * ${t}(1.5703125f);`,
        `  r = r - n * ${t}(4.837512969970703125e-4f);`,
        `  r = r - n * ${t}(7.54978995489188216e-8f);`,
        '  let r2 = r * r;',
        `  let s = r + r * r2 * (${t}(-1.6666654611e-1f) + r2 * (${t}(8.3321608736e-3f) + r2 * ${t}(-1.9515295891e-4f)));`,
        `  let c = ${t}(1.0f) - ${t}(0.5f) * r2 + r2 * r2 * (${t}(4.166664568298827e-2f) + r2 * (${t}(-1.388731625493765e-3f) + r2 * ${t}(2.443315711809948e-5f)));`,
        `  let q = (${it}(n)${fn === 'cos' ? ` + ${it}(1i)` : ''}) & ${it}(3i);`,
        `  let v = select(s, c, (q & ${it}(1i)) == ${it}(1i));`,
        fn === 'sin'
          ? `  return select(select(v, -v, (q & ${it}(2i)) == ${it}(2i)), x, x == ${t}(0.0f)); // sin(-0) is -0`
          : `  return select(v, -v, (q & ${it}(2i)) == ${it}(2i));`,
        '}',
      ].join('\n'),
    );
    return name;
  }

  /**
   * u32/i32 -> f32 rounded to nearest, ties to even (IR rule). WGSL lets the
   * conversion pick either neighbour, and SwiftShader does not round to nearest:
   * drop the low bits by hand, round, and scale by a power of two (all exact).
   */
  private intToFloatHelper(from: ValueType, to: ValueType): string {
    const { width, scalar } = typeInfo(from);
    const vt = (s: string) => (width === 1 ? s : `vec${width}<${s}>`);
    const [ut, it] = [vt('u32'), vt('i32')];
    const u2f = `u2f_${typeSuffix(vt('u32') as ValueType)}`;
    this.helper(
      u2f,
      [
        `fn ${u2f}(x: ${ut}) -> ${to} {`,
        `  let lz = countLeadingZeros(x);`,
        `  let shift = select(${ut}(0u), ${ut}(8u) - lz, lz < ${ut}(8u)); // bits beyond the 24 a f32 holds`,
        `  let m = x >> shift;`,
        `  let rem = x & ((${ut}(1u) << shift) - ${ut}(1u));`,
        `  let half = (${ut}(1u) << shift) >> ${ut}(1u);`,
        `  let up = (shift > ${ut}(0u)) & ((rem > half) | ((rem == half) & ((m & ${ut}(1u)) == ${ut}(1u))));`,
        `  return ldexp(${to}(m + select(${ut}(0u), ${ut}(1u), up)), ${it}(shift));`,
        '}',
      ].join('\n'),
    );
    if (scalar === 'u32') return u2f;
    const i2f = `i2f_${typeSuffix(from)}`;
    this.helper(
      i2f,
      [
        `fn ${i2f}(x: ${it}) -> ${to} {`,
        `  let neg = x < ${it}(0i);`,
        '  // The magnitude as u32: -MIN is 2^31, exact.',
        `  let f = ${u2f}(select(bitcast<${ut}>(x), ${ut}(0u) - bitcast<${ut}>(x), neg));`,
        '  return select(f, -f, neg);',
        '}',
      ].join('\n'),
    );
    return i2f;
  }

  /** f32 -> u32/i32: truncate, saturate, NaN -> 0 (IR rule), for scalars and vectors alike. */
  private floatToIntHelper(from: ValueType, to: ValueType): string {
    const { width, scalar } = typeInfo(to);
    const name = `${scalar === 'u32' ? 'f2u' : 'f2i'}_${typeSuffix(from)}`;
    const vt = (s: string) => (width === 1 ? s : `vec${width}<${s}>`);
    const bits = vt('u32');
    const lines = [`fn ${name}(x: ${from}) -> ${to} {`];
    // NaN by its bits: float compares may be compiled assuming no NaN.
    lines.push(`  let nan = (bitcast<${bits}>(x) & ${bits}(0x7fffffffu)) > ${bits}(0x7f800000u);`);
    if (scalar === 'u32') {
      lines.push(`  let r = select(${to}(x), ${to}(4294967295u), x >= ${from}(4294967296.0f));`);
      lines.push(`  return select(r, ${to}(0u), nan | (x <= ${from}(0.0f)));`);
    } else {
      lines.push(`  var r = select(${to}(x), ${to}(2147483647i), x >= ${from}(2147483648.0f));`);
      lines.push(`  r = select(r, ${to}(i32(-2147483648)), x < ${from}(-2147483648.0f));`);
      lines.push(`  return select(r, ${to}(0i), nan);`);
    }
    lines.push('}');
    this.helper(name, lines.join('\n'));
    return name;
  }
}

function typeSuffix(type: ValueType): string {
  const { scalar, width } = typeInfo(type);
  return width === 1 ? scalar : `v${width}${scalar}`;
}

/** A function from its signature line and body lines (indented by two). */
function fnLines(signature: string, body: readonly string[]): string {
  return [signature, ...indent(body), '}'].join('\n');
}

function indent(lines: readonly string[]): string[] {
  return lines.map((l) => `  ${l}`);
}

function join(parts: readonly string[]): string {
  return parts.filter((p) => p.length > 0).join('\n');
}

function mayReturn(s: Stmt): boolean {
  let found = false;
  walkStmts([s], (x) => {
    if (x.op === 'return') found = true;
  });
  return found;
}

function isZeroConst(value: number | boolean | readonly number[]): boolean {
  if (typeof value === 'number') return value === 0;
  if (typeof value === 'boolean') return false;
  return value.some((v) => v === 0);
}

/** True when `e` is built from constants alone (WGSL would fold it at shader creation). */
function isConstTree(e: Expr): boolean {
  let constant = true;
  walkExpr(e, (x) => {
    switch (x.op) {
      case 'const':
      case 'unary':
      case 'binary':
      case 'call':
      case 'select':
      case 'convert':
      case 'bitcast':
      case 'construct':
      case 'extract':
        break;
      case 'builtin':
        // workgroupSize is emitted as a literal.
        if (x.name !== 'workgroupSize') constant = false;
        break;
      default:
        constant = false;
    }
  });
  return constant;
}
