import type { Expr, Stmt } from '@trident/core';
import { forEachExprOfStmt, walkExpr, walkStmts } from '@trident/core';

/**
 * Which buffer accesses of a loop need no bounds check in WebAssembly: the plan
 * for an innermost loop `while (i + K < E)` (E unchanged by the loop) whose body
 * reads or writes buffers at i + c, c <= K. The generator (wasm-generator.ts)
 * emits such a loop's body twice and runs the copy without those checks where E
 * lies within the buffers and i + K cannot wrap; this file only finds the loops.
 */

/**
 * A loop whose accesses at its variable (+ an offset up to `reach`) stay within
 * `buffers` wherever `bound` does: `while (variable + reach < bound)`, u32.
 */
export interface InBoundsPlan {
  readonly variable: number;
  readonly reach: number;
  readonly bound: Expr;
  readonly buffers: readonly string[];
}

/** A plan while its unchecked copy is emitted; `valid` until the code reassigns the variable. */
export interface InBoundsProof extends InBoundsPlan {
  valid: boolean;
}

/** The largest offset from the loop variable a plan takes (larger ones keep their checks). */
const MAX_REACH = 1024;

/** `e` as variable + offset: a u32 variable, or a u32 sum of one and a constant (either side). */
export function inductionOf(e: Expr): { variable: number; offset: number } | undefined {
  if (e.type !== 'u32') return undefined;
  if (e.op === 'var') return { variable: e.id, offset: 0 };
  if (e.op !== 'binary' || e.fn !== 'add') return undefined;
  const [v, k] = e.a.op === 'var' ? [e.a, e.b] : [e.b, e.a];
  if (v.op !== 'var' || v.type !== 'u32' || k.op !== 'const' || typeof k.value !== 'number') return undefined;
  if (!Number.isInteger(k.value) || k.value < 0 || k.value > MAX_REACH) return undefined;
  return { variable: v.id, offset: k.value };
}

/** Ids of the variables that statements (and their nested blocks) set. */
export function assignedVars(stmts: readonly Stmt[]): Set<number> {
  const ids = new Set<number>();
  walkStmts(stmts, (s) => {
    if (s.op === 'let' || s.op === 'assign') ids.add(s.id);
  });
  return ids;
}

/** No effect, no memory read, no variable in `changing`: the same value wherever the loop evaluates it. */
function invariant(e: Expr, changing: ReadonlySet<number>): boolean {
  let ok = true;
  walkExpr(e, (x) => {
    const pure = ['const', 'uniform', 'builtin', 'length', 'unary', 'binary', 'select', 'convert', 'bitcast', 'extract', 'construct'];
    if (x.op === 'var' ? changing.has(x.id) : !pure.includes(x.op)) ok = false;
  });
  return ok;
}

/**
 * The plan for an innermost loop `while (i + K < E)` (u32 compare, no condition
 * prelude, E unchanged by the loop) whose body accesses buffers at i + c, c <= K;
 * undefined for any other loop. Innermost only: the body is emitted twice, so code grows at most twice.
 */
export function inBoundsPlan(s: Extract<Stmt, { op: 'loop' }>): InBoundsPlan | undefined {
  const cond = s.cond;
  if (s.condPrelude.length > 0 || cond.op !== 'binary' || cond.fn !== 'lt' || cond.a.type !== 'u32' || cond.b.type !== 'u32')
    return undefined;
  const head = inductionOf(cond.a);
  if (!head) return undefined;
  let nested = false;
  walkStmts(s.body, (x) => {
    if (x.op === 'loop') nested = true;
  });
  if (nested || !invariant(cond.b, assignedVars([s]))) return undefined;
  const buffers = new Set<string>();
  const covered = (index: Expr) => {
    const at = inductionOf(index);
    return at !== undefined && at.variable === head.variable && at.offset <= head.offset;
  };
  walkStmts(s.body, (x) => {
    if (x.op === 'store' && covered(x.index)) buffers.add(x.buffer);
    forEachExprOfStmt(x, (root) =>
      walkExpr(root, (e) => {
        if (e.op === 'load' && covered(e.index)) buffers.add(e.buffer);
      }),
    );
  });
  if (buffers.size === 0) return undefined;
  return { variable: head.variable, reach: head.offset, bound: cond.b, buffers: [...buffers] };
}
