/**
 * Conformance of N-body: accelerations against a float64 reference within an f32
 * bound, leapfrog integration against the float64 integrator, edge cases, errors.
 */
import {
  type NBodyBlocking,
  type NBodyTiling,
  nbody,
  nbodyAccelerations,
  nbodyAccelerationsReference,
  nbodyForceScale,
  nbodyFormulation,
  nbodyReference,
} from '@trident/algorithms';
import { InvalidArgumentError } from 'trident';
import { expect, it } from 'vitest';
import {
  expectBitsEqual,
  fewInvocations,
  foldedGridView,
  foldLimit,
  formulations,
  gatherOnlyView,
  isSlow,
  manyInvocationsView,
  simdView,
} from './alg-helpers.ts';
import { describeEachBackend, randomU32 } from './harness.ts';

/** n bodies in the unit cube with masses in (0, 1/n]. */
function makeBodies(n: number, seed: number): Float32Array {
  const r = randomU32(4 * n, seed);
  return Float32Array.from(r, (x, e) => (e % 4 === 3 ? ((x / 2 ** 32) * 0.9 + 0.1) / n : x / 2 ** 32 - 0.5));
}

describeEachBackend('nbody', (ctx) => {
  it('accelerations match the float64 reference within the f32 bound', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const sizes = isSlow(device) ? [0, 1, 2, 3, 33, 129, 300] : [0, 1, 2, 3, 33, 127, 129, 257, 1000];
      for (const n of sizes) {
        for (const softening2 of [1e-6, 0.01]) {
          const data = makeBodies(n, n + 5);
          const bodies = device.createBuffer('f32', data);
          const got = await nbodyAccelerations(device, bodies, { softening2 }).read();
          const want = nbodyAccelerationsReference(data, softening2);
          const scale = nbodyForceScale(data, softening2);
          // n f32 additions plus a few ulp from inverseSqrt and the products, relative to Σ m/r².
          const rel = (n + 16) * 2 ** -21;
          for (let i = 0; i < n; i++) {
            for (let c = 0; c < 4; c++) {
              const e = 4 * i + c;
              const err = Math.abs((got[e] as number) - (want[e] as number));
              if (!(err <= rel * (scale[i] as number)))
                expect.fail(`${label} n=${n} eps2=${softening2} a[${i}].${'xyzw'[c]}: ${got[e]} vs ${want[e]}`);
            }
          }
          expectBitsEqual(await bodies.read(), data, `${label} n=${n} bodies untouched`);
        }
      }
    }
  });

  it('leapfrog steps follow the float64 integrator', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const n of isSlow(device) ? [2, 65] : [2, 65, 300]) {
        const data = makeBodies(n, 3 * n);
        const vdata = Float32Array.from(randomU32(4 * n, 7), (x, e) => (e % 4 === 3 ? 0 : (x / 2 ** 32 - 0.5) * 0.1));
        const bodies = device.createBuffer('f32', data);
        const velocities = device.createBuffer('f32', vdata);
        const options = { steps: 4, dt: 1e-3, softening2: 1e-4 };
        const got = nbody(device, bodies, { ...options, velocities });
        const want = nbodyReference(data, { ...options, velocities: vdata });
        const [x, v] = [await got.bodies.read(), await got.velocities.read()];
        for (let e = 0; e < 4 * n; e++) {
          const dx = Math.abs((x[e] as number) - (want.bodies[e] as number));
          const dv = Math.abs((v[e] as number) - (want.velocities[e] as number));
          if (!(dx <= 1e-5 * (1 + Math.abs(want.bodies[e] as number)))) expect.fail(`${label} n=${n} x[${e}] ${x[e]} vs ${want.bodies[e]}`);
          if (!(dv <= 1e-4 * (1 + Math.abs(want.velocities[e] as number))))
            expect.fail(`${label} n=${n} v[${e}] ${v[e]} vs ${want.velocities[e]}`);
        }
        // Masses are carried through exactly.
        for (let i = 0; i < n; i++) expect(x[4 * i + 3], label).toBe(data[4 * i + 3]);
        expectBitsEqual(await bodies.read(), data, `${label} bodies untouched`);
        expectBitsEqual(await velocities.read(), vdata, `${label} velocities untouched`);
      }
    }
  });

  it('edge cases: no bodies, zero steps, one body drifting, symmetric pairs, coincident bodies with eps2 = 0 and with a tiny eps2', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const empty = nbody(device, device.createBuffer('f32', 0), { steps: 3, dt: 0.1 });
      expect(empty.bodies.length + empty.velocities.length, label).toBe(0);
      const data = makeBodies(5, 1);
      const still = nbody(device, device.createBuffer('f32', data), { steps: 0, dt: 0.1 });
      expectBitsEqual(await still.bodies.read(), data, `${label} steps=0`);
      expectBitsEqual(await still.velocities.read(), new Float32Array(20), `${label} steps=0 velocities`);
      // One body: no force, it drifts at its velocity.
      const one = nbody(device, device.createBuffer('f32', [1, 2, 3, 5]), {
        steps: 10,
        dt: 0.5,
        velocities: device.createBuffer('f32', [1, 0, -2, 0]),
      });
      expect([...(await one.bodies.read())], label).toEqual([6, 2, -7, 5]);
      // Two equal masses: equal and opposite accelerations along x, |a| = m / (d² + ε²)^(3/2) · d.
      const pair = await nbodyAccelerations(device, device.createBuffer('f32', [0, 0, 0, 2, 1, 0, 0, 2]), { softening2: 0 }).read();
      expect(pair[0], label).toBeCloseTo(2, 5);
      expect(pair[4], label).toBeCloseTo(-2, 5);
      expect(pair[1] === 0 && pair[5] === 0, label).toBe(true);
      // Coincident bodies, eps2 = 0: no force between them (not NaN).
      const same = await nbodyAccelerations(device, device.createBuffer('f32', [1, 1, 1, 1, 1, 1, 1, 1]), { softening2: 0 }).read();
      expect([...same], label).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
      // A tiny ε² (m / ε^3 overflows f32): coincident bodies, j = i included, still add zero.
      const tiny = await nbodyAccelerations(device, device.createBuffer('f32', [1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1]), {
        softening2: 1e-30,
      }).read();
      expect([...tiny].every(Number.isFinite), `${label} tiny eps2: ${[...tiny]}`).toBe(true);
      expect(tiny[0], label).toBeCloseTo(1, 5);
      expect(tiny[4], label).toBeCloseTo(1, 5);
      expect(tiny[8], label).toBeCloseTo(-2, 5);
    }
  });

  it('every tiling of the workgroup formulation: blocking, unroll, n off the tile and the blocking factor, both ε² paths', async () => {
    const device = ctx.device;
    // Gather devices ignore the tiling: there the first one shows the result is still right.
    const workgroups = device.caps.features.has('workgroup');
    const slow = isSlow(device) || !workgroups;
    const allTilings: NBodyTiling[] = [
      { workgroupSize: 16, bodiesPerInvocation: 1, unroll: 1 },
      { workgroupSize: 16, bodiesPerInvocation: 2, unroll: 16 },
      { workgroupSize: 32, bodiesPerInvocation: 3, unroll: 4 },
      { workgroupSize: 16, bodiesPerInvocation: 4, unroll: 8 },
      { workgroupSize: 64, bodiesPerInvocation: 8, unroll: 2 },
    ];
    const tilings = workgroups ? allTilings : allTilings.slice(0, 1);
    for (const tiling of tilings) {
      const perWorkgroup = tiling.workgroupSize * tiling.bodiesPerInvocation;
      for (const n of slow
        ? [1, perWorkgroup + 3, 2 * perWorkgroup - 1]
        : [1, 5, perWorkgroup - 1, perWorkgroup + 3, 2 * perWorkgroup + 1, 301]) {
        // ε² > 0 runs without the zero-denominator select, ε² = 0 with it; with ε² = 0
        // bodies 0 and n − 1 coincide (their mutual term must be zero, not NaN).
        for (const softening2 of [1e-3, 0]) {
          const data = makeBodies(n, 7 * n + tiling.bodiesPerInvocation);
          if (softening2 === 0 && n > 1) data.copyWithin(4 * (n - 1), 0, 3);
          const got = await nbodyAccelerations(device, device.createBuffer('f32', data), { softening2, tiling }).read();
          const want = nbodyAccelerationsReference(data, softening2);
          const scale = nbodyForceScale(data, softening2);
          for (let e = 0; e < 4 * n; e++) {
            const err = Math.abs((got[e] as number) - (want[e] as number));
            if (!(err <= (n + 16) * 2 ** -21 * (scale[e >> 2] as number)))
              expect.fail(`${JSON.stringify(tiling)} n=${n} eps2=${softening2} a[${e}]: ${got[e]} vs ${want[e]}`);
          }
        }
      }
    }
    // The tiling carries through the leapfrog steps.
    const data = makeBodies(70, 4);
    const options = { steps: 2, dt: 1e-3, softening2: 1e-4 };
    const got = await nbody(device, device.createBuffer('f32', data), { ...options, tiling: allTilings[3] as NBodyTiling }).bodies.read();
    const want = nbodyReference(data, options).bodies;
    for (let e = 0; e < got.length; e++) {
      if (!(Math.abs((got[e] as number) - (want[e] as number)) <= 1e-5 * (1 + Math.abs(want[e] as number))))
        expect.fail(`tiled leapfrog x[${e}] ${got[e]} vs ${want[e]}`);
    }
  });

  it('serial formulation (serial-workgroup devices): every blocking, scalar and vec4 lanes, n off the block, both ε² paths, leapfrog', async () => {
    const serial = ctx.device.caps.features.has('serial-workgroups') && ctx.device.caps.features.has('scatter');
    // Software GPUs (few invocations at once) default to the gather formulation; their many-invocations view to 'tiled'.
    const tiled = ctx.device.caps.features.has('workgroup') && !fewInvocations(ctx.device.caps);
    expect(nbodyFormulation(ctx.device).name).toBe(serial ? 'serial' : tiled ? 'tiled' : 'gather');
    if (!serial && ctx.device.caps.features.has('workgroup')) expect(nbodyFormulation(manyInvocationsView(ctx.device)).name).toBe('tiled');
    expect(nbodyFormulation(gatherOnlyView(ctx.device)).name).toBe('gather');
    if (ctx.device.caps.features.has('workgroup')) {
      expect(nbodyFormulation(ctx.device, { tiling: { workgroupSize: 16, bodiesPerInvocation: 1, unroll: 1 } }).name).toBe('tiled');
    }
    // Elsewhere the blocking is ignored: the first one shows the result is still right.
    const blockings: NBodyBlocking[] = [1, 2, 3, 4, 8].map((b) => ({ bodiesPerInvocation: b }));
    // 'simd' devices hold the bodies in vec4 lanes where B divides by 4 and ε² >= 1e-12.
    const devices = serial ? [ctx.device, simdView(ctx.device)] : [ctx.device];
    for (const device of devices) {
      const label = device === ctx.device ? ctx.kind : `${ctx.kind}/simd`;
      for (const blocking of serial ? blockings : blockings.slice(0, 1)) {
        const B = blocking.bodiesPerInvocation;
        for (const n of serial ? [1, B + 1, 2 * B + 3, 13, 301] : [1, 13]) {
          for (const softening2 of [1e-3, 0]) {
            const data = makeBodies(n, 11 * n + B);
            // ε² = 0: bodies 0 and n − 1 coincide (their mutual term must be zero, not NaN).
            if (softening2 === 0 && n > 1) data.copyWithin(4 * (n - 1), 0, 3);
            const got = await nbodyAccelerations(device, device.createBuffer('f32', data), { softening2, blocking }).read();
            const want = nbodyAccelerationsReference(data, softening2);
            const scale = nbodyForceScale(data, softening2);
            for (let e = 0; e < 4 * n; e++) {
              const err = Math.abs((got[e] as number) - (want[e] as number));
              if (!(err <= (n + 16) * 2 ** -21 * (scale[e >> 2] as number)))
                expect.fail(`${label} B=${B} n=${n} eps2=${softening2} a[${e}]: ${got[e]} vs ${want[e]}`);
            }
          }
        }
      }
      // The blocking carries through the leapfrog steps (velocities' w kept).
      const data = makeBodies(70, 5);
      const vdata = Float32Array.from(randomU32(280, 9), (x, e) => (e % 4 === 3 ? 7 : (x / 2 ** 32 - 0.5) * 0.1));
      const options = { steps: 3, dt: 1e-3, softening2: 1e-4 };
      const got = nbody(device, device.createBuffer('f32', data), {
        ...options,
        velocities: device.createBuffer('f32', vdata),
        blocking: { bodiesPerInvocation: 4 },
      });
      const want = nbodyReference(data, { ...options, velocities: vdata });
      const [x, v] = [await got.bodies.read(), await got.velocities.read()];
      for (let e = 0; e < x.length; e++) {
        if (!(Math.abs((x[e] as number) - (want.bodies[e] as number)) <= 1e-5 * (1 + Math.abs(want.bodies[e] as number))))
          expect.fail(`${label} serial leapfrog x[${e}] ${x[e]} vs ${want.bodies[e]}`);
        if (!(Math.abs((v[e] as number) - (want.velocities[e] as number)) <= 1e-4 * (1 + Math.abs(want.velocities[e] as number))))
          expect.fail(`${label} serial leapfrog v[${e}] ${v[e]} vs ${want.velocities[e]}`);
      }
    }
  });

  it('rejects a blocking the serial formulation cannot use (ignores it on other devices)', () => {
    const device = ctx.device;
    const serial = device.caps.features.has('serial-workgroups') && device.caps.features.has('scatter');
    const bodies = device.createBuffer('f32', makeBodies(4, 1));
    for (const blocking of [{ bodiesPerInvocation: 0 }, { bodiesPerInvocation: 9 }, { bodiesPerInvocation: 1.5 }, null]) {
      let error: unknown;
      try {
        nbodyAccelerations(device, bodies, { blocking: blocking as unknown as NBodyBlocking });
      } catch (e) {
        error = e;
      }
      if (!serial) {
        expect(error, JSON.stringify(blocking)).toBeUndefined();
        continue;
      }
      expect(error, JSON.stringify(blocking)).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument, JSON.stringify(blocking)).toMatch(/^options\.blocking/);
    }
  });

  it('rejects a tiling the workgroup formulation cannot use', () => {
    const device = ctx.device;
    const bodies = device.createBuffer('f32', makeBodies(4, 1));
    const tooWide = 2 * device.caps.limits.maxComputeInvocationsPerWorkgroup;
    const cases: Array<[NBodyTiling, string]> = [
      [{ workgroupSize: 24, bodiesPerInvocation: 1, unroll: 1 }, 'options.tiling.workgroupSize'],
      [{ workgroupSize: tooWide, bodiesPerInvocation: 1, unroll: 1 }, 'options.tiling.workgroupSize'],
      [{ workgroupSize: 16, bodiesPerInvocation: 0, unroll: 1 }, 'options.tiling.bodiesPerInvocation'],
      [{ workgroupSize: 16, bodiesPerInvocation: 9, unroll: 1 }, 'options.tiling.bodiesPerInvocation'],
      [{ workgroupSize: 16, bodiesPerInvocation: 1, unroll: 3 }, 'options.tiling.unroll'],
      [{ workgroupSize: 16, bodiesPerInvocation: 1, unroll: 32 }, 'options.tiling.unroll'],
    ];
    for (const [tiling, argument] of cases) {
      let error: unknown;
      try {
        nbodyAccelerations(device, bodies, { tiling });
      } catch (e) {
        error = e;
      }
      if (!device.caps.features.has('workgroup')) {
        // The gather formulation has no tiling and ignores the option (as documented).
        expect(error, argument).toBeUndefined();
        continue;
      }
      expect(error, argument).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument, JSON.stringify(tiling)).toBe(argument);
    }
  });

  it('rejects bad input with typed errors and leaves buffers untouched', async () => {
    const device = ctx.device;
    const data = Float32Array.from([0, 0, 0, 1, 1, 0, 0, 1]);
    const bodies = device.createBuffer('f32', data);
    const cases: Array<[() => unknown, string]> = [
      [() => nbody(device, device.createBuffer('f32', 6), { steps: 1, dt: 0.1 }), 'bodies'],
      [() => nbody(device, device.createBuffer('u32', 8) as never, { steps: 1, dt: 0.1 }), 'bodies'],
      [() => nbody(device, bodies, { steps: -1, dt: 0.1 }), 'options.steps'],
      [() => nbody(device, bodies, { steps: 1.5, dt: 0.1 }), 'options.steps'],
      [() => nbody(device, bodies, { steps: 1, dt: Number.NaN }), 'options.dt'],
      [() => nbody(device, bodies, { steps: 1, dt: 0.1, softening2: -1 }), 'options.softening2'],
      [() => nbody(device, bodies, { steps: 1, dt: 0.1, velocities: device.createBuffer('f32', 4) }), 'options.velocities'],
      [() => nbodyAccelerations(device, bodies, { softening2: Number.POSITIVE_INFINITY }), 'options.softening2'],
    ];
    for (const [fn, argument] of cases) {
      let error: unknown;
      try {
        fn();
      } catch (e) {
        error = e;
      }
      expect(error, argument).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(argument);
    }
    expectBitsEqual(await bodies.read(), data, 'bodies');
  });
  it('ignores the extra workgroups of folded grids', async () => {
    const device = foldedGridView(ctx.device, foldLimit(ctx.device, 3));
    const data = makeBodies(1300, 9);
    const want = nbodyAccelerationsReference(data);
    const scale = nbodyForceScale(data);
    // The default tiling, then 4 bodies per invocation in narrow workgroups (21 workgroups folded into 27).
    const tilings = device.caps.features.has('workgroup')
      ? [undefined, { workgroupSize: 16, bodiesPerInvocation: 4, unroll: 4 }]
      : [undefined];
    for (const tiling of tilings) {
      const got = await nbodyAccelerations(device, device.createBuffer('f32', data), tiling ? { tiling } : {}).read();
      for (let e = 0; e < got.length; e++) {
        const err = Math.abs((got[e] as number) - (want[e] as number));
        if (!(err <= 1316 * 2 ** -21 * (scale[e >> 2] as number)))
          expect.fail(`folded ${JSON.stringify(tiling)} a[${e}]: ${got[e]} vs ${want[e]}`);
      }
    }
  });
});
