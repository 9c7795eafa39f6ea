import type { BinaryFn, BufferParamDecl, Expr, InBoundsPlan, Kernel, KernelIR, Stmt, ValueType } from '@trident/core';
import {
  assignedVars,
  containsBarrier,
  forEachExprOfStmt,
  inBoundsPlan,
  inductionOf,
  typeInfo,
  walkExpr,
  walkStmts,
  workgroupShapeOf,
} from '@trident/core';
import { F32, f32Bytes, f64Bytes, I32, uleb, V128, type WType } from './wasm-encoding.ts';
import { FunctionBuilder } from './wasm-function.ts';
import { ATOMIC, OP, SAT, SIMD } from './wasm-opcodes.ts';

/**
 * WebAssembly code generation for the CPU backend: the same kernel as the
 * generated JavaScript (js.ts), with the same results bit for bit, as a module of
 * one exported function over the device's shared memory.
 *
 * The module imports `env.memory` (shared, up to 2^16 pages) and, where the kernel
 * needs them, math functions from JavaScript as `m.<name>` (f64 -> f64: exp, log,
 * log2, pow, sin, cos, fmod), so that transcendentals round exactly as the
 * JavaScript's `Math.fround(Math.exp(x))` does. It exports
 * `run(<per buffer: byteOffset i32, length i32>, <per uniform: i32 | f32>,
 * wgStart, wgEnd, nwg, gx, gy, gz)`, parameters in the IR's order; the backend's
 * wrapper (backend-cpu wasm-kernel.mjs) gives it the JavaScript kernel's calling convention.
 *
 * The rules that differ between WebAssembly and JavaScript, and how they are kept
 * to the IR's (and therefore the JavaScript's) results:
 * - integer division and remainder: wasm traps on a zero divisor and on i32
 *   MIN / -1; the divisor is replaced by 1 there and the result selected (the
 *   dividend, or 0 for remainders);
 * - f32 -> u32/i32: the saturating truncations (`trunc_sat`), NaN -> 0, as `$f2u`/`$f2i`;
 * - f32 + - * / and sqrt are IEEE single operations, equal to rounding the double
 *   result (what `Math.fround` does: binary64 holds a binary32 product or quotient
 *   well enough that the double rounding never differs); fma, inverseSqrt and the
 *   imported functions run in f64 and round once at the end, as the JavaScript does;
 * - min/max on f32 propagate NaN and order -0 below +0, as Math.min/Math.max;
 * - loads outside [0, length) give 0 and stores there do nothing (an unsigned
 *   compare also refuses negative i32 indices); atomics there return 0. An
 *   innermost loop `while (i + K < E)` (u32, E unchanged by the loop) whose body
 *   reads or writes buffers at i + c (0 <= c <= K) before it changes i is emitted
 *   twice: where E is within those buffers (checked once before the loop) and i + K
 *   cannot wrap (checked per iteration), the copy without those checks runs
 *   (`provenInBounds`), each access addressed from i with c as its instruction's
 *   static offset; the checked copy otherwise;
 * - `select`, `and`/`or` with an operand that has an effect (an atomic) evaluate
 *   as JavaScript's `?:`, `&&` and `||` do: only the arm taken.
 *
 * Values: u32, i32 and bool (0/1) as i32; f32 as f32; vectors of 2-4 components as
 * v128 (lanes past the width unused), with SIMD arithmetic where an instruction
 * has the scalar rule lane for lane, and the scalar rule per lane elsewhere
 * (integer division, shifts by a vector of counts, transcendentals). Private
 * arrays live in a block of the memory per thread (the `scratch` parameter).
 *
 * Kernels outside the subset (barriers, workgroup arrays, more than 127
 * parameters, over 16 MiB of private arrays per thread) get no module:
 * `generateWasm` says why, and the backend runs their JavaScript.
 */
export type WasmKernel =
  | {
      readonly bytes: Uint8Array;
      readonly params: ReadonlyArray<WasmParam>;
      /**
       * Bytes of private-array storage one thread needs (0: none): the caller gives
       * each thread its own block of the memory, 16-byte aligned, as the `scratch`
       * parameter; the module zeroes it per workgroup.
       */
      readonly scratchBytes: number;
      readonly reason?: undefined;
    }
  | { readonly bytes?: undefined; readonly reason: string };

/** A parameter of `run`: a buffer (byte offset, length), a uniform, or the thread's private-array block (byte offset). */
export interface WasmParam {
  readonly name: string;
  readonly kind: 'buffer' | 'uniform' | 'scratch';
}

/** Private-array storage per thread past which a kernel stays on JavaScript. */
const MAX_SCRATCH_BYTES = 16 * 2 ** 20;

export function generateWasm(kernel: Kernel): WasmKernel {
  return generateWasmFromIR(kernel.ir);
}

export function generateWasmFromIR(ir: KernelIR): WasmKernel {
  try {
    return new WasmGenerator(ir).generate();
  } catch (err) {
    if (err instanceof Unsupported) return { reason: err.message };
    throw err;
  }
}

/** The kernel is outside the WebAssembly subset: it runs as JavaScript. */
class Unsupported extends Error {}

function wtype(t: ValueType): WType {
  const { scalar, width } = typeInfo(t);
  if (width > 1) return V128;
  return scalar === 'f32' ? F32 : I32;
}

/** Does evaluating `e` have an effect (an atomic)? Such operands keep JavaScript's evaluation order. */
function hasEffect(e: Expr): boolean {
  let found = false;
  walkExpr(e, (x) => {
    if (x.op === 'atomic' || x.op === 'wgAtomic') found = true;
  });
  return found;
}

/** A loop's in-bounds plan (core ir/index-ranges.ts) while its unchecked copy is emitted; `valid` until the code reassigns the variable. */
interface InBoundsProof extends InBoundsPlan {
  valid: boolean;
}

interface BufferSlot {
  readonly decl: BufferParamDecl;
  readonly offset: number;
  readonly length: number;
}

class WasmGenerator extends FunctionBuilder {
  private readonly ir: KernelIR;
  private readonly buffers = new Map<string, BufferSlot>();
  private readonly uniforms = new Map<string, number>();
  private readonly params: WasmParam[] = [];
  private readonly vars = new Map<number, number>();
  /** Ids for the scalar lanes that lanewise() names as variables (below every IR variable id). */
  private nextLaneVar = -1;
  private loopCount = 0;
  private readonly loopLabels: Array<{ brk: string; cont: string }> = [];
  /** Loops whose unchecked copy is being emitted, innermost last (see `provenInBounds`). */
  private readonly proofs: InBoundsProof[] = [];
  // Fixed locals (set in generate()).
  private scratch = 0;
  private readonly privates = new Map<number, { base: number; length: number; slot: number; type: ValueType }>();
  private wgStart = 0;
  private wgEnd = 0;
  private nwg = 0;
  private gx = 0;
  private gy = 0;
  private gz = 0;
  private wgi = 0;
  private lid = 0;
  private wx = 0;
  private wy = 0;
  private wz = 0;

