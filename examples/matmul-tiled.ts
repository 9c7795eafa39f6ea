/**
 * Tiled matrix multiplication C = A · B (n x n, f32, row-major) with workgroup memory.
 *
 * Each workgroup computes one TILE x TILE block of C. For every step along k it copies
 * one tile of A and one of B into workgroup arrays (each invocation one element of
 * each), waits at a barrier, multiplies the tiles out of workgroup memory, and waits
 * again before the next copy overwrites them. That reads each input element n / TILE
 * times from the buffers instead of n times.
 *
 * Workgroup memory and barriers are the 'workgroup' kernel class: webgpu and cpu run
 * it, WebGL2 cannot (no shared memory in fragment shaders). `matmul` checks
 * `device.caps.features` and uses a one-invocation-per-element kernel there instead.
 */
import { buffer, type Device, defineKernel, select, uniform } from 'trident';

export const TILE = 8;

export const matmulTiled = defineKernel({
  name: 'matmul_tiled',
  workgroupSize: TILE * TILE,
  params: { a: buffer('f32', 'read'), b: buffer('f32', 'read'), c: buffer('f32', 'write'), n: uniform('u32'), tiles: uniform('u32') },
  body: ({ a, b, c, n, tiles }, k) => {
    const tileA = k.workgroupArray('f32', TILE * TILE);
    const tileB = k.workgroupArray('f32', TILE * TILE);
    // Which block of C (from the workgroup index) and which element of it (from the local index).
    const blockRow = k.let(k.workgroupIndex.div(tiles));
    const blockCol = k.let(k.workgroupIndex.sub(blockRow.mul(tiles)));
    const ty = k.let(k.localIndex.div(TILE));
    const tx = k.let(k.localIndex.sub(ty.mul(TILE)));
    const row = k.let(blockRow.mul(TILE).add(ty));
    const col = k.let(blockCol.mul(TILE).add(tx));
    const acc = k.var('f32', 0);
    // `tiles` is a uniform, so every invocation runs the same iterations: the barriers are allowed.
    k.for({ from: 0, to: tiles, type: 'u32' }, (t) => {
      const aCol = k.let(t.mul(TILE).add(tx));
      const bRow = k.let(t.mul(TILE).add(ty));
      // Past the matrix edge, copy 0. Both sides of a select are evaluated; the load's index is
      // then wrong but harmless (an out-of-range load gives 0, it never faults).
      tileA.store(k.localIndex, select(row.lt(n).and(aCol.lt(n)), a.load(row.mul(n).add(aCol)), 0));
      tileB.store(k.localIndex, select(bRow.lt(n).and(col.lt(n)), b.load(bRow.mul(n).add(col)), 0));
      k.workgroupBarrier();
      k.for({ from: 0, to: TILE, type: 'u32' }, (j) => {
        acc.set(acc.add(tileA.load(ty.mul(TILE).add(j)).mul(tileB.load(j.mul(TILE).add(tx)))));
      });
      k.workgroupBarrier();
    });
    k.if(row.lt(n).and(col.lt(n)), () => c.store(row.mul(n).add(col), acc));
  },
});

/** The gather formulation for devices without workgroup memory: one invocation per element of C. */
export const matmulNaive = defineKernel({
  name: 'matmul_naive',
  workgroupSize: 64,
  params: { a: buffer('f32', 'read'), b: buffer('f32', 'read'), c: buffer('f32', 'write'), n: uniform('u32') },
  body: ({ a, b, c, n }, k) => {
    const i = k.let(k.globalIndex);
    k.if(i.lt(n.mul(n)), () => {
      const row = k.let(i.div(n));
      const col = k.let(i.sub(row.mul(n)));
      const acc = k.var('f32', 0);
      k.for({ from: 0, to: n }, (j) => acc.set(acc.add(a.load(row.mul(n).add(j)).mul(b.load(j.mul(n).add(col))))));
      c.store(i, acc);
    });
  },
});

/** C = A · B on `device`; the tiled kernel where the device has workgroup memory. */
export async function matmul(device: Device, a: Float32Array, b: Float32Array, n: number): Promise<{ c: Float32Array; kernel: string }> {
  const A = device.createBuffer('f32', a);
  const B = device.createBuffer('f32', b);
  const C = device.createBuffer('f32', n * n);
  let kernel: string;
  if (device.caps.features.has('workgroup')) {
    const tiles = Math.ceil(n / TILE);
    device.dispatch(matmulTiled, { workgroups: tiles * tiles }, { a: A, b: B, c: C, n, tiles });
    kernel = matmulTiled.name;
  } else {
    device.dispatch(matmulNaive, { invocations: n * n }, { a: A, b: B, c: C, n });
    kernel = matmulNaive.name;
  }
  const c = await C.read();
  for (const buf of [A, B, C]) buf.destroy();
  return { c, kernel };
}

export function matmulReference(a: Float32Array, b: Float32Array, n: number): Float32Array {
  const c = new Float32Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += (a[i * n + k] ?? 0) * (b[k * n + j] ?? 0);
      c[i * n + j] = s;
    }
  return c;
}

/** Small integer entries: every product and sum is exact in f32, so any summation order agrees. */
export async function runMatmul(device: Device, n = 20) {
  const entry = (i: number): number => ((i * 7919) % 9) - 4;
  const a = Float32Array.from({ length: n * n }, (_, i) => entry(i));
  const b = Float32Array.from({ length: n * n }, (_, i) => entry(i + 5));
  const { c, kernel } = await matmul(device, a, b, n);
  const want = matmulReference(a, b, n);
  return { ok: c.every((v, i) => v === want[i]), kernel, trace: c.reduce((s, v, i) => (i % (n + 1) === 0 ? s + v : s), 0) };
}
