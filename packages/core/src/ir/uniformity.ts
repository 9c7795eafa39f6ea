import { KernelBuildError } from '../errors.ts';
import { containsBarrier, walkExpr } from './analyze.ts';
import type { BuiltinName, Expr, KernelIR, Stmt } from './nodes.ts';

/** Built-ins that differ between the invocations of one workgroup. */
const NON_UNIFORM_BUILTINS: ReadonlySet<BuiltinName> = new Set(['globalIndex', 'localIndex', 'subgroupInvocation', 'globalId', 'localId']);

/**
 * Barrier uniformity: every invocation of a workgroup must reach the same
 * barriers, so a barrier may only stand under control flow whose conditions are
 * the same for the whole workgroup. GPUs hang or give undefined results
 * otherwise (WGSL rejects such shaders), and the CPU backend's phase splitting
 * would take invocation 0's condition for everyone, giving wrong output. This one
 * analysis runs when a kernel is built (defineKernel), so every backend refuses
 * the kernel the same way, with an error that names what is not uniform.
 *
 * The rules follow WGSL's uniformity analysis, simplified:
 * - uniform: constants, uniform parameters, buffer lengths, workgroupIndex,
 *   workgroupId, workgroupCount, workgroupSize, numWorkgroups, and loads from read-only buffers at uniform
 *   indices;
 * - not uniform: globalIndex, globalId, localIndex, localId, subgroup ids and
 *   operations, loads from writable buffers, workgroup- and private-array loads
 *   (taken as non-uniform without tracking their stores), atomics (other invocations
 *   may change them), and variables assigned any non-uniform value or assigned
 *   under non-uniform control flow;
 * - control flow is non-uniform inside an `if` or loop with a non-uniform
 *   condition, and in a loop from which a `break` or `continue` under a
 *   non-uniform condition leaves. `return` is allowed anywhere: an invocation
 *   that returned takes no part in later barriers.
 */
export function checkBarrierUniformity(ir: KernelIR): void {
  if (!containsBarrier(ir.body)) return;
  const readOnly = new Set(ir.params.filter(([, d]) => d.kind === 'buffer' && d.access === 'read').map(([n]) => n));
  const varNames = new Map(ir.vars.map((v) => [v.id, v.name]));
  /** Non-uniform variables, with why. Grows monotonically until a fixpoint. */
  const nonUniform = new Map<number, string>();

  /** Why `e` may differ between the invocations of a workgroup, or undefined if it cannot. */
  const reasonOf = (e: Expr): string | undefined => {
    // Direct sources (built-ins, loads) name the cause better than variables carrying it.
    let direct: string | undefined;
    let viaVar: string | undefined;
    walkExpr(e, (x) => {
      let why: string | undefined;
      switch (x.op) {
        case 'builtin':
          if (NON_UNIFORM_BUILTINS.has(x.name)) why = `k.${x.name}`;
          break;
        case 'var': {
          const r = nonUniform.get(x.id);
          // A variable holding a non-uniform value is named by that value (temporaries
          // of loads and atomics have no name worth showing); one assigned under
          // non-uniform control flow by its own name.
          if (r?.startsWith('holds ')) direct ??= r.slice(6);
          else if (r !== undefined) viaVar ??= `variable '${varNames.get(x.id) ?? x.id}' (${r})`;
          break;
        }
        case 'load':
          if (!readOnly.has(x.buffer)) why = `a load from writable buffer '${x.buffer}'`;
          break;
        case 'wgLoad':
          why = 'a workgroup-array load';
          break;
        case 'privLoad':
          why = 'a private-array load';
          break;
        case 'atomic':
        case 'wgAtomic':
          why = `an atomic ${x.fn}`;
          break;
        case 'subgroup':
          why = `a subgroup ${x.fn}`;
          break;
        default:
          break;
      }
      if (why !== undefined) direct ??= why;
    });
    return direct ?? viaVar;
  };

  type Jump = { readonly op: 'break' | 'continue'; readonly why: string };
  /**
   * Walks `stmts` under control that is non-uniform for `ctx` (undefined: uniform).
   * Returns the break/continue statements reached under non-uniform control that
   * leave the innermost enclosing loop. With `check`, a barrier under non-uniform
   * control throws.
   */
  const walk = (stmts: readonly Stmt[], ctx: string | undefined, check: boolean): Jump[] => {
    const jumps: Jump[] = [];
    for (const s of stmts) {
      if ((s.op === 'let' || s.op === 'assign') && !nonUniform.has(s.id)) {
        const r = reasonOf(s.op === 'let' ? s.init : s.value);
        if (ctx !== undefined) nonUniform.set(s.id, `assigned under ${ctx}`);
        else if (r !== undefined) nonUniform.set(s.id, r.startsWith('variable ') ? r : `holds ${r}`);
      }
      switch (s.op) {
        case 'barrier':
          if (check && ctx !== undefined) {
            throw new KernelBuildError(
              ir.name,
              `${s.workgroupOnly ? 'workgroupBarrier' : 'barrier'}() under non-uniform control flow: ${ctx}. ` +
                'Every invocation of a workgroup must reach the same barriers; make the condition depend only on ' +
                'uniform values (uniforms, workgroupIndex, read-only loads at uniform indices) or move the barrier out of the branch',
            );
          }
          break;
        case 'if': {
          const r = reasonOf(s.cond);
          const inner = ctx ?? (r !== undefined ? `an if whose condition depends on ${r}` : undefined);
          jumps.push(...walk(s.thenBlock, inner, check), ...walk(s.elseBlock, inner, check));
          break;
        }
        case 'loop': {
          // The condition's prelude runs first, then the condition decides for the whole loop.
          let inner = ctx;
          const first = walk(s.condPrelude, inner, false);
          const r = reasonOf(s.cond);
          if (inner === undefined && r !== undefined) inner = `a loop whose condition depends on ${r}`;
          // Jumps out of this loop are consumed here: they make the loop, not its parent, non-uniform.
          const exits = [...first, ...walk(s.body, inner, false), ...walk(s.update, inner, false)];
          const j = exits[0];
          if (inner === undefined && j !== undefined) inner = `a loop left by a ${j.op} under ${j.why}`;
          if (check) {
            walk(s.condPrelude, inner, true);
            walk(s.body, inner, true);
            walk(s.update, inner, true);
          }
          break;
        }
        case 'expectRange':
          // Runs as its body would in place (the builder keeps barriers and jumps out of it).
          jumps.push(...walk(s.body, ctx, check));
          break;
        case 'break':
        case 'continue':
          if (ctx !== undefined) jumps.push({ op: s.op, why: ctx });
          break;
        default:
          break;
      }
    }
    return jumps;
  };

  // Variables first (to a fixpoint: loops carry non-uniformity around), then the check.
  for (let size = -1; size !== nonUniform.size; ) {
    size = nonUniform.size;
    walk(ir.body, undefined, false);
  }
  walk(ir.body, undefined, true);
}
