import { childExprs, type Expr, forEachExprOfStmt, type KernelIR, typeInfo, walkStmts } from '@trident/core';

/**
 * Which f32 variables of a kernel only move bits (js.ts's file comment says why the
 * JavaScript path needs to know): found once per kernel, before code generation.
 */
export interface BitsVars {
  /** The variables that hold an f32 element's bits (a u32) instead of its value. */
  readonly vars: ReadonlySet<number>;
  /** The f32 buffers read or written through their Uint32Array view. */
  readonly views: ReadonlySet<string>;
}

/**
 * The f32 variables that hold bits instead of values: every definition is a load
 * from an f32 buffer (of the variable's width), every use the operand of a scalar
 * bitcast (the variable, or one component of it) or, for scalars, the value of a
 * store into a scalar f32 buffer. Marks the buffers whose bits view is needed.
 */
export function findBitsVars(ir: KernelIR): BitsVars {
  const dtypeOf = new Map<string, string>();
  const vectorWidth = new Map<string, number>();
  for (const [name, decl] of ir.params)
    if (decl.kind === 'buffer') {
      vectorWidth.set(name, decl.vector);
      dtypeOf.set(name, decl.dtype);
    }
  const views = new Set<string>();
  const f32Vars = new Set(ir.vars.filter((v) => typeInfo(v.type).scalar === 'f32').map((v) => v.id));
  const bad = new Set<number>();
  const isF32Buffer = (name: string, width: number) => dtypeOf.get(name) === 'f32' && (vectorWidth.get(name) ?? 1) === width;
  const visit = (e: Expr, allowed: boolean): void => {
    if (e.op === 'var') {
      if (!allowed) bad.add(e.id);
      return;
    }
    if (e.op === 'bitcast' && typeInfo(e.a.type).width === 1) {
      const held = e.a.op === 'var' ? e.a : e.a.op === 'extract' && e.a.a.op === 'var' ? e.a.a : undefined;
      if (held) {
        visit(held, true);
        return;
      }
    }
    for (const c of childExprs(e)) visit(c, false);
  };
  const def = (id: number, value: Expr) => {
    const ok = value.op === 'load' && isF32Buffer(value.buffer, typeInfo(value.type).width);
    if (!ok) bad.add(id);
    if (value.op === 'load') visit(value.index, false);
    else visit(value, false);
  };
  walkStmts(ir.body, (st) => {
    switch (st.op) {
      case 'let':
        def(st.id, st.init);
        break;
      case 'assign':
        def(st.id, st.value);
        break;
      case 'store':
        visit(st.index, false);
        visit(st.value, st.value.op === 'var' && typeInfo(st.value.type).width === 1 && isF32Buffer(st.buffer, 1));
        break;
      default:
        forEachExprOfStmt(st, (e) => visit(e, false));
    }
  });
  const found = new Set([...f32Vars].filter((id) => !bad.has(id)));
  walkStmts(ir.body, (st) => {
    if ((st.op === 'let' || st.op === 'assign') && found.has(st.id)) {
      const value = st.op === 'let' ? st.init : st.value;
      if (value.op === 'load') views.add(value.buffer);
    }
    if (st.op === 'store' && dtypeOf.get(st.buffer) === 'f32' && (vectorWidth.get(st.buffer) ?? 1) === 1) {
      const v = st.value;
      const movesBits = (v.op === 'var' && found.has(v.id)) || (v.op === 'bitcast' && typeInfo(v.a.type).scalar !== 'f32');
      if (movesBits) views.add(st.buffer);
    }
  });
  return { vars: found, views };
}