  constructor(ir: KernelIR) {
    super();
    this.ir = ir;
  }

  generate(): WasmKernel {
    const ir = this.ir;
    if (containsBarrier(ir.body)) throw new Unsupported('the kernel has barriers (phase splitting runs as JavaScript)');
    if (ir.workgroupArrays.length) throw new Unsupported('the kernel has workgroup arrays');
    for (const [pname, decl] of ir.params) {
      if (decl.kind === 'buffer') {
        const offset = this.param(I32);
        const length = this.param(I32);
        this.buffers.set(pname, { decl, offset, length });
        this.params.push({ name: pname, kind: 'buffer' });
      } else {
        this.uniforms.set(pname, this.param(decl.dtype === 'f32' ? F32 : I32));
        this.params.push({ name: pname, kind: 'uniform' });
      }
    }
    // Private arrays: array a of length n holds slot `lid * n + i` in its region of the thread's block
    // (4 bytes a scalar, 16 a vector), as the JavaScript's typed array per array does.
    let scratchBytes = 0;
    for (const a of ir.privateArrays ?? []) {
      const slot = typeInfo(a.type).width > 1 ? 16 : 4;
      this.privates.set(a.id, { base: scratchBytes, length: a.length, slot, type: a.type });
      scratchBytes += Math.ceil((a.length * ir.workgroupSize * slot) / 16) * 16;
    }
    if (scratchBytes > MAX_SCRATCH_BYTES) throw new Unsupported(`private arrays of ${scratchBytes} bytes per thread`);
    if (scratchBytes > 0) {
      this.scratch = this.param(I32);
      this.params.push({ name: '$scratch', kind: 'scratch' });
    }
    this.wgStart = this.param(I32);
    this.wgEnd = this.param(I32);
    this.nwg = this.param(I32);
    this.gx = this.param(I32);
    this.gy = this.param(I32);
    this.gz = this.param(I32);
    this.wgi = this.local(I32);
    this.lid = this.local(I32);
    for (const v of ir.vars) this.vars.set(v.id, this.local(wtype(v.type)));
    let gridIds = false;
    walkStmts(ir.body, (s) =>
      forEachExprOfStmt(s, (root) =>
        walkExpr(root, (e) => {
          if (e.op === 'builtin' && (e.name === 'workgroupId' || e.name === 'globalId')) gridIds = true;
        }),
      ),
    );
    if (gridIds) {
      this.wx = this.local(I32);
      this.wy = this.local(I32);
      this.wz = this.local(I32);
    }

    const c = this.code;
    // for (wgi = wgStart; wgi < wgEnd; wgi++) { [WX, WY, WZ]; for (lid = 0; lid < WG; lid++) { body } }
    this.get(this.wgStart);
    this.set(this.wgi);
    this.open(OP.block, 'wg-exit');
    this.open(OP.loop, 'wg-top');
    this.get(this.wgi);
    this.get(this.wgEnd);
    c.push(OP.i32GeU);
    this.br(OP.brIf, 'wg-exit');
    if (gridIds) {
      this.get(this.wgi);
      this.get(this.gx);
      c.push(OP.i32RemU);
      this.set(this.wx);
      this.get(this.wgi);
      this.get(this.gx);
      c.push(OP.i32DivU);
      this.get(this.gy);
      c.push(OP.i32RemU);
      this.set(this.wy);
      // floor(floor(wgi / gx) / gy) = floor(wgi / (gx * gy)), without the product's overflow.
      this.get(this.wgi);
      this.get(this.gx);
      c.push(OP.i32DivU);
      this.get(this.gy);
      c.push(OP.i32DivU);
      this.set(this.wz);
    }
    if (scratchBytes > 0) {
      // Private arrays start at zero in every workgroup (memory.fill).
      this.get(this.scratch);
      this.i32(0);
      this.i32(scratchBytes);
      c.push(0xfc);
      uleb(c, 11);
      c.push(0);
    }
    this.i32(0);
    this.set(this.lid);
    this.open(OP.block, 'inv-exit');
    this.open(OP.loop, 'inv-top');
    this.get(this.lid);
    this.i32(ir.workgroupSize);
    c.push(OP.i32GeU);
    this.br(OP.brIf, 'inv-exit');
    this.open(OP.block, 'inv-next');
    this.stmts(ir.body);
    this.close(); // inv-next: where `return` lands
    this.get(this.lid);
    this.i32(1);
    c.push(OP.i32Add);
    this.set(this.lid);
    this.br(OP.br, 'inv-top');
    this.close(); // inv-top
    this.close(); // inv-exit
    this.get(this.wgi);
    this.i32(1);
    c.push(OP.i32Add);
    this.set(this.wgi);
    this.br(OP.br, 'wg-top');
    this.close(); // wg-top
    this.close(); // wg-exit
    c.push(OP.end);
    // Parameter counts below 128 are their own LEB128 in the type section.
    if (this.paramTypes.length >= 128) throw new Unsupported('too many parameters');
    return { bytes: this.encode(), params: this.params, scratchBytes };
  }

  // ---------- helpers ----------

  /** Pushes the value of `e` into a new local and returns it. */
  private temp(e: Expr): number {
    const t = this.local(wtype(e.type));
    this.expr(e);
    this.set(t);
    return t;
  }

  // ---------- statements ----------

  private stmts(stmts: readonly Stmt[]): void {
    for (const s of stmts) this.stmt(s);
  }

