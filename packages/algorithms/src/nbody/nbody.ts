/**
 * N-body (as in Stephan 2019, SYCL / HC / HIP / CUDA compared): all-pairs gravitation in f32, G = 1. Bodies are vec4
 * (x, y, z, mass) in an f32 buffer of length 4n; velocities likewise (vx, vy, vz, 0).
 *
 *   a_i = Σ_j m_j (x_j − x_i) / (|x_j − x_i|² + ε²)^(3/2)
 *
 * over all j; the j = i term is zero, as is every term of two coincident bodies
 * (|x_j − x_i| = 0: zero rather than 0 · ∞ = NaN). Each step is kick-drift-kick leapfrog:
 * v += a(x)·dt/2; x += v·dt; v += a(x)·dt/2. The acceleration of the new
 * positions is kept for the next step's first kick, so a step costs one force
 * evaluation (plus one before the first step).
 *
 * Workgroup devices: each workgroup walks the bodies in tiles of wg bodies staged
 * through workgroup memory (one barrier-separated load per tile), each invocation
 * owning B bodies (register blocking: every tile entry read serves B interactions;
 * `NBodyTiling`). Where ε² >= 1e-12 a coincident pair's term is 0 · (finite) = 0
 * by itself, and the host picks the kernel without the coincidence select (the
 * other is the same but for it). Gather devices: each invocation owns 4
 * consecutive bodies (vec4 views; their sums go to 4 outputs, element i each, which
 * WebGL2 writes in one pass through MRT) and loops over all bodies from global
 * memory, so every body read serves 4 interactions — on WebGL2, where a vec4 is one
 * texel, one fetch per 4 interactions, where gpu.js's one fragment per body takes
 * one per interaction; a second pass puts the sums in body order and kicks. Every
 * kernel writes only its own element.
 *
 * Serial-workgroup devices (a CPU: few fat workers, each running its workgroups one
 * invocation after another, where workgroup memory and barriers only cost): each
 * invocation owns B consecutive bodies (`NBodyBlocking`) and walks every body j in
 * order, straight from the positions: no barriers, no workgroup memory, and every
 * worker's range of bodies is contiguous (workgroups of one invocation, wider only
 * where the grid limits ask). Without 'simd' the owned bodies sit in scalar
 * variables and j is read with scalar loads from a scalar f32 view; with 'simd'
 * (vec4 values in SIMD registers) they sit in the lanes of vec4 values and one
 * vec4 operation serves four interactions, for ε² >= 1e-12 (below it the scalar
 * kernel runs: a lane-wise select does not exist). The terms are the same, in the
 * form that costs least where every f32 operation rounds on its own (see
 * `interactSerial`); the edge-case rules (the coincidence select, dropped where
 * ε² >= 1e-12) and the summation order (j ascending) are the tiled kernel's. j is
 * not tiled: 8192 bodies' positions are 128 KiB, in L2, and each one read serves B
 * interactions (tens of operations per 16 bytes), so the loop is bound by its
 * arithmetic, not by the cache; sizes whose positions leave L2 take hours.
 */
import {
  type Buffer,
  buffer,
  type Device,
  defineKernel,
  f32,
  fma,
  InvalidArgumentError,
  inverseSqrt,
  type KernelBuilder,
  select,
  sqrt,
  uniform,
  type Val,
  type Var,
  vec,
} from '@trident/core';
import { blockSize, cachedKernel, checkBuffer, checkCount, checkFits, gatherSize, scratch } from '../common.ts';
import { capableFamily, chooseFamily, type Formulation } from '../plan.ts';
import * as TUNING from './tuning.ts';

/** Floating-point operations counted per interaction when reporting GFLOP/s. */
export const NBODY_FLOPS_PER_INTERACTION = 20;
/** ε² when none is given. */
export const DEFAULT_SOFTENING2 = 1e-6;
/**
 * The smallest ε² for which the tiled kernel drops the coincidence select: then
 * ε^-3 <= 1e18, so m · ε^-3 stays finite for any |m| < 3.4e20 and a coincident
 * pair's term (the j = i one included) is 0 · (finite) = 0 without it. Below it,
 * m / ε^3 may overflow f32 and the select is what keeps such terms zero.
 */
const UNGUARDED_MIN_SOFTENING2 = 1e-12;

/**
 * How the workgroup (tiled) formulation is laid out. Each invocation owns
 * `bodiesPerInvocation` bodies, so every body read from workgroup memory serves
 * that many interactions (register blocking); the inner loop is unrolled
 * `unroll` tile entries deep.
 */
export interface NBodyTiling {
  /** Invocations per workgroup, which is also the tile: bodies staged per barrier pair (a power of two). */
  readonly workgroupSize: number;
  /** Bodies each invocation owns (1 .. 8). */
  readonly bodiesPerInvocation: number;
  /** Tile entries per inner-loop iteration (a power of two dividing workgroupSize). */
  readonly unroll: number;
}

