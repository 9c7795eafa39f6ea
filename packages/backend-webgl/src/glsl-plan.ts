import {
  type AtomicFn,
  type Expr,
  forEachExprOfStmt,
  type Kernel,
  type Stmt,
  UnsupportedFeatureError,
  walkExpr,
  walkStmts,
} from '@trident/core';

/**
 * How one kernel maps onto WebGL2 passes (DESIGN.md's capability matrix):
 * - every buffer stored only at `globalIndex` is a *gather output*, computed by a
 *   fragment pass over its texels (MRT for several);
 * - every other stored buffer is a *scatter target*, written by a `gl.POINTS`
 *   vertex pass, one point per store;
 * - every buffer combined by atomic add/min/max is a *blend target*: points blended
 *   (FUNC_ADD / MIN / MAX) into a float shadow, then folded into the integer buffer.
 * Kernels needing anything else are refused here, at compile time.
 */
export type TargetMode = 'store' | 'add' | 'min' | 'max';

export interface PointTarget {
  readonly buffer: string;
  readonly mode: TargetMode;
  /** Upper bound of point writes one invocation makes (a vec3 store counts 3, any other store 1). */
  readonly staticOps: number;
  /** Some write sits inside a loop: the bound is then found by a counting pass. */
  readonly inLoop: boolean;
}

export interface KernelPlan {
  readonly gatherOutputs: readonly string[];
  readonly pointTargets: readonly PointTarget[];
  /** Buffers the kernel loads (sampled as textures by every pass). */
  readonly sampled: ReadonlySet<string>;
}

const BACKEND = 'webgl2';

