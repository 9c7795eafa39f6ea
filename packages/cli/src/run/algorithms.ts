/**
 * How each algorithm of @trident/algorithms maps onto `trident run`: the flags
 * it takes and the checks on its input files, done host-side before a device
 * exists. The result is a JobSpec that execute.ts runs on a device (in Node or
 * in the Chromium page). The contract is docs/cli.md's, exactly.
 */
import { DEFAULT_SOFTENING2 } from '@trident/algorithms';
import { finiteNumber, nonNegativeInt, positiveInt } from '../args.ts';
import { InputError, UsageError } from '../errors.ts';
import { type NpyArray, type NpyDType, readNpy } from '../npy.ts';
import type { DeclaredBuffer } from './device-fit.ts';
import { type JobSpec, SORT_METHODS } from './execute.ts';
import { GRAPH_ALGORITHMS } from './graph-commands.ts';
import { HostBudget } from './host-budget.ts';

/** Every flag any algorithm takes; each algorithm lists the ones it accepts. */
export const RUN_OPTIONS = {
  backend: { type: 'string' },
  workers: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  in: { type: 'string' },
  out: { type: 'string' },
  op: { type: 'string' },
  exclusive: { type: 'boolean' },
  bins: { type: 'string' },
  flags: { type: 'string' },
  method: { type: 'string' },
  values: { type: 'string' },
  'out-values': { type: 'string' },
  velocities: { type: 'string' },
  'out-velocities': { type: 'string' },
  steps: { type: 'string' },
  dt: { type: 'string' },
  softening: { type: 'string' },
  graph: { type: 'string' },
  source: { type: 'string' },
  'out-weight': { type: 'string' },
} as const;

export type RunValues = { [K in keyof typeof RUN_OPTIONS]?: (typeof RUN_OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** A checked job and where its outputs go, by role. */
export interface PreparedJob {
  readonly spec: JobSpec;
  readonly outputs: Readonly<Record<string, string>>;
}

export interface AlgorithmCli {
  readonly usage: string;
  /** Flags it accepts beyond --backend, --workers and --help. */
  readonly flags: readonly (keyof typeof RUN_OPTIONS)[];
  /**
   * Reads and checks the inputs; throws NpyError / InputError / UsageError (exit 2).
   * What the files declare is reserved from `budget` before it is read.
   */
  prepare(values: RunValues, budget?: HostBudget): PreparedJob;
  /**
   * Where a file can declare more than it holds (a `.npz` shape): what the job's
   * device buffers will need, read from the headers only (InputError on a
   * malformed header). The CLI calls it before any device is made, checks the
   * result against the device once it exists, and only then calls `prepare`.
   */
  declare?(values: RunValues, budget?: HostBudget): readonly DeclaredBuffer[];
}

// ---------- input checks ----------

export function required(values: RunValues, flag: 'in' | 'out' | 'flags' | 'steps' | 'dt' | 'bins'): string {
  const v = values[flag];
  if (v === undefined || v === '') throw new UsageError(`--${flag} is required`);
  return v;
}

/** A 1-D array of one of `dtypes`. */
export function vector(file: string, dtypes: readonly NpyDType[], budget: HostBudget): NpyArray {
  const a = readNpy(file, (f, what, n) => budget.take(f, what, n));
  if (a.shape.length !== 1) throw new InputError(file, `wrong shape (${a.shape.join(', ')}): expected a 1-D array`);
  if (!dtypes.includes(a.dtype)) throw new InputError(file, `dtype ${a.dtype} is not accepted here (expected ${dtypes.join(' / ')})`);
  return a;
}

const ALL: readonly NpyDType[] = ['u32', 'i32', 'f32'];

/** Checks a choice flag, naming the flag and the choices. */
export function choice<T extends string>(value: string | undefined, flag: string, allowed: readonly T[], fallback?: T): T {
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`--${flag} is required (one of ${allowed.join(', ')})`);
    return fallback;
  }
  if (!(allowed as readonly string[]).includes(value))
    throw new UsageError(`--${flag}: expected one of ${allowed.join(', ')}, got '${value}'`);
  return value as T;
}

// ---------- the algorithms ----------