/** The largest default tiling (see `defaultTiling` and tuning.ts). */
const DEFAULT_TILING = TUNING.TILING.value;

/**
 * How the serial formulation ('serial-workgroups' devices) is laid out: each
 * invocation owns `bodiesPerInvocation` consecutive bodies, so every position read
 * serves that many interactions.
 */
export interface NBodyBlocking {
  /** Bodies each invocation owns (1 .. 8); on 'simd' devices a multiple of 4 puts them in vec4 lanes. */
  readonly bodiesPerInvocation: number;
}

/** The default serial blocking (tuning.ts). */
const DEFAULT_BLOCKING = TUNING.BLOCKING.value;

export interface NBodyAccelerationOptions {
  /** ε², the softening squared (finite, >= 0); default 1e-6. The CLI's `--softening` is ε. */
  readonly softening2?: number;
  /**
   * The tiled formulation's layout, for benchmarks and tuning; ignored where the
   * device runs the gather formulation. On 'serial-workgroups' devices (a CPU),
   * giving it runs the tiled formulation instead of the serial one. Default: 512 invocations (capped by the
   * device's limits), unroll 16, 4 bodies per invocation (fewer where n is small
   * next to the device's concurrency).
   */
  readonly tiling?: NBodyTiling;
  /**
   * The serial formulation's layout ('serial-workgroups' devices: a CPU), for
   * benchmarks and tuning; ignored elsewhere, and where `tiling` is given (which
   * asks for the tiled formulation on such devices too). Default: 8 bodies per invocation.
   */
  readonly blocking?: NBodyBlocking;
}

export interface NBodyOptions extends NBodyAccelerationOptions {
  /** Leapfrog steps to take (an integer >= 0). */
  readonly steps: number;
  /** Time step (finite). */
  readonly dt: number;
  /** Initial velocities (f32, length 4n, (vx, vy, vz, w) with w carried through unchanged); zero if not given. */
  readonly velocities?: Buffer<'f32'>;
}

export interface NBodyResult {
  /** New buffer: final (x, y, z, mass) per body. */
  readonly bodies: Buffer<'f32'>;
  /** New buffer: final (vx, vy, vz, w) per body (w as given, 0 by default). */
  readonly velocities: Buffer<'f32'>;
}

/** The other body of an interaction: its position and mass (a vec4 value or four scalars). */
interface Source {
  readonly x: Val<'f32'>;
  readonly y: Val<'f32'>;
  readonly z: Val<'f32'>;
  readonly w: Val<'f32'>;
}

/** One body of an invocation: its position and its running acceleration. */
interface OwnedBody {
  readonly x: Val<'f32'>;
  readonly y: Val<'f32'>;
  readonly z: Val<'f32'>;
  readonly ax: Var<'f32'>;
  readonly ay: Var<'f32'>;
  readonly az: Var<'f32'>;
}

/**
 * Adds body q's pull on `p` to p's accelerations: 3 subtractions, 3 fma for r²
 * (ε² first), one inverseSqrt, 3 multiplications, 3 fma into the sums — the 20
 * counted flop in 12 instructions plus the reciprocal square root. `guarded`
 * keeps the select that makes a coincident pair's term zero; without it the
 * caller must guarantee that m · ε^-3 is finite (ε² >= UNGUARDED_MIN_SOFTENING2).
 */
function interact(k: KernelBuilder, p: OwnedBody, q: Source, eps2: Val<'f32'>, guarded: boolean): void {
  const dx = k.let(q.x.sub(p.x), 'dx');
  const dy = k.let(q.y.sub(p.y), 'dy');
  const dz = k.let(q.z.sub(p.z), 'dz');
  let inv: Val<'f32'>;
  let coincident: Val<'bool'> | undefined;
  if (guarded) {
    const d2 = k.let(fma(dx, dx, fma(dy, dy, dz.mul(dz))), 'd2');
    inv = k.let(inverseSqrt(d2.add(eps2)), 'inv');
    coincident = d2.eq(0);
  } else {
    inv = k.let(inverseSqrt(fma(dx, dx, fma(dy, dy, fma(dz, dz, eps2)))), 'inv');
  }
  const pull = q.w.mul(inv).mul(inv).mul(inv);
  const s = k.let(coincident ? select(coincident, 0, pull) : pull, 's');
  p.ax.set(fma(dx, s, p.ax));
  p.ay.set(fma(dy, s, p.ay));
  p.az.set(fma(dz, s, p.az));
}

/**
 * The serial kernel's interaction, for each body of `ps` (stage by stage across
 * them): `interact`'s terms, with m / (r² · √r²) for m · r^-3. Where every f32
 * operation rounds on its own (a `Math.fround` in JavaScript, whose conversions
 * dominate the loop) this form takes 12 roundings per interaction to
 * `interact`'s 13 and a square root and a division to a reciprocal square root and
 * three multiplications, which JavaScript runs faster. (WebAssembly, which takes fma
 * through f64, would rather have r² by separate multiplies and adds; there the 'simd'
 * devices' lanes kernel, which has them, runs wherever ε² >= 1e-12. LEDGER.md
 * nbody.serialInteraction.)
 * The rounding differs from `interact` by a few ulp per term, within the f32 bound
 * the conformance suite holds every formulation to. `guarded` as in `interact`.
 */
