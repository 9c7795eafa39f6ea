/**
 * Caps checks shared by the graph algorithms that combine into labels with
 * atomic min (hooking, Borůvka's minimum edges, matching's parents).
 */
import { type Device, LimitExceededError } from '@trident/core';
import { hasAll, unsupported } from '../common.ts';

/** Ids blended as f32 are exact up to 2^24 (a 24-bit significand). */
export const MAX_BLENDED_ID = 2 ** 24;

/** Throws UnsupportedFeatureError unless the device has gather, scatter and atomic add/min/max. */
export function needsAtomics(device: Device, algorithm: string): void {
  for (const f of ['gather', 'scatter', 'atomic'] as const) {
    if (!hasAll(device, f)) throw unsupported(device, f, algorithm, 'the graph formulations combine labels with atomic min');
  }
}

/** On devices that emulate atomic min by float blending, ids must stay exact in f32. */
export function checkBlendable(device: Device, ids: number, what: string): void {
  if (device.caps.features.has('atomics-via-blending') && ids > MAX_BLENDED_ID) {
    throw new LimitExceededError(device.info.adapter, 'exact blended ids (2^24)', ids, MAX_BLENDED_ID, what);
  }
}
