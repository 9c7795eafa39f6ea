/**
 * Named suites (`trident bench --suite NAME`): which cases run at which sizes, in which
 * order, timed by the sustained protocol (bench/sustained.ts). They are the GPU machine's
 * runs (bench/h100/run.sh suite | quick), the same cases as the local bench plus the
 * suite's own (bench/suite-cases.ts), at the sizes CUB's anchor runs.
 *
 * Sizes follow one number, the log2 of the largest element count (`--max-log2n`, default
 * 28): element-wise cases run at 2^(k-4), 2^(k-2) and 2^k with k = min(max-log2n, 28), and
 * above 28 also at every power of two up to 2^max-log2n (where the device's
 * caps.limits.maxBufferElements allows: bench/suite-runner.ts); N-body bodies and graph
 * edges scale with it (N-body is quadratic: its bodies shift by half as many powers of
 * two). `--max-log2n 12` is the whole suite at toy sizes, for a check on any machine.
 */
import { type BenchCase, CASES } from './cases.ts';
import { SUITE_CASES, SUITE_GRAPH_CASES } from './suite-cases.ts';

export const caseKey = (c: Pick<BenchCase, 'algorithm' | 'variant'>): string => `${c.algorithm}:${c.variant}`;

/**
 * Every case a run can name: the local bench's and the suites' own. The suite's graph cases
 * replace the local bench's of the same name (the same graphs, built on worker threads).
 */
export const ALL_CASES: readonly BenchCase[] = [
  ...SUITE_GRAPH_CASES,
  ...[...CASES, ...SUITE_CASES].filter((c) => !SUITE_GRAPH_CASES.some((g) => caseKey(g) === caseKey(c))),
];

export function findCase(key: string): BenchCase | undefined {
  return ALL_CASES.find((c) => caseKey(c) === key);
}

/** One step of a suite: a case at one size. */
export interface SuiteStep {
  readonly key: string;
  readonly n: number;
}

export interface Suite {
  readonly name: string;
  readonly description: string;
  /** The steps at a largest element count of 2^maxLog2n, in the order they run. */
  steps(maxLog2n: number): SuiteStep[];
}

/** The suites' default --max-log2n: the sizes of the CUB anchor (anchors/cub_anchor.cu runs 2^24, 2^26, 2^28). */
export const DEFAULT_MAX_LOG2N = 28;
/** Above this, sizes are added one power of two at a time (what one storage binding cannot hold: bench/h100/cub-large.cu's sizes). */
const BASE_LOG2N = 28;
/** Graphs smaller than 2^10 stored edges are no measurement of a traversal. */
const MIN_GRAPH_LOG2 = 10;
/** N-body below 2^8 bodies is one workgroup's worth. */
const MIN_BODIES_LOG2 = 8;

/** The element-wise cases, in the order the suite runs them (the local bench's, then the suite's own beside each). */
const ELEMENTWISE = [
  'zcopy:copy',
  'zcopy:fill',
  'reduce:sum',
  'reduce:max',
  'reduce:sum f32',
  'scan:inclusive',
  'scan:exclusive',
  'scan:inclusive f32',
  'scan:exclusive f32',
  'histogram:256 bins',
  'histogram:256 bins all-equal',
  'compact:half kept',
  'compact:half kept (into)',
  'sort:radix keys',
  'sort:radix pairs',
] as const;

const GRAPHS = ['bfs:rmat', 'components:rmat'] as const;
/**
 * From 2^30 stored edges the graphs take Graph500's shape, edge factor 16 (2^30: scale 25,
 * 2^25 vertices), as a case of its own: a row at edge factor 16 is never set beside one at 8.
 */
const GRAPH500 = ['bfs:rmat ef16', 'components:rmat ef16'] as const;
const GRAPH500_LOG2 = 30;

/** The graph steps at 2^l stored edges, each size's two cases together (one graph generated for both). */
const graphSteps = (l: number): SuiteStep[] => (l >= GRAPH500_LOG2 ? GRAPH500 : GRAPHS).map((key) => ({ key, n: 2 ** l }));