export function planKernel(kernel: Kernel, floatBlend: boolean): KernelPlan {
  const { ir, info } = kernel;
  const name = ir.name;
  if (info.classes.has('subgroup')) throw new UnsupportedFeatureError(BACKEND, 'subgroup', name, 'WebGL2 has no subgroup operations');
  if (info.classes.has('workgroup')) {
    throw new UnsupportedFeatureError(
      BACKEND,
      'workgroup',
      name,
      'WebGL2 has no workgroup memory or barriers; use a gather formulation (caps.features lacks "workgroup")',
    );
  }

  const vector = new Map<string, number>();
  for (const [p, decl] of ir.params) if (decl.kind === 'buffer') vector.set(p, decl.vector);

  interface Acc {
    gidOnly: boolean;
    stores: number;
    atomics: Set<AtomicFn>;
    ops: number;
    inLoop: boolean;
  }
  const acc = new Map<string, Acc>();
  const get = (b: string): Acc => {
    let a = acc.get(b);
    if (!a) {
      a = { gidOnly: true, stores: 0, atomics: new Set(), ops: 0, inLoop: false };
      acc.set(b, a);
    }
    return a;
  };
  const sampled = new Set<string>();
  const atomicVars = new Map<number, string>();
  const gidVars = globalIndexVars(ir.body);
  const isGid = (e: Expr): boolean => (e.op === 'builtin' && e.name === 'globalIndex') || (e.op === 'var' && gidVars.has(e.id));

  const visit = (stmts: readonly Stmt[], loopDepth: number): void => {
    for (const s of stmts) {
      forEachExprOfStmt(s, (e) =>
        walkExpr(e, (x) => {
          if (x.op === 'load') sampled.add(x.buffer);
        }),
      );
      if (s.op === 'store') {
        const a = get(s.buffer);
        a.stores++;
        // Points write whole vec2 / vec4 elements (a part of one texel); vec3 elements one scalar at a time.
        a.ops += vector.get(s.buffer) === 3 ? 3 : 1;
        if (!isGid(s.index)) a.gidOnly = false;
        if (loopDepth > 0) a.inLoop = true;
      }
      const atomic = s.op === 'let' ? s.init : s.op === 'eval' ? s.expr : undefined;
      if (atomic?.op === 'atomic') {
        if (atomic.fn !== 'add' && atomic.fn !== 'min' && atomic.fn !== 'max') {
          throw new UnsupportedFeatureError(BACKEND, 'atomic-other', name, `atomic ${atomic.fn} cannot be expressed by blending`);
        }
        if (!floatBlend) {
          throw new UnsupportedFeatureError(BACKEND, 'atomic', name, 'atomics need EXT_color_buffer_float and EXT_float_blend');
        }
        const a = get(atomic.buffer);
        a.atomics.add(atomic.fn);
        a.ops++;
        if (loopDepth > 0) a.inLoop = true;
        if (s.op === 'let') atomicVars.set(s.id, atomic.fn);
      }
      if (s.op === 'if') {
        visit(s.thenBlock, loopDepth);
        visit(s.elseBlock, loopDepth);
      } else if (s.op === 'loop') {
        visit(s.condPrelude, loopDepth + 1);
        visit(s.body, loopDepth + 1);
        visit(s.update, loopDepth + 1);
      } else if (s.op === 'expectRange') {
        visit(s.body, loopDepth);
      }
    }
  };
  visit(ir.body, 0);
  // Atomics nested anywhere but a statement's top (never produced by the builder) would escape the checks above.
  walkStmts(ir.body, (s) =>
    forEachExprOfStmt(s, (e) =>
      walkExpr(e, (x) => {
        if (x.op === 'atomic' && !(s.op === 'let' && s.init === x) && !(s.op === 'eval' && s.expr === x)) {
          throw new UnsupportedFeatureError(BACKEND, 'atomic-other', name, 'an atomic nested inside an expression');
        }
      }),
    ),
  );
  // Blending writes a sum, never the value before it: an atomic's result cannot be returned.
  walkStmts(ir.body, (s) =>
    forEachExprOfStmt(s, (e) =>
      walkExpr(e, (x) => {
        if (x.op === 'var' && atomicVars.has(x.id)) {
          throw new UnsupportedFeatureError(
            BACKEND,
            'atomic-other',
            name,
            `the old value returned by atomic ${atomicVars.get(x.id)} (blending cannot return it)`,
          );
        }
      }),
    ),
  );

  const gatherOutputs: string[] = [];
  const pointTargets: PointTarget[] = [];
  for (const [buffer, a] of acc) {
    if (a.atomics.size > 0) {
      if (a.stores > 0 || a.atomics.size > 1) {
        throw new UnsupportedFeatureError(
          BACKEND,
          'atomic-other',
          name,
          `buffer '${buffer}' mixes ${[...a.atomics].join('/')}${a.stores > 0 ? ' and stores' : ''}; one blend equation per buffer`,
        );
      }
      pointTargets.push({ buffer, mode: [...a.atomics][0] as TargetMode, staticOps: a.ops, inLoop: a.inLoop });
    } else if (a.gidOnly) {
      gatherOutputs.push(buffer);
    } else {
      if (a.inLoop && !floatBlend) {
        throw new UnsupportedFeatureError(
          BACKEND,
          'scatter',
          name,
          `stores to '${buffer}' inside a loop are bounded by a counting pass, which needs EXT_color_buffer_float and EXT_float_blend`,
        );
      }
      pointTargets.push({ buffer, mode: 'store', staticOps: a.ops, inLoop: a.inLoop });
    }
  }
  return { gatherOutputs, pointTargets, sampled };
}

/** Variables that always hold globalIndex: declared from it and never reassigned (as in core's analysis). */
export function globalIndexVars(body: readonly Stmt[]): Set<number> {
  const from = new Set<number>();
  const reassigned = new Set<number>();
  walkStmts(body, (s) => {
    if (s.op === 'let' && s.init.op === 'builtin' && s.init.name === 'globalIndex') from.add(s.id);
    if (s.op === 'assign') reassigned.add(s.id);
  });
  for (const id of reassigned) from.delete(id);
  return from;
}
