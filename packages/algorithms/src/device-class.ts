/**
 * Device classes and tuning tables: what the formulation rule (plan.ts) and every
 * algorithm's `tuning.ts` key their choices by. A tuning table is data: one entry per
 * device class that was measured, each with a one-line pointer to its evidence (a
 * results file and the call that made it); the narratives behind each value live in
 * bench/results/tuning/LEDGER.md.
 */
import type { DeviceCaps, Feature } from '@trident/core';

/** What kind of device a caps object describes: few fat serial workgroups (a CPU's workers), a hardware GPU, a software GPU, or a device of gather kernels only. */
export type DeviceClass = 'serial-workgroups' | 'gpu' | 'software-gpu' | 'gather-only';

/** One tuned value and where it was measured. */
export interface Tuned<T> {
  readonly value: T;
  /** Results file and call (or test) behind the value; LEDGER.md has the alternatives rejected. */
  readonly evidence: string;
}

/** A tuning table: a value for every device (`default`) and, where measured, one per device class. */
export type TuningTable<T> = { readonly default: Tuned<T> } & { readonly [C in DeviceClass]?: Tuned<T> };

/**
 * Invocations a workgroup device must run at once (caps.concurrency) for the workgroup
 * formulations to beat the gather ones; below it a GPU is a 'software-gpu'.
 */
export const WORKGROUP_MIN_CONCURRENCY: Tuned<number> = {
  value: 16384,
  evidence:
    'bench/results/software-webgpu/families-node-2vcpu-2026-11-23.json (SwiftShader, concurrency 4096: gather faster for every algorithm); hardware GPUs report 131072',
};

/**
 * True on devices that have workgroups but run few invocations at once and no serial
 * workgroups (software GPUs): there gather formulations are faster.
 */
export function fewInvocations(caps: DeviceCaps): boolean {
  return !caps.features.has('serial-workgroups') && caps.concurrency < WORKGROUP_MIN_CONCURRENCY.value;
}

/** The class of the device `caps` describes. */
export function deviceClass(caps: DeviceCaps): DeviceClass {
  const has = (f: Feature): boolean => caps.features.has(f);
  if (has('serial-workgroups')) return 'serial-workgroups';
  if (!(has('workgroup') && has('scatter') && has('gather'))) return 'gather-only';
  return fewInvocations(caps) ? 'software-gpu' : 'gpu';
}

/** The value `table` holds for the device `caps` describes. */
export function tuned<T>(table: TuningTable<T>, caps: DeviceCaps): T {
  return (table[deviceClass(caps)] ?? table.default).value;
}
