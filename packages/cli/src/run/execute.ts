/**
 * The device side of `trident run`, free of Node APIs so the same code runs in
 * Node and in the headless Chromium page (for `--backend webgl2`): inputs and
 * outputs are plain typed arrays with a shape, keyed by role.
 */
import {
  bitonicSort,
  compact,
  histogram,
  mergeSort,
  nbody,
  quickSort,
  type ReduceOp,
  radixSort,
  reduceInto,
  type SortKeyType,
  type SortResult,
  scan,
  sort,
  zcopy,
} from '@trident/algorithms';
import type { Buffer, Device } from 'trident';
import { checkJobFitsDevice } from './device-fit.ts';
import { GRAPH_EXECUTORS } from './graph-execute.ts';

/** f64 only appears in outputs (mst's total weight); device buffers are 32-bit. */
export type HostData = Uint32Array | Int32Array | Float32Array | Float64Array;
export type DTypeName = 'u32' | 'i32' | 'f32' | 'f64';

export interface HostArray {
  readonly dtype: DTypeName;
  readonly shape: readonly number[];
  readonly data: HostData;
}

/** One `trident run`: the algorithm, its parameters and its inputs by role ('in', 'flags', 'values', 'velocities'). */
export interface JobSpec {
  readonly algorithm: string;
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly inputs: Readonly<Record<string, HostArray>>;
}

/** Outputs by role ('out', 'out-values', 'out-velocities'). */
export type JobOutputs = Record<string, HostArray>;

export const SORT_METHODS = ['radix', 'merge', 'bitonic', 'quick'] as const;
export type SortMethod = (typeof SORT_METHODS)[number];

type SortFn = (
  device: Device,
  keys: Buffer<SortKeyType>,
  options?: { values?: Buffer },
) => SortResult<SortKeyType> | Promise<SortResult<SortKeyType>>;
const SORTS: Record<SortMethod, SortFn> = { radix: radixSort, merge: mergeSort, bitonic: bitonicSort, quick: quickSort };

const arr = (data: HostData, shape: readonly number[] = [data.length]): HostArray => ({
  dtype: data instanceof Uint32Array ? 'u32' : data instanceof Int32Array ? 'i32' : data instanceof Float64Array ? 'f64' : 'f32',
  shape,
  data,
});

function input(spec: JobSpec, role: string): HostArray {
  const a = spec.inputs[role];
  if (!a) throw new Error(`job has no '${role}' input`);
  return a;
}

type Executor = (device: Device, spec: JobSpec) => Promise<JobOutputs>;

const upload = (device: Device, a: HostArray): Buffer => device.createBuffer(a.dtype as 'u32', a.data as Uint32Array);

export const EXECUTORS: Record<string, Executor> = {
  ...GRAPH_EXECUTORS,
  async zcopy(device, spec) {
    return { out: arr(await zcopy(device, upload(device, input(spec, 'in'))).read()) };
  },
  async reduce(device, spec) {
    const r = reduceInto(device, upload(device, input(spec, 'in')), { op: spec.params.op as ReduceOp });
    return { out: arr(await r.read()) };
  },
  async scan(device, spec) {
    return { out: arr(await scan(device, upload(device, input(spec, 'in')), { exclusive: spec.params.exclusive === true }).read()) };
  },
  async histogram(device, spec) {
    const src = upload(device, input(spec, 'in')) as Buffer<'u32'>;
    return { out: arr(await histogram(device, src, { bins: spec.params.bins as number }).read()) };
  },
  async compact(device, spec) {
    const { output } = await compact(device, upload(device, input(spec, 'in')), upload(device, input(spec, 'flags')) as Buffer<'u32'>);
    return { out: arr(await output.read()) };
  },
  async sort(device, spec) {
    const method = spec.params.method as SortMethod | undefined;
    const run: SortFn = method === undefined ? sort : SORTS[method];
    const keys = upload(device, input(spec, 'in')) as Buffer<SortKeyType>;
    const values = spec.inputs.values ? upload(device, spec.inputs.values) : undefined;
    const result = await run(device, keys, values ? { values } : undefined);
    const out: JobOutputs = { out: arr(await result.keys.read()) };
    if (result.values) out['out-values'] = arr(await result.values.read());
    return out;
  },
  async nbody(device, spec) {
    const bodies = input(spec, 'in');
    const velocities = spec.inputs.velocities ? (upload(device, spec.inputs.velocities) as Buffer<'f32'>) : undefined;
    const r = nbody(device, upload(device, bodies) as Buffer<'f32'>, {
      steps: spec.params.steps as number,
      dt: spec.params.dt as number,
      softening2: spec.params.softening2 as number,
      ...(velocities ? { velocities } : {}),
    });
    const vel4 = await r.velocities.read();
    // Velocities go back in the shape they came in: (n, 3) unless an (n, 4) file was given.
    const n = bodies.shape[0] as number;
    const velOut = spec.params.velocityColumns === 4 ? arr(vel4, [n, 4]) : arr(dropFourthColumn(vel4, n), [n, 3]);
    return { out: arr(await r.bodies.read(), bodies.shape), 'out-velocities': velOut };
  },
};

function dropFourthColumn(rows4: Float32Array, n: number): Float32Array {
  const out = new Float32Array(3 * n);
  for (let i = 0; i < n; i++) out.set(rows4.subarray(4 * i, 4 * i + 3), 3 * i);
  return out;
}

export async function executeJob(device: Device, spec: JobSpec): Promise<JobOutputs> {
  const run = EXECUTORS[spec.algorithm];
  if (!run) throw new Error(`unknown algorithm '${spec.algorithm}'`);
  // Before any buffer: an input the device cannot hold is the input's fault, not a failure mid-run.
  checkJobFitsDevice(device.caps, spec);
  return run(device, spec);
}

// ---------- transport to and from the Chromium page (exact: raw bytes as base64) ----------

export interface WireArray {
  readonly dtype: DTypeName;
  readonly shape: readonly number[];
  readonly base64: string;
}

export function toWire(a: HostArray): WireArray {
  const bytes = new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { dtype: a.dtype, shape: a.shape, base64: btoa(s) };
}

export function fromWire(w: WireArray): HostArray {
  const s = atob(w.base64);
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  const data =
    w.dtype === 'u32'
      ? new Uint32Array(bytes.buffer)
      : w.dtype === 'i32'
        ? new Int32Array(bytes.buffer)
        : w.dtype === 'f64'
          ? new Float64Array(bytes.buffer)
          : new Float32Array(bytes.buffer);
  return { dtype: w.dtype, shape: w.shape, data };
}
