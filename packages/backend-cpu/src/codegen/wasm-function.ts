import { encodeModule, sleb, uleb, VOID, type WType } from './wasm-encoding.ts';
import { MATH_IMPORTS, type MathImport, OP } from './wasm-opcodes.ts';

/**
 * One WebAssembly function body being written: its parameters and locals, the
 * open blocks that a branch names by label (turned into relative depths here),
 * constants, the math functions it calls, and the module around it at the end.
 * The mechanics of emitting code, apart from what the code means: the kernel
 * generator (wasm-generator.ts) extends it.
 */
export class FunctionBuilder {
  protected readonly code: number[] = [];
  protected readonly paramTypes: WType[] = [];
  protected readonly locals: WType[] = [];
  /** Open blocks, innermost last: what a break/continue/return branches to. */
  protected readonly labels: string[] = [];
  protected readonly imports = new Map<MathImport, number>();

  /** The module of this one function (see encodeModule). */
  protected encode(): Uint8Array {
    const imports = [...this.imports.keys()].map((m) => ({ name: m, arity: MATH_IMPORTS[m] }));
    return encodeModule({ paramTypes: this.paramTypes, locals: this.locals, code: this.code, imports });
  }

  protected param(t: WType): number {
    this.paramTypes.push(t);
    return this.paramTypes.length - 1;
  }

  protected local(t: WType): number {
    this.locals.push(t);
    return this.paramTypes.length + this.locals.length - 1;
  }

  protected get(i: number): void {
    this.code.push(OP.localGet);
    uleb(this.code, i);
  }

  protected set(i: number): void {
    this.code.push(OP.localSet);
    uleb(this.code, i);
  }

  protected tee(i: number): void {
    this.code.push(OP.localTee);
    uleb(this.code, i);
  }

  protected i32(n: number): void {
    this.code.push(OP.i32Const);
    sleb(this.code, n);
  }

  protected simd(op: number): void {
    this.code.push(0xfd);
    uleb(this.code, op);
  }

  protected open(op: typeof OP.block | typeof OP.loop | typeof OP.if, label: string, result: WType | typeof VOID = VOID): void {
    this.code.push(op, result);
    this.labels.push(label);
  }

  protected else_(): void {
    this.code.push(OP.else);
  }

  protected close(): void {
    this.code.push(OP.end);
    this.labels.pop();
  }

  protected br(op: typeof OP.br | typeof OP.brIf, label: string): void {
    const at = this.labels.lastIndexOf(label);
    if (at < 0) throw new Error(`internal: no label ${label}`);
    this.code.push(op);
    uleb(this.code, this.labels.length - 1 - at);
  }

  protected mathImport(m: MathImport): number {
    let index = this.imports.get(m);
    if (index === undefined) {
      index = this.imports.size;
      this.imports.set(m, index);
    }
    return index;
  }

  protected call(m: MathImport): void {
    this.code.push(OP.call);
    uleb(this.code, this.mathImport(m));
  }
}