  private stmt(s: Stmt): void {
    const c = this.code;
    switch (s.op) {
      case 'let':
        this.expr(s.init);
        this.set(this.varLocal(s.id));
        this.reassigned(s.id);
        return;
      case 'assign':
        this.expr(s.value);
        this.set(this.varLocal(s.id));
        this.reassigned(s.id);
        return;
      case 'store':
        this.store(s);
        return;
      case 'privStore': {
        // As the JavaScript: the value is evaluated only when the index is in range.
        const p = this.privateArray(s.array);
        const index = this.temp(s.index);
        this.get(index);
        this.i32(p.length);
        c.push(OP.i32LtU);
        this.open(OP.if, 'priv-store');
        this.privateAddress(p, index);
        this.expr(s.value);
        this.privateAccess(p, 'store');
        this.close();
        return;
      }
      case 'eval':
        this.expr(s.expr);
        c.push(OP.drop);
        return;
      case 'if':
        this.expr(s.cond);
        this.open(OP.if, 'if');
        this.stmts(s.thenBlock);
        if (s.elseBlock.length) {
          this.else_();
          this.stmts(s.elseBlock);
        }
        this.close();
        return;
      case 'loop': {
        const n = this.loopCount++;
        const brk = `brk${n}`;
        const cont = `cont${n}`;
        // An enclosing loop's proof ends where this loop changes its variable (its later iterations see the change).
        const assigned = assignedVars([s]);
        for (const p of this.proofs) if (assigned.has(p.variable)) p.valid = false;
        const plan = inBoundsPlan(s);
        let inBounds = 0;
        if (plan) {
          // Once before the loop: the bound (unchanged by the loop) within every buffer the plan covers.
          const bound = this.temp(plan.bound);
          inBounds = this.local(I32);
          this.i32(1);
          for (const name of plan.buffers) {
            this.get(bound);
            this.elementCount(this.slot(name));
            c.push(OP.i32LeU, OP.i32And);
          }
          this.set(inBounds);
        }
        this.open(OP.block, brk);
        this.open(OP.loop, `top${n}`);
        this.stmts(s.condPrelude);
        this.expr(s.cond);
        c.push(OP.i32Eqz);
        this.br(OP.brIf, brk);
        this.loopLabels.push({ brk, cont });
        this.open(OP.block, cont);
        if (plan) {
          // Per iteration: i + K did not wrap (i <= 2^32 - 1 - K), so i + c <= i + K < bound.
          this.get(inBounds);
          if (plan.reach > 0) {
            this.get(this.varLocal(plan.variable));
            this.i32(-1 - plan.reach);
            c.push(OP.i32LeU, OP.i32And);
          }
          this.open(OP.if, 'in-bounds');
          this.proofs.push({ ...plan, valid: true });
          this.stmts(s.body);
          this.proofs.pop();
          this.else_();
          this.stmts(s.body);
          this.close();
        } else this.stmts(s.body);
        this.close();
        this.loopLabels.pop();
        this.stmts(s.update);
        this.br(OP.br, `top${n}`);
        this.close();
        this.close();
        return;
      }
      case 'expectRange':
        // One memory holds every buffer: the hint has nothing to choose.
        this.stmts(s.body);
        return;
      case 'break':
      case 'continue': {
        const loop = this.loopLabels[this.loopLabels.length - 1];
        if (!loop) throw new Unsupported(`${s.op} outside a loop`);
        this.br(OP.br, s.op === 'break' ? loop.brk : loop.cont);
        return;
      }
      case 'return':
        this.br(OP.br, 'inv-next');
        return;
      default:
        throw new Unsupported(`statement '${s.op}'`);
    }
  }

  /** Variable `id` was (re)assigned: a proof about it no longer holds past this point of the code. */
  private reassigned(id: number): void {
    for (const p of this.proofs) if (p.variable === id) p.valid = false;
  }

  /**
   * Whether an access of `buffer` at `index` is in bounds by an enclosing loop's
   * proof: inside the copy of the loop's body that runs only where the bound lies
   * within the buffer, before the body changed the loop's variable, at variable + c
   * with c no more than the loop condition's own offset.
   */
  private provenInBounds(buffer: string, index: Expr): boolean {
    const at = inductionOf(index);
    if (!at) return false;
    for (const p of this.proofs) {
      if (p.valid && p.variable === at.variable && at.offset <= p.reach && p.buffers.includes(buffer)) return true;
    }
    return false;
  }

  private varLocal(id: number): number {
    const local = this.vars.get(id);
    if (local === undefined) throw new Error(`internal: unknown variable ${id}`);
    return local;
  }

  private slot(buffer: string): BufferSlot {
    const slot = this.buffers.get(buffer);
    if (!slot) throw new Error(`internal: unknown buffer ${buffer}`);
    return slot;
  }

  /** Pushes `index < length` (unsigned: a negative i32 index is out of range) for buffer `slot`, in its elements. */
  private inBounds(slot: BufferSlot, index: number): void {
    this.get(index);
    this.elementCount(slot);
    this.code.push(OP.i32LtU);
  }

  /** Pushes the buffer's length in elements of its view (vectors of w: floor(length / w)). */
  private elementCount(slot: BufferSlot): void {
    const w = slot.decl.vector;
    this.get(slot.length);
    if (w === 2 || w === 4) {
      this.i32(w === 4 ? 2 : 1);
      this.code.push(OP.i32ShrU);
    } else if (w === 3) {
      this.i32(3);
      this.code.push(OP.i32DivU);
    }
  }

  /** Pushes the byte address of element `index` of the view (4 bytes a component). */
  private address(slot: BufferSlot, index: number): void {
    const w = slot.decl.vector;
    this.get(slot.offset);
    this.get(index);
    if (w === 3) {
      this.i32(12);
      this.code.push(OP.i32Mul);
    } else {
      this.i32(w === 4 ? 4 : w === 2 ? 3 : 2);
      this.code.push(OP.i32Shl);
    }
    this.code.push(OP.i32Add);
  }

  private privateArray(id: number): { base: number; length: number; slot: number; type: ValueType } {
    const p = this.privates.get(id);
    if (!p) throw new Error(`internal: unknown private array ${id}`);
    return p;
  }

  /** Pushes scratch + base + (lid * length + index) * slot. */
  private privateAddress(p: { base: number; length: number; slot: number }, index: number): void {
    const c = this.code;
    this.get(this.scratch);
    this.get(this.lid);
    this.i32(p.length);
    c.push(OP.i32Mul);
    this.get(index);
    c.push(OP.i32Add);
    this.i32(p.slot === 16 ? 4 : 2);
    c.push(OP.i32Shl, OP.i32Add);
    if (p.base > 0) {
      this.i32(p.base);
      c.push(OP.i32Add);
    }
  }

  private privateAccess(p: { slot: number; type: ValueType }, access: 'load' | 'store'): void {
    const c = this.code;
    if (p.slot === 16) {
      this.simd(access === 'load' ? SIMD.load : SIMD.store);
      c.push(4, 0);
    } else if (typeInfo(p.type).scalar === 'f32') c.push(access === 'load' ? OP.f32Load : OP.f32Store, 2, 0);
    else c.push(access === 'load' ? OP.i32Load : OP.i32Store, 2, 0);
  }

