/**
 * Reads the H100 run's own format (bench/results/h100-webgpu-<date>.json, written
 * by the first H100 harness, since retired) into measurements of the tolerant schema
 * (load.ts). That file lists timed kernels by name and carries the native
 * anchors as text lines:
 *
 * - `results[]`: `{ name, source, medianMs, gbps, runsMs, ok }`, n from the top-level `n`.
 *   `"<algo> [op] [dtype] algorithms (library)"` is Trident's library on WebGPU;
 *   every other name is a hand-tuned Trident-IR kernel of the same operation
 *   (a tuning sweep), of which the fastest per operation is kept as
 *   implementation `ir-tuned` (a best-known time for application efficiency).
 * - `cub.output[]`: lines like `n=2^28 CUB reduce sum u32: 0.3547 ms 3027.6 GB/s`
 *   from anchors/cub_anchor.cu, timed with CUDA events (GPU-side, so
 *   `gpu-timestamp`), in the same device session.
 */
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True for the H100 run's format: named results without an `algorithm` field. */
export function isH100WebgpuFormat(json: Json): boolean {
  return (
    Array.isArray(json.results) &&
    json.results.length > 0 &&
    json.results.every((r) => isObject(r) && typeof r.name === 'string' && typeof r.medianMs === 'number' && !('algorithm' in r))
  );
}

const DTYPES = new Set(['u32', 'i32', 'f32']);

/** 'zfill' -> zcopy/fill; 'zcopy' -> zcopy/copy; 'reduce sum u32' -> reduce/sum; 'scan inclusive u32' -> scan/inclusive. */
function operation(words: readonly string[]): { algorithm: string; variant: string; dtype: string } {
  const [head = '', ...rest] = words;
  const dtype = rest.find((w) => DTYPES.has(w)) ?? 'u32';
  const variant = rest.filter((w) => !DTYPES.has(w)).join(' ');
  if (head === 'zfill') return { algorithm: 'zcopy', variant: 'fill', dtype };
  if (head === 'zcopy') return { algorithm: 'zcopy', variant: variant || 'copy', dtype };
  return { algorithm: head, variant, dtype };
}

/** Words of a result name that name the operation: up to the first tuning word ('ir', 'algorithms', 'vec4'...). */
function operationWords(name: string): string[] {
  const words = name.trim().split(/\s+/);
  const stop = words.findIndex((w, i) => i > 0 && (w === 'ir' || w === 'algorithms' || w === '(library)'));
  return stop < 0 ? words : words.slice(0, stop);
}

export function fromH100WebgpuFormat(json: Json): { label: string; measurements: Json[]; adapter: string; notes: string[] } {
  const n = typeof json.n === 'number' ? json.n : undefined;
  const adapterInfo = isObject(json.adapter) ? json.adapter : {};
  const details = isObject(adapterInfo.details) ? adapterInfo.details : {};
  const adapter = String(details.device ?? adapterInfo.adapter ?? json.gpu ?? 'H100');
  const gpu = typeof json.gpu === 'string' ? json.gpu : adapter;
  const repeats = typeof json.repeats === 'number' ? json.repeats : undefined;
  const out: Json[] = [];
  const tuned = new Map<string, Json>();
  for (const r of json.results as Json[]) {
    const name = r.name as string;
    const op = operation(operationWords(name));
    const runs = Array.isArray(r.runsMs) ? (r.runsMs as number[]) : [r.medianMs as number];
    const sorted = [...runs].sort((a, b) => a - b);
    const m: Json = {
      ...op,
      backend: 'webgpu',
      runtime: 'node',
      adapter,
      n: typeof r.n === 'number' ? r.n : n,
      timer: r.source === 'gpu-timestamp' ? 'gpu-timestamp' : 'wall',
      repeats: repeats ?? runs.length,
      ms: { median: r.medianMs, min: sorted[0], max: sorted[sorted.length - 1], samples: runs },
      ...(typeof r.gbps === 'number' ? { bytes: (r.gbps as number) * (r.medianMs as number) * 1e6 } : {}),
      ...(typeof r.ok === 'boolean' ? { verified: r.ok } : {}),
      tuning: name,
    };
    if (/algorithms \(library\)/.test(name)) {
      out.push({ ...m, implementation: 'trident' });
      continue;
    }
    const key = `${op.algorithm}|${op.variant}|${String(m.n)}`;
    const best = tuned.get(key);
    if (r.ok !== false && (!best || (r.medianMs as number) < ((best.ms as Json).median as number)))
      tuned.set(key, { ...m, implementation: 'ir-tuned' });
  }
  out.push(...tuned.values());

  const cub = isObject(json.cub) && Array.isArray(json.cub.output) ? (json.cub.output as unknown[]) : [];
  out.push(...anchorLines(cub, gpu));
  const notes: string[] = [];
  if (isObject(json.conformance)) {
    const c = json.conformance;
    notes.push(`conformance on this machine: ${String(c.passed)} passed, ${String(c.failed)} failed`);
  }
  return { label: 'h100', measurements: out, adapter, notes };
}