function interactSerial(k: KernelBuilder, ps: readonly OwnedBody[], q: Source, eps2: Val<'f32'>, guarded: boolean): void {
  const d = ps.map((p) => ({ x: k.let(q.x.sub(p.x), 'dx'), y: k.let(q.y.sub(p.y), 'dy'), z: k.let(q.z.sub(p.z), 'dz') }));
  // r² = (dx² + dy² + dz²) + ε², ε² first where unguarded (as `interact`).
  const d2 = d.map(({ x, y, z }) => k.let(fma(x, x, fma(y, y, guarded ? z.mul(z) : fma(z, z, eps2))), guarded ? 'd2' : 'r2'));
  const s = d2.map((dd) => {
    const r2 = guarded ? k.let(dd.add(eps2), 'r2') : dd;
    const pull = q.w.div(r2.mul(sqrt(r2)));
    return k.let(guarded ? select(dd.eq(0), 0, pull) : pull, 's');
  });
  ps.forEach((p, b) => {
    const { x, y, z } = d[b] as { x: Val<'f32'>; y: Val<'f32'>; z: Val<'f32'> };
    const sb = s[b] as Val<'f32'>;
    p.ax.set(fma(x, sb, p.ax));
    p.ay.set(fma(y, sb, p.ay));
    p.az.set(fma(z, sb, p.az));
  });
}

/**
 * Workgroup kernel: acc = a(pos); velOut = velIn + acc · halfDt (halfDt = 0 copies).
 * Workgroup w owns bodies w·wg·B + lid + b·wg (b < B, B = bodiesPerInvocation);
 * tiles of wg bodies go through workgroup memory, and each tile entry read serves
 * the B bodies of the invocation. Bodies past n load as zero (mass 0: they add
 * nothing, and are never stored).
 */
function tiledKernel(tiling: NBodyTiling, guarded: boolean) {
  const { workgroupSize: wg, bodiesPerInvocation: B, unroll } = tiling;
  return cachedKernel(`nbody-tiled:${wg}:${B}:${unroll}:${guarded ? 'guarded' : 'positive'}`, () =>
    defineKernel({
      name: guarded ? 'nbody_accel_kick_tiled' : 'nbody_accel_kick_tiled_soft',
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
        const first = k.let(k.workgroupIndex.mul(wg * B).add(k.localIndex), 'first');
        const index: Val<'u32'>[] = [];
        const owned: OwnedBody[] = [];
        for (let b = 0; b < B; b++) {
          const i = k.let(b === 0 ? first : first.add(b * wg), 'i');
          const p = k.let(pos.load(i), 'p');
          index.push(i);
          owned.push({
            x: k.let(p.x, 'px'),
            y: k.let(p.y, 'py'),
            z: k.let(p.z, 'pz'),
            ax: k.var('f32', 0, 'ax'),
            ay: k.var('f32', 0, 'ay'),
            az: k.var('f32', 0, 'az'),
          });
        }
        const start = k.var('u32', 0, 'start');
        k.while(
          () => start.lt(n),
          () => {
            tile.store(k.localIndex, pos.load(start.add(k.localIndex)));
            k.barrier();
            // unroll · B independent interactions per iteration for the scheduler. The
            // index is masked to the tile, a no-op (j + u < wg) that lets the driver's
            // compiler see the load is in range, so robust buffer access costs nothing
            // here (LEDGER.md nbody.maskedTileIndex).
            k.for({ from: 0, to: wg, step: unroll, type: 'u32' }, (j) => {
              for (let u = 0; u < unroll; u++) {
                const q = k.let(tile.load((u === 0 ? j : j.add(u)).and(wg - 1)), 'q');
                for (const p of owned) interact(k, p, q, eps2, guarded);
              }
            });
            k.barrier();
            start.set(start.add(wg));
          },
        );
        const h = vec('f32', halfDt, halfDt, halfDt, halfDt);
        owned.forEach((p, b) => {
          const i = index[b] as Val<'u32'>;
          k.if(i.lt(n), () => {
            const a = vec('f32', p.ax, p.ay, p.az, 0);
            acc.store(i, a);
            velOut.store(i, velIn.load(i).add(a.mul(h)));
          });
        });
      },
    }),
  );
}

/**
 * Serial kernel: acc = a(pos); velOut = velIn + acc · halfDt, on scalar f32 views
 * (element 4i + c is component c of body i). Invocation v (its global index) owns
 * bodies vB .. vB + B − 1 and sums the pull of every body j = 0 .. n − 1 in order,
 * so a workgroup's bodies, and a worker's run of workgroups, are contiguous. Owned
 * bodies past n load as zero and are never stored; invocations past n / B (a
 * folded grid's extra workgroups) do nothing.
 */