  /**
   * For an access proven in bounds at variable + c: pushes the address of element
   * `variable` and returns c elements in bytes, for the instruction's static offset
   * (one address computation for all of a loop's accesses at i, i + 1, …; no wrap
   * to fear: variable + c is within the buffer).
   */
  private provenAddress(slot: BufferSlot, index: Expr): number {
    const at = inductionOf(index);
    if (!at) throw new Error('internal: a proven access is at a variable plus a constant');
    this.address(slot, this.varLocal(at.variable));
    return at.offset * 4 * slot.decl.vector;
  }

  /** Loads the element of the buffer's view at the address on the stack, plus `offset` bytes. */
  private loadElement(slot: BufferSlot, offset = 0): void {
    if (slot.decl.vector === 2 || slot.decl.vector === 3) this.loadLanes(slot, offset);
    else if (slot.decl.vector === 4) {
      this.simd(SIMD.load);
      this.code.push(4);
      uleb(this.code, offset);
    } else {
      this.code.push(slot.decl.dtype === 'f32' ? OP.f32Load : OP.i32Load, 2);
      uleb(this.code, offset);
    }
  }

  /** Loads a vec2/vec3 element lane by lane (address on the stack, plus `offset` bytes). */
  private loadLanes(slot: BufferSlot, offset = 0): void {
    const f = slot.decl.dtype === 'f32';
    const addr = this.local(I32);
    this.set(addr);
    this.i32(0);
    this.simd(SIMD.i32x4Splat);
    for (let l = 0; l < slot.decl.vector; l++) {
      this.get(addr);
      this.code.push(f ? OP.f32Load : OP.i32Load, 2);
      uleb(this.code, offset + l * 4);
      this.simd(f ? SIMD.f32x4Replace : SIMD.i32x4Replace);
      this.code.push(l);
    }
  }

  /** Stores the vec2/vec3 in local `value` lane by lane (address on the stack, plus `offset` bytes). */
  private storeLanes(slot: BufferSlot, value: number, offset = 0): void {
    const f = slot.decl.dtype === 'f32';
    const addr = this.local(I32);
    this.set(addr);
    for (let l = 0; l < slot.decl.vector; l++) {
      this.get(addr);
      this.get(value);
      this.simd(f ? SIMD.f32x4Extract : SIMD.i32x4Extract);
      this.code.push(l);
      this.code.push(f ? OP.f32Store : OP.i32Store, 2);
      uleb(this.code, offset + l * 4);
    }
  }

  private store(s: Extract<Stmt, { op: 'store' }>): void {
    const slot = this.slot(s.buffer);
    const proven = this.provenInBounds(s.buffer, s.index);
    // A proven index is a variable plus a constant: nothing to evaluate ahead of the value.
    const index = proven ? -1 : this.temp(s.index);
    const value = this.temp(s.value);
    let offset = 0;
    if (proven) offset = this.provenAddress(slot, s.index);
    else {
      this.inBounds(slot, index);
      this.open(OP.if, 'store');
      this.address(slot, index);
    }
    if (slot.decl.vector === 2 || slot.decl.vector === 3) this.storeLanes(slot, value, offset);
    else if (slot.decl.vector === 4) {
      this.get(value);
      this.simd(SIMD.store);
      this.code.push(4);
      uleb(this.code, offset);
    } else {
      this.get(value);
      this.code.push(slot.decl.dtype === 'f32' ? OP.f32Store : OP.i32Store, 2);
      uleb(this.code, offset);
    }
    if (!proven) this.close();
  }

  // ---------- expressions ----------

  private expr(e: Expr): void {
    const c = this.code;
    switch (e.op) {
      case 'const':
        this.constant(e.type, e.value);
        return;
      case 'uniform': {
        const local = this.uniforms.get(e.name);
        if (local === undefined) throw new Error(`internal: unknown uniform ${e.name}`);
        this.get(local);
        return;
      }
      case 'builtin':
        this.builtin(e);
        return;
      case 'var':
        this.get(this.varLocal(e.id));
        return;
      case 'unary':
        this.unary(e);
        return;
      case 'binary':
        this.binary(e);
        return;
      case 'call':
        this.mathCall(e);
        return;
      case 'select':
        this.select(e);
        return;
      case 'convert':
        this.convert(e);
        return;
      case 'bitcast':
        this.bitcast(e);
        return;
      case 'load': {
        const slot = this.slot(e.buffer);
        if (this.provenInBounds(e.buffer, e.index)) {
          this.loadElement(slot, this.provenAddress(slot, e.index));
          return;
        }
        const index = this.temp(e.index);
        this.inBounds(slot, index);
        this.open(OP.if, 'load', wtype(e.type));
        this.address(slot, index);
        this.loadElement(slot);
        this.else_();
        this.zero(e.type);
        this.close();
        return;
      }
      case 'length':
        this.elementCount(this.slot(e.buffer));
        return;
      case 'privLoad': {
        const p = this.privateArray(e.array);
        const index = this.temp(e.index);
        this.get(index);
        this.i32(p.length);
        c.push(OP.i32LtU);
        this.open(OP.if, 'priv-load', wtype(e.type));
        this.privateAddress(p, index);
        this.privateAccess(p, 'load');
        this.else_();
        this.zero(e.type);
        this.close();
        return;
      }
      case 'atomic':
        this.atomic(e);
        return;
      case 'subgroup':
        this.subgroup(e);
        return;
      case 'construct':
        this.construct(e);
        return;
      case 'extract': {
        this.expr(e.a);
        this.simd(typeInfo(e.a.type).scalar === 'f32' ? SIMD.f32x4Extract : SIMD.i32x4Extract);
        c.push(e.component);
        return;
      }
      default:
        throw new Unsupported(`expression '${e.op}'`);
    }
  }

  private constant(type: ValueType, value: number | boolean | readonly number[]): void {
    const { scalar, width } = typeInfo(type);
    if (width === 1) {
      const v = typeof value === 'boolean' ? (value ? 1 : 0) : (value as number);
      if (scalar === 'f32') this.code.push(OP.f32Const, ...f32Bytes(v));
      else this.i32(v | 0);
      return;
    }
    const lanes = typeof value === 'number' ? new Array<number>(width).fill(value) : (value as readonly number[]);
    const bytes: number[] = [];
    for (let l = 0; l < 4; l++) {
      const v = lanes[l] ?? 0;
      if (scalar === 'f32') bytes.push(...f32Bytes(v));
      else bytes.push(...new Uint8Array(new Int32Array([v | 0]).buffer));
    }
    this.simd(SIMD.const);
    this.code.push(...bytes);
  }

