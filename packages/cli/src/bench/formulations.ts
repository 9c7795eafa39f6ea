/**
 * The formulation each algorithm chooses on a device, for the report's capability
 * matrix. Scan, N-body, BFS and components ask the library's own selectors
 * (`scanFormulation`, `nbodyFormulation`, `bfsFormulation`, `componentsFormulation`); the others follow the rule every algorithm
 * module states in its header and applies through `preferredFamily` (reduce,
 * histogram, compact and radix sort first take their chunked formulations on
 * 'serial-workgroups' devices): a device with the 'workgroup', 'scatter' and
 * 'gather' kernel classes gets the workgroup formulation, unless it runs few
 * invocations at once (`fewInvocations`: a software GPU); those and gather-only
 * devices get the pass-based gather one. zcopy (the ceiling) keeps its workgroup
 * form wherever it runs. The rule reads caps only, never the backend's name, as
 * the algorithms do.
 */
import { bfsFormulation, componentsFormulation, fewInvocations, nbodyFormulation, scanFormulation, sortMethod } from '@trident/algorithms';
import type { Device, Feature } from 'trident';

const NBODY_FORMULATIONS = {
  serial: 'blocks of bodies per invocation in registers, all bodies walked in order (no barriers)',
  tiled: 'tiles through workgroup memory, register blocking',
  gather: 'gather: 4 bodies per invocation (one texel), every body from global memory',
} as const;

const has = (device: Device, ...features: Feature[]): boolean => features.every((f) => device.caps.features.has(f));

/** Algorithm -> the formulation it runs on `device` with default options ('refused: <feature>' where none fits). */
export function chosenFormulations(device: Device): Record<string, string> {
  const workgroup = has(device, 'workgroup', 'scatter', 'gather');
  const gather = has(device, 'gather');
  const serial = has(device, 'serial-workgroups', 'scatter');
  const subgroups = has(device, 'subgroup') ? ', subgroup reductions' : '';
  const simd = has(device, 'simd') ? ' (vec4 loads)' : '';
  const few = fewInvocations(device.caps);
  /** The workgroup form where the device runs it (and, by default, prefers it), else the gather form. */
  const pick = (wg: string, ga: string, gaNeeds: Feature[] = [], byPreference = true): string => {
    const missing = (['gather', ...gaNeeds] as Feature[]).find((f) => !has(device, f));
    if (workgroup && (!byPreference || !few || missing !== undefined)) return wg;
    return missing === undefined ? ga : `refused: needs ${missing}`;
  };
  const tryName = (f: () => string): string => {
    try {
      return f();
    } catch (err) {
      return `refused: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
    }
  };
  return {
    zcopy: pick('grid-stride workgroups', 'one gather pass', [], false),
    reduce: serial
      ? `per-worker chunks, one sequential loop each${simd}, then the partials in order`
      : pick(`grid-stride workgroup reduction${subgroups}`, 'log-step gather passes'),
    scan: tryName(() => scanFormulation(device)),
    // Serial-workgroup devices (a CPU) take the chunked formulations first (histogram.ts, compact.ts).
    histogram: serial
      ? 'per-worker chunk sub-histograms + per-bin merge; global atomics past 2 bins per value'
      : pick(
          'workgroup sub-histograms (shared memory), global atomics if bins do not fit',
          has(device, 'atomics-via-blending') ? 'blended atomics, chunked below the exact count' : 'atomic scatter',
          ['atomic'],
        ),
    compact: serial
      ? 'per-worker chunks: count kept, host offsets, ordered write'
      : pick('scan + scatter to the scanned positions', 'scan + binary-search gather (inverted map)'),
    sort: serial
      ? 'LSD radix sort, 8-bit digits over per-worker chunks with private histograms'
      : gather
        ? sortMethod(device.caps) === 'radix'
          ? 'radix sort (workgroup digits, scatter)'
          : 'merge sort by merge path (gather passes)'
        : 'refused: needs gather',
    nbody: tryName(() => NBODY_FORMULATIONS[nbodyFormulation(device)]),
    bfs: gather ? tryName(() => bfsFormulation(device)) : 'refused: needs gather',
    components: gather ? tryName(() => componentsFormulation(device)) : 'refused: needs gather',
  };
}
