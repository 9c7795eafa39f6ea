/**
 * Where the CPU backend runs a dispatch (inline on the calling thread, or
 * on its workers), as pure rules over learned costs: no timing is measured here.
 */
import { describe, expect, it } from 'vitest';
import {
  ALONE_ROUND_TRIPS,
  CHOICE_WINDOW,
  FIRST_TRY_EVERY,
  inlineIsFaster,
  learnCost,
  MeasuredChoice,
  predictOneThreadNs,
  RETRY_EVERY,
  ROUND_TRIP_CEILING_NS,
  ROUND_TRIP_DEFAULT_NS,
  ROUND_TRIP_FLOOR_NS,
  RoundTripEstimate,
  runsAlone,
  SETTLED_SAMPLES,
  sizeClass,
} from '../packages/backend-cpu/src/dispatch-choice.ts';

/** One-thread ns of a vec4 wasm reduce chunk, as bench/cpu-dispatch.ts saw it: ~0.15 ms for 2^20 u32. */
const reduceNs = (elements: number) => (elements / 2 ** 20) * 150_000;
const reduceWorkgroups = (elements: number) => Math.max(2, elements / 4096);

describe('inlineIsFaster', () => {
  it('runs a single workgroup inline and sends a kernel never measured to the workers', () => {
    expect(inlineIsFaster({ oneThreadNs: undefined, workgroups: 1, workers: 2, roundTripNs: 25_000 })).toBe(true);
    expect(inlineIsFaster({ oneThreadNs: undefined, workgroups: 64, workers: 2, roundTripNs: 25_000 })).toBe(false);
  });

  it('compares one thread with the round trip plus the share per worker', () => {
    // 40 µs on one thread vs 25 µs + 20 µs on two workers: inline; 60 µs vs 25 + 30: workers.
    expect(inlineIsFaster({ oneThreadNs: 40_000, workgroups: 8, workers: 2, roundTripNs: 25_000 })).toBe(true);
    expect(inlineIsFaster({ oneThreadNs: 60_000, workgroups: 8, workers: 2, roundTripNs: 25_000 })).toBe(false);
    // Two workgroups on four workers: only two of them have work.
    expect(inlineIsFaster({ oneThreadNs: 60_000, workgroups: 2, workers: 4, roundTripNs: 25_000 })).toBe(false);
    expect(inlineIsFaster({ oneThreadNs: 45_000, workgroups: 2, workers: 4, roundTripNs: 25_000 })).toBe(true);
  });

  it('sends a 2^24 reduce to the workers and runs a 2^10 one inline over the whole range the estimate can take', () => {
    for (const roundTripNs of [ROUND_TRIP_FLOOR_NS, ROUND_TRIP_DEFAULT_NS, ROUND_TRIP_CEILING_NS]) {
      for (const workers of [2, 4, 16]) {
        const big = { oneThreadNs: reduceNs(2 ** 24), workgroups: reduceWorkgroups(2 ** 24), workers, roundTripNs };
        const small = { oneThreadNs: reduceNs(2 ** 10), workgroups: reduceWorkgroups(2 ** 10), workers, roundTripNs };
        expect(inlineIsFaster(big)).toBe(false);
        expect(inlineIsFaster(small)).toBe(true);
      }
    }
  });
});

describe('runsAlone', () => {
  it('gives a batch of its own to a kernel never measured and to one long enough that a wake-up is noise', () => {
    expect(runsAlone(undefined, ROUND_TRIP_DEFAULT_NS)).toBe(true);
    // A 2^24 reduce (~2.4 ms on one thread) shares its batch; a 2^30 one (~150 ms) does not, at any round trip the estimate allows.
    for (const roundTripNs of [ROUND_TRIP_FLOOR_NS, ROUND_TRIP_DEFAULT_NS, ROUND_TRIP_CEILING_NS]) {
      expect(runsAlone(reduceNs(2 ** 24), roundTripNs)).toBe(false);
      expect(runsAlone(reduceNs(2 ** 30), roundTripNs)).toBe(true);
    }
    expect(runsAlone(ALONE_ROUND_TRIPS * 25_000 - 1, 25_000)).toBe(false);
    expect(runsAlone(ALONE_ROUND_TRIPS * 25_000, 25_000)).toBe(true);
  });
});

