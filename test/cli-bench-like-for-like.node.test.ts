/**
 * The browser bench measures like for like: Trident's GPU backends by the sustained protocol
 * (as the Node suite on the same GPU), every row saying which protocol timed it (a file of
 * several says 'mixed', and the strict loader holds each row to it); Trident's cases with a
 * peer get a wall time that includes reading the result into host memory, as the peers'
 * wall time does, and the report's wall-vs-wall comparisons use it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { zfill } from '@trident/algorithms';
import { createDevice, type Device } from 'trident';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BenchCase, CASES } from '../packages/cli/src/bench/cases.ts';
import { measureCase, type RunSettings } from '../packages/cli/src/bench/runner.ts';
import { fileProtocol, type Measurement, type Stats } from '../packages/cli/src/bench/schema.ts';
import { SUSTAINED } from '../packages/cli/src/bench/sustained.ts';
import { BROWSER_PLANS, peersStep, tridentStep } from '../packages/cli/src/browser/bench-plans.ts';
import { runInChromium } from '../packages/cli/src/browser/host.ts';
import { ResultsFileError, readResults } from '../packages/cli/src/report/load.ts';
import { compare } from '../packages/cli/src/report/scoreboard.ts';

const ADAPTIVE: RunSettings = { warmup: 1, warmupMs: 0, repeats: 3, budgetMs: 1000 };
const SUSTAINED_TOY: RunSettings = { ...ADAPTIVE, sustained: { batches: 2, warmupMs: 2, batchMs: 2, maxBatchRuns: 4 } };
const caseOf = (key: string): BenchCase => CASES.find((c) => `${c.algorithm}:${c.variant}` === key) as BenchCase;

describe('the runner: protocol and the read-inclusive wall time', () => {
  let device: Device;
  beforeAll(async () => {
    device = await createDevice({ backend: 'cpu', options: { cpu: { workers: 1 } } });
  });
  afterAll(async () => {
    await device.destroy();
  });

  it('each row says its protocol; a case with a peer gets call + read runs of their own, by either protocol', async () => {
    const adaptive = await measureCase(device, caseOf('reduce:sum'), 4096, ADAPTIVE);
    expect(adaptive).toMatchObject({ protocol: 'adaptive', repeats: 3, verified: true });
    expect(adaptive.wallWithReadMs?.samples).toHaveLength(3);
    const sustained = await measureCase(device, caseOf('reduce:sum'), 4096, SUSTAINED_TOY);
    expect(sustained).toMatchObject({ protocol: 'sustained', repeats: 2, verified: true });
    expect(sustained.wallWithReadMs?.samples).toHaveLength(3);
  });

  it('no read hook, or settings with no repeats (the suite’s): no call + read figure', async () => {
    const copy = await measureCase(device, caseOf('zcopy:copy'), 4096, ADAPTIVE);
    expect(copy.ms).toBeDefined();
    expect(copy.wallWithReadMs).toBeUndefined();
    const suite = await measureCase(device, caseOf('reduce:sum'), 4096, {
      warmup: 0,
      warmupMs: 0,
      repeats: 0,
      budgetMs: 0,
      sustained: SUSTAINED,
    });
    expect(suite.protocol).toBe('sustained');
    expect(suite.wallWithReadMs).toBeUndefined();
  });

  it('the read is awaited inside the wall-timed span, and only there', async () => {
    const READ_MS = 30;
    let reads = 0;
    const slowRead: BenchCase = {
      algorithm: 'zcopy',
      variant: 'fill',
      dtype: 'u32',
      sizes: [],
      setup: (d, n) => {
        const buf = d.createBuffer('u32', n);
        return {
          run: () => zfill(d, buf, 3),
          verify: async () => (await buf.read()).every((v) => v === 3),
          read: async () => {
            reads++;
            await buf.read();
            await new Promise((resolve) => setTimeout(resolve, READ_MS));
          },
          dispose: () => buf.destroy(),
        };
      },
    };
    const m = await measureCase(device, slowRead, 1024, ADAPTIVE);
    expect(m.wallWithReadMs?.min).toBeGreaterThanOrEqual(READ_MS - 1);
    // The device-timed runs never include it.
    expect(m.ms?.median).toBeLessThan(READ_MS / 2);
    // One warm-up call at least, then the three timed ones.
    expect(reads).toBeGreaterThanOrEqual(4);
  });

  it('the cases with a peer in the page have a read hook; the others do not', () => {
    const withRead = CASES.filter((c) => {
      // A read hook is part of the prepared run: setup on a tiny size, look, dispose.
      const p = c.setup(device, c.algorithm === 'bfs' || c.algorithm === 'components' ? 64 : 16);
      const has = p.read !== undefined;
      p.dispose();
      return has;
    }).map((c) => `${c.algorithm}:${c.variant}`);
    expect(withRead).toEqual(['reduce:sum', 'scan:inclusive', 'sort:auto', 'nbody:accelerations']);
  });
});

describe('the browser bench’s page calls', () => {
  it('the GPU backends get the sustained protocol (the suite’s settings), their first step a device warm-up; cpu and the peers stay adaptive', () => {
    const h100 = BROWSER_PLANS.h100;
    for (const backend of ['webgpu', 'webgl2']) {
      const first = tridentStep(h100, 'reduce:sum', 2 ** 16, backend, true);
      expect(first.settings.sustained).toEqual(SUSTAINED);
      expect(first.deviceWarmupMs).toBe(3000);
      expect(first).toMatchObject({ backends: [backend], cases: [{ key: 'reduce:sum', sizes: [2 ** 16] }], peers: false });
      expect(tridentStep(h100, 'reduce:sum', 2 ** 18, backend, false).deviceWarmupMs).toBeUndefined();
    }
    const cpu = tridentStep(h100, 'reduce:sum', 2 ** 16, 'cpu', true);
    expect(cpu.settings.sustained).toBeUndefined();
    expect(cpu.deviceWarmupMs).toBeUndefined();
    expect(peersStep(h100).settings.sustained).toBeUndefined();
  });

  it('the page honours them: a webgpu row timed sustained, with its call + read time, in headless Chromium', async () => {
    const plan = BROWSER_PLANS.small;
    const r = await runInChromium(tridentStep(plan, 'reduce:sum', 2 ** 10, 'webgpu', true), () => undefined, 120_000);
    const steps = r.measurements;
    expect(steps).toHaveLength(1);
    const m = steps[0] as Measurement;
    expect(m.error).toBeUndefined();
    expect(m).toMatchObject({ implementation: 'trident', backend: 'webgpu', runtime: 'chromium', protocol: 'sustained', verified: true });
    expect(m.repeats).toBe(plan.sustained.batches);
    expect(m.wallWithReadMs?.samples.length).toBeGreaterThanOrEqual(3);
  });
});

describe('the results file and the strict loader', () => {
  const LOCAL = fileURLToPath(new URL('./fixtures/cli/results-local.json', import.meta.url));
  type Json = Record<string, unknown> & { settings: Record<string, unknown>; measurements: Array<Record<string, unknown>> };
  const fixture = (): Json => JSON.parse(readFileSync(LOCAL, 'utf8')) as Json;
  /** The fixture as a browser-bench file: its GPU rows sustained, the rest adaptive, plus a CUB row that names none. */
  const mixed = (): Json => {
    const r = fixture();
    for (const m of r.measurements) m.protocol = m.timer === 'gpu-timestamp' ? 'sustained' : 'adaptive';
    r.measurements.push({
      ...(r.measurements[3] as object),
      implementation: 'cub',
      backend: 'cuda',
      runtime: 'native',
      protocol: undefined,
    });
    r.settings.protocol = fileProtocol(r.measurements as unknown as Measurement[]);
    return r;
  };

  it("fileProtocol: the one protocol the timed rows name, 'mixed' where they differ", () => {
    const row = (protocol: Measurement['protocol'], timed = true) => ({ protocol, ...(timed ? { ms: {} } : {}) }) as Measurement;
    expect(fileProtocol([row('sustained'), row(undefined)])).toBe('sustained');
    expect(fileProtocol([row('sustained'), row('adaptive', false)])).toBe('sustained');
    expect(fileProtocol([row('sustained'), row('adaptive')])).toBe('mixed');
    expect(fileProtocol([row(undefined)])).toBeUndefined();
  });

  it("reads a file of mixed protocols, each row saying its own (a native anchor's row needs none)", () => {
    const file = mixed();
    expect(file.settings.protocol).toBe('mixed');
    const r = readResults(file, 'mixed.json');
    expect(r.measurements.map((m) => [m.timer, m.protocol])).toEqual([
      ...fixture().measurements.map((m) => [m.timer, m.timer === 'gpu-timestamp' ? 'sustained' : 'adaptive']),
      ['gpu-timestamp', undefined],
    ]);
  });

  const rejects = (name: string, file: () => Json, problem: RegExp) =>
    it(`rejects ${name}`, () => {
      const call = () => readResults(file(), 'bad.json');
      expect(call).toThrow(ResultsFileError);
      expect(call).toThrow(problem);
    });
  rejects(
    "a timed row without its protocol in a 'mixed' file",
    () => {
      const r = mixed();
      delete r.measurements[1]?.protocol;
      return r;
    },
    /measurements\[1\]\.protocol: missing: settings\.protocol is 'mixed'/,
  );
  rejects(
    "a row whose protocol is not its file's",
    () => {
      const r = fixture();
      r.settings.protocol = 'sustained';
      (r.measurements[0] as Record<string, unknown>).protocol = 'adaptive';
      return r;
    },
    /measurements\[0\]\.protocol: "adaptive" in a file whose settings\.protocol is "sustained"/,
  );
  rejects(
    'a sustained row in a file that names no protocol (adaptive)',
    () => {
      const r = fixture();
      (r.measurements[2] as Record<string, unknown>).protocol = 'sustained';
      return r;
    },
    /measurements\[2\]\.protocol: "sustained" in a file whose settings\.protocol is "adaptive"/,
  );
  rejects(
    'an unknown protocol',
    () => {
      const r = fixture();
      r.settings.protocol = 'interleaved';
      return r;
    },
    /settings\.protocol: expected one of adaptive, sustained, mixed/,
  );
  rejects(
    'a call + read time that is not a time',
    () => {
      const r = fixture();
      (r.measurements[3] as Record<string, unknown>).wallWithReadMs = { median: 1 };
      return r;
    },
    /measurements\[3\]\.wallWithReadMs\.min: expected a number/,
  );
});