const log2Steps = (key: string, logs: readonly number[]): SuiteStep[] => [...new Set(logs)].map((l) => ({ key, n: 2 ** l }));

/** 2^29 … 2^maxLog2n: the sizes past the base ladder. */
function beyond(maxLog2n: number): number[] {
  const out: number[] = [];
  for (let l = BASE_LOG2N + 1; l <= maxLog2n; l++) out.push(l);
  return out;
}

/**
 * The full suite: every element-wise case at three sizes (and past 2^28 on request),
 * N-body at 2^(k-12) and 2^(k-10) bodies (65536 and 262144 at k = 28), BFS and components on
 * R-MAT graphs of 2^(k-6), 2^(k-4), 2^(k-2) stored edges (scale 18, 20, 22 at edge factor 8),
 * and past 2^28 also of 2^29 … 2^maxLog2n stored edges (scale 25 at edge factor 8 at 2^29: 2^25
 * vertices; from 2^30 edge factor 16, scale 25 at 2^30), each graph size's two cases together so
 * each graph is generated once.
 */
const h100: Suite = {
  name: 'h100',
  description: 'the GPU machine suite: every algorithm of the local bench at 2^24..2^28 beside the CUB anchors',
  steps(maxLog2n) {
    const k = Math.min(maxLog2n, BASE_LOG2N);
    const steps = ELEMENTWISE.flatMap((key) => log2Steps(key, [k - 4, k - 2, k, ...beyond(maxLog2n)]));
    const shift = Math.ceil((BASE_LOG2N - k) / 2);
    steps.push(
      ...log2Steps(
        'nbody:accelerations',
        [16 - shift, 18 - shift].map((l) => Math.max(MIN_BODIES_LOG2, l)),
      ),
    );
    for (const l of new Set([k - 6, k - 4, k - 2].map((x) => Math.max(MIN_GRAPH_LOG2, x)))) steps.push(...graphSteps(l));
    for (const l of beyond(maxLog2n)) steps.push(...graphSteps(l));
    return steps;
  },
};

/**
 * The regression check after a change (`run.sh quick`, about three minutes on the H100): the
 * element-wise cases at the largest size alone (radix keys also at 2^(k-4), the size CUB's
 * launch overhead shows at), N-body at 2^(k-12) bodies, the graphs at 2^(k-4) stored edges (and
 * past 2^28 as the full suite's).
 */
const h100Quick: Suite = {
  name: 'h100-quick',
  description: 'the GPU machine regression check: each case at its largest size',
  steps(maxLog2n) {
    const k = Math.min(maxLog2n, BASE_LOG2N);
    const steps = ELEMENTWISE.flatMap((key) => log2Steps(key, [...(key === 'sort:radix keys' ? [k - 4] : []), k, ...beyond(maxLog2n)]));
    const shift = Math.ceil((BASE_LOG2N - k) / 2);
    steps.push(...log2Steps('nbody:accelerations', [Math.max(MIN_BODIES_LOG2, 16 - shift)]));
    for (const l of [Math.max(MIN_GRAPH_LOG2, k - 4), ...beyond(maxLog2n)]) steps.push(...graphSteps(l));
    return steps;
  },
};

export const SUITES: ReadonlyMap<string, Suite> = new Map([h100, h100Quick].map((s) => [s.name, s]));

/**
 * The suite's steps, keeping those of the cases named in `names` (algorithm or
 * algorithm:variant, as --algorithms takes them; empty: all). Unknown names return as
 * `unknown` so the command can say which the suite has.
 */
export function selectSteps(suite: Suite, maxLog2n: number, names: readonly string[]): { steps: SuiteStep[]; unknown: string[] } {
  const all = suite.steps(maxLog2n);
  if (names.length === 0) return { steps: all, unknown: [] };
  const matches = (name: string, key: string): boolean => (name.includes(':') ? key === name : key.split(':')[0] === name);
  const unknown = names.filter((name) => !all.some((s) => matches(name, s.key)));
  return { steps: all.filter((s) => names.some((name) => matches(name, s.key))), unknown };
}
