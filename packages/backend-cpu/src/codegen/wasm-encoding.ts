/**
 * The WebAssembly binary format, as much of it as the CPU backend's kernels use:
 * value type codes, LEB128 integers, float immediates, names and sections, and the
 * writer that wraps a kernel's one function body into a module (imported shared
 * memory and math functions, one exported function `run`). It knows nothing of the
 * kernel IR: wasm-generator.ts lowers the IR into the body.
 */

/** Value types. */
export const I32 = 0x7f;
export const F32 = 0x7d;
export const F64 = 0x7c;
export const V128 = 0x7b;
export type WType = typeof I32 | typeof F32 | typeof F64 | typeof V128;
export const VOID = 0x40;

/** Unsigned LEB128. */
export function uleb(out: number[], n: number): void {
  let v = n >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
}

/** Signed LEB128. */
export function sleb(out: number[], n: number): void {
  let v = n | 0;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    if ((v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return;
    }
    out.push(byte | 0x80);
  }
}

/** Little-endian IEEE bytes: an f32.const / f64.const immediate. */
export function f32Bytes(x: number): number[] {
  return [...new Uint8Array(new Float32Array([x]).buffer)];
}

export function f64Bytes(x: number): number[] {
  return [...new Uint8Array(new Float64Array([x]).buffer)];
}

function name(out: number[], s: string): void {
  const bytes = new TextEncoder().encode(s);
  uleb(out, bytes.length);
  out.push(...bytes);
}

function section(out: number[], id: number, body: number[]): void {
  out.push(id);
  uleb(out, body.length);
  out.push(...body);
}

/** What a kernel's module holds besides the fixed parts (memory import, `run` export). */
export interface ModuleParts {
  /** Parameters of `run`, then its other locals. */
  readonly paramTypes: readonly WType[];
  readonly locals: readonly WType[];
  /** The body of `run`, ending with `end`. */
  readonly code: readonly number[];
  /** Functions imported as `m.<name>`, in function index order: `arity` f64 arguments, an f64 result. */
  readonly imports: ReadonlyArray<{ readonly name: string; readonly arity: number }>;
}

/**
 * The module: types, imports (`env.memory`, shared, 0..65536 pages; then `imports`),
 * one function `run` exported, its code. Parameter counts must be below 128.
 */
export function encodeModule(parts: ModuleParts): Uint8Array {
  const out = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  const types: number[][] = [];
  const typeIndex = (params: readonly WType[], results: readonly WType[]): number => {
    const t = [0x60, params.length, ...params, results.length, ...results];
    const key = t.join(',');
    const at = types.findIndex((x) => x.join(',') === key);
    if (at >= 0) return at;
    return types.push(t) - 1;
  };
  const runType = typeIndex(parts.paramTypes, []);
  const importedTypes = parts.imports.map((m) => typeIndex(new Array<WType>(m.arity).fill(F64), [F64]));
  const typeSec: number[] = [];
  uleb(typeSec, types.length);
  for (const t of types) {
    // Counts below 128 are their own LEB128.
    if ((t[1] ?? 0) >= 128) throw new Error('internal: a function type of 128 or more parameters');
    typeSec.push(...t);
  }
  section(out, 1, typeSec);

  const importSec: number[] = [];
  uleb(importSec, 1 + parts.imports.length);
  name(importSec, 'env');
  name(importSec, 'memory');
  // Memory, shared, limits 0..65536 pages (the device's memory lies within).
  importSec.push(0x02, 0x03);
  uleb(importSec, 0);
  uleb(importSec, 65536);
  parts.imports.forEach((m, i) => {
    name(importSec, 'm');
    name(importSec, m.name);
    importSec.push(0x00);
    uleb(importSec, importedTypes[i] as number);
  });
  section(out, 2, importSec);

  const funcSec: number[] = [];
  uleb(funcSec, 1);
  uleb(funcSec, runType);
  section(out, 3, funcSec);

  const exportSec: number[] = [];
  uleb(exportSec, 1);
  name(exportSec, 'run');
  exportSec.push(0x00);
  // `run` comes after the imported functions in the function index space.
  uleb(exportSec, parts.imports.length);
  section(out, 7, exportSec);

  const body: number[] = [];
  // Locals as runs of one type.
  const runs: Array<[number, WType]> = [];
  for (const t of parts.locals) {
    const last = runs[runs.length - 1];
    if (last && last[1] === t) last[0]++;
    else runs.push([1, t]);
  }
  uleb(body, runs.length);
  for (const [n, t] of runs) {
    uleb(body, n);
    body.push(t);
  }
  body.push(...parts.code);
  const codeSec: number[] = [];
  uleb(codeSec, 1);
  uleb(codeSec, body.length);
  codeSec.push(...body);
  section(out, 10, codeSec);
  return new Uint8Array(out);
}
