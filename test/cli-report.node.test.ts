/**
 * `trident report` from small fixture results (synthetic numbers chosen so every
 * derived figure can be worked out by hand): PP per algorithm, share of the zcopy
 * ceiling, speedups against peers, rows and anchors from another machine's
 * file, and a self-contained HTML page.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { analyze, pennycook } from '../packages/cli/src/report/analysis.ts';
import { loadResultsFile } from '../packages/cli/src/report/load.ts';
import { tempDir, trident } from './cli-helpers.ts';

const LOCAL = fileURLToPath(new URL('./fixtures/cli/results-local.json', import.meta.url));
const H100 = fileURLToPath(new URL('./fixtures/cli/other-h100.json', import.meta.url));

describe('report analysis', () => {
  it('pennycook: harmonic mean, 0 when a platform fails', () => {
    expect(pennycook([0.5, 1])).toBeCloseTo(2 / 3, 12);
    expect(pennycook([1, 1, 1])).toBe(1);
    expect(pennycook([0.5, 0])).toBe(0);
    expect(pennycook([])).toBeUndefined();
  });

  it('derives zcopy shares, both PPs and peer speedups from the fixture', () => {
    const local = loadResultsFile(LOCAL);
    const h100 = loadResultsFile(H100);
    // The other machine's file: its two Trident rows, then its anchors block's CUB row, all labelled 'h100'.
    expect(h100.label).toBe('h100');
    expect(h100.measurements).toHaveLength(3);
    expect(h100.measurements.every((m) => m.label === 'h100')).toBe(true);
    expect(h100.measurements[2]).toMatchObject({ implementation: 'cub', runtime: 'native', backend: 'cuda' });
    // Throughput follows the row's own work and time: 3e9 bytes in 1 ms.
    expect(h100.measurements[0]?.throughput).toEqual({ value: 3000, unit: 'GB/s' });

    const a = analyze([...local.measurements, ...h100.measurements]);
    const reduce = a.portability.find((p) => p.algorithm === 'reduce (sum)');
    // Architectural e: cpu 4/8 = 0.5, webgpu 4/4 = 1, h100 2500/3000 = 5/6.
    expect(reduce?.architectural.platforms.map((p) => p.efficiency)).toEqual([0.5, 1, expect.closeTo(5 / 6, 12)]);
    expect(reduce?.architectural.pp).toBeCloseTo(3 / (2 + 1 + 1.2), 12);
    // Application e: cpu 1 (tfjs cpu is slower), webgpu 0.5/1 (tfjs webgpu is faster), h100 0.5/0.6 (CUB).
    const appByPlatform = Object.fromEntries(reduce?.application.platforms.map((p) => [p.platform, p.efficiency]) ?? []);
    expect(appByPlatform['fixture · node · cpu']).toBe(1);
    expect(appByPlatform['fixture · node · webgpu']).toBe(0.5);
    expect(appByPlatform['h100 · node · webgpu']).toBeCloseTo(5 / 6, 12);
    expect(reduce?.application.pp).toBeCloseTo(3 / (1 + 2 + 1.2), 12);
    // nbody failed on one platform: PP 0; it has no memory ceiling.
    const nbody = a.portability.find((p) => p.algorithm === 'nbody');
    expect(nbody?.application.pp).toBe(0);
    expect(nbody?.architectural.platforms[0]?.efficiency).toBeUndefined();
    // Share of the zcopy ceiling on each row.
    const shares = a.rows.get('reduce')?.map((r) => [r.platform, r.zcopyShare]);
    expect(shares).toEqual([
      ['fixture · node · cpu', 0.5],
      ['fixture · node · webgpu', 1],
      ['h100 · node · webgpu', expect.closeTo(5 / 6, 12)],
    ]);
    // Peers: tfjs cpu 2 ms vs Trident cpu 1 ms; CUB is compared with Trident's webgpu on the H100.
    const peers = a.peers.get('reduce') ?? [];
    const tfjsCpu = peers.find((p) => p.peer.implementation === 'tfjs' && p.peer.backend === 'cpu');
    expect(tfjsCpu?.likeForLike?.backend).toBe('cpu');
    const cub = peers.find((p) => p.peer.implementation === 'cub');
    expect(cub?.likeForLike?.label).toBe('h100');
  });
});

describe('trident report (binary)', () => {
  it('writes REPORT.md and a self-contained index.html merging both files', () => {
    const out = tempDir();
    const r = trident(['report', '--from', LOCAL, '--from', H100, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const md = readFileSync(join(out, 'REPORT.md'), 'utf8');
    // Scoreboard first, then PP, curves, the capability matrix, details, method.
    const order = [
      '## Scoreboard',
      '## Performance portability',
      '## Scaling curves',
      '## Capability matrix',
      '## Details per algorithm',
      '## Method',
    ];
    const at = order.map((h) => md.indexOf(h));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    // Scoreboard cells: % of the platform's zcopy ceiling; CUB's 3000 GB/s vs Trident's 2500 GB/s on the H100 -> 0.83x, a loss,
    // starred: the fixture's CUB row is wall-timed against Trident's gpu-timestamp. TF.js ran in Chromium: another platform.
    expect(md).toMatch(/\| reduce \| 50% \| 100% \| 83% ▼ 0\.83× CUB\* \|/);
    expect(md).toMatch(/\| nbody \| 2\.00 GFLOP\/s \| failed \| — \|/);
    expect(md).toContain(
      '- reduce: Best 100% of zcopy (fixture · node · webgpu); beats the toughest peer on 0 of 1 platform; worst 0.83× vs CUB (h100 · node · webgpu).',
    );
    expect(md).toContain('| reduce (sum) | 3 | 0.714 | 0.714 |');
    expect(md).toContain('| nbody | 2 | 0 (a platform failed) | 0 (a platform failed) |');
    expect(md).toMatch(
      /\| h100 \| node \| webgpu \| sum \| NVIDIA H100 \| 2\^28 \| gpu-timestamp \| 0\.60 \(0\.60–0\.60\) \| — \| 2500 GB\/s \| 83% \| — \|/,
    );
    // tfjs cpu: 2 ms vs Trident cpu 1 ms -> 2.00x; tfjs webgpu (wall) 0.5 ms vs Trident webgpu 1 ms, GPU-timed with no wall time -> flagged.
    expect(md).toMatch(/tfjs cpu \[sum\] \| chromium .*\| cpu 1\.00 ms \(node, wall\) \| 2\.00× \|/);
    expect(md).toMatch(/tfjs webgpu \[sum\] \| chromium .*\| webgpu 1\.00 ms \(node, gpu-timestamp\) \| 0\.50× \(timers differ\) \|/);
    expect(md).toMatch(/cub cuda \[sum\] \| native .*\| webgpu 0\.60 ms \(node, gpu-timestamp\) \| 0\.83× \(timers differ\) \|/);
    expect(md).toContain('fixture · node · webgl2: Node has no WebGL2');
    // Capability matrix from the fixture's device descriptions.
    expect(md).toMatch(/\| data movement \| buffers \| zero-copy host memory \| device memory, explicit upload \/ read-back \|/);
    expect(md).toMatch(/\| subgroups \| subgroups and width \| width 1 \(emulated\) \| width 4 \|/);
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script|<link|@import|src="http|href="http/);
    // One curve per algorithm with Trident rows: zcopy, reduce, nbody.
    for (const id of ['curve-zcopy', 'curve-reduce', 'curve-nbody']) expect(html).toContain(`<svg id="${id}" class="chart"`);
  });

  it('a results file that is not JSON: exit 2 naming it, nothing written', () => {
    const out = tempDir();
    const r = trident(['report', '--from', fileURLToPath(new URL('./cli-report.node.test.ts', import.meta.url)), '--out', join(out, 'r')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/cli-report\.node\.test\.ts: not JSON/);
  });
});