function serialKernel(blocking: NBodyBlocking, wg: number, guarded: boolean) {
  const B = blocking.bodiesPerInvocation;
  return cachedKernel(`nbody-serial:${B}:${wg}:${guarded ? 'guarded' : 'positive'}`, () =>
    defineKernel({
      name: guarded ? 'nbody_accel_kick_serial' : 'nbody_accel_kick_serial_soft',
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
        const first = k.let(k.globalIndex.mul(B), 'first');
        k.if(first.lt(n), () => {
          const base: Val<'u32'>[] = [];
          const owned: OwnedBody[] = [];
          for (let b = 0; b < B; b++) {
            const e = k.let((b === 0 ? first : first.add(b)).mul(4), 'e');
            base.push(e);
            owned.push({
              x: k.let(pos.load(e), 'px'),
              y: k.let(pos.load(e.add(1)), 'py'),
              z: k.let(pos.load(e.add(2)), 'pz'),
              ax: k.var('f32', 0, 'ax'),
              ay: k.var('f32', 0, 'ay'),
              az: k.var('f32', 0, 'az'),
            });
          }
          const end = k.let(n.mul(4), 'end');
          k.for({ from: 0, to: end, step: 4, type: 'u32' }, (o) => {
            const q = { x: pos.load(o), y: pos.load(o.add(1)), z: pos.load(o.add(2)), w: pos.load(o.add(3)) };
            interactSerial(k, owned, q, eps2, guarded);
          });
          owned.forEach((p, b) => {
            const e = base[b] as Val<'u32'>;
            const store = () => {
              const a = [p.ax, p.ay, p.az];
              a.forEach((ac, c) => {
                const ec = e.add(c);
                acc.store(ec, ac);
                velOut.store(ec, velIn.load(ec).add(ac.mul(halfDt)));
              });
              // w: acceleration 0, velocity w carried as the vec4 kernels carry it (w + 0 · halfDt).
              const e3 = e.add(3);
              acc.store(e3, 0);
              velOut.store(e3, velIn.load(e3).add(f32(0).mul(halfDt)));
            };
            // Body `first` is below n (checked above); the others may not be.
            if (b === 0) store();
            else k.if(first.add(b).lt(n), store);
          });
        });
      },
    }),
  );
}

/** Four owned bodies in the lanes of vec4 values: positions and running accelerations. */
interface LaneBodies {
  readonly x: Val<'vec4<f32>'>;
  readonly y: Val<'vec4<f32>'>;
  readonly z: Val<'vec4<f32>'>;
  readonly ax: Var<'vec4<f32>'>;
  readonly ay: Var<'vec4<f32>'>;
  readonly az: Var<'vec4<f32>'>;
}

const LANES = ['x', 'y', 'z', 'w'] as const;

/**
 * Serial kernel for 'simd' devices (vec4 values in SIMD registers), ε² >= 1e-12
 * only (it has no per-lane select): as `serialKernel`, with the B owned bodies in
 * the lanes of B / 4 groups of vec4 values, so one vec4 operation serves four
 * interactions; body j's coordinates and mass are splat across the lanes. The
 * terms are `interactSerial`'s, with the sums taken by a multiply and an add (an
 * f32 fma has no single SIMD instruction; WebAssembly would take each lane through f64).
 */