/** Rows from anchors/cub_anchor.cu's output lines, e.g. `n=2^28 CUB reduce sum u32: 0.3547 ms 3027.6 GB/s`. */
function anchorLines(lines: readonly unknown[], gpu: string): Json[] {
  const out: Json[] = [];
  for (const line of lines) {
    if (typeof line !== 'string') continue;
    const body = /^nbody CUDA n=(\d+) tile=(\d+):\s+([\d.]+)\s+ms/.exec(line);
    if (body) {
      // anchors/nbody_anchor.cu: one all-pairs force evaluation, 20 flop per interaction, timed with CUDA events.
      const n = Number(body[1]);
      out.push({
        implementation: 'cuda',
        algorithm: 'nbody',
        variant: `tile ${body[2]}`,
        backend: 'cuda',
        runtime: 'native',
        adapter: gpu,
        n,
        dtype: 'f32',
        timer: 'gpu-timestamp',
        ms: Number(body[3]),
        flops: 20 * n * n,
      });
      continue;
    }
    const m = /^n=2\^(\d+)\s+(.+?):\s+([\d.]+)\s+ms\s+([\d.]+)\s+(GB\/s|Gkeys\/s|Gpairs\/s)/.exec(line);
    if (!m) continue;
    const size = 2 ** Number(m[1]);
    const what = (m[2] as string).toLowerCase();
    const ms = Number(m[3]);
    const rate = Number(m[4]);
    // CUDA events time the GPU side, so these count as gpu-timestamp.
    const base = { backend: 'cuda', runtime: 'native', adapter: gpu, n: size, timer: 'gpu-timestamp', ms, dtype: 'u32' };
    // Bytes as the other rows count them: read + written (sorts: keys 8n, pairs 16n, as Trident's sort rows count keys 8n).
    if (what.startsWith('memcpy')) out.push({ ...base, implementation: 'cuda', algorithm: 'zcopy', variant: 'copy', bytes: 8 * size });
    else if (what.includes('reduce sum'))
      out.push({ ...base, implementation: 'cub', algorithm: 'reduce', variant: 'sum', bytes: rate * ms * 1e6 });
    else if (what.includes('inclusive scan'))
      out.push({ ...base, implementation: 'cub', algorithm: 'scan', variant: 'inclusive', bytes: 8 * size });
    else if (what.includes('exclusive scan'))
      out.push({ ...base, implementation: 'cub', algorithm: 'scan', variant: 'exclusive', bytes: 8 * size });
    else if (what.includes('radix sort keys'))
      out.push({ ...base, implementation: 'cub', algorithm: 'sort', variant: 'radix keys', bytes: 8 * size });
    else if (what.includes('radix sort pairs'))
      out.push({ ...base, implementation: 'cub', algorithm: 'sort', variant: 'radix pairs', bytes: 16 * size });
    else if (what.includes('histogram'))
      out.push({ ...base, implementation: 'cub', algorithm: 'histogram', variant: '256 bins', bytes: rate * ms * 1e6 });
  }
  return out;
}

/**
 * True for the H100 A/B run's format (bench/webgpu-h100-ab.ts: `library[]`, `irKernels[]`, `native.lines`) and the
 * algorithms' gpu-check format (`results[]` of the same rows, `anchors` as an object of times).
 */
export function isH100AbFormat(json: Json): boolean {
  const rows = abRows(json);
  if (rows !== undefined && rows.length > 0)
    return rows.every((r) => isObject(r) && typeof r.name === 'string' && typeof r.ms === 'number');
  // A call that measured only the IR kernels (no library rows) beside its anchors.
  return rows === undefined && Array.isArray(json.irKernels) && json.irKernels.length > 0;
}