  private zero(type: ValueType): void {
    const { width } = typeInfo(type);
    this.constant(type, width === 1 ? 0 : new Array<number>(width).fill(0));
  }

  private builtin(e: Extract<Expr, { op: 'builtin' }>): void {
    const c = this.code;
    const [sx, sy] = workgroupShapeOf(this.ir);
    const wg = this.ir.workgroupSize;
    const lanes = (parts: Array<() => void>) => {
      this.i32(0);
      this.simd(SIMD.i32x4Splat);
      parts.forEach((part, l) => {
        part();
        this.simd(SIMD.i32x4Replace);
        c.push(l);
      });
    };
    const localX = () => {
      this.get(this.lid);
      this.i32(sx);
      c.push(OP.i32RemU);
    };
    const localY = () => {
      this.get(this.lid);
      this.i32(sx);
      c.push(OP.i32DivU);
      this.i32(sy);
      c.push(OP.i32RemU);
    };
    const localZ = () => {
      this.get(this.lid);
      this.i32(sx * sy);
      c.push(OP.i32DivU);
    };
    switch (e.name) {
      case 'globalIndex':
        this.get(this.wgi);
        this.i32(wg);
        c.push(OP.i32Mul);
        this.get(this.lid);
        c.push(OP.i32Add);
        return;
      case 'localIndex':
        this.get(this.lid);
        return;
      case 'workgroupIndex':
        this.get(this.wgi);
        return;
      case 'workgroupSize':
        this.i32(wg);
        return;
      case 'numWorkgroups':
        this.get(this.nwg);
        return;
      case 'subgroupSize':
        this.i32(1);
        return;
      case 'subgroupInvocation':
        this.i32(0);
        return;
      case 'localId':
        lanes([localX, localY, localZ]);
        return;
      case 'workgroupId':
        lanes([() => this.get(this.wx), () => this.get(this.wy), () => this.get(this.wz)]);
        return;
      case 'globalId': {
        const scaled = (w: number, k: number, local: () => void) => () => {
          this.get(w);
          this.i32(k);
          c.push(OP.i32Mul);
          local();
          c.push(OP.i32Add);
        };
        lanes([scaled(this.wx, sx, localX), scaled(this.wy, sy, localY), scaled(this.wz, wg / (sx * sy), localZ)]);
        return;
      }
      case 'workgroupCount':
        lanes([() => this.get(this.gx), () => this.get(this.gy), () => this.get(this.gz)]);
        return;
    }
  }

  private unary(e: Extract<Expr, { op: 'unary' }>): void {
    const { scalar, width } = typeInfo(e.type);
    const c = this.code;
    if (e.fn === 'not') {
      this.expr(e.a);
      c.push(OP.i32Eqz);
      return;
    }
    if (width > 1) {
      this.expr(e.a);
      if (e.fn === 'bitnot') this.simd(SIMD.not);
      else this.simd(scalar === 'f32' ? SIMD.f32x4Neg : SIMD.i32x4Neg);
      return;
    }
    if (e.fn === 'bitnot') {
      this.expr(e.a);
      this.i32(-1);
      c.push(OP.i32Xor);
      return;
    }
    if (scalar === 'f32') {
      this.expr(e.a);
      c.push(OP.f32Neg);
      return;
    }
    this.i32(0);
    this.expr(e.a);
    c.push(OP.i32Sub);
  }

  /** Evaluates both operands (splatting a scalar beside a vector), as JavaScript does left to right. */
  private operands(a: Expr, b: Expr, width: number): void {
    this.expr(a);
    if (width > 1 && typeInfo(a.type).width === 1) this.splat(a.type);
    this.expr(b);
    if (width > 1 && typeInfo(b.type).width === 1) this.splat(b.type);
  }

  private splat(t: ValueType): void {
    this.simd(typeInfo(t).scalar === 'f32' ? SIMD.f32x4Splat : SIMD.i32x4Splat);
  }

  private binary(e: Extract<Expr, { op: 'binary' }>): void {
    const c = this.code;
    const scalar = typeInfo(e.a.type).scalar;
    const width = Math.max(typeInfo(e.a.type).width, typeInfo(e.b.type).width);
    const fn = e.fn;
    if (width > 1) {
      this.vectorBinary(e, scalar, fn, width);
      return;
    }
    if (scalar === 'bool') {
      if ((fn === 'and' || fn === 'or') && hasEffect(e.b)) {
        // JavaScript's && and || skip the right operand (and its atomic) once the left decides.
        this.expr(e.a);
        this.open(OP.if, 'logic', I32);
        if (fn === 'and') this.expr(e.b);
        else this.i32(1);
        this.else_();
        if (fn === 'and') this.i32(0);
        else this.expr(e.b);
        this.close();
        return;
      }
      this.expr(e.a);
      this.expr(e.b);
      const op = { and: OP.i32And, or: OP.i32Or, xor: OP.i32Xor, eq: OP.i32Eq, ne: OP.i32Ne }[fn as 'and'];
      if (op === undefined) throw new Unsupported(`'${fn}' on bool`);
      c.push(op);
      return;
    }
    if (scalar === 'f32') {
      if (fn === 'rem') {
        this.expr(e.a);
        c.push(OP.f64PromoteF32);
        this.expr(e.b);
        c.push(OP.f64PromoteF32);
        this.call('fmod');
        c.push(OP.f32DemoteF64);
        return;
      }
      const op = {
        add: OP.f32Add,
        sub: OP.f32Sub,
        mul: OP.f32Mul,
        div: OP.f32Div,
        eq: OP.f32Eq,
        ne: OP.f32Ne,
        lt: OP.f32Lt,
        le: OP.f32Le,
        gt: OP.f32Gt,
        ge: OP.f32Ge,
      }[fn as 'add'];
      if (op === undefined) throw new Unsupported(`'${fn}' on f32`);
      this.expr(e.a);
      this.expr(e.b);
      c.push(op);
      return;
    }
    const u = scalar === 'u32';
    if (fn === 'div' || fn === 'rem') {
      this.intDivRem(e.a, e.b, u, fn);
      return;
    }
    const op = {
      add: OP.i32Add,
      sub: OP.i32Sub,
      mul: OP.i32Mul,
      and: OP.i32And,
      or: OP.i32Or,
      xor: OP.i32Xor,
      shl: OP.i32Shl,
      shr: u ? OP.i32ShrU : OP.i32ShrS,
      eq: OP.i32Eq,
      ne: OP.i32Ne,
      lt: u ? OP.i32LtU : OP.i32LtS,
      le: u ? OP.i32LeU : OP.i32LeS,
      gt: u ? OP.i32GtU : OP.i32GtS,
      ge: u ? OP.i32GeU : OP.i32GeS,
    }[fn];
    this.expr(e.a);
    this.expr(e.b);
    c.push(op);
  }