/** An (n, 4) f32 array: bodies (x, y, z, mass) or velocities (vx, vy, vz, w). */
export function bodiesArray(file: string, budget: HostBudget): NpyArray {
  const a = readNpy(file, (f, what, n) => budget.take(f, what, n));
  if (a.dtype !== 'f32') throw new InputError(file, `dtype ${a.dtype} is not accepted here (expected f32)`);
  if (a.shape.length !== 2 || a.shape[1] !== 4)
    throw new InputError(file, `wrong shape (${a.shape.join(', ')}): expected (n, 4) = x, y, z, mass`);
  return a;
}

/**
 * A velocities file for `n` bodies: (n, 3) = vx, vy, vz (the shape a NumPy user has)
 * or (n, 4) with a 4th column carried through. Returned as the (n, 4) rows the library
 * takes (a 0 4th column for (n, 3)) and the column count given, so the output keeps it.
 */
export function velocitiesArray(file: string, n: number, bodiesFile: string, budget: HostBudget): { rows4: NpyArray; columns: 3 | 4 } {
  const a = readNpy(file, (f, what, bytes) => budget.take(f, what, bytes));
  if (a.dtype !== 'f32') throw new InputError(file, `dtype ${a.dtype} is not accepted here (expected f32)`);
  const columns = a.shape[1];
  if (a.shape.length !== 2 || (columns !== 3 && columns !== 4)) {
    throw new InputError(
      file,
      `wrong shape (${a.shape.join(', ')}): expected (n, 3) = vx, vy, vz (or (n, 4), the 4th column carried through)`,
    );
  }
  if (a.shape[0] !== n) throw new InputError(file, `${a.shape[0]} velocities for ${n} bodies in ${bodiesFile}`);
  if (columns === 4) return { rows4: a, columns };
  const data = new Float32Array(4 * n);
  for (let i = 0; i < n; i++) data.set((a.data as Float32Array).subarray(3 * i, 3 * i + 3), 4 * i);
  return { rows4: { dtype: 'f32', shape: [n, 4], data }, columns };
}

const NO_PARAMS: Readonly<Record<string, string>> = {};

/** `base` plus `key: value` when a value was given (optional inputs and outputs). */
function withOptional<T>(base: Record<string, T>, key: string, value: T | undefined): Record<string, T> {
  return value === undefined ? base : { ...base, [key]: value };
}