/** The library rows: `library[]` (A/B run) or `results[]` (the algorithms' gpu-check run) of `{ name, n, ms, ... }`. */
function abRows(json: Json): Json[] | undefined {
  const list = Array.isArray(json.library) ? json.library : Array.isArray(json.results) ? json.results : undefined;
  return list as Json[] | undefined;
}

/** Anchors given as `{ "cub_reduce_sum_u32_2^28_ms": 0.358, "memcpy_d2d_2^28_ms": 0.7249, ... }` (gpu-check run). */
function anchorObject(anchors: Json, gpu: string): Json[] {
  const out: Json[] = [];
  for (const [key, value] of Object.entries(anchors)) {
    const m = /^(.+)_2\^(\d+)_ms$/.exec(key);
    if (!m || typeof value !== 'number') continue;
    const what = m[1] as string;
    const size = 2 ** Number(m[2]);
    const base = { backend: 'cuda', runtime: 'native', adapter: gpu, n: size, timer: 'gpu-timestamp', ms: value, dtype: 'u32' };
    if (what.startsWith('memcpy')) out.push({ ...base, implementation: 'cuda', algorithm: 'zcopy', variant: 'copy', bytes: 8 * size });
    else if (what.includes('reduce_sum'))
      out.push({ ...base, implementation: 'cub', algorithm: 'reduce', variant: 'sum', bytes: 4 * size });
    else if (what.includes('inclusive_scan'))
      out.push({ ...base, implementation: 'cub', algorithm: 'scan', variant: 'inclusive', bytes: 8 * size });
    else if (what.includes('radix_keys'))
      out.push({ ...base, implementation: 'cub', algorithm: 'sort', variant: 'radix keys', bytes: 8 * size });
    else if (what.includes('histogram'))
      out.push({ ...base, implementation: 'cub', algorithm: 'histogram', variant: '256 bins', bytes: 4 * size });
  }
  return out;
}

/** 'radix sort u32 keys' -> sort/radix keys (pairs: radix pairs, as CUB's rows); 'nbody 1 step' -> nbody/1 step; 'reduce sum f32' -> reduce/sum f32 (u32 is the default dtype). */
function libraryOperation(name: string): { algorithm: string; variant: string; dtype: string } {
  const words = name.trim().split(/\s+/);
  const dtype = words.find((w) => DTYPES.has(w)) ?? (words[0] === 'nbody' ? 'f32' : 'u32');
  const rest = words.filter((w) => !DTYPES.has(w));
  if (words.includes('sort')) {
    const method = words[words.indexOf('sort') - 1] ?? '';
    const what = words.includes('pairs') ? ' pairs' : words.includes('keys') ? ' keys' : '';
    return { algorithm: 'sort', variant: `${method}${what}`, dtype };
  }
  const op = operation(rest);
  // Keep a non-default dtype in the variant so 'reduce sum f32' is its own row beside 'reduce sum u32'.
  return { ...op, variant: dtype !== 'u32' && op.algorithm !== 'nbody' ? `${op.variant} ${dtype}`.trim() : op.variant, dtype };
}