  /**
   * u32: b == 0 gives a (div) or 0 (rem). i32: also MIN / -1 gives MIN and MIN % -1 gives 0.
   * The divisor becomes 1 in those cases, so the instruction never traps; the result is then selected.
   */
  private intDivRem(aExpr: Expr, bExpr: Expr, unsigned: boolean, fn: 'div' | 'rem'): void {
    const c = this.code;
    const a = this.temp(aExpr);
    const b = this.temp(bExpr);
    const special = this.local(I32);
    this.get(b);
    c.push(OP.i32Eqz);
    if (!unsigned) {
      this.get(a);
      this.i32(-0x80000000);
      c.push(OP.i32Eq);
      this.get(b);
      this.i32(-1);
      c.push(OP.i32Eq, OP.i32And, OP.i32Or);
    }
    this.set(special);
    // select(if special, else): [special result] [a op divisor] [special]
    if (fn === 'div') this.get(a);
    else this.i32(0);
    this.get(a);
    this.i32(1);
    this.get(b);
    this.get(special);
    c.push(OP.select);
    c.push(fn === 'div' ? (unsigned ? OP.i32DivU : OP.i32DivS) : unsigned ? OP.i32RemU : OP.i32RemS);
    this.get(special);
    c.push(OP.select);
  }

  private vectorBinary(e: Extract<Expr, { op: 'binary' }>, scalar: string, fn: BinaryFn, width: number): void {
    if (scalar === 'f32') {
      const op = { add: SIMD.f32x4Add, sub: SIMD.f32x4Sub, mul: SIMD.f32x4Mul, div: SIMD.f32x4Div }[fn as 'add'];
      if (op === undefined) {
        this.lanewise(e, width);
        return;
      }
      this.operands(e.a, e.b, width);
      this.simd(op);
      return;
    }
    const u = scalar === 'u32';
    if (fn === 'shl' || fn === 'shr') {
      // i32x4 shifts take one scalar count (modulo 32, as the IR's rule); a vector of counts goes lane by lane.
      if (typeInfo(e.b.type).width > 1) {
        this.lanewise(e, width);
        return;
      }
      this.expr(e.a);
      this.expr(e.b);
      this.simd(fn === 'shl' ? SIMD.i32x4Shl : u ? SIMD.i32x4ShrU : SIMD.i32x4ShrS);
      return;
    }
    const op = { add: SIMD.i32x4Add, sub: SIMD.i32x4Sub, mul: SIMD.i32x4Mul, and: SIMD.and, or: SIMD.or, xor: SIMD.xor }[fn as 'add'];
    if (op === undefined) {
      // div, rem: no SIMD form; the scalar rule per lane.
      this.lanewise(e, width);
      return;
    }
    this.operands(e.a, e.b, width);
    this.simd(op);
  }

  private mathCall(e: Extract<Expr, { op: 'call' }>): void {
    const c = this.code;
    const { scalar, width } = typeInfo(e.type);
    const args = e.args;
    const [a, b, d] = args as [Expr, Expr | undefined, Expr | undefined];
    const evalAll = () => {
      for (const x of args) {
        this.expr(x);
        if (width > 1 && typeInfo(x.type).width === 1) this.splat(x.type);
      }
    };
    if (width > 1) {
      const minMax = (fn: 'min' | 'max'): number => {
        if (scalar === 'f32') return fn === 'min' ? SIMD.f32x4Min : SIMD.f32x4Max;
        if (scalar === 'u32') return fn === 'min' ? SIMD.i32x4MinU : SIMD.i32x4MaxU;
        return fn === 'min' ? SIMD.i32x4MinS : SIMD.i32x4MaxS;
      };
      switch (e.fn) {
        case 'abs':
          evalAll();
          if (scalar === 'f32') this.simd(SIMD.f32x4Abs);
          else if (scalar === 'i32') this.simd(SIMD.i32x4Abs);
          return;
        case 'min':
        case 'max':
          evalAll();
          this.simd(minMax(e.fn));
          return;
        case 'clamp':
          // min(max(a, b), c), evaluated a, b, c as JavaScript does.
          this.expr(a);
          this.expr(b as Expr);
          if (typeInfo((b as Expr).type).width === 1) this.splat((b as Expr).type);
          this.simd(minMax('max'));
          this.expr(d as Expr);
          if (typeInfo((d as Expr).type).width === 1) this.splat((d as Expr).type);
          this.simd(minMax('min'));
          return;
        case 'sqrt':
        case 'floor':
        case 'ceil':
        case 'trunc':
          if (scalar !== 'f32') break;
          evalAll();
          this.simd({ sqrt: SIMD.f32x4Sqrt, floor: SIMD.f32x4Floor, ceil: SIMD.f32x4Ceil, trunc: SIMD.f32x4Trunc }[e.fn]);
          return;
        default:
          break;
      }
      this.lanewise(e, width);
      return;
    }
    if (scalar === 'f32') {
      const f64 = (x: Expr) => {
        this.expr(x);
        c.push(OP.f64PromoteF32);
      };
      switch (e.fn) {
        case 'abs':
          this.expr(a);
          c.push(OP.f32Abs);
          return;
        case 'min':
        case 'max':
          this.expr(a);
          this.expr(b as Expr);
          c.push(e.fn === 'min' ? OP.f32Min : OP.f32Max);
          return;
        case 'clamp':
          this.expr(a);
          this.expr(b as Expr);
          c.push(OP.f32Max);
          this.expr(d as Expr);
          c.push(OP.f32Min);
          return;
        case 'sqrt':
          this.expr(a);
          c.push(OP.f32Sqrt);
          return;
        case 'floor':
        case 'ceil':
        case 'trunc':
          this.expr(a);
          c.push({ floor: OP.f32Floor, ceil: OP.f32Ceil, trunc: OP.f32Trunc }[e.fn]);
          return;
        case 'inverseSqrt':
          c.push(OP.f64Const, ...f64Bytes(1));
          f64(a);
          c.push(OP.f64Sqrt, OP.f64Div, OP.f32DemoteF64);
          return;
        case 'fma':
          // a * b is exact in f64; + c rounds to f64, then to f32: JavaScript's Math.fround(a * b + c).
          f64(a);
          f64(b as Expr);
          c.push(OP.f64Mul);
          f64(d as Expr);
          c.push(OP.f64Add, OP.f32DemoteF64);
          return;
        case 'exp':
        case 'log':
        case 'log2':
        case 'sin':
        case 'cos':
          f64(a);
          this.call(e.fn);
          c.push(OP.f32DemoteF64);
          return;
        case 'exp2':
          c.push(OP.f64Const, ...f64Bytes(2));
          f64(a);
          this.call('pow');
          c.push(OP.f32DemoteF64);
          return;
        case 'pow':
          f64(a);
          f64(b as Expr);
          this.call('pow');
          c.push(OP.f32DemoteF64);
          return;
        default:
          throw new Unsupported(`'${e.fn}' on f32`);
      }
    }
    const u = scalar === 'u32';
    switch (e.fn) {
      case 'abs':
        if (u) this.expr(a);
        else {
          const x = this.temp(a);
          this.i32(0);
          this.get(x);
          c.push(OP.i32Sub);
          this.get(x);
          this.get(x);
          this.i32(0);
          c.push(OP.i32LtS, OP.select);
        }
        return;
      case 'min':
      case 'max': {
        const x = this.temp(a);
        const y = this.temp(b as Expr);
        this.intMinMax(e.fn, x, y, u);
        return;
      }
      case 'clamp': {
        const x = this.temp(a);
        const lo = this.temp(b as Expr);
        const hi = this.temp(d as Expr);
        const m = this.local(I32);
        this.intMinMax('max', x, lo, u);
        this.set(m);
        this.intMinMax('min', m, hi, u);
        return;
      }
      case 'countOneBits':
        this.expr(a);
        c.push(OP.i32Popcnt);
        return;
      default:
        throw new Unsupported(`'${e.fn}' on ${scalar}`);
    }
  }