function simdKernel(blocking: NBodyBlocking, wg: number) {
  const groups = blocking.bodiesPerInvocation / 4;
  return cachedKernel(`nbody-simd:${groups}:${wg}`, () =>
    defineKernel({
      name: 'nbody_accel_kick_simd',
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
        const splat = (x: Val<'f32'>, name?: string) => k.let(vec('f32', x, x, x, x), name);
        const first = k.let(k.globalIndex.mul(4 * groups), 'first');
        k.if(first.lt(n), () => {
          const owned: LaneBodies[] = [];
          for (let g = 0; g < groups; g++) {
            const p = [0, 1, 2, 3].map((l) => k.let(pos.load(first.add(4 * g + l)), 'p'));
            const lanes = (c: 'x' | 'y' | 'z') => vec('f32', ...(p.map((b) => b[c]) as [Val<'f32'>, Val<'f32'>, Val<'f32'>, Val<'f32'>]));
            owned.push({
              x: k.let(lanes('x'), 'px'),
              y: k.let(lanes('y'), 'py'),
              z: k.let(lanes('z'), 'pz'),
              ax: k.var('vec4<f32>', 0, 'ax'),
              ay: k.var('vec4<f32>', 0, 'ay'),
              az: k.var('vec4<f32>', 0, 'az'),
            });
          }
          const e2 = splat(eps2, 'e2');
          k.for({ from: 0, to: n, type: 'u32' }, (j) => {
            const q = k.let(pos.load(j), 'q');
            const qx = splat(q.x);
            const qy = splat(q.y);
            const qz = splat(q.z);
            const qw = splat(q.w);
            const d = owned.map((p) => ({ x: k.let(qx.sub(p.x), 'dx'), y: k.let(qy.sub(p.y), 'dy'), z: k.let(qz.sub(p.z), 'dz') }));
            const s = d.map(({ x, y, z }) => {
              const r2 = k.let(x.mul(x).add(y.mul(y)).add(z.mul(z)).add(e2), 'r2');
              return k.let(qw.div(r2.mul(sqrt(r2))), 's');
            });
            owned.forEach((p, g) => {
              const { x, y, z } = d[g] as { x: Val<'vec4<f32>'>; y: Val<'vec4<f32>'>; z: Val<'vec4<f32>'> };
              const sg = s[g] as Val<'vec4<f32>'>;
              p.ax.set(p.ax.add(x.mul(sg)));
              p.ay.set(p.ay.add(y.mul(sg)));
              p.az.set(p.az.add(z.mul(sg)));
            });
          });
          const h = vec('f32', halfDt, halfDt, halfDt, halfDt);
          owned.forEach((p, g) => {
            LANES.forEach((c, l) => {
              const i = k.let(first.add(4 * g + l), 'i');
              const store = () => {
                const a = vec('f32', p.ax[c], p.ay[c], p.az[c], 0);
                acc.store(i, a);
                velOut.store(i, velIn.load(i).add(a.mul(h)));
              };
              // Body `first` is below n (checked above); the others may not be.
              if (g === 0 && l === 0) store();
              else k.if(i.lt(n), store);
            });
          });
        });
      },
    }),
  );
}

/** Other bodies per inner-loop iteration of the gather kernel (loads past n are zero and pad the last iteration; tuning.ts). */
const GATHER_UNROLL = TUNING.GATHER_UNROLL.value;

/**
 * Bodies each invocation of the blocked gather kernel owns (one output buffer each:
 * WebGL2 guarantees 4 draw buffers, so the outputs share one pass). Every body read
 * then serves this many interactions: one texel fetch per 4 interactions on WebGL2.
 */
const GATHER_BLOCK = 4;

/**
 * Blocked gather kernel: invocation i owns bodies 4i .. 4i + 3 and writes their
 * accelerations (ax, ay, az, 0) to element i of acc0 .. acc3 (a gather store each);
 * `nbody_interleave_kick` puts them in body order. Bodies past n load as zero
 * (mass 0: they pull nothing; their own sums are never used).
 */
function gatherBlockedKernel(wg: number, guarded: boolean) {
  return cachedKernel(`nbody-gather-blocked:${wg}:${guarded ? 'guarded' : 'positive'}`, () =>
    defineKernel({
      name: guarded ? 'nbody_accel_gather_blocked' : 'nbody_accel_gather_blocked_soft',
      workgroupSize: wg,
      params: {
        pos: buffer('f32', 'read', { vector: 4 }),
        acc0: buffer('f32', 'write', { vector: 4 }),
        acc1: buffer('f32', 'write', { vector: 4 }),
        acc2: buffer('f32', 'write', { vector: 4 }),
        acc3: buffer('f32', 'write', { vector: 4 }),
        n: uniform('u32'),
        m: uniform('u32'),
        eps2: uniform('f32'),
      },
      body: ({ pos, acc0, acc1, acc2, acc3, n, m, eps2 }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(m), () => {
          const owned: OwnedBody[] = [];
          for (let b = 0; b < GATHER_BLOCK; b++) {
            const p = k.let(pos.load(i.mul(GATHER_BLOCK).add(b)), 'p');
            owned.push({
              x: k.let(p.x, 'px'),
              y: k.let(p.y, 'py'),
              z: k.let(p.z, 'pz'),
              ax: k.var('f32', 0, 'ax'),
              ay: k.var('f32', 0, 'ay'),
              az: k.var('f32', 0, 'az'),
            });
          }
          k.for({ from: 0, to: n, step: GATHER_UNROLL, type: 'u32' }, (j) => {
            for (let u = 0; u < GATHER_UNROLL; u++) {
              const q = k.let(pos.load(u === 0 ? j : j.add(u)), 'q');
              for (const p of owned) interact(k, p, q, eps2, guarded);
            }
          });
          [acc0, acc1, acc2, acc3].forEach((out, b) => {
            const p = owned[b] as OwnedBody;
            out.store(i, vec('f32', p.ax, p.ay, p.az, 0));
          });
        });
      },
    }),
  );
}

