/**
 * H100 check of the graph BFS (target: at least 5 GTEPS on an R-MAT
 * graph of 2^22 vertices, edge factor 16). The graph is Graph500-shaped: R-MAT
 * (a = 0.57, b = c = 0.19) edges, stored in both directions (an undirected graph,
 * 2 x 16 x 2^22 = 134M stored entries, declared symmetric); BFS runs from 8 fixed
 * sources of non-zero degree with the formulation the caps pick for it
 * ('direction-optimizing' on a symmetric graph) and, interleaved, the top-down-only
 * 'frontier-balanced' for comparison.
 *
 * Time: wall clock from the `bfs()` call until its levels are complete on the
 * device (`device.flush()`; the host reads one count per level, so per-level
 * latency is part of it), as Graph500 times the search and not the copy of its
 * output; `msWithRead` adds the read of the (n,) levels to the host. One warm-up
 * run per formulation; medians over the sources.
 * TEPS, Graph500's convention: input (undirected) edges in the traversed component
 * per second = half the stored entries of the reached vertices' rows; the
 * directed count (entries examined) is printed beside it. The first source's
 * levels are checked against the sequential reference.
 *
 * Bundle and run as the other checks (from the repository root):
 *   node_modules/.bin/esbuild --bundle --platform=node --format=esm --target=node20 --log-level=warning --conditions=trident-source \
 *     "--banner:js=import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" \
 *     bench/h100/graph-check.ts --outfile=.gpu/graph-check.mjs --alias:trident=./bench/h100/trident-webgpu-only.mjs
 *   node .gpu/graph-check.mjs            # GRAPH_SCALE=14 for a local smoke run on SwiftShader
 * It prints one `RESULTS {json}` line and writes $OUT/graph-check.json when OUT is set.
 */
import { writeFileSync } from 'node:fs';
import { type BfsFormulation, bfs, bfsFormulation, bfsReference, createGraph, rmatGraph } from '@trident/algorithms';
import { createDevice } from 'trident';
import { median as medianOf } from '../../packages/cli/src/bench/stats.ts';

const SCALE = Number(process.env.GRAPH_SCALE ?? 22);
const EDGE_FACTOR = Number(process.env.GRAPH_EDGE_FACTOR ?? 16);
const SOURCES = 8;

const device = await createDevice({ backend: 'webgpu' });
console.log(`device: ${device.info.adapter}; concurrency ${device.caps.concurrency}`);

let t0 = performance.now();
const input = rmatGraph(SCALE, EDGE_FACTOR, { symmetric: true, seed: 2026 });
const generateMs = performance.now() - t0;
t0 = performance.now();
const graph = createGraph(device, input);
await device.flush();
const uploadMs = performance.now() - t0;
const n = input.rows;
const stored = input.indices.length;
console.log(`bfs formulation: ${bfsFormulation(device, graph).name}`);
console.log(
  `R-MAT scale ${SCALE}, edge factor ${EDGE_FACTOR}: n ${n}, stored entries ${stored}; generate ${generateMs.toFixed(0)} ms, upload ${uploadMs.toFixed(0)} ms`,
);

const degree = (u: number) => (input.indptr[u + 1] as number) - (input.indptr[u] as number);
const sources: number[] = [];
// Fixed, spread-out picks (a multiplicative hash of 1, 2, …) with non-zero degree.
for (let i = 1; sources.length < SOURCES && i < 64 * SOURCES; i++) {
  const v = (i * 2654435761) % n;
  if (degree(v) > 0 && !sources.includes(v)) sources.push(v);
}

/** Stored entries of the rows of reached vertices (each undirected edge of the component twice). */
function examined(levels: Int32Array): number {
  let sum = 0;
  for (let v = 0; v < n; v++) if ((levels[v] as number) >= 0) sum += degree(v);
  return sum;
}

// The caps' choice for this (symmetric) graph, and the top-down-only GPU formulation beside it.
const formulations = [bfsFormulation(device, graph).name, 'frontier-balanced'].filter((f, i, a) => a.indexOf(f) === i) as BfsFormulation[];
const wrong: string[] = [];
for (const f of formulations) {
  const warm = await bfs(device, graph, sources[0] as number, { formulation: f });
  await warm.read();
  warm.destroy();
}
const rows: Array<Record<string, unknown>> = [];
const times = new Map<BfsFormulation, number[]>();
const rates = new Map<BfsFormulation, number[]>();
for (const [i, s] of sources.entries()) {
  for (const f of formulations) {
    const start = performance.now();
    const out = await bfs(device, graph, s, { formulation: f });
    await device.flush(); // the levels are complete on the device
    const ms = performance.now() - start;
    const levels = await out.read();
    const msWithRead = performance.now() - start;
    out.destroy();
    const edges = examined(levels);
    let depth = 0;
    for (const l of levels) if (l > depth) depth = l;
    if (i === 0) {
      const want = bfsReference(input, s);
      const bad = want.findIndex((x, v) => x !== levels[v]);
      if (bad >= 0) wrong.push(`${f} source ${s}: vertex ${bad} level ${levels[bad]}, expected ${want[bad]}`);
    }
    const gteps = edges / 2 / (ms * 1e6);
    times.set(f, [...(times.get(f) ?? []), ms]);
    rates.set(f, [...(rates.get(f) ?? []), gteps]);
    const row = {
      formulation: f,
      source: s,
      ms: +ms.toFixed(3),
      msWithRead: +msWithRead.toFixed(3),
      depth,
      examined: edges,
      gteps: +gteps.toFixed(3),
      gtepsDirected: +(edges / (ms * 1e6)).toFixed(3),
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
}
const summary: Record<string, unknown> = {};
for (const f of formulations) {
  summary[f] = { medianMs: +medianOf(times.get(f) ?? []).toFixed(3), medianGteps: +medianOf(rates.get(f) ?? []).toFixed(3) };
  console.log(
    `${f}: median ${medianOf(times.get(f) ?? []).toFixed(2)} ms, ${medianOf(rates.get(f) ?? []).toFixed(3)} GTEPS (Graph500 count)`,
  );
}
console.log(`wrong: ${wrong.join('; ') || 'none'}`);
const results = {
  adapter: device.info.adapter,
  scale: SCALE,
  edgeFactor: EDGE_FACTOR,
  n,
  stored,
  generateMs,
  uploadMs,
  timing: 'wall, bfs() call to levels complete on the device (msWithRead: to levels read back)',
  summary,
  rows,
  wrong,
};
console.log(`RESULTS ${JSON.stringify(results)}`);
if (process.env.OUT) writeFileSync(`${process.env.OUT}/graph-check.json`, JSON.stringify(results, null, 2));
graph.destroy();
await device.destroy();
process.exit(wrong.length ? 1 : 0);