export const ALGORITHMS: Record<string, AlgorithmCli> = {
  zcopy: {
    usage: 'zcopy --in x.npy --out y.npy',
    flags: ['in', 'out'],
    prepare(values, budget = new HostBudget()) {
      const input = vector(required(values, 'in'), ALL, budget);
      return { spec: { algorithm: 'zcopy', params: {}, inputs: { in: input } }, outputs: { out: required(values, 'out') } };
    },
  },
  reduce: {
    usage: 'reduce --op sum|min|max --in x.npy --out r.npy   (a 1-element array of the input dtype)',
    flags: ['op', 'in', 'out'],
    prepare(values, budget = new HostBudget()) {
      const op = choice(values.op, 'op', ['sum', 'min', 'max']);
      const inFile = required(values, 'in');
      const input = vector(inFile, ALL, budget);
      // As NumPy: the sum of nothing is 0, but an empty array has no minimum or maximum (np.min raises).
      if (input.data.length === 0 && op !== 'sum')
        throw new InputError(inFile, `${op} of an empty array is undefined (sum of nothing is 0)`);
      return { spec: { algorithm: 'reduce', params: { op }, inputs: { in: input } }, outputs: { out: required(values, 'out') } };
    },
  },
  scan: {
    usage: 'scan [--exclusive] --in x.npy --out y.npy   (prefix sums; u32/i32 wrap modulo 2^32)',
    flags: ['exclusive', 'in', 'out'],
    prepare(values, budget = new HostBudget()) {
      const input = vector(required(values, 'in'), ALL, budget);
      const params = { exclusive: values.exclusive === true };
      return { spec: { algorithm: 'scan', params, inputs: { in: input } }, outputs: { out: required(values, 'out') } };
    },
  },
  histogram: {
    usage:
      'histogram --bins N --in x.npy --out h.npy   (x: u32; bin v counts the elements equal to v; values >= N are ignored; h: u32 counts)',
    flags: ['bins', 'in', 'out'],
    prepare(values, budget = new HostBudget()) {
      const bins = positiveInt(values.bins, '--bins');
      const input = vector(required(values, 'in'), ['u32'], budget);
      return { spec: { algorithm: 'histogram', params: { bins }, inputs: { in: input } }, outputs: { out: required(values, 'out') } };
    },
  },
  compact: {
    usage: 'compact --in x.npy --flags f.npy --out y.npy   (keeps x[i] where f[i] != 0, in order; f: u32, same length as x)',
    flags: ['in', 'flags', 'out'],
    prepare(values, budget = new HostBudget()) {
      const inFile = required(values, 'in');
      const input = vector(inFile, ALL, budget);
      const flagsFile = required(values, 'flags');
      const flags = vector(flagsFile, ['u32'], budget);
      if (flags.data.length !== input.data.length) {
        throw new InputError(flagsFile, `length ${flags.data.length} differs from the length ${input.data.length} of ${inFile}`);
      }
      return { spec: { algorithm: 'compact', params: {}, inputs: { in: input, flags } }, outputs: { out: required(values, 'out') } };
    },
  },
  sort: {
    usage:
      'sort [--method radix|merge|bitonic|quick] --in keys.npy [--values v.npy] --out k.npy [--out-values v2.npy]   (ascending, stable; default: the best the device allows)',
    flags: ['method', 'in', 'values', 'out', 'out-values'],
    prepare(values, budget = new HostBudget()) {
      const method = values.method === undefined ? undefined : choice(values.method, 'method', SORT_METHODS);
      const keysFile = required(values, 'in');
      const keys = vector(keysFile, ALL, budget);
      const valuesFile = values.values;
      const vals = valuesFile === undefined ? undefined : vector(valuesFile, ALL, budget);
      if (valuesFile !== undefined && vals && vals.data.length !== keys.data.length) {
        throw new InputError(valuesFile, `length ${vals.data.length} differs from the length ${keys.data.length} of ${keysFile}`);
      }
      const out = required(values, 'out');
      const outValues = values['out-values'];
      if ((outValues === undefined) !== (valuesFile === undefined)) throw new UsageError('--values and --out-values go together');
      return {
        spec: {
          algorithm: 'sort',
          params: method ? { method } : NO_PARAMS,
          inputs: withOptional({ in: keys }, 'values', vals),
        },
        outputs: withOptional({ out }, 'out-values', outValues),
      };
    },
  },
  nbody: {
    usage:
      'nbody --in bodies.npy [--velocities v.npy] --steps S --dt DT [--softening EPS] --out bodies.npy [--out-velocities v2.npy]   (bodies: (n, 4) f32 = x, y, z, mass; velocities: (n, 3) f32 = vx, vy, vz, or (n, 4), written in the shape given, (n, 3) by default; leapfrog, G = 1)',
    flags: ['in', 'velocities', 'steps', 'dt', 'softening', 'out', 'out-velocities'],
    prepare(values, budget = new HostBudget()) {
      const inFile = required(values, 'in');
      const bodies = bodiesArray(inFile, budget);
      const velFile = values.velocities;
      const vel = velFile === undefined ? undefined : velocitiesArray(velFile, bodies.shape[0] as number, inFile, budget);
      const stepsText = required(values, 'steps');
      const steps = nonNegativeInt(stepsText, '--steps');
      const dt = finiteNumber(required(values, 'dt'), '--dt');
      const eps = finiteNumber(values.softening, '--softening', Math.sqrt(DEFAULT_SOFTENING2));
      if (eps < 0) throw new UsageError(`--softening: expected a number >= 0, got '${values.softening}'`);
      const out = required(values, 'out');
      const outVel = values['out-velocities'];
      return {
        spec: {
          algorithm: 'nbody',
          // The CLI takes the softening length ε; the library takes ε².
          params: {
            steps,
            dt,
            softening2: values.softening === undefined ? DEFAULT_SOFTENING2 : eps * eps,
            velocityColumns: vel?.columns ?? 3,
          },
          inputs: withOptional({ in: bodies }, 'velocities', vel?.rows4),
        },
        outputs: withOptional({ out }, 'out-velocities', outVel),
      };
    },
  },
  ...GRAPH_ALGORITHMS,
};
