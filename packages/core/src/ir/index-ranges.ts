import { forEachExprOfStmt, walkExpr, walkStmts } from './analyze.ts';
import type { Expr, KernelIR, Stmt } from './nodes.ts';

/**
 * Index ranges: what a code generator can know about an index without running the
 * kernel, so that it leaves out a bounds check the index cannot fail (the IR's rule,
 * loads of 0 and dropped stores out of range, then holds without it). Two questions
 * over the same facts (which variables a block sets, and how often; an index as a
 * variable plus a constant), each sound under the IR's semantics (ir/nodes.ts: u32
 * arithmetic wraps, shift amounts modulo 32, x / 0 = x, x % 0 = 0):
 *
 * - a constant upper bound (`IndexBounds`), for accesses whose length is known when
 *   the kernel is built: the WGSL generator's workgroup-array checks. On the H100
 *   those checks cost radix sort's rank + scatter step 4.7% (bench/h100/bounds-check.ts):
 *   each adds a compare and a select or branch beside the clamp WGSL's robustness adds anyway.
 * - a bound relative to a loop (`inBoundsPlan`), for buffers, whose length is known
 *   only at dispatch: in an innermost loop `while (i + K < E)` with E unchanged by
 *   the loop, every access at i + c (0 <= c <= K) is below E until the body changes
 *   i, so one check of E against the buffers before the loop (and that i + K did not
 *   wrap) covers them all. The WebAssembly generator (backend-cpu) emits such a
 *   loop's body twice and runs the copy without those checks where that holds.
 *
 * Both are deliberately small; anything they cannot bound keeps its check.
 */

/** How many times each variable is set (`let` or assignment) in `stmts` and their nested blocks. */
function assignmentCounts(stmts: readonly Stmt[]): Map<number, number> {
  const counts = new Map<number, number>();
  walkStmts(stmts, (s) => {
    if (s.op === 'let' || s.op === 'assign') counts.set(s.id, (counts.get(s.id) ?? 0) + 1);
  });
  return counts;
}

/** Ids of the variables that statements (and their nested blocks) set. */
export function assignedVars(stmts: readonly Stmt[]): Set<number> {
  return new Set(assignmentCounts(stmts).keys());
}

// ---------- constant upper bounds ----------

/**
 * Upper bounds of u32 index expressions: constants, the local index and subgroup
 * lane (below the workgroup size and the largest subgroup), single-assignment
 * variables through their initialiser, and the u32 operations whose result a bound
 * of their operands bounds without wrapping (+ and * while the bound fits 32 bits;
 * &, |, ^, >>, /, %, min, max, clamp, select). Anything else (uniforms, loads, -,
 * <<, conversions, variables assigned more than once) is unbounded.
 */
export class IndexBounds {
  private readonly workgroupSize: number;
  private readonly maxSubgroupSize: number;
  /** Initialisers of the variables assigned exactly once (their `let`). */
  private readonly inits = new Map<number, Expr>();
  private readonly cache = new Map<number, number | undefined>();
  private readonly visiting = new Set<number>();

  /** `maxSubgroupSize`: the largest subgroup the target can have (bounds subgroupSize and subgroupInvocation). */
  constructor(ir: KernelIR, maxSubgroupSize: number) {
    this.workgroupSize = ir.workgroupSize;
    this.maxSubgroupSize = maxSubgroupSize;
    walkStmts(ir.body, (s) => {
      if (s.op === 'let') this.inits.set(s.id, s.init);
    });
    for (const [id, count] of assignmentCounts(ir.body)) if (count !== 1) this.inits.delete(id);
  }

  /** True if `index` is a u32 below `length` whatever the run-time values. */
  within(index: Expr, length: number): boolean {
    if (index.type !== 'u32') return false;
    const bound = this.upper(index);
    return bound !== undefined && bound < length;
  }

  /** The largest value `e` (u32) can take, or undefined if the analysis cannot bound it. */
  upper(e: Expr): number | undefined {
    if (e.type !== 'u32') return undefined;
    switch (e.op) {
      case 'const':
        return typeof e.value === 'number' ? e.value : undefined;
      case 'builtin':
        if (e.name === 'localIndex') return this.workgroupSize - 1;
        if (e.name === 'workgroupSize') return this.workgroupSize;
        if (e.name === 'subgroupInvocation') return this.maxSubgroupSize - 1;
        if (e.name === 'subgroupSize') return this.maxSubgroupSize;
        return undefined;
      case 'var':
        return this.variable(e.id);
      case 'select':
        return maxOf(this.upper(e.ifTrue), this.upper(e.ifFalse));
      case 'binary':
        return this.binary(e.fn, e.a, e.b);
      case 'call': {
        const bounds = e.args.map((a) => this.upper(a));
        if (e.fn === 'min') return minOf(...bounds);
        if (e.fn === 'max') return bounds.reduce(maxOf, 0);
        if (e.fn === 'clamp') return minOf(bounds[2], maxOf(bounds[0], bounds[1]));
        return undefined;
      }
      default:
        return undefined;
    }
  }

  private variable(id: number): number | undefined {
    if (this.cache.has(id)) return this.cache.get(id);
    const init = this.inits.get(id);
    if (!init || this.visiting.has(id)) return undefined;
    this.visiting.add(id);
    const bound = this.upper(init);
    this.visiting.delete(id);
    this.cache.set(id, bound);
    return bound;
  }

  private binary(fn: string, a: Expr, b: Expr): number | undefined {
    const x = this.upper(a);
    const y = this.upper(b);
    const constant = b.op === 'const' && typeof b.value === 'number' ? b.value : undefined;
    switch (fn) {
      case 'add':
        return x !== undefined && y !== undefined && x + y <= U32_MAX ? x + y : undefined;
      case 'mul':
        return x !== undefined && y !== undefined && x * y <= U32_MAX ? x * y : undefined;
      case 'and':
        return minOf(x, y);
      case 'or':
      case 'xor':
        return x !== undefined && y !== undefined ? allOnesCovering(Math.max(x, y)) : undefined;
      // Shift amounts are taken modulo 32; a right shift never grows the value.
      case 'shr':
        return x === undefined ? undefined : constant === undefined ? x : Math.floor(x / 2 ** (constant & 31));
      // Division by zero gives the dividend: never above it either.
      case 'div':
        return x === undefined ? undefined : constant ? Math.floor(x / constant) : x;
      // x % 0 is 0; x % y is below y and at most x.
      case 'rem':
        return minOf(x, constant ? constant - 1 : undefined);
      default:
        return undefined;
    }
  }
}

const U32_MAX = 0xffffffff;

function minOf(...bounds: Array<number | undefined>): number | undefined {
  const known = bounds.filter((b): b is number => b !== undefined);
  return known.length ? Math.min(...known) : undefined;
}

function maxOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : Math.max(a, b);
}

/** The smallest 2^k - 1 at or above x: a bound of x | y and x ^ y for x, y <= x. */
function allOnesCovering(x: number): number {
  let m = 0;
  while (m < x) m = m * 2 + 1;
  return m;
}

// ---------- bounds relative to a loop ----------

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