/** acc[e] = acc_{e % 4}[e / 4] (the blocked kernel's sums in body order); velOut[e] = velIn[e] + acc[e] · halfDt. */
function interleaveKickKernel(wg: number) {
  return cachedKernel(`nbody-interleave:${wg}`, () =>
    defineKernel({
      name: 'nbody_interleave_kick',
      workgroupSize: wg,
      params: {
        acc0: buffer('f32', 'read', { vector: 4 }),
        acc1: buffer('f32', 'read', { vector: 4 }),
        acc2: buffer('f32', 'read', { vector: 4 }),
        acc3: buffer('f32', 'read', { vector: 4 }),
        velIn: buffer('f32', 'read', { vector: 4 }),
        velOut: buffer('f32', 'write', { vector: 4 }),
        acc: buffer('f32', 'write', { vector: 4 }),
        n: uniform('u32'),
        halfDt: uniform('f32'),
      },
      body: ({ acc0, acc1, acc2, acc3, velIn, velOut, acc, n, halfDt }, k) => {
        const e = k.let(k.globalIndex, 'e');
        k.if(e.lt(n), () => {
          const b = k.let(e.and(GATHER_BLOCK - 1), 'b');
          const i = k.let(e.shr(Math.log2(GATHER_BLOCK)), 'i');
          const a = k.let(select(b.lt(2), select(b.eq(0), acc0.load(i), acc1.load(i)), select(b.eq(2), acc2.load(i), acc3.load(i))), 'a');
          acc.store(e, a);
          velOut.store(e, velIn.load(e).add(a.mul(vec('f32', halfDt, halfDt, halfDt, halfDt))));
        });
      },
    }),
  );
}

