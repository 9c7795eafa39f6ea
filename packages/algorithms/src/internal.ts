/**
 * @trident/algorithms/internal: the building blocks behind the public API, for the
 * project's own benchmarks, sweeps and conformance tests (kernels, record functions,
 * shapes and tuning tables). Not a stable API: names and signatures change with the
 * formulations. Users import '@trident/algorithms'.
 */
export { dispatchGroups } from './common.ts';
export { compactChunked } from './compact/compact-chunked.ts';
export { compactTiles, type TileShape, tileShape } from './compact/compact-tiles.ts';
export * as compactTuning from './compact/tuning.ts';
export { WORKGROUP_MIN_CONCURRENCY } from './device-class.ts';
export { recordBlendedHistogram, recordSharedHistogram, type SharedHistogramPlan, sharedPlan } from './histogram/histogram.ts';
export {
  CHUNKED_HISTOGRAM,
  chunkCounters,
  chunkedHistogramFits,
  recordAtomicChunkHistogram,
  recordChunkedHistogram,
} from './histogram/histogram-chunked.ts';
export * as histogramTuning from './histogram/tuning.ts';
export * as nbodyTuning from './nbody/tuning.ts';
export { capableFamily, chooseFamily, classFamily, missingFeature, runsFamily } from './plan.ts';
export { chunkKernel, chunkPlan } from './reduce/reduce.ts';
export * as reduceTuning from './reduce/tuning.ts';
export { recordScan } from './scan/scan.ts';
export * as scanTuning from './scan/tuning.ts';
export {
  countKernel,
  KEY_RANK_BATCH,
  MULTISPLIT_ITEMS,
  MULTISPLIT_PAIR_ITEMS,
  type MultisplitCount,
  type MultisplitOptions,
  type MultisplitShape,
  type MultisplitValueLoads,
  multisplitShape,
  PAIR_RANK_BATCH,
  scatterKernel,
  sortShape,
} from './sort/radix/radix-multisplit.ts';
export { ONESWEEP_MAX_N, recordOnesweepHistogram, recordOnesweepPass, recordOnesweepPasses } from './sort/radix/radix-onesweep.ts';
export { recordMultisplitPasses } from './sort/radix/radix-passes.ts';
export { recordRadixSort } from './sort/radix/radix-sort.ts';
export * as radixTuning from './sort/radix/tuning.ts';