describe('the report compares wall with wall, reads included', () => {
  const stats = (median: number): Stats => ({ median, min: median, max: median, q1: median, q3: median, samples: [median] });
  const base = { label: 'm', variant: 'sum', algorithm: 'reduce', n: 1024, dtype: 'u32', warmup: 1, repeats: 3, adapter: 'GPU' } as const;
  const peer = { ...base, implementation: 'tfjs', backend: 'webgpu', runtime: 'chromium', timer: 'wall', ms: stats(8) } as const;

  it('a GPU-timed row: its call + read time, not its wall time to completion', () => {
    const ours = {
      ...base,
      implementation: 'trident',
      backend: 'webgpu',
      runtime: 'chromium',
      timer: 'gpu-timestamp',
      ms: stats(1),
      wallMs: stats(2),
      wallWithReadMs: stats(4),
    } as const;
    const c = compare(peer, ours);
    expect(c).toMatchObject({ basis: 'wall vs wall', oursMs: 4, oursTimer: 'wall, call + read', speedup: 2 });
    expect(c?.text).toMatch(/Trident 4\.00 ms \(wall, call \+ read\), TF\.js 8\.00 ms \(wall\)/);
    // A file written before the figure: the wall time to completion, as before.
    const { wallWithReadMs: _r, ...older } = ours;
    expect(compare(peer, older)).toMatchObject({ oursMs: 2, oursTimer: 'wall, to completion', speedup: 4 });
  });

  it('a wall-timed row (cpu) too: its own timer leaves its result in device buffers', () => {
    const ours = {
      ...base,
      implementation: 'trident',
      backend: 'cpu',
      runtime: 'chromium',
      timer: 'wall',
      ms: stats(2),
      wallWithReadMs: stats(16),
    } as const;
    expect(compare({ ...peer, backend: 'wasm' }, ours)).toMatchObject({ basis: 'wall vs wall', oursMs: 16, speedup: 0.5 });
    // A GPU-timed peer (a native anchor) stays on the same timer.
    const cub = { ...peer, implementation: 'cub', timer: 'gpu-timestamp' } as const;
    expect(compare(cub, { ...ours, timer: 'gpu-timestamp' })).toMatchObject({ basis: 'same timer', oursMs: 2 });
  });
});
