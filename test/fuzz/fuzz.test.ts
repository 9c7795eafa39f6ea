/**
 * Differential fuzzing of the kernel IR: random well-typed kernels
 * (generate.ts) run on every backend here and compared with an independent
 * reference interpreter (interpret.ts): integers bit for bit, f32 within WGSL's
 * accuracy bounds, over every grouping of an f32 add/sub or mul/div chain (shader
 * compilers may reassociate: docs/kernels.md, "f32 chains may be regrouped"). A kernel of a class the device does not list must be refused
 * with UnsupportedFeatureError. A mismatch is shrunk and printed as a small
 * kernel (then committed as a regression test with its fix).
 *
 * CI runs a bounded number of seeds; `npm run fuzz -- --seeds N [--from S]` more
 * (TRIDENT_FUZZ_SEEDS / TRIDENT_FUZZ_FROM, passed through vitest's `provide`).
 */
import { expect, inject, it } from 'vitest';
import { describeEachBackend } from '../harness.ts';
import { caseText, type Outcome, probeSubgroups, runCase, shrink } from './differential.ts';
import { generateCase, optionsForSeed } from './generate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    fuzzSeeds: string;
    fuzzFrom: string;
  }
}

/** Seeds per backend in CI: about 25 s for the file across the node and browser projects on 2 cores. */
const CI_SEEDS = 96;
const seeds = Number(inject('fuzzSeeds') || CI_SEEDS);
const from = Number(inject('fuzzFrom') || 1);
const MAX_SHRINKS = 3;

describeEachBackend('differential fuzzing of the kernel IR', (ctx) => {
  const { kind } = ctx;
  it(
    `${seeds} random kernels from seed ${from} agree with the reference or are refused with UnsupportedFeatureError`,
    async () => {
      const device = ctx.device;
      const sub = await probeSubgroups(device);
      const tally: Record<Outcome['status'], number> = { pass: 0, refused: 0, undecidable: 0, mismatch: 0, error: 0 };
      let compared = 0;
      const failures: string[] = [];
      for (let seed = from; seed < from + seeds; seed++) {
        const c = generateCase(seed, optionsForSeed(seed));
        // Subgroup cases assume lanes are consecutive local indices; a device where they are not is not compared on them.
        if (c.options.subgroup && !sub.consecutive) continue;
        const outcome = await runCase(device, c, sub.size);
        tally[outcome.status]++;
        if (outcome.status === 'pass') compared += outcome.compared;
        if (outcome.status === 'refused' && !outcome.expected) {
          // A refusal of a class the device lists is allowed only as UnsupportedFeatureError: say so in the log.
          console.warn(`[${kind}] seed ${seed}: refused '${outcome.feature}' although the device lists every class of the kernel`);
        }
        if (outcome.status === 'mismatch' || outcome.status === 'error') {
          console.warn(`[${kind}] seed ${seed}: ${outcome.status}: ${outcome.detail}`);
          // Shrink the first few only: each shrink runs hundreds of kernels.
          if (failures.length >= MAX_SHRINKS) {
            failures.push(`[${kind}] seed ${seed} (${outcome.status}): ${outcome.detail}`);
            continue;
          }
          // Shrink while the same kind of failure remains (for errors: the same error class).
          // (for mismatches: the same first element differs), so that shrinking does not drift to another bug.
          const kindOf = (o: Outcome) =>
            o.status === 'error'
              ? `error ${o.detail.split(':')[0]}`
              : o.status === 'mismatch'
                ? `mismatch ${/: (\w+\[\d+\])/.exec(o.detail)?.[1]}`
                : o.status;
          const same = kindOf(outcome);
          const small = await shrink(c, async (x) => kindOf(await runCase(device, x, sub.size)) === same);
          const detail = (await runCase(device, small, sub.size)) as { detail?: string };
          failures.push(`[${kind}] seed ${seed} (${same}): ${outcome.detail}\nshrunk: ${detail.detail ?? ''}\n${caseText(small)}`);
        }
      }
      console.log(`[${kind}] fuzz seeds ${from}..${from + seeds - 1}: ${JSON.stringify(tally)}, ${compared} elements compared`);
      expect(failures, failures.join('\n\n')).toEqual([]);
      // Not vacuous: most cases must be decided and compared.
      expect(tally.pass).toBeGreaterThan(seeds / 3);
    },
    Math.max(60_000, seeds * 1_000),
  );
});
