/**
 * @trident/algorithms: the algorithm suite, written once against @trident/core.
 *
 * Conventions for every algorithm:
 * - Buffers in, buffers out; inputs are never modified.
 * - Functions that need no host readback are synchronous: they validate, record
 *   the work in the device's stream and return the output buffers at once (stream
 *   order makes them safe to use). Functions that read back are async: `reduce`
 *   (returns the number), `compact` (needs the count to size its output),
 *   `compactInto` (reads the count back on serial-workgroup and gather devices only;
 *   on workgroup devices it records and resolves at once) and `quickSort` (the host
 *   drives the partitioning).
 * - Every algorithm has a plain sequential reference (`*Reference`), used by the
 *   conformance suite and the CLI.
 * - Bad arguments throw before anything is recorded: InvalidArgumentError naming
 *   the argument, LimitExceededError, or UnsupportedFeatureError naming the feature.
 * - Formulations are chosen from `device.caps` (features and limits) only: each
 *   algorithm's `<algorithm>Formulation(device, options)` says which one runs and
 *   with what shape (plan.ts holds the rule, `<algorithm>/tuning.ts` the shapes).
 */

export {
  type CompactFormulationName,
  type CompactIntoOptions,
  type CompactResult,
  compact,
  compactFormulation,
  compactInto,
} from './compact/compact.ts';
export { type DeviceClass, deviceClass, fewInvocations, type Tuned, type TuningTable } from './device-class.ts';
export { APSP_BLOCK, apsp } from './graph/apsp.ts';
export { type BfsFormulation, bfs, bfsFormulation } from './graph/bfs.ts';
export { type ComponentsFormulation, type ComponentsOptions, components, componentsFormulation } from './graph/components.ts';
export { fromEdges, type GenerateOptions, pathGraph, randomGraph, rmatGraph, starGraph } from './graph/generate.ts';
export { createGraph, Graph, type GraphInput, type InNeighbours, MAX_GRAPH_VERTICES } from './graph/graph.ts';
export { matching } from './graph/matching.ts';
export { type MstFormulation, type MstOptions, mst, mstFormulation } from './graph/mst.ts';
export { MAX_BLENDED_ID } from './graph/needs.ts';
export { apspReference, floydWarshallReference } from './graph/reference/apsp.ts';
export { bfsReference } from './graph/reference/bfs.ts';
export { componentsReference } from './graph/reference/components.ts';
export { matchingReference, matchingSize } from './graph/reference/matching.ts';
export { type MstForest, mstReference } from './graph/reference/mst.ts';
export { type HistogramFormulationName, type HistogramOptions, histogram, histogramFormulation } from './histogram/histogram.ts';
export {
  DEFAULT_SOFTENING2,
  NBODY_FLOPS_PER_INTERACTION,
  type NBodyAccelerationOptions,
  type NBodyBlocking,
  type NBodyFormulation,
  type NBodyOptions,
  type NBodyResult,
  type NBodyTiling,
  nbody,
  nbodyAccelerations,
  nbodyFormulation,
} from './nbody/nbody.ts';
export type { Family, Formulation } from './plan.ts';
export {
  type ReduceFormulationName,
  type ReduceOp,
  type ReduceOptions,
  reduce,
  reduceFormulation,
  reduceInto,
  reduceSumDepth,
} from './reduce/reduce.ts';
export { compactReference } from './reference/compact.ts';
export { histogramReference } from './reference/histogram.ts';
export * as orderKeys from './reference/keys.ts';
export { nbodyAccelerationsReference, nbodyForceScale, nbodyReference } from './reference/nbody.ts';
export { randomU32 } from './reference/random.ts';
export { gammaF32, reduceReference, sumAbs } from './reference/reduce.ts';
export { scanReference } from './reference/scan.ts';
export { sortReference } from './reference/sort.ts';
export { zcopyReference, zfillReference } from './reference/zcopy.ts';
export { type ScanFormulation, type ScanOptions, type ScanVariant, scan, scanFormulation, scanSumDepth, scanVariant } from './scan/scan.ts';
export type { LookbackTuning } from './scan/scan-lookback.ts';
export { bitonicSort } from './sort/bitonic/bitonic-sort.ts';
export { mergeSort } from './sort/merge/merge-sort.ts';
export { quickSort } from './sort/quick/quicksort.ts';
export { type RadixFormulationName, radixFormulation, radixSort } from './sort/radix/radix-sort.ts';
export {
  type SortFormulationName,
  type SortKeyType,
  type SortMethod,
  type SortOptions,
  type SortResult,
  sort,
  sortFormulation,
  sortMethod,
} from './sort/sort.ts';
export { zcopy, zcopyFormulation, zfill } from './zcopy/zcopy.ts';
