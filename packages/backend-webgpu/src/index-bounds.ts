import type { Expr, KernelIR } from '@trident/core';
import { walkStmts } from '@trident/core';

/**
 * Upper bounds of u32 index expressions, so that the WGSL generator can leave out a
 * workgroup-array bounds check that the index cannot fail (the IR's rule, loads of 0
 * and dropped stores out of range, then holds without it). On the H100 those checks
 * cost radix sort's rank + scatter step 4.7% (bench/h100/bounds-check.ts): each adds a
 * compare and a select or branch beside the clamp WGSL's robustness adds anyway.
 *
 * The analysis is deliberately small: constants, the local index and subgroup lane
 * (below the workgroup size and 128), single-assignment variables through their
 * initialiser, and the u32 operations whose result a bound of their operands bounds
 * without wrapping (+ and * while the bound fits 32 bits; &, |, ^, >>, /, %, min,
 * max, clamp, select). Anything else (uniforms, loads, -, <<, conversions, variables
 * assigned more than once) is unbounded: the check stays.
 */
export class IndexBounds {
  private readonly workgroupSize: number;
  /** Initialisers of the variables assigned exactly once (their `let`). */
  private readonly inits = new Map<number, Expr>();
  private readonly cache = new Map<number, number | undefined>();
  private readonly visiting = new Set<number>();

  constructor(ir: KernelIR) {
    this.workgroupSize = ir.workgroupSize;
    const assignments = new Map<number, number>();
    walkStmts(ir.body, (s) => {
      if (s.op === 'let' || s.op === 'assign') assignments.set(s.id, (assignments.get(s.id) ?? 0) + 1);
      if (s.op === 'let') this.inits.set(s.id, s.init);
    });
    for (const [id, count] of assignments) if (count !== 1) this.inits.delete(id);
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
        // WGSL subgroups have at most 128 invocations.
        if (e.name === 'subgroupInvocation') return 127;
        if (e.name === 'subgroupSize') return 128;
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
      // WGSL masks the shift amount; a right shift never grows the value.
      case 'shr':
        return x === undefined ? undefined : constant === undefined ? x : Math.floor(x / 2 ** (constant & 31));
      // Division by zero gives the dividend in WGSL: never above it either.
      case 'div':
        return x === undefined ? undefined : constant ? Math.floor(x / constant) : x;
      // x % 0 is 0 in WGSL; x % y is below y and at most x.
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