describe('RoundTripEstimate', () => {
  it('starts from the default and follows the lower quartile of recent samples', () => {
    const e = new RoundTripEstimate(8);
    expect(e.ns).toBe(ROUND_TRIP_DEFAULT_NS);
    for (const ns of [30_000, 10_000, 20_000, 40_000, 12_000, 50_000, 18_000, 60_000]) e.record(ns);
    // Sorted: 10, 12, 18, 20, 30, 40, 50, 60 (µs): the quartile at index 1.
    expect(e.ns).toBe(12_000);
  });

  it('is not moved by one slow batch, nor stuck after a burst of them', () => {
    const e = new RoundTripEstimate(8);
    for (let i = 0; i < 8; i++) e.record(20_000);
    e.record(5_000_000);
    expect(e.ns).toBe(20_000);
    for (let i = 0; i < 8; i++) e.record(90_000);
    expect(e.ns).toBe(90_000);
    // Fast batches again: the window forgets the slow ones.
    for (let i = 0; i < 8; i++) e.record(15_000);
    expect(e.ns).toBe(15_000);
  });

  it('stays within its floor and ceiling and ignores clock noise', () => {
    const e = new RoundTripEstimate(4);
    for (let i = 0; i < 4; i++) e.record(100);
    expect(e.ns).toBe(ROUND_TRIP_FLOOR_NS);
    for (let i = 0; i < 4; i++) e.record(1e9);
    expect(e.ns).toBe(ROUND_TRIP_CEILING_NS);
    e.record(-3);
    e.record(Number.NaN);
    e.record(Number.POSITIVE_INFINITY);
    expect(e.ns).toBe(ROUND_TRIP_CEILING_NS);
  });
});

describe('predictOneThreadNs', () => {
  it('has no prediction for a kernel never measured', () => {
    expect(predictOneThreadNs(undefined, 4, 1024)).toBeUndefined();
  });

  it('scales a cost learned on 2^10 elements up to 2^24 even at the same workgroup count, so that run goes to the workers', () => {
    // A chunked reduce: two workgroups whatever the size; 1 µs for 2^10 elements on one thread.
    const small = learnCost(undefined, 1_000, 2, 2 ** 10);
    const predicted = predictOneThreadNs(small, 2, 2 ** 24) as number;
    expect(predicted).toBe(1_000 * 2 ** 14);
    expect(inlineIsFaster({ oneThreadNs: predicted, workgroups: 2, workers: 2, roundTripNs: ROUND_TRIP_CEILING_NS })).toBe(false);
  });

  it('scales an elementwise kernel by its workgroups where they grow faster than its buffers', () => {
    const cost = learnCost(undefined, 8_000, 8, 8 * 64);
    expect(predictOneThreadNs(cost, 64, 8 * 64)).toBe(64_000);
    expect(predictOneThreadNs(cost, 8, 8 * 64)).toBe(8_000);
  });

  it('follows recent runs: each new measurement weighs half', () => {
    const first = learnCost(undefined, 4_000, 4, 400);
    const second = learnCost(first, 8_000, 4, 400);
    expect(second.nsPerWorkgroup).toBe(1_500);
    expect(second.nsPerElement).toBe(15);
  });
});

