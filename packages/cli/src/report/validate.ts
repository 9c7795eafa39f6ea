/**
 * The rules a results file must meet to be read: `trident-bench/1` as bench/schema.ts types
 * it (and packages/cli/schema/bench-results.schema.json states it). Required fields present
 * with their types, enumerations among their values, counts whole and not negative, every
 * measurement timed (`ms`) or saying why not (`error`). Fields the schema does not name are
 * left alone (JSON Schema's default), so a newer writer's additions do not break a reader.
 *
 * The first problem is reported with its JSON path (`measurements[3].ms.median: …`), so a
 * hand-edited or foreign file says exactly what to fix.
 */
import type { BenchResults } from '../bench/schema.ts';
import { SCHEMA_ID } from '../bench/schema.ts';

type Json = Record<string, unknown>;

/** A place in the file and what is wrong there. */
export class SchemaViolation extends Error {
  override readonly name = 'SchemaViolation';
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v: unknown): string => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 40 ? `${s.slice(0, 37)}…` : s;
};

function object(v: unknown, path: string): Json {
  if (!isObject(v)) throw new SchemaViolation(path, `expected an object, got ${show(v)}`);
  return v;
}

function array(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw new SchemaViolation(path, `expected an array, got ${show(v)}`);
  return v;
}

/** Checks every element of the array at `path` (`path[i]`). */
function each(v: unknown, path: string, check: (element: unknown, path: string) => unknown): void {
  array(v, path).forEach((x, i) => {
    check(x, `${path}[${i}]`);
  });
}

function string(v: unknown, path: string): string {
  if (typeof v !== 'string') throw new SchemaViolation(path, `expected a string, got ${show(v)}`);
  return v;
}

function number(v: unknown, path: string, min = Number.NEGATIVE_INFINITY): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new SchemaViolation(path, `expected a number, got ${show(v)}`);
  if (v < min) throw new SchemaViolation(path, `expected at least ${min}, got ${v}`);
  return v;
}

function count(v: unknown, path: string, min = 0): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min)
    throw new SchemaViolation(path, `expected an integer of at least ${min}, got ${show(v)}`);
  return v;
}

function oneOf<T extends string>(v: unknown, path: string, values: readonly T[]): T {
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v))
    throw new SchemaViolation(path, `expected one of ${values.join(', ')}, got ${show(v)}`);
  return v as T;
}

function optional(v: Json, key: string, path: string, check: (value: unknown, path: string) => unknown): void {
  if (v[key] !== undefined) check(v[key], `${path}.${key}`);
}

/** An optional field of the top-level object, checked at the path that is its name. */
function topLevel(v: Json, key: string, check: (value: unknown, path: string) => unknown): void {
  if (v[key] !== undefined) check(v[key], key);
}

function stringRecord(v: unknown, path: string): void {
  for (const [k, x] of Object.entries(object(v, path))) string(x, `${path}.${k}`);
}

function stats(v: unknown, path: string): void {
  const s = object(v, path);
  for (const k of ['median', 'min', 'max', 'q1', 'q3']) number(s[k], `${path}.${k}`, 0);
  each(s.samples, `${path}.samples`, (x, p) => number(x, p, 0));
}

function measurement(v: unknown, path: string): void {
  const m = object(v, path);
  for (const k of ['algorithm', 'variant', 'implementation', 'backend', 'adapter']) string(m[k], `${path}.${k}`);
  oneOf(m.runtime, `${path}.runtime`, ['node', 'chromium', 'native']);
  count(m.n, `${path}.n`);
  oneOf(m.dtype, `${path}.dtype`, ['u32', 'i32', 'f32']);
  oneOf(m.timer, `${path}.timer`, ['gpu-timestamp', 'wall']);
  count(m.warmup, `${path}.warmup`);
  count(m.repeats, `${path}.repeats`);
  optional(m, 'role', path, (x, p) => oneOf(x, p, ['ceiling']));
  optional(m, 'ms', path, stats);
  optional(m, 'wallMs', path, stats);
  optional(m, 'wallWithReadMs', path, stats);
  optional(m, 'protocol', path, (x, p) => oneOf(x, p, PROTOCOLS));
  for (const k of ['bytes', 'flops', 'edges']) optional(m, k, path, (x, p) => number(x, p, 0));
  optional(m, 'throughput', path, (x, p) => {
    const t = object(x, p);
    number(t.value, `${p}.value`, 0);
    oneOf(t.unit, `${p}.unit`, ['GB/s', 'GFLOP/s', 'GTEPS']);
  });
  optional(m, 'verified', path, (x, p) => {
    if (typeof x !== 'boolean') throw new SchemaViolation(p, `expected a boolean, got ${show(x)}`);
  });
  optional(m, 'error', path, string);
  if (m.ms === undefined && m.error === undefined) throw new SchemaViolation(path, "neither 'ms' (a time) nor 'error' (why there is none)");
}

const PROTOCOLS = ['adaptive', 'sustained'] as const;

/**
 * A row's `protocol` against the file's: where the file names one (absent: adaptive), a row that
 * names one names the same; where it says 'mixed', every timed row but a native anchor's (timed
 * by its own program) names its own.
 */