export function fromH100AbFormat(json: Json): { measurements: Json[]; adapter: string; notes: string[] } {
  const n = typeof json.n === 'number' ? json.n : undefined;
  const adapterText = typeof json.adapter === 'string' ? json.adapter : 'H100';
  const gpu =
    typeof json.machine === 'string'
      ? json.machine.includes(': ')
        ? (json.machine.split(': ')[1] as string)
        : json.machine
      : (/adapter (\S+)/.exec(adapterText)?.[1] ?? adapterText);
  // Dawn names the H100's Vulkan adapter by vendor and driver only ('NVIDIA: 580.159.04 …'): name the GPU too.
  const named = /adapter (\S+)/.exec(adapterText)?.[1] ?? adapterText;
  const adapter = /^[A-Za-z]+:\s*[\d.\s]+$/.test(named) ? `${gpu.split(',')[0]} (${named})` : named;
  const out: Json[] = [];
  for (const r of abRows(json) ?? []) {
    const op = libraryOperation(r.name as string);
    const size = typeof r.n === 'number' ? r.n : n;
    const ms = r.ms as number;
    const m: Json = {
      ...op,
      implementation: 'trident',
      backend: 'webgpu',
      runtime: 'node',
      adapter,
      n: size,
      timer: 'gpu-timestamp',
      ms,
      tuning: r.name,
    };
    if (typeof r.ok === 'boolean') m.verified = r.ok;
    if (typeof r.GFLOPs === 'number') m.flops = r.GFLOPs * ms * 1e6;
    else if (typeof r.GBps === 'number' && r.GBps > 0) m.bytes = r.GBps * ms * 1e6;
    // Sorts count each key (and value) read once and written once, as CUB's rows do.
    else if (op.algorithm === 'sort' && typeof size === 'number') m.bytes = (op.variant.endsWith('pairs') ? 16 : 8) * size;
    out.push(m);
  }
  const tuned = new Map<string, Json>();
  for (const r of Array.isArray(json.irKernels) ? (json.irKernels as Json[]) : []) {
    if (typeof r.kernel !== 'string' || typeof r.ms !== 'number') continue;
    // 'raw-hand' rows are the hand-written WGSL control, not Trident's code: never a Trident row.
    if (typeof r.variant === 'string' && r.variant.startsWith('raw-hand')) continue;
    const op = r.kernel === 'reduce' ? { algorithm: 'reduce', variant: 'sum', dtype: 'u32' } : operation([r.kernel]);
    const best = tuned.get(r.kernel);
    if (best && (best.ms as number) <= r.ms) continue;
    tuned.set(r.kernel, {
      ...op,
      implementation: 'ir-tuned',
      backend: 'webgpu',
      runtime: 'node',
      adapter,
      n,
      timer: 'gpu-timestamp',
      ms: r.ms,
      ...(typeof r.gbps === 'number' ? { bytes: r.gbps * r.ms * 1e6 } : {}),
      tuning: r.variant,
    });
  }
  out.push(...tuned.values());
  const native = isObject(json.native) && Array.isArray(json.native.lines) ? (json.native.lines as unknown[]) : [];
  out.push(...anchorLines(native, gpu));
  if (isObject(json.anchors)) out.push(...anchorObject(json.anchors, gpu));
  // The suite's call-latency rows (Trident and its TF.js webgpu peer, same process): already measurements.
  if (Array.isArray(json.peers)) out.push(...json.peers.filter(isObject).map((p) => ({ adapter, ...p })));
  if (isObject(json.graph)) out.push(...graphRows(json.graph, adapter));
  const notes = Array.isArray(json.notes) ? json.notes.filter((x): x is string => typeof x === 'string') : [];
  return { measurements: out, adapter, notes };
}

/**
 * The suite's BFS check (`graph`: an R-MAT graph, one wall-clocked call per source and formulation) as
 * Trident bfs rows in GTEPS as `trident bench` counts them: stored edges (both directions) / median time.
 * 'frontier-balanced' is what `bfsFormulation` picks on a GPU (concurrency >= 1024), so it is the 'rmat' row.
 */
function graphRows(graph: Json, adapter: string): Json[] {
  const stored = graph.stored;
  if (typeof stored !== 'number' || !Array.isArray(graph.rows)) return [];
  const byFormulation = new Map<string, number[]>();
  for (const r of graph.rows) {
    if (!isObject(r) || typeof r.formulation !== 'string' || typeof r.ms !== 'number') continue;
    byFormulation.set(r.formulation, [...(byFormulation.get(r.formulation) ?? []), r.ms]);
  }
  const out: Json[] = [];
  for (const [formulation, times] of byFormulation) {
    const sorted = [...times].sort((a, b) => a - b);
    const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
    const median = sorted.length % 2 ? at(0.5) : ((sorted[sorted.length / 2 - 1] as number) + (sorted[sorted.length / 2] as number)) / 2;
    out.push({
      algorithm: 'bfs',
      variant: formulation === 'frontier-balanced' ? 'rmat' : `rmat (${formulation})`,
      implementation: 'trident',
      backend: 'webgpu',
      runtime: 'node',
      adapter,
      n: stored,
      dtype: 'i32',
      timer: graph.timing === 'gpu-timestamp' ? 'gpu-timestamp' : 'wall',
      repeats: times.length,
      ms: { median, min: sorted[0], max: sorted[sorted.length - 1], q1: at(0.25), q3: at(0.75), samples: times },
      throughput: { value: stored / (median * 1e6), unit: 'GTEPS' },
    });
  }
  return out;
}
