/**
 * How an algorithm picks its formulation: the one place where device caps become a
 * formulation family. Every algorithm folder exports `<algorithm>Formulation(device,
 * options)`, which asks `chooseFamily` here and then its own tuning table
 * (`<algorithm>/tuning.ts`) for the shape; its entry point runs what that returns, and
 * the CLI's bench and report print the same answer.
 *
 * Families (chosen from caps, never from the backend's name):
 * - 'serial': few, fat, serial workgroups (a CPU's workers: 'serial-workgroups'): one
 *   long loop per worker chunk and as few dispatches as possible.
 * - 'workgroup': workgroup kernels (shared memory + barriers) and scatter stores;
 *   block algorithms, with subgroup fast paths where 'subgroup' exists.
 * - 'gather': gather kernels only (plus scatter / blended atomics where the caps say
 *   so); pass-based formulations whose kernels write element `globalIndex` of each
 *   output and never read what they write, with loops inside each invocation.
 *
 * Device classes order the families: a CPU prefers serial, then workgroup; a hardware
 * GPU prefers workgroup; a software GPU (workgroups, but few invocations at once, with
 * barriers and subgroups emulated lane by lane) prefers gather; a gather-only device
 * (WebGL2) has only gather.
 */
import type { Device, Feature } from '@trident/core';
import { unsupported } from './common.ts';
import { type DeviceClass, deviceClass } from './device-class.ts';

export { type DeviceClass, deviceClass, fewInvocations } from './device-class.ts';

export type Family = 'serial' | 'workgroup' | 'gather';

/** A formulation an algorithm runs on a device: its family, its name and the shape it runs with. */
export interface Formulation<Name extends string = string, Shape = undefined> {
  readonly family: Family;
  /** The algorithm's own name for it (what its `formulation` option accepts, where it has one). */
  readonly name: Name;
  /** The tuning it runs with (tile sizes, items per invocation…), from the algorithm's tuning table. */
  readonly shape: Shape;
  /** One line for people (the report's capability matrix and `trident devices`). */
  readonly summary: string;
}

/** The features every kernel of a family needs, whatever the algorithm. */
const FAMILY_NEEDS: Readonly<Record<Family, readonly Feature[]>> = {
  serial: ['serial-workgroups', 'scatter', 'gather'],
  workgroup: ['workgroup', 'scatter', 'gather'],
  gather: ['gather'],
};

/** Which family each device class tries first. */
const FAMILY_ORDER: Readonly<Record<DeviceClass, readonly Family[]>> = {
  'serial-workgroups': ['serial', 'workgroup', 'gather'],
  gpu: ['workgroup', 'gather'],
  'software-gpu': ['gather', 'workgroup'],
  'gather-only': ['gather'],
};

/** What one algorithm brings: the families it has formulations in, and what its gather family needs beyond 'gather'. */
export interface AlgorithmFamilies {
  readonly families?: readonly Family[];
  readonly gatherNeeds?: readonly Feature[];
}

/** The first feature `family` needs that `device` lacks (undefined when it runs). */
export function missingFeature(device: Device, family: Family, gatherNeeds: readonly Feature[] = []): Feature | undefined {
  const needs = family === 'gather' ? [...FAMILY_NEEDS.gather, ...gatherNeeds] : FAMILY_NEEDS[family];
  return needs.find((f) => !device.caps.features.has(f));
}

/** True when `device` runs `family`'s kernels. */
export function runsFamily(device: Device, family: Family, gatherNeeds: readonly Feature[] = []): boolean {
  return missingFeature(device, family, gatherNeeds) === undefined;
}

/**
 * The family `algorithm` runs by default on `device`: the first of its families, in
 * the device class's order, whose needs the device meets. Throws
 * UnsupportedFeatureError naming the gather family's first missing feature when none fits.
 */
export function chooseFamily(device: Device, algorithm: string, has: AlgorithmFamilies = {}): Family {
  const families = has.families ?? ['workgroup', 'gather'];
  const gatherNeeds = has.gatherNeeds ?? [];
  const fits = FAMILY_ORDER[deviceClass(device.caps)].find((f) => families.includes(f) && runsFamily(device, f, gatherNeeds));
  if (fits !== undefined) return fits;
  const missing = missingFeature(device, 'gather', gatherNeeds) ?? missingFeature(device, 'workgroup') ?? 'gather';
  throw unsupported(device, missing, algorithm, 'no formulation of this algorithm fits the device caps');
}

/**
 * The family of the device's own class (serial on a CPU, workgroup on a hardware GPU,
 * gather on software GPUs and gather-only devices), for algorithms whose formulations
 * are told apart by other caps (the graph algorithms: atomics that return values).
 */
export function classFamily(device: Device, algorithm: string): Family {
  return chooseFamily(device, algorithm, { families: ['serial', 'workgroup', 'gather'] });
}

/**
 * The family an explicitly requested formulation may use: 'workgroup' where the device
 * runs workgroup kernels, else 'gather' (with `gatherNeeds`). Throws like chooseFamily.
 * Defaults go through chooseFamily; this only says what the device can run.
 */
export function capableFamily(device: Device, algorithm: string, gatherNeeds: readonly Feature[] = []): 'workgroup' | 'gather' {
  if (runsFamily(device, 'workgroup')) return 'workgroup';
  const missing = missingFeature(device, 'gather', gatherNeeds);
  if (missing === undefined) return 'gather';
  throw unsupported(device, missing, algorithm, 'no formulation of this algorithm fits the device caps');
}