describe('MeasuredChoice', () => {
  /** A 2^20 reduce chunk pass on two workers as the model sees it: 150 µs on one thread, a round trip of 25 µs. */
  const model = { oneThreadNs: 150_000, workgroups: 2, workers: 2, roundTripNs: 25_000 };
  const choices = (c: MeasuredChoice, n: number) => Array.from({ length: n }, () => c.chooseInline(model));

  it('follows the model until a way was measured, and keeps its rules for one workgroup and kernels never measured', () => {
    const c = new MeasuredChoice();
    // 150 µs vs 25 + 75 µs: the model takes the workers.
    expect(c.chooseInline(model)).toBe(false);
    expect(c.chooseInline({ ...model, workgroups: 1 })).toBe(true);
    expect(c.chooseInline({ ...model, oneThreadNs: undefined })).toBe(false);
  });

  it('takes the way measured faster against the model, and tries the other one again now and then', () => {
    const c = new MeasuredChoice();
    // The workers measured 400 µs a dispatch (a loaded 2-vCPU VM), inline 150 µs, each SETTLED_SAMPLES times.
    for (let i = 0; i < SETTLED_SAMPLES; i++) {
      c.record(false, 400_000);
      c.record(true, 150_000);
    }
    const taken = choices(c, 1000);
    const workers = taken.filter((inline) => !inline).length;
    // Retried once per RETRY_EVERY decisions per unit of the ratio (400 / 150): never more often than 1 in RETRY_EVERY.
    expect(workers).toBeGreaterThan(0);
    expect(workers).toBeLessThanOrEqual(Math.ceil(1000 / RETRY_EVERY / (400 / 150)));
    expect(taken.slice(0, RETRY_EVERY).every((inline) => inline)).toBe(true);
  });

  it('tries a way never measured soon, so that its measurement can overrule the model', () => {
    const c = new MeasuredChoice();
    // Only the workers measured, at 110 µs; the model puts inline at 150 µs: tried within FIRST_TRY_EVERY * 1.4 decisions.
    for (let i = 0; i < SETTLED_SAMPLES; i++) c.record(false, 110_000);
    const taken = choices(c, Math.ceil(FIRST_TRY_EVERY * (150 / 110)));
    expect(taken.filter((inline) => inline)).toHaveLength(1);
    // Inline measured faster, as often: it is taken, the workers retried only after RETRY_EVERY decisions per unit of the ratio.
    for (let i = 0; i < SETTLED_SAMPLES; i++) c.record(true, 80_000);
    expect(choices(c, RETRY_EVERY - 1).every((inline) => inline)).toBe(true);
  });

  it('retries a way soon until it has a few measurements: one slow first run does not decide', () => {
    const c = new MeasuredChoice();
    // The first run of a new size on the workers: 15.5 ms; inline then ran 7.4 ms, and the workers' next runs 3.5.
    c.record(false, 15_500_000);
    c.record(true, 7_400_000);
    const model2 = { ...model, oneThreadNs: 7_400_000 };
    let workersTried = 0;
    for (let i = 0; i < 40; i++) {
      const inline = c.chooseInline(model2);
      c.record(inline, inline ? 7_400_000 : 3_500_000);
      if (!inline) workersTried++;
    }
    // Retried within FIRST_TRY_EVERY times the ratio, then the workers' estimate is their own and they win.
    expect(workersTried).toBeGreaterThan(30);
    expect(c.workersNs).toBe(3_500_000);
    expect(c.chooseInline(model2)).toBe(false);
  });

  it('follows a lasting change of the machine, not one slow run', () => {
    const c = new MeasuredChoice();
    for (let i = 0; i < CHOICE_WINDOW; i++) {
      c.record(true, 100_000 + i);
      c.record(false, 60_000 + i);
    }
    // The lower quartile of the window: its second smallest of 8.
    expect(c.inlineNs).toBe(100_001);
    expect(c.chooseInline(model)).toBe(false);
    // One pause of 50 ms on the workers moves nothing.
    c.record(false, 50_000_000);
    expect(c.workersNs).toBe(60_002);
    // The workers got slower for good (another process took a core): inline once most of the window says so.
    for (let i = 0; i < CHOICE_WINDOW - 2; i++) c.record(false, 300_000);
    expect(c.workersNs).toBe(300_000);
    expect(c.chooseInline(model)).toBe(true);
    // Clock noise is ignored.
    c.record(true, Number.NaN);
    c.record(true, -1);
    expect(c.inlineNs).toBe(100_001);
  });
});

describe('sizeClass', () => {
  it('tells sizes apart by powers of two of elements and of workgroups', () => {
    expect(sizeClass(2 ** 16, 2)).toBe(sizeClass(2 ** 16 + 16, 2));
    expect(sizeClass(2 ** 16, 2)).not.toBe(sizeClass(2 ** 17, 2));
    expect(sizeClass(2 ** 16, 2)).not.toBe(sizeClass(2 ** 16, 4));
    expect(sizeClass(0, 0)).toBe(sizeClass(1, 1));
    expect(sizeClass(2 ** 40, 1)).toBe(sizeClass(2 ** 32, 1));
  });
});
