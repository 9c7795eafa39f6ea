/**
 * Sequential float64 reference of N-body: the same formula and kick-drift-kick
 * leapfrog as `nbody`, G = 1, the j = i term (and any zero-distance, zero-ε² term) zero.
 */
export function nbodyAccelerationsReference(bodies: Float32Array | Float64Array, softening2 = 1e-6): Float64Array {
  const n = bodies.length / 4;
  const out = new Float64Array(bodies.length);
  for (let i = 0; i < n; i++) {
    let ax = 0;
    let ay = 0;
    let az = 0;
    const xi = bodies[4 * i] as number;
    const yi = bodies[4 * i + 1] as number;
    const zi = bodies[4 * i + 2] as number;
    for (let j = 0; j < n; j++) {
      const dx = (bodies[4 * j] as number) - xi;
      const dy = (bodies[4 * j + 1] as number) - yi;
      const dz = (bodies[4 * j + 2] as number) - zi;
      const r2 = dx * dx + dy * dy + dz * dz + softening2;
      if (r2 === 0) continue;
      const s = (bodies[4 * j + 3] as number) / (r2 * Math.sqrt(r2));
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
    }
    out[4 * i] = ax;
    out[4 * i + 1] = ay;
    out[4 * i + 2] = az;
  }
  return out;
}

/** Σ_j m_j / (r_ij² + ε²): the scale of |a_i| before cancellation, for error bounds. */
export function nbodyForceScale(bodies: Float32Array, softening2 = 1e-6): Float64Array {
  const n = bodies.length / 4;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < n; j++) {
      const dx = (bodies[4 * j] as number) - (bodies[4 * i] as number);
      const dy = (bodies[4 * j + 1] as number) - (bodies[4 * i + 1] as number);
      const dz = (bodies[4 * j + 2] as number) - (bodies[4 * i + 2] as number);
      const r2 = dx * dx + dy * dy + dz * dz + softening2;
      if (r2 > 0) s += Math.abs(bodies[4 * j + 3] as number) / r2;
    }
    out[i] = s;
  }
  return out;
}

/** Leapfrog (kick-drift-kick) in float64; returns final bodies and velocities. */
export function nbodyReference(
  bodies: Float32Array,
  options: { steps: number; dt: number; softening2?: number; velocities?: Float32Array },
): { bodies: Float64Array; velocities: Float64Array } {
  const eps2 = options.softening2 ?? 1e-6;
  const x = Float64Array.from(bodies);
  const v = options.velocities ? Float64Array.from(options.velocities) : new Float64Array(bodies.length);
  if (options.steps === 0) return { bodies: x, velocities: v };
  let a = nbodyAccelerationsReference(x, eps2);
  const h = options.dt / 2;
  for (let s = 0; s < options.steps; s++) {
    for (let e = 0; e < x.length; e++) {
      if (e % 4 === 3) continue;
      v[e] = (v[e] as number) + (a[e] as number) * h;
      x[e] = (x[e] as number) + (v[e] as number) * options.dt;
    }
    a = nbodyAccelerationsReference(x, eps2);
    for (let e = 0; e < x.length; e++) if (e % 4 !== 3) v[e] = (v[e] as number) + (a[e] as number) * h;
  }
  return { bodies: x, velocities: v };
}
