/** Thin helpers over node:util parseArgs that turn its errors into UsageError. */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { BACKEND_KINDS, type BackendKind } from '@trident/core';
import { UsageError } from './errors.ts';

/** parseArgs' result for these options (spelt out: the declaration build must name it). */
export type Parsed<T extends NonNullable<ParseArgsConfig['options']>> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: boolean; strict: true }>
>;

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = false): Parsed<T> {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message.split('\n')[0]! : String(err));
  }
}

export function backendKind(value: string, flag = '--backend'): BackendKind {
  if (!(BACKEND_KINDS as readonly string[]).includes(value)) {
    throw new UsageError(`${flag}: unknown backend '${value}' (known: ${BACKEND_KINDS.join(', ')})`);
  }
  return value as BackendKind;
}

/** A positive integer option (sizes, counts); accepts `2^20` and `1e6` forms for convenience. */
export function positiveInt(value: string | undefined, flag: string, fallback?: number): number {
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`${flag} is required`);
    return fallback;
  }
  const pow = /^(\d+)\^(\d+)$/.exec(value);
  const n = pow ? Number(pow[1]) ** Number(pow[2]) : Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new UsageError(`${flag}: expected a positive integer, got '${value}'`);
  return n;
}

export function finiteNumber(value: string | undefined, flag: string, fallback?: number): number {
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`${flag} is required`);
    return fallback;
  }
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new UsageError(`${flag}: expected a number, got '${value}'`);
  return n;
}

/** Splits comma-separated list options, which may also be repeated. */
export function list(values: string | string[] | undefined): string[] {
  if (values === undefined) return [];
  return (Array.isArray(values) ? values : [values])
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}