function protocolAgrees(v: Json, path: string, file: string | undefined): void {
  const row = v.protocol as string | undefined;
  if (file === 'mixed') {
    if (row === undefined && v.ms !== undefined && v.runtime !== 'native')
      throw new SchemaViolation(`${path}.protocol`, "missing: settings.protocol is 'mixed', so every timed row says how it was timed");
  } else if (row !== undefined && row !== (file ?? 'adaptive')) {
    throw new SchemaViolation(`${path}.protocol`, `${show(row)} in a file whose settings.protocol is ${show(file ?? 'adaptive')}`);
  }
}

function device(v: unknown, path: string): void {
  const d = object(v, path);
  for (const k of ['backend', 'adapter']) string(d[k], `${path}.${k}`);
  oneOf(d.runtime, `${path}.runtime`, ['node', 'chromium']);
  if (typeof d.software !== 'boolean') throw new SchemaViolation(`${path}.software`, `expected a boolean, got ${show(d.software)}`);
  const caps = object(d.caps, `${path}.caps`);
  for (const [k, x] of Object.entries(object(caps.limits, `${path}.caps.limits`))) number(x, `${path}.caps.limits.${k}`);
  each(caps.features, `${path}.caps.features`, string);
  oneOf(caps.timerSource, `${path}.caps.timerSource`, ['gpu-timestamp', 'wall']);
  stringRecord(d.formulations, `${path}.formulations`);
  optional(d, 'details', path, object);
}

function anchors(v: unknown, path: string): void {
  const a = object(v, path);
  each(a.outputs, `${path}.outputs`, (x, p) => {
    const o = object(x, p);
    oneOf(o.kind, `${p}.kind`, ['cub', 'nbody']);
    string(o.file, `${p}.file`);
    each(o.lines, `${p}.lines`, string);
  });
  each(a.measurements, `${path}.measurements`, measurement);
}

function conformanceRun(v: unknown, path: string): void {
  const c = object(v, path);
  string(c.backend, `${path}.backend`);
  optional(c, 'runtime', path, (x, p) => oneOf(x, p, ['node', 'chromium']));
  count(c.passed, `${path}.passed`);
  count(c.failed, `${path}.failed`);
  optional(c, 'commit', path, string);
  optional(c, 'failures', path, (x, p) =>
    each(x, p, (f, q) => {
      const o = object(f, q);
      string(o.test, `${q}.test`);
      string(o.error, `${q}.error`);
    }),
  );
}

/** `json` as a results file, or a SchemaViolation naming the first problem. */
export function validateResults(json: unknown): BenchResults {
  const r = object(json, '(top level)');
  if (r.schema !== SCHEMA_ID)
    throw new SchemaViolation(
      'schema',
      `${r.schema === undefined ? 'missing' : `${show(r.schema)}, not '${SCHEMA_ID}'`} (results of earlier shapes: convert them with scripts/convert-results.ts)`,
    );
  const created = string(r.createdAt, 'createdAt');
  if (Number.isNaN(Date.parse(created))) throw new SchemaViolation('createdAt', `not an ISO 8601 time: ${show(created)}`);
  const label = string(r.label, 'label');
  if (!/^[A-Za-z0-9_.-]+$/.test(label)) throw new SchemaViolation('label', `use letters, digits, '-', '_' or '.', got ${show(label)}`);
  const machine = object(r.machine, 'machine');
  string(machine.os, 'machine.os');
  string(machine.cpu, 'machine.cpu');
  for (const k of ['arch', 'node', 'hostname', 'gpu', 'browser']) optional(machine, k, 'machine', string);
  optional(machine, 'cores', 'machine', (x, p) => count(x, p, 1));
  optional(machine, 'memoryBytes', 'machine', (x, p) => number(x, p, 0));
  stringRecord(r.adapters, 'adapters');
  stringRecord(r.versions, 'versions');
  const settings = object(r.settings, 'settings');
  string(settings.command, 'settings.command');
  count(settings.warmup, 'settings.warmup');
  optional(settings, 'warmupMs', 'settings', (x, p) => number(x, p, 0));
  count(settings.repeats, 'settings.repeats', 1);
  for (const [k, sizes] of Object.entries(object(settings.sizes, 'settings.sizes')))
    each(sizes, `settings.sizes.${k}`, (n, p) => count(n, p));
  optional(settings, 'suite', 'settings', string);
  optional(settings, 'protocol', 'settings', (x, p) => oneOf(x, p, [...PROTOCOLS, 'mixed']));
  each(r.measurements, 'measurements', (x, p) => {
    measurement(x, p);
    protocolAgrees(x as Json, p, settings.protocol as string | undefined);
  });
  topLevel(r, 'devices', (x, p) => each(x, p, device));
  topLevel(r, 'notes', (x, p) => each(x, p, string));
  topLevel(r, 'unavailable', (x, p) =>
    each(x, p, (u, q) => {
      const o = object(u, q);
      for (const k of ['backend', 'runtime', 'reason']) string(o[k], `${q}.${k}`);
    }),
  );
  topLevel(r, 'anchors', anchors);
  topLevel(r, 'conformance', (x, p) => each(x, p, conformanceRun));
  topLevel(r, 'provenance', (x, p) => {
    const o = object(x, p);
    string(o.convertedBy, `${p}.convertedBy`);
    string(o.originalShape, `${p}.originalShape`);
    object(o.original, `${p}.original`);
  });
  return r as unknown as BenchResults;
}
