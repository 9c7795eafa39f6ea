/**
 * Radix sort's tuning, as data (see device-class.ts). Every value was measured on an
 * NVIDIA H100 through Dawn/Vulkan at 2^28 u32 (keys, or u32 pairs) beside CUB in the same
 * call, and applies to every device with subgroups and workgroups; no other GPU has been
 * measured. Narratives and rejected alternatives: bench/results/tuning/LEDGER.md, rows "radix.*".
 */
import type { Tuned } from '../../device-class.ts';
import type { MultisplitPasses } from './radix-multisplit.ts';

/** Keys per invocation of the multisplit tile, keys alone. */
export const KEY_ITEMS: Tuned<number> = {
  value: 14,
  evidence:
    'bench/results/tuning/h100-radix-session8-2026-11-24.json calls 8-9 (10-16 items; past 14 register spills); LEDGER.md radix.items',
};

/** Keys (and values) per invocation with values, staged after the keys in one workgroup array. */
export const PAIR_ITEMS: Tuned<number> = {
  value: 36,
  evidence: 'bench/results/tuning/h100-radix-session9-2026-11-27.json (18-36 items, shared staging); LEDGER.md radix.pairItems',
};

/** Items per batch of the batched ranking, keys alone and with values. */
export const KEY_RANK_BATCH: Tuned<number> = {
  value: 4,
  evidence: 'bench/results/tuning/h100-rank-batch-scan-2026-11-23.json (batches 2-12); LEDGER.md radix.rankBatch',
};
export const PAIR_RANK_BATCH: Tuned<number> = {
  value: 4,
  evidence: 'bench/results/tuning/h100-radix-tail-2026-11-23.json; LEDGER.md radix.rankBatch',
};

/** How radixSort's passes find each (digit, tile)'s first slot: per-pass counts and a scan, or onesweep. */
export const SORT_PASSES: Tuned<MultisplitPasses> = {
  value: 'reduce-then-scan',
  evidence:
    'bench/results/tuning/h100-radix-session9-2026-11-27.json call 9 (onesweep 1.6% faster at 2^28, 4.7% slower at 2^24); LEDGER.md radix.passes',
};

/** Onesweep: predecessor tiles one look-back round loads at once. */
export const ONESWEEP_WINDOW: Tuned<number> = {
  value: 4,
  evidence: 'bench/results/tuning/h100-onesweep-2026-11-23.json (windows 1-32); LEDGER.md radix.onesweepWindow',
};

/** Onesweep: look-back reads without progress before the fallback counts a predecessor's tile. */
export const ONESWEEP_SPIN_LIMIT: Tuned<number> = {
  value: 1024,
  evidence: 'scan look-back spin limits 16-4096 made no difference on the H100; LEDGER.md radix.onesweepSpin',
};