  /**
   * A vector operation without a lane-exact SIMD instruction, as the JavaScript runs
   * it: the operands evaluated once, left to right, then the scalar rule per lane
   * (the scalar lanes named as variables of the scalar expression).
   */
  private lanewise(e: Extract<Expr, { op: 'binary' | 'call' }>, width: number): void {
    const operands = e.op === 'binary' ? [e.a, e.b] : e.args;
    const held = operands.map((x) => ({ x, local: this.temp(x), vector: typeInfo(x.type).width > 1 }));
    const resultType = e.type;
    const { scalar: resultScalar } = typeInfo(resultType);
    this.zero(resultType);
    for (let l = 0; l < width; l++) {
      const lanes: Expr[] = held.map(({ x, local, vector }) => {
        const scalar = typeInfo(x.type).scalar;
        if (!vector) return this.laneVar(local, scalar);
        this.get(local);
        this.simd(scalar === 'f32' ? SIMD.f32x4Extract : SIMD.i32x4Extract);
        this.code.push(l);
        const lane = this.local(scalar === 'f32' ? F32 : I32);
        this.set(lane);
        return this.laneVar(lane, scalar);
      });
      const scalarExpr: Expr =
        e.op === 'binary'
          ? { op: 'binary', type: resultScalar as ValueType, fn: e.fn, a: lanes[0] as Expr, b: lanes[1] as Expr }
          : { op: 'call', type: resultScalar as ValueType, fn: e.fn, args: lanes };
      this.expr(scalarExpr);
      this.simd(resultScalar === 'f32' ? SIMD.f32x4Replace : SIMD.i32x4Replace);
      this.code.push(l);
    }
  }

  /** A variable expression reading wasm local `local` (a lane held by lanewise()). */
  private laneVar(local: number, scalar: string): Expr {
    const id = this.nextLaneVar--;
    this.vars.set(id, local);
    return { op: 'var', type: scalar as ValueType, id };
  }

  private intMinMax(fn: 'min' | 'max', x: number, y: number, unsigned: boolean): void {
    this.get(x);
    this.get(y);
    this.get(x);
    this.get(y);
    if (fn === 'min') this.code.push(unsigned ? OP.i32LtU : OP.i32LtS);
    else this.code.push(unsigned ? OP.i32GtU : OP.i32GtS);
    this.code.push(OP.select);
  }

  private select(e: Extract<Expr, { op: 'select' }>): void {
    if (hasEffect(e.ifTrue) || hasEffect(e.ifFalse) || hasEffect(e.cond)) {
      // JavaScript's ?: evaluates the condition first, then one arm.
      this.expr(e.cond);
      this.open(OP.if, 'select', wtype(e.type));
      this.expr(e.ifTrue);
      this.else_();
      this.expr(e.ifFalse);
      this.close();
      return;
    }
    this.expr(e.ifTrue);
    this.expr(e.ifFalse);
    this.expr(e.cond);
    this.code.push(OP.select);
  }

  private convert(e: Extract<Expr, { op: 'convert' }>): void {
    const c = this.code;
    const from = typeInfo(e.a.type).scalar;
    const { scalar: to, width } = typeInfo(e.type);
    this.expr(e.a);
    if (from === to) return;
    if (width > 1) {
      if (to === 'f32') this.simd(from === 'u32' ? SIMD.f32x4ConvertI32x4U : SIMD.f32x4ConvertI32x4S);
      else if (from === 'f32') this.simd(to === 'u32' ? SIMD.i32x4TruncSatF32x4U : SIMD.i32x4TruncSatF32x4S);
      else if (from === 'bool' || to === 'bool') throw new Unsupported('bool vectors');
      // u32 <-> i32: the same bits.
      return;
    }
    if (from === 'bool') {
      if (to === 'f32') c.push(OP.f32ConvertI32U);
      return;
    }
    if (to === 'bool') {
      if (from === 'f32') {
        c.push(OP.f32Const, ...f32Bytes(0), OP.f32Ne);
      } else {
        this.i32(0);
        c.push(OP.i32Ne);
      }
      return;
    }
    if (to === 'f32') {
      c.push(from === 'u32' ? OP.f32ConvertI32U : OP.f32ConvertI32S);
      return;
    }
    if (from === 'f32') {
      c.push(0xfc);
      uleb(c, to === 'u32' ? SAT.i32TruncSatF32U : SAT.i32TruncSatF32S);
    }
    // u32 <-> i32: the same bits.
  }

  private bitcast(e: Extract<Expr, { op: 'bitcast' }>): void {
    const from = typeInfo(e.a.type).scalar;
    const { scalar: to, width } = typeInfo(e.type);
    this.expr(e.a);
    if (from === to || width > 1) return; // v128 lanes are bits already
    if (from === 'f32') this.code.push(OP.i32ReinterpretF32);
    else if (to === 'f32') this.code.push(OP.f32ReinterpretI32);
  }

