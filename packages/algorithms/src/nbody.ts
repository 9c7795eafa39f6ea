/**
 * N-body (seed 002): all-pairs gravitation in f32, G = 1. Bodies are vec4
 * (x, y, z, mass) in an f32 buffer of length 4n; velocities likewise (vx, vy, vz, 0).
 *
 *   a_i = Σ_j m_j (x_j − x_i) / (|x_j − x_i|² + ε²)^(3/2)
 *
 * over all j; the j = i term is zero (and any term with |x_j − x_i|² + ε² = 0 is
 * taken as zero rather than NaN). Each step is kick-drift-kick leapfrog:
 * v += a(x)·dt/2; x += v·dt; v += a(x)·dt/2. The acceleration of the new
 * positions is kept for the next step's first kick, so a step costs one force
 * evaluation (plus one before the first step).
 *
 * Workgroup devices: each workgroup walks the bodies in tiles of wg bodies staged
 * through workgroup memory (one barrier-separated load per tile), each invocation
 * owning one body. Gather devices: one invocation per output component (4 per
 * body), each summing over all bodies from global memory; every kernel writes
 * only its own element.
 */
import {
  type Buffer,
  buffer,
  type Device,
  defineKernel,
  InvalidArgumentError,
  inverseSqrt,
  type KernelBuilder,
  select,
  uniform,
  type Val,
  vec,
} from '@trident/core';
import { blockSize, cachedKernel, checkBuffer, checkCount, checkFits, familyOf, gatherSize, scratch } from './common.ts';

/** Floating-point operations counted per interaction when reporting GFLOP/s. */
export const NBODY_FLOPS_PER_INTERACTION = 20;
/** Interactions per inner-loop iteration of the tiled kernel. */
const UNROLL = 4;
/** ε² when none is given. */
export const DEFAULT_SOFTENING2 = 1e-6;

export interface NBodyOptions {
  /** Leapfrog steps to take (an integer >= 0). */
  readonly steps: number;
  /** Time step (finite). */
  readonly dt: number;
  /** ε², the softening squared (finite, >= 0); default 1e-6. The CLI's `--softening` is ε. */
  readonly softening2?: number;
  /** Initial velocities (f32, length 4n, (vx, vy, vz, w) with w carried through unchanged); zero if not given. */
  readonly velocities?: Buffer<'f32'>;
}

export interface NBodyResult {
  /** New buffer: final (x, y, z, mass) per body. */
  readonly bodies: Buffer<'f32'>;
  /** New buffer: final (vx, vy, vz, w) per body (w as given, 0 by default). */
  readonly velocities: Buffer<'f32'>;
}

/** Sums one interaction into (ax, ay, az). */
function interact(
  k: KernelBuilder,
  p: { x: Val<'f32'>; y: Val<'f32'>; z: Val<'f32'> },
  b: { x: Val<'f32'>; y: Val<'f32'>; z: Val<'f32'>; w: Val<'f32'> },
  eps2: Val<'f32'>,
): [Val<'f32'>, Val<'f32'>, Val<'f32'>] {
  const dx = k.let(b.x.sub(p.x), 'dx');
  const dy = k.let(b.y.sub(p.y), 'dy');
  const dz = k.let(b.z.sub(p.z), 'dz');
  const r2 = k.let(dx.mul(dx).add(dy.mul(dy)).add(dz.mul(dz)).add(eps2), 'r2');
  const inv = k.let(inverseSqrt(r2), 'inv');
  const s = k.let(select(r2.gt(0), b.w.mul(inv.mul(inv).mul(inv)), 0), 's');
  return [dx.mul(s), dy.mul(s), dz.mul(s)];
}

/**
 * Workgroup kernel: acc = a(pos); velOut = velIn + acc · halfDt (halfDt = 0 copies).
 * Tiles of wg bodies go through workgroup memory.
 */
function tiledKernel(wg: number) {
  return cachedKernel(`nbody-tiled:${wg}`, () =>
    defineKernel({
      name: 'nbody_accel_kick_tiled',
      workgroupSize: wg,
      params: {
        pos: buffer('f32', 'read', { vector: 4 }),
        velIn: buffer('f32', 'read', { vector: 4 }),
        velOut: buffer('f32', 'write', { vector: 4 }),
        acc: buffer('f32', 'write', { vector: 4 }),
        n: uniform('u32'),
        eps2: uniform('f32'),
        halfDt: uniform('f32'),
      },
      body: ({ pos, velIn, velOut, acc, n, eps2, halfDt }, k) => {
        const tile = k.workgroupArray('vec4<f32>', wg);
        const i = k.let(k.globalIndex, 'i');
        const p = k.let(pos.load(i), 'p'); // zero past n: harmless, never stored
        const ax = k.var('f32', 0, 'ax');
        const ay = k.var('f32', 0, 'ay');
        const az = k.var('f32', 0, 'az');
        const start = k.var('u32', 0, 'start');
        k.while(
          () => start.lt(n),
          () => {
            // Bodies past n load as zero: mass 0 adds nothing.
            tile.store(k.localIndex, pos.load(start.add(k.localIndex)));
            k.barrier();
            // Unrolled: UNROLL independent interactions per iteration for the scheduler.
            const unroll = Math.min(UNROLL, wg);
            k.for({ from: 0, to: wg, step: unroll, type: 'u32' }, (j) => {
              for (let u = 0; u < unroll; u++) {
                const b = k.let(tile.load(u === 0 ? j : j.add(u)), 'b');
                const [fx, fy, fz] = interact(k, p, b, eps2);
                ax.set(ax.add(fx));
                ay.set(ay.add(fy));
                az.set(az.add(fz));
              }
            });
            k.barrier();
            start.set(start.add(wg));
          },
        );
        k.if(i.lt(n), () => {
          const a = vec('f32', ax, ay, az, 0);
          acc.store(i, a);
          velOut.store(i, velIn.load(i).add(a.mul(vec('f32', halfDt, halfDt, halfDt, halfDt))));
        });
      },
    }),
  );
}

