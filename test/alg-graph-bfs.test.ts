/**
 * Conformance of bfs: depths equal the sequential reference on every edge-case
 * graph, on the device and its gather-only view; typed errors on bad input.
 */
import { type BfsFormulation, bfs, bfsFormulation, bfsReference, createGraph, fromEdges, randomGraph } from '@trident/algorithms';
import { InvalidArgumentError, UnsupportedFeatureError } from 'trident';
import { expect, it } from 'vitest';
import { graphCases } from './alg-graph-helpers.ts';
import { expectBitsEqual, formulations, isSlow } from './alg-helpers.ts';
import { describeEachBackend } from './harness.ts';

describeEachBackend('bfs', (ctx) => {
  it('depths equal the reference: directed and undirected edge cases', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const symmetric of [false, true]) {
        for (const { name, graph } of graphCases({ symmetric, slow: isSlow(ctx.device) })) {
          const g = createGraph(device, graph);
          const sources = graph.rows === 0 ? [] : [0, graph.rows - 1, Math.floor(graph.rows / 2)];
          // Every formulation the view's caps allow (the gather-only view: 'edges' and 'pull');
          // bottom-up levels only on graphs declared symmetric; 'pull' everywhere (the
          // transposed rows on directed graphs).
          const atomics = device.caps.features.has('atomic-other');
          const forms: BfsFormulation[] = atomics ? ['frontier', 'frontier-balanced', 'pull'] : ['edges', 'pull'];
          if (atomics && symmetric) forms.push('direction-optimizing');
          expect(g.symmetric, name).toBe(symmetric);
          expect(forms, label).toContain(bfsFormulation(device, g).name);
          for (const s of sources) {
            const want = bfsReference(graph, s);
            for (const formulation of forms) {
              const levels = await bfs(device, g, s, { formulation });
              expectBitsEqual(await levels.read(), want, `${label} ${formulation} ${name} symmetric=${symmetric} source=${s}`);
              levels.destroy();
            }
          }
          g.destroy();
        }
      }
    }
  });

  it('rejects bad input with typed errors', async () => {
    const device = ctx.device;
    const g = createGraph(device, randomGraph(10, 20));
    for (const source of [-1, 10, 1.5, Number.NaN]) {
      const error = await bfs(device, g, source).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, String(source)).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe('source');
    }
    const rect = createGraph(device, { rows: 2, columns: 3, indptr: [0, 1, 2], indices: [2, 0] });
    await expect(bfs(device, rect, 0)).rejects.toBeInstanceOf(InvalidArgumentError);
    // Bottom-up levels read rows as in-neighbours: refused on a graph not declared symmetric.
    const asked = await bfs(device, g, 0, { formulation: 'direction-optimizing' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(asked).toBeInstanceOf(InvalidArgumentError);
    expect((asked as Error).message).toMatch(/declared symmetric/);
    g.destroy();
    rect.destroy();
  });

  it('a long path and a star, bottom-up and top-down levels mixed, equal the reference', async () => {
    const device = ctx.device;
    // A star whose centre is reached late: a long thin start, then one huge level, then a tail.
    const n = 600;
    const us: number[] = [];
    const vs: number[] = [];
    const edge = (u: number, v: number) => {
      us.push(u);
      vs.push(v);
    };
    for (let i = 0; i < 20; i++) edge(i, i + 1); // path 0..20
    for (let i = 21; i < 580; i++) {
      edge(20, i); // hub 20
      edge(i, i + 1 < 580 ? i + 1 : 21); // ring
    }
    for (let i = 580; i < n - 1; i++) {
      edge(i - 1, i); // tail
      edge(i, i + 1);
    }
    const input = fromEdges(n, us, vs, undefined, true);
    const g = createGraph(device, input);
    for (const s of [0, 20, 300, n - 1]) {
      const levels = await bfs(device, g, s, { formulation: 'pull' });
      expectBitsEqual(await levels.read(), bfsReference(input, s), `pull source ${s}`);
      levels.destroy();
    }
    if (!device.caps.features.has('atomic-other')) {
      // Without atomics that return values only 'edges' and 'pull' run: a typed refusal here.
      const refused = await bfs(device, g, 0, { formulation: 'direction-optimizing' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(UnsupportedFeatureError);
      expect((refused as UnsupportedFeatureError).feature).toBe('atomic-other');
      g.destroy();
      return;
    }
    for (const s of [0, 20, 300, n - 1]) {
      const levels = await bfs(device, g, s, { formulation: 'direction-optimizing' });
      expectBitsEqual(await levels.read(), bfsReference(input, s), `source ${s}`);
      levels.destroy();
    }
    g.destroy();
  });

  it('checks a symmetric declaration', () => {
    const device = ctx.device;
    const ok = createGraph(device, { rows: 3, indptr: [0, 2, 3, 4], indices: [1, 2, 0, 0], symmetric: true });
    expect(ok.symmetric).toBe(true);
    ok.destroy();
    const bad = [
      { rows: 3, indptr: [0, 2, 3, 3], indices: [1, 2, 0] }, // (0, 2) without (2, 0)
      { rows: 2, indptr: [0, 2, 3], indices: [1, 1, 0] }, // (0, 1) twice, (1, 0) once
      { rows: 2, indptr: [0, 1, 2], indices: [1, 0], weights: [1, 2] }, // weights differ
      { rows: 2, columns: 3, indptr: [0, 1, 2], indices: [1, 0] }, // not square
    ];
    for (const input of bad) {
      const error = (() => {
        try {
          createGraph(device, { ...input, symmetric: true });
        } catch (e) {
          return e;
        }
      })();
      expect(error, JSON.stringify(input)).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe('symmetric');
    }
  });
});
