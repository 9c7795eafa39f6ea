import { BLENDABLE_ATOMICS, type Expr, type KernelIR, type Stmt } from './nodes.ts';

/**
 * Kernel classes (DESIGN.md's capability matrix). A backend lists the classes it
 * runs in `caps.features`; a kernel needing any other is refused at compile time.
 * - gather: invocation i writes only element i (globalIndex) of each output
 * - scatter: writes at computed indices
 * - atomic: atomic add/min/max on a buffer
 * - atomic-other: other atomics on a buffer (sub, and/or/xor, exchange, compare-exchange, atomic load/store)
 * - workgroup: workgroup memory (atomic workgroup arrays included) and/or barriers
 * - subgroup: subgroup operations or subgroup built-ins
 *
 * Atomics on workgroup arrays count as 'workgroup' only, not 'atomic' or
 * 'atomic-other': those two classes say whether a backend can combine into
 * buffer elements (WebGL2 does add/min/max by blending), while every API with
 * workgroup memory (WGSL, GLSL compute, CUDA) has atomics on it, and a backend
 * without workgroup memory refuses the kernel for 'workgroup' anyway.
 */
export type KernelClass = 'gather' | 'scatter' | 'atomic' | 'atomic-other' | 'workgroup' | 'subgroup';
export const KERNEL_CLASSES: readonly KernelClass[] = ['gather', 'scatter', 'atomic', 'atomic-other', 'workgroup', 'subgroup'];

export interface KernelInfo {
  /** Every class the kernel belongs to; a backend must support all of them. */
  readonly classes: ReadonlySet<KernelClass>;
  /** Buffers the kernel reads (loads or atomics). */
  readonly reads: ReadonlySet<string>;
  /** Buffers the kernel writes (stores or atomics). */
  readonly writes: ReadonlySet<string>;
  readonly usesBarrier: boolean;
}

export function analyzeKernel(ir: KernelIR): KernelInfo {
  const classes = new Set<KernelClass>();
  const reads = new Set<string>();
  const writes = new Set<string>();
  let usesBarrier = false;

  // Variables that always hold globalIndex: declared from it and never reassigned.
  const fromGlobalIndex = new Set<number>();
  const reassigned = new Set<number>();
  walkStmts(ir.body, (s) => {
    if (s.op === 'let' && s.init.op === 'builtin' && s.init.name === 'globalIndex') fromGlobalIndex.add(s.id);
    if (s.op === 'assign') reassigned.add(s.id);
  });
  const isGlobalIndex = (e: Expr): boolean =>
    (e.op === 'builtin' && e.name === 'globalIndex') || (e.op === 'var' && fromGlobalIndex.has(e.id) && !reassigned.has(e.id));

  const visitExpr = (e: Expr): void => {
    walkExpr(e, (x) => {
      if (x.op === 'load') reads.add(x.buffer);
      if (x.op === 'atomic') {
        reads.add(x.buffer);
        if (x.fn !== 'load') writes.add(x.buffer);
        classes.add(BLENDABLE_ATOMICS.has(x.fn) ? 'atomic' : 'atomic-other');
      }
      if (x.op === 'wgLoad' || x.op === 'wgAtomic') classes.add('workgroup');
      if (x.op === 'subgroup') classes.add('subgroup');
      if (x.op === 'builtin' && (x.name === 'subgroupSize' || x.name === 'subgroupInvocation')) classes.add('subgroup');
    });
  };

  walkStmts(ir.body, (s) => {
    forEachExprOfStmt(s, visitExpr);
    if (s.op === 'store') {
      writes.add(s.buffer);
      classes.add(isGlobalIndex(s.index) ? 'gather' : 'scatter');
    }
    if (s.op === 'wgStore') classes.add('workgroup');
    if (s.op === 'barrier') {
      usesBarrier = true;
      classes.add('workgroup');
    }
  });
  if (ir.workgroupArrays.length > 0) classes.add('workgroup');
  if (classes.size === 0) classes.add('gather');
  return { classes, reads, writes, usesBarrier };
}

/** Calls `fn` on every statement, depth-first, parents before children. */
export function walkStmts(stmts: readonly Stmt[], fn: (s: Stmt) => void): void {
  for (const s of stmts) {
    fn(s);
    for (const child of childBlocks(s)) walkStmts(child, fn);
  }
}

export function childBlocks(s: Stmt): ReadonlyArray<readonly Stmt[]> {
  if (s.op === 'if') return [s.thenBlock, s.elseBlock];
  if (s.op === 'loop') return [s.condPrelude, s.body, s.update];
  if (s.op === 'expectRange') return [s.body];
  return [];
}

/** The expressions a statement evaluates directly (not those of nested blocks). */
export function forEachExprOfStmt(s: Stmt, fn: (e: Expr) => void): void {
  switch (s.op) {
    case 'let':
      fn(s.init);
      break;
    case 'assign':
      fn(s.value);
      break;
    case 'store':
    case 'wgStore':
    case 'privStore':
      fn(s.index);
      fn(s.value);
      break;
    case 'eval':
      fn(s.expr);
      break;
    case 'if':
      fn(s.cond);
      break;
    case 'loop':
      fn(s.cond);
      break;
    case 'expectRange':
      fn(s.first);
      fn(s.last);
      break;
    default:
      break;
  }
}

/** Calls `fn` on `e` and every sub-expression. */
export function walkExpr(e: Expr, fn: (e: Expr) => void): void {
  fn(e);
  for (const child of childExprs(e)) walkExpr(child, fn);
}

export function childExprs(e: Expr): readonly Expr[] {
  switch (e.op) {
    case 'unary':
    case 'convert':
    case 'bitcast':
    case 'extract':
      return [e.a];
    case 'binary':
      return [e.a, e.b];
    case 'call':
    case 'construct':
      return e.args;
    case 'select':
      return [e.cond, e.ifTrue, e.ifFalse];
    case 'load':
    case 'wgLoad':
    case 'privLoad':
      return [e.index];
    case 'atomic':
    case 'wgAtomic':
      return e.compare ? [e.index, e.value, e.compare] : [e.index, e.value];
    case 'subgroup':
      return e.lane ? [e.a, e.lane] : [e.a];
    default:
      return [];
  }
}

/** True if any statement in `stmts` (deeply) is a barrier. */
export function containsBarrier(stmts: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(stmts, (s) => {
    if (s.op === 'barrier') found = true;
  });
  return found;
}