/** Gather kernel: element e = 4·body + c of acc and velOut (c = 3: 0 and the input). */
function gatherKernel(wg: number) {
  return cachedKernel(`nbody-gather:${wg}`, () =>
    defineKernel({
      name: 'nbody_accel_kick_gather',
      workgroupSize: wg,
      params: {
        pos: buffer('f32', 'read'),
        velIn: buffer('f32', 'read'),
        velOut: buffer('f32', 'write'),
        acc: buffer('f32', 'write'),
        n: uniform('u32'),
        eps2: uniform('f32'),
        halfDt: uniform('f32'),
      },
      body: ({ pos, velIn, velOut, acc, n, eps2, halfDt }, k) => {
        const e = k.let(k.globalIndex, 'e');
        k.if(e.lt(n.mul(4)), () => {
          const body = k.let(e.shr(2), 'body');
          const c = k.let(e.and(3), 'c');
          const base = k.let(body.mul(4), 'base');
          const p = { x: pos.load(base), y: pos.load(base.add(1)), z: pos.load(base.add(2)) };
          const px = k.let(p.x, 'px');
          const py = k.let(p.y, 'py');
          const pz = k.let(p.z, 'pz');
          const ax = k.var('f32', 0, 'ax');
          const ay = k.var('f32', 0, 'ay');
          const az = k.var('f32', 0, 'az');
          k.for({ from: 0, to: n }, (j) => {
            const o = k.let(j.mul(4), 'o');
            const b = { x: pos.load(o), y: pos.load(o.add(1)), z: pos.load(o.add(2)), w: pos.load(o.add(3)) };
            const [fx, fy, fz] = interact(k, { x: px, y: py, z: pz }, b, eps2);
            ax.set(ax.add(fx));
            ay.set(ay.add(fy));
            az.set(az.add(fz));
          });
          const a = k.let(select(c.eq(0), ax, select(c.eq(1), ay, select(c.eq(2), az, 0))), 'a');
          acc.store(e, a);
          velOut.store(e, velIn.load(e).add(a.mul(halfDt)));
        });
      },
    }),
  );
}

/** Element-wise kick + drift: v' = v + a·halfDt; x' = x + v'·dt (mass and w kept). */
function kickDriftKernel(wg: number) {
  return cachedKernel(`nbody-kd:${wg}`, () =>
    defineKernel({
      name: 'nbody_kick_drift',
      workgroupSize: wg,
      params: {
        pos: buffer('f32', 'read'),
        vel: buffer('f32', 'read'),
        acc: buffer('f32', 'read'),
        posOut: buffer('f32', 'write'),
        velOut: buffer('f32', 'write'),
        m: uniform('u32'),
        dt: uniform('f32'),
        halfDt: uniform('f32'),
      },
      body: ({ pos, vel, acc, posOut, velOut, m, dt, halfDt }, k) => {
        const e = k.let(k.globalIndex, 'e');
        k.if(e.lt(m), () => {
          const isW = e.and(3).eq(3);
          const v = k.let(vel.load(e).add(acc.load(e).mul(halfDt)), 'v');
          const x = pos.load(e);
          posOut.store(e, select(isW, x, x.add(v.mul(dt))));
          velOut.store(e, select(isW, vel.load(e), v));
        });
      },
    }),
  );
}

function validate(device: Device, bodies: Buffer<'f32'>, options: NBodyOptions | { softening2?: number }, needSteps: boolean): number {
  checkBuffer(device, bodies, 'bodies', ['f32']);
  if (bodies.length % 4 !== 0)
    throw new InvalidArgumentError('bodies', `length ${bodies.length} is not a multiple of 4 (x, y, z, mass per body)`);
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options', 'must be an object');
  if (needSteps) {
    const o = options as NBodyOptions;
    checkCount('options.steps', o.steps);
    if (typeof o.dt !== 'number' || !Number.isFinite(o.dt))
      throw new InvalidArgumentError('options.dt', `must be a finite number, got ${String(o.dt)}`);
    if (o.velocities !== undefined) {
      checkBuffer(device, o.velocities, 'options.velocities', ['f32']);
      if (o.velocities.length !== bodies.length) {
        throw new InvalidArgumentError(
          'options.velocities',
          `length ${o.velocities.length} differs from the bodies length ${bodies.length}`,
        );
      }
    }
  }
  const eps2 = options.softening2 ?? DEFAULT_SOFTENING2;
  if (typeof eps2 !== 'number' || !Number.isFinite(eps2) || eps2 < 0) {
    throw new InvalidArgumentError('options.softening2', `must be a finite number >= 0, got ${String(eps2)}`);
  }
  checkFits(device, bodies.length * 2, 'N-body temporaries');
  familyOf(device, 'nbody');
  return eps2;
}

