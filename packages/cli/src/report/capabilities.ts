/**
 * The capability matrix (the web's version of Table 2.1 in Stephan 2019, SYCL / HC / HIP / CUDA compared), generated
 * from the devices each results file describes (`devices`: caps, info and the
 * formulation each algorithm chose), never typed in. One column per device
 * (machine · runtime · backend), one row per property.
 */
import type { BenchDevice } from '../bench/schema.ts';
import type { LoadedResults } from './load.ts';
import { comparePlatforms, fmtBytes, shortAdapter } from './names.ts';

export type Tone = 'yes' | 'no' | 'plain';

export interface MatrixCell {
  readonly text: string;
  readonly tone: Tone;
  readonly title?: string;
}

export interface MatrixRow {
  readonly group: string;
  readonly property: string;
  readonly cells: readonly MatrixCell[];
}

export interface CapabilityMatrix {
  readonly columns: readonly { readonly key: string; readonly adapter: string; readonly shortAdapter: string }[];
  readonly rows: readonly MatrixRow[];
  /** Machines whose results carry no device descriptions (e.g. files from before the field existed). */
  readonly undescribed: readonly string[];
}

const KERNEL_CLASSES = ['gather', 'scatter', 'atomic', 'atomic-other', 'workgroup', 'subgroup'] as const;

const plain = (text: string, title?: string): MatrixCell => ({ text, tone: 'plain', ...(title ? { title } : {}) });
const yes = (text: string, title?: string): MatrixCell => ({ text, tone: 'yes', ...(title ? { title } : {}) });
const no = (text: string, title?: string): MatrixCell => ({ text, tone: 'no', ...(title ? { title } : {}) });

function atomicsHow(d: BenchDevice, feature: 'atomic' | 'atomic-other'): MatrixCell {
  const f = new Set(d.caps.features);
  if (!f.has(feature)) return no('refused');
  if (feature === 'atomic' && f.has('atomics-via-blending'))
    return yes(`blending into f32, exact to ${powerOfTwo(d.caps.limits.maxExactAtomicCount)}`);
  return yes(d.backend === 'cpu' ? 'JS Atomics' : 'native');
}

/** 16777216 -> '2^24'; other counts as they are. */
const powerOfTwo = (n: number): string => (n > 0 && Number.isInteger(Math.log2(n)) ? `2^${Math.log2(n)}` : String(n));

function timerName(d: BenchDevice): string {
  if (d.caps.timerSource === 'wall') return 'wall (performance.now)';
  if (d.backend === 'webgpu') return 'gpu-timestamp (timestamp-query)';
  if (d.backend === 'webgl2') return 'gpu-timestamp (EXT_disjoint_timer_query_webgl2)';
  return 'gpu-timestamp';
}

export function buildCapabilityMatrix(sources: readonly LoadedResults[]): CapabilityMatrix {
  // The newest description per column (several runs of one machine may be merged).
  const newest = new Map<string, { d: BenchDevice; label: string; at: string }>();
  for (const s of sources) {
    for (const d of s.devices) {
      const key = `${s.label} · ${d.runtime} · ${d.backend}`;
      const cur = newest.get(key);
      if (!cur || cur.at < s.createdAt) newest.set(key, { d, label: s.label, at: s.createdAt });
    }
  }
  const entries = [...newest.entries()].sort(([, a], [, b]) =>
    comparePlatforms(
      { label: a.label, runtime: a.d.runtime, backend: a.d.backend },
      { label: b.label, runtime: b.d.runtime, backend: b.d.backend },
    ),
  );
  const devices = entries.map(([, v]) => v.d);
  const described = new Set(entries.map(([, v]) => v.label));
  const undescribed = [...new Set(sources.filter((s) => !described.has(s.label) && s.measurements.length > 0).map((s) => s.label))];
  const row = (group: string, property: string, cell: (d: BenchDevice) => MatrixCell): MatrixRow => ({
    group,
    property,
    cells: devices.map(cell),
  });
  const has = (d: BenchDevice, f: string): boolean => d.caps.features.includes(f);
  const rows: MatrixRow[] = [
    row('device', 'adapter', (d) => plain(shortAdapter(d.adapter) || d.adapter, d.adapter)),
    row('device', 'software rasteriser', (d) => plain(d.software ? 'yes' : 'no')),
    row('device', 'concurrency (invocations at once)', (d) => plain(String(d.caps.concurrency))),
    row('device', 'dispatch cost (backend estimate)', (d) => plain(`~${d.caps.dispatchCostMicros} µs`)),
    row('data movement', 'buffers', (d) =>
      has(d, 'host-memory') ? yes('zero-copy host memory') : plain('device memory, explicit upload / read-back'),
    ),
    row('buffer limits', 'largest buffer', (d) => plain(fmtBytes(4 * d.caps.limits.maxBufferElements))),
    row('buffer limits', 'largest binding', (d) => plain(fmtBytes(d.caps.limits.maxStorageBufferBindingSize))),
    row('buffer limits', 'buffers per kernel', (d) => plain(String(d.caps.limits.maxBuffersPerKernel))),
    row('workgroups', 'invocations per workgroup', (d) => plain(String(d.caps.limits.maxComputeInvocationsPerWorkgroup))),
    row('workgroups', 'workgroup memory', (d) =>
      d.caps.limits.maxComputeWorkgroupStorageSize > 0 ? yes(fmtBytes(d.caps.limits.maxComputeWorkgroupStorageSize)) : no('none'),
    ),
    row('workgroups', 'barriers', (d) =>
      has(d, 'workgroup') ? yes(d.backend === 'cpu' ? 'phase splitting' : 'workgroupBarrier') : no('none: gather formulations'),
    ),
    row('atomics', 'add / min / max', (d) => atomicsHow(d, 'atomic')),
    row('atomics', 'cas, and/or/xor, exchange', (d) => atomicsHow(d, 'atomic-other')),
    row('subgroups', 'subgroups and width', (d) =>
      has(d, 'subgroup')
        ? yes(
            d.caps.limits.maxSubgroupSize <= 1
              ? 'width 1 (emulated)'
              : d.caps.limits.minSubgroupSize === d.caps.limits.maxSubgroupSize
                ? `width ${d.caps.limits.maxSubgroupSize}`
                : `width ${d.caps.limits.minSubgroupSize}–${d.caps.limits.maxSubgroupSize}`,
          )
        : no('refused'),
    ),
    row('timers', 'timer and source', (d) => (d.caps.timerSource === 'wall' ? plain(timerName(d)) : yes(timerName(d)))),
    ...KERNEL_CLASSES.map((k) => row('kernel classes', k, (d) => (has(d, k) ? yes('native') : no('refused')))),
  ];
  const algorithms = [...new Set(devices.flatMap((d) => Object.keys(d.formulations ?? {})))];
  for (const a of algorithms) {
    rows.push(
      row('formulation chosen', a, (d) => {
        const f = d.formulations?.[a];
        if (f === undefined) return plain('—');
        return f.startsWith('refused') ? no(f) : plain(f);
      }),
    );
  }
  return {
    columns: entries.map(([key, v]) => ({ key, adapter: v.d.adapter, shortAdapter: shortAdapter(v.d.adapter) })),
    rows,
    undescribed,
  };
}