  private construct(e: Extract<Expr, { op: 'construct' }>): void {
    const { scalar } = typeInfo(e.type);
    const f = scalar === 'f32';
    if (e.args.some((x) => typeInfo(x.type).width > 1)) throw new Unsupported('a vector built from vectors');
    if (this.shuffle(e)) return;
    this.zero(e.type);
    e.args.forEach((x, l) => {
      this.expr(x);
      this.simd(f ? SIMD.f32x4Replace : SIMD.i32x4Replace);
      this.code.push(l);
    });
  }

  /**
   * A vector built from components of one vector variable and zeros (a lane shift,
   * a broadcast: scans in registers) as one i8x16.shuffle of the variable and a zero
   * vector, instead of a replace_lane per component; false (nothing emitted) for any other construct.
   */
  private shuffle(e: Extract<Expr, { op: 'construct' }>): boolean {
    let source: number | undefined;
    const lanes: number[] = [];
    for (const x of e.args) {
      if (x.op === 'extract' && x.a.op === 'var' && (source === undefined || source === x.a.id)) {
        source = x.a.id;
        lanes.push(x.component);
      } else if (x.op === 'const' && typeof x.value === 'number' && Object.is(x.value, 0)) lanes.push(-1);
      else return false;
    }
    if (source === undefined) return false;
    this.get(this.varLocal(source));
    this.zero(e.type);
    this.simd(SIMD.shuffle);
    // Bytes 0-15 pick from the variable, 16-31 from the zeros; lanes past the construct's width are zero.
    for (let l = 0; l < 4; l++) {
      const lane = lanes[l] ?? -1;
      for (let b = 0; b < 4; b++) this.code.push(lane < 0 ? 16 + b : lane * 4 + b);
    }
    return true;
  }

  private subgroup(e: Extract<Expr, { op: 'subgroup' }>): void {
    // Subgroups of one lane, as in the JavaScript: reductions are the value itself (the lane is not evaluated).
    this.expr(e.a);
    if (e.fn === 'exclusiveAdd') {
      this.code.push(OP.drop);
      this.zero(e.type);
    } else if (e.fn === 'ballot') {
      // [a ? 1 : 0, 0, 0, 0]
      const bit = this.local(I32);
      this.set(bit);
      this.i32(0);
      this.simd(SIMD.i32x4Splat);
      this.get(bit);
      this.simd(SIMD.i32x4Replace);
      this.code.push(0);
    }
  }

  /** A buffer atomic: evaluates index, (compare,) value as the JavaScript's helpers do; 0 out of range. */
  private atomic(e: Extract<Expr, { op: 'atomic' }>): void {
    const c = this.code;
    const slot = this.slot(e.buffer);
    if (slot.decl.vector !== 1) throw new Unsupported('atomics on a vector view');
    const f32 = e.type === 'f32';
    const index = this.temp(e.index);
    const compare = e.fn === 'compareExchange' ? this.temp(e.compare as Expr) : -1;
    const value = this.temp(e.value);
    const result = f32 ? F32 : I32;
    this.inBounds(slot, index);
    this.open(OP.if, 'atomic', result);
    const addr = this.local(I32);
    this.address(slot, index);
    this.set(addr);
    const mem = (op: number) => {
      c.push(0xfe);
      uleb(c, op);
      c.push(2, 0);
    };
    if (f32) {
      if (e.fn === 'load') {
        this.get(addr);
        mem(ATOMIC.load);
        c.push(OP.f32ReinterpretI32);
      } else if (e.fn === 'store') {
        this.get(addr);
        this.get(value);
        c.push(OP.i32ReinterpretF32);
        mem(ATOMIC.store);
        c.push(OP.f32Const, ...f32Bytes(0));
      } else if (e.fn === 'add') {
        this.casLoop(addr, mem, (old) => {
          this.get(old);
          c.push(OP.f32ReinterpretI32);
          this.get(value);
          c.push(OP.f32Add, OP.i32ReinterpretF32);
        });
        c.push(OP.f32ReinterpretI32);
      } else throw new Unsupported(`f32 atomic ${e.fn}`);
    } else if (e.fn === 'min' || e.fn === 'max') {
      const u = e.type === 'u32';
      // Atomics' compare-exchange loop, as the JavaScript's $amin/$amax: no store when the old value already wins.
      const old = this.local(I32);
      this.open(OP.block, 'minmax-done', I32);
      this.open(OP.loop, 'minmax-retry');
      this.get(addr);
      mem(ATOMIC.load);
      this.tee(old);
      this.get(old);
      this.get(value);
      if (e.fn === 'min') c.push(u ? OP.i32LeU : OP.i32LeS);
      else c.push(u ? OP.i32GeU : OP.i32GeS);
      this.br(OP.brIf, 'minmax-done');
      c.push(OP.drop);
      this.get(addr);
      this.get(old);
      this.get(value);
      mem(ATOMIC.compareExchange);
      this.get(old);
      c.push(OP.i32Eq);
      this.open(OP.if, 'minmax-won');
      this.get(old);
      this.br(OP.br, 'minmax-done');
      this.close();
      this.br(OP.br, 'minmax-retry');
      this.close();
      c.push(0x00); // unreachable: the loop only leaves by a branch
      this.close();
    } else if (e.fn === 'store') {
      this.get(addr);
      this.get(value);
      mem(ATOMIC.store);
      // Atomics.store returns the value stored.
      this.get(value);
    } else if (e.fn === 'load') {
      this.get(addr);
      mem(ATOMIC.load);
    } else if (e.fn === 'compareExchange') {
      this.get(addr);
      this.get(compare);
      this.get(value);
      mem(ATOMIC.compareExchange);
    } else {
      this.get(addr);
      this.get(value);
      mem(ATOMIC[e.fn]);
    }
    this.else_();
    if (f32) c.push(OP.f32Const, ...f32Bytes(0));
    else this.i32(0);
    this.close();
  }

  /** Compare-exchange loop on the i32 at `addr`: leaves the old value on the stack; `next(old)` pushes the new one. */
  private casLoop(addr: number, mem: (op: number) => void, next: (old: number) => void): void {
    const c = this.code;
    const old = this.local(I32);
    this.open(OP.loop, 'cas', I32);
    this.get(addr);
    mem(ATOMIC.load);
    this.set(old);
    this.get(addr);
    this.get(old);
    next(old);
    mem(ATOMIC.compareExchange);
    this.get(old);
    c.push(OP.i32Ne);
    this.br(OP.brIf, 'cas');
    this.get(old);
    this.close();
  }
}