/** Records acc = a(pos) and velOut = velIn + acc · halfDt. */
function recordAccelKick(
  device: Device,
  pos: Buffer,
  velIn: Buffer,
  velOut: Buffer,
  acc: Buffer,
  n: number,
  eps2: number,
  halfDt: number,
): void {
  if (familyOf(device, 'nbody') === 'workgroup') {
    const wg = blockSize(device.caps, 16, 256);
    device.dispatch(tiledKernel(wg), { invocations: n }, { pos, velIn, velOut, acc, n, eps2, halfDt });
  } else {
    device.dispatch(gatherKernel(gatherSize(device.caps)), { invocations: 4 * n }, { pos, velIn, velOut, acc, n, eps2, halfDt });
  }
}

/**
 * Accelerations a_i (as (ax, ay, az, 0) per body, a new f32 buffer of length 4n)
 * of `bodies` under all-pairs gravitation with softening ε² = `softening2`.
 * Complexity: n² interactions (20 flop each for reporting), O(n) memory.
 */
export function nbodyAccelerations(device: Device, bodies: Buffer<'f32'>, options: { softening2?: number } = {}): Buffer<'f32'> {
  const eps2 = validate(device, bodies, options, false);
  const n = bodies.length / 4;
  const acc = device.createBuffer('f32', bodies.length);
  if (n === 0) return acc;
  const vel = scratch(device, 'nbody.zero', 'f32', bodies.length);
  const velOut = scratch(device, 'nbody.sink', 'f32', bodies.length);
  recordAccelKick(device, bodies, vel, velOut, acc, n, eps2, 0);
  return acc;
}

/**
 * Integrates `bodies` for `steps` kick-drift-kick leapfrog steps of `dt` and
 * returns new buffers with the final bodies and velocities (inputs untouched).
 *
 * Complexity: (steps + 1) · n² interactions, O(n) memory; 2 + 2 · steps
 * dispatches. Accuracy: f32 throughout; `inverseSqrt` is not correctly rounded
 * on GPUs (relative error ~1e-7 .. 1e-6), so results match a float64 reference to
 * about 1e-5 relative per force evaluation, growing with steps as the dynamics
 * amplify differences. Edge cases: n = 0 returns empty buffers; steps = 0 returns
 * copies (velocities zero when not given); a single body never moves unless it has
 * a velocity; coincident bodies with ε² = 0 exert no force on each other.
 * Throws InvalidArgumentError for a bad bodies buffer (dtype, length not a
 * multiple of 4), steps not an integer >= 0, a non-finite dt, ε² < 0 or a
 * velocities length mismatch.
 */
export function nbody(device: Device, bodies: Buffer<'f32'>, options: NBodyOptions): NBodyResult {
  const eps2 = validate(device, bodies, options, true);
  const len = bodies.length;
  const n = len / 4;
  const { steps, dt } = options;
  const posA = device.createBuffer('f32', len);
  const velA = device.createBuffer('f32', len);
  if (n === 0) return { bodies: posA, velocities: velA };
  device.copyBuffer(bodies, posA);
  if (options.velocities) device.copyBuffer(options.velocities, velA);
  else velA.fill(0);
  if (steps === 0) return { bodies: posA, velocities: velA };
  const posB = device.createBuffer('f32', len);
  const velB = device.createBuffer('f32', len);
  const acc = scratch(device, 'nbody.acc', 'f32', len);
  const wg = gatherSize(device.caps);
  // a(x0); velB = velA.
  recordAccelKick(device, posA, velA, velB, acc, n, eps2, 0);
  let pos = posA;
  let vel = velB;
  let posNext = posB;
  let velNext = velA;
  for (let s = 0; s < steps; s++) {
    device.dispatch(
      kickDriftKernel(wg),
      { invocations: len },
      { pos, vel, acc, posOut: posNext, velOut: velNext, m: len, dt, halfDt: dt / 2 },
    );
    [pos, posNext] = [posNext, pos];
    [vel, velNext] = [velNext, vel];
    recordAccelKick(device, pos, vel, velNext, acc, n, eps2, dt / 2);
    [vel, velNext] = [velNext, vel];
  }
  // The spare pair is not returned: free it once the recorded work has run.
  const spare = [posNext, velNext];
  void device
    .flush()
    .catch(() => undefined)
    .finally(() => {
      for (const b of spare) b.destroy();
    });
  return { bodies: pos, velocities: vel };
}
