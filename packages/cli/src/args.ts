/** Thin helpers over node:util parseArgs that turn its errors into UsageError. */
import { availableParallelism } from 'node:os';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { BACKEND_KINDS, type BackendKind } from '@trident/core';
import { UsageError } from './errors.ts';

/** parseArgs' result for these options (spelt out: the declaration build must name it). */
export type Parsed<T extends NonNullable<ParseArgsConfig['options']>> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: boolean; strict: true }>
>;

/** A token that reads as a negative number (`-3`, `-0.5`, `-.5`, `-1e3`, `-Infinity`). */
const NEGATIVE_NUMBER = /^-(\d|\.\d|inf)/i;

/**
 * parseArgs reads `--bins -3` as `--bins` followed by an option `-3` and calls the
 * argument ambiguous. A negative number after an option that takes a value is
 * that option's value (`--dt -0.01` is a real use): joined as `--bins=-3`, it
 * reaches the option's own range check, whose message names the accepted range.
 */
function joinNegativeValues(argv: readonly string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    const name = token.startsWith('--') && !token.includes('=') ? token.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(`${token}=${next}`);
      i++;
    } else {
      out.push(token);
    }
  }
  return out;
}

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = false): Parsed<T> {
  try {
    return parseArgs({ args: joinNegativeValues(argv, options), options, allowPositionals, strict: true });
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

/** An integer >= 0 (step counts); the same forms as positiveInt. */
export function nonNegativeInt(value: string | undefined, flag: string, fallback?: number): number {
  if (value !== undefined && /^0+$/.test(value)) return 0;
  try {
    return positiveInt(value, flag, fallback);
  } catch (err) {
    if (err instanceof UsageError && value !== undefined) throw new UsageError(`${flag}: expected an integer >= 0, got '${value}'`);
    throw err;
  }
}

/**
 * `--workers N` for the cpu backend: 1 to the number of logical CPUs. Each
 * worker is a thread with its own heap (about 10 MB); workers beyond the CPUs
 * cannot run at once, so they only cost memory and context switches.
 */
export function workerCount(value: string | undefined, flag = '--workers'): number | undefined {
  if (value === undefined) return undefined;
  const n = positiveInt(value, flag);
  const cpus = availableParallelism();
  if (n > cpus) throw new UsageError(`${flag}: at most ${cpus} (the logical CPUs here), got ${n}`);
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