/** Kick + drift per body (vec4 views, the gather devices' form): v' = v + a·halfDt; x' = x + v'·dt (mass and w kept). */
function kickDriftBodyKernel(wg: number) {
  return cachedKernel(`nbody-kd-body:${wg}`, () =>
    defineKernel({
      name: 'nbody_kick_drift_body',
      workgroupSize: wg,
      params: {
        pos: buffer('f32', 'read', { vector: 4 }),
        vel: buffer('f32', 'read', { vector: 4 }),
        acc: buffer('f32', 'read', { vector: 4 }),
        posOut: buffer('f32', 'write', { vector: 4 }),
        velOut: buffer('f32', 'write', { vector: 4 }),
        n: uniform('u32'),
        dt: uniform('f32'),
        halfDt: uniform('f32'),
      },
      body: ({ pos, vel, acc, posOut, velOut, n, dt, halfDt }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(n), () => {
          const v0 = k.let(vel.load(i), 'v0');
          const v = k.let(v0.add(acc.load(i).mul(vec('f32', halfDt, halfDt, halfDt, halfDt))), 'v');
          const x = k.let(pos.load(i), 'x');
          posOut.store(i, vec('f32', x.x.add(v.x.mul(dt)), x.y.add(v.y.mul(dt)), x.z.add(v.z.mul(dt)), x.w));
          velOut.store(i, vec('f32', v.x, v.y, v.z, v0.w));
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

/** The formulation a call runs, with its layout. */
type Plan =
  /** `lanes`: the bodies sit in vec4 lanes ('simd' devices, B a multiple of 4) where ε² allows. */
  | { readonly kind: 'serial'; readonly blocking: NBodyBlocking; readonly lanes: boolean }
  | { readonly kind: 'tiled'; readonly tiling: NBodyTiling }
  | { readonly kind: 'gather' };

/** ε² and the formulation after checking every argument. */
interface Checked {
  readonly eps2: number;
  readonly plan: Plan;
}

/** The N-body formulations: 'serial' (per-invocation blocks of bodies), 'tiled' (workgroup memory), 'gather'. */
export type NBodyFormulation = Plan['kind'];

const NBODY_SUMMARIES: Readonly<Record<NBodyFormulation, string>> = {
  serial: 'blocks of bodies per invocation in registers, all bodies walked in order (no barriers)',
  tiled: 'tiles through workgroup memory, register blocking',
  gather: 'gather: 4 bodies per invocation (one texel), every body from global memory',
};

/**
 * The formulation `nbody` and `nbodyAccelerations` run on `device` with `options`,
 * and its layout for `bodies` bodies (default 65536): 'serial' on 'serial-workgroups'
 * devices (unless a tiling is given), else 'tiled' where the device prefers workgroup
 * kernels, else 'gather'. Throws UnsupportedFeatureError where none fits, and
 * InvalidArgumentError for a tiling or blocking the device cannot run.
 */
export function nbodyFormulation(
  device: Device,
  options: Pick<NBodyAccelerationOptions, 'tiling' | 'blocking'> & { readonly bodies?: number } = {},
): Formulation<NBodyFormulation, NBodyTiling | NBodyBlocking | undefined> {
  const n = options.bodies ?? 65536;
  const explicitTiling = options.tiling !== undefined && capableFamily(device, 'nbody') === 'workgroup';
  const family = explicitTiling ? 'workgroup' : chooseFamily(device, 'nbody', { families: ['serial', 'workgroup', 'gather'] });
  if (family === 'serial') {
    return { family, name: 'serial', shape: blockingFor(options.blocking), summary: NBODY_SUMMARIES.serial };
  }
  if (family === 'workgroup') {
    return { family, name: 'tiled', shape: tilingFor(device, options.tiling, n), summary: NBODY_SUMMARIES.tiled };
  }
  return { family, name: 'gather', shape: undefined, summary: NBODY_SUMMARIES.gather };
}

function validate(device: Device, bodies: Buffer<'f32'>, options: NBodyOptions | NBodyAccelerationOptions, needSteps: boolean): Checked {
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
  checkFits(device, bodies.length, 'N-body temporaries');
  const n = bodies.length / 4;
  const formulation = nbodyFormulation(device, { ...options, bodies: n });
  const plan: Plan =
    formulation.name === 'serial'
      ? serialPlan(device, formulation.shape as NBodyBlocking)
      : formulation.name === 'tiled'
        ? { kind: 'tiled', tiling: formulation.shape as NBodyTiling }
        : { kind: 'gather' };
  return { eps2, plan };
}

function serialPlan(device: Device, blocking: NBodyBlocking): Plan {
  return { kind: 'serial', blocking, lanes: device.caps.features.has('simd') && blocking.bodiesPerInvocation % 4 === 0 };
}

/**
 * Workgroup size of the serial kernel: 1 (each workgroup one invocation, so the
 * workers' shares differ by at most B bodies), or the smallest power of two that
 * keeps the grid within the device's workgroup limits.
 */
function serialWorkgroupSize(device: Device, invocations: number): number {
  const { maxComputeWorkgroupsPerDimension: perDim, maxComputeInvocationsPerWorkgroup: maxWg } = device.caps.limits;
  let wg = 1;
  while (wg < maxWg && Math.ceil(invocations / wg) > perDim ** 3) wg *= 2;
  return wg;
}

/** The serial blocking to use: the caller's (checked), or the default. */
function blockingFor(given: NBodyBlocking | undefined): NBodyBlocking {
  if (given === undefined) return DEFAULT_BLOCKING;
  if (given === null || typeof given !== 'object') throw new InvalidArgumentError('options.blocking', 'must be an object');
  const b = given.bodiesPerInvocation;
  checkCount('options.blocking.bodiesPerInvocation', b, 1);
  if (b > 8) throw new InvalidArgumentError('options.blocking.bodiesPerInvocation', `must be at most 8, got ${b}`);
  return { bodiesPerInvocation: b };
}

/**
 * The default tiling for n bodies: unroll 16; as many bodies per invocation (4, 2
 * or 1) as keep at least half the device's nominal concurrency of invocations busy,
 * in the widest workgroup up to 512 that the limits
 * allow. Worker pools (concurrency = workers, at most 64) also want 4 workgroups
 * per worker. Where one body per invocation still falls short (small n), narrower
 * workgroups (down to 64) spread the work over more of the device.
 */
function defaultTiling(device: Device, n: number): NBodyTiling {
  const { concurrency } = device.caps;
  const minWorkgroups = concurrency <= 64 ? 4 * concurrency : 1;
  let wg = blockSize(device.caps, 16, DEFAULT_TILING.workgroupSize);
  let b = DEFAULT_TILING.bodiesPerInvocation;
  const enough = () => Math.ceil(n / b) >= concurrency / 2 && Math.ceil(n / (wg * b)) >= minWorkgroups;
  while (b > 1 && !enough()) b /= 2;
  while (wg > 64 && !enough()) wg /= 2;
  return { workgroupSize: wg, bodiesPerInvocation: b, unroll: Math.min(DEFAULT_TILING.unroll, wg) };
}

/** The tiling to use: the caller's (checked against the device), or the default for n bodies. */
function tilingFor(device: Device, given: NBodyTiling | undefined, n: number): NBodyTiling {
  if (given === undefined) return defaultTiling(device, n);
  if (given === null || typeof given !== 'object') throw new InvalidArgumentError('options.tiling', 'must be an object');
  const { workgroupSize: wg, bodiesPerInvocation: b, unroll } = given;
  const pow2 = (x: number) => (x & (x - 1)) === 0;
  checkCount('options.tiling.workgroupSize', wg, 1);
  if (!pow2(wg) || wg !== blockSize(device.caps, 16, wg)) {
    throw new InvalidArgumentError(
      'options.tiling.workgroupSize',
      `must be a power of two within the device's invocation and workgroup-memory limits (16 bytes per invocation), got ${wg}`,
    );
  }
  checkCount('options.tiling.bodiesPerInvocation', b, 1);
  if (b > 8) throw new InvalidArgumentError('options.tiling.bodiesPerInvocation', `must be at most 8, got ${b}`);
  checkCount('options.tiling.unroll', unroll, 1);
  if (!pow2(unroll) || unroll > wg)
    throw new InvalidArgumentError('options.tiling.unroll', `must be a power of two at most workgroupSize (${wg}), got ${unroll}`);
  return { workgroupSize: wg, bodiesPerInvocation: b, unroll };
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
  plan: Plan,
): void {
  const args = { pos, velIn, velOut, acc, n, eps2, halfDt };
  // With ε² >= 1e-12 a coincident pair's term is 0 · (finite) = 0: the select can go.
  const guarded = !(Math.fround(eps2) >= UNGUARDED_MIN_SOFTENING2);
  if (plan.kind === 'serial') {
    const invocations = Math.ceil(n / plan.blocking.bodiesPerInvocation);
    const wg = serialWorkgroupSize(device, invocations);
    // The lanes kernel has no per-lane select: below ε² = 1e-12 the scalar one runs.
    if (plan.lanes && !guarded) device.dispatch(simdKernel(plan.blocking, wg), { invocations }, args);
    else device.dispatch(serialKernel(plan.blocking, wg, guarded), { invocations }, args);
  } else if (plan.kind === 'tiled') {
    device.dispatch(tiledKernel(plan.tiling, guarded), { invocations: Math.ceil(n / plan.tiling.bodiesPerInvocation) }, args);
  } else {
    const wg = gatherSize(device.caps);
    const m = Math.ceil(n / GATHER_BLOCK);
    const parts = [0, 1, 2, 3].map((b) => scratch(device, `nbody.block${b}`, 'f32', 4 * m));
    const [acc0, acc1, acc2, acc3] = parts as [Buffer<'f32'>, Buffer<'f32'>, Buffer<'f32'>, Buffer<'f32'>];
    device.dispatch(gatherBlockedKernel(wg, guarded), { invocations: m }, { pos, acc0, acc1, acc2, acc3, n, m, eps2 });
    device.dispatch(interleaveKickKernel(wg), { invocations: n }, { acc0, acc1, acc2, acc3, velIn, velOut, acc, n, halfDt });
  }
}

/**
 * Accelerations a_i (as (ax, ay, az, 0) per body, a new f32 buffer of length 4n)
 * of `bodies` under all-pairs gravitation with softening ε² = `softening2`.
 * Complexity: n² interactions (20 flop each for reporting), O(n) memory, one
 * dispatch (two on gather devices). Throws InvalidArgumentError as `nbody` does for bodies, ε², tiling and blocking.
 */
export function nbodyAccelerations(device: Device, bodies: Buffer<'f32'>, options: NBodyAccelerationOptions = {}): Buffer<'f32'> {
  const { eps2, plan } = validate(device, bodies, options, false);
  const n = bodies.length / 4;
  const acc = device.createBuffer('f32', bodies.length);
  if (n === 0) return acc;
  const vel = scratch(device, 'nbody.zero', 'f32', bodies.length);
  const velOut = scratch(device, 'nbody.sink', 'f32', bodies.length);
  recordAccelKick(device, bodies, vel, velOut, acc, n, eps2, 0, plan);
  return acc;
}

/**
 * Integrates `bodies` for `steps` kick-drift-kick leapfrog steps of `dt` and
 * returns new buffers with the final bodies and velocities (inputs untouched).
 *
 * Complexity: (steps + 1) · n² interactions, O(n) memory; 2 + 2 · steps
 * dispatches (3 + 3 · steps on gather devices). Accuracy: f32 throughout; `inverseSqrt` is not correctly rounded
 * on GPUs (relative error ~1e-7 .. 1e-6), so results match a float64 reference to
 * about 1e-5 relative per force evaluation, growing with steps as the dynamics
 * amplify differences. Edge cases: n = 0 returns empty buffers; steps = 0 returns
 * copies (velocities zero when not given); a single body never moves unless it has
 * a velocity; coincident bodies exert no force on each other (for ε² >= 1e-12
 * this takes masses below 3.4e20, so that m / ε^3 stays finite in f32).
 * Throws InvalidArgumentError for a bad bodies buffer (dtype, length not a
 * multiple of 4), steps not an integer >= 0, a non-finite dt, ε² < 0, a
 * velocities length mismatch, (on workgroup devices) a tiling outside the
 * device's limits or (on serial-workgroup devices) a blocking outside 1 .. 8.
 */
export function nbody(device: Device, bodies: Buffer<'f32'>, options: NBodyOptions): NBodyResult {
  const { eps2, plan } = validate(device, bodies, options, true);
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
  recordAccelKick(device, posA, velA, velB, acc, n, eps2, 0, plan);
  let pos = posA;
  let vel = velB;
  let posNext = posB;
  let velNext = velA;
  for (let s = 0; s < steps; s++) {
    const kd = { pos, vel, acc, posOut: posNext, velOut: velNext, dt, halfDt: dt / 2 };
    // Gather devices: one invocation per body (a texel of four); others: one per element.
    if (plan.kind === 'gather') device.dispatch(kickDriftBodyKernel(wg), { invocations: n }, { ...kd, n });
    else device.dispatch(kickDriftKernel(wg), { invocations: len }, { ...kd, m: len });
    [pos, posNext] = [posNext, pos];
    [vel, velNext] = [velNext, vel];
    recordAccelKick(device, pos, vel, velNext, acc, n, eps2, dt / 2, plan);
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
