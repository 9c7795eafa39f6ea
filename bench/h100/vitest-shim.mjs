/**
 * A minimal stand-in for vitest, so the conformance specs (test/*.test.ts) can be
 * bundled with esbuild and run on the GPU machine, which has Node but no
 * node_modules. Same expect (vitest's own @vitest/expect on chai); describe / it /
 * beforeAll / afterAll run sequentially, in declaration order, like vitest with
 * fileParallelism off. Used only by bench/h100/run.sh's conformance bundle.
 */

import { ASYMMETRIC_MATCHERS_OBJECT, GLOBAL_EXPECT, JestAsymmetricMatchers, JestChaiExpect, JestExtend, setState } from '@vitest/expect';
import * as chai from 'chai';

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

export const expect = (value, message) => chai.expect(value, message);
Object.assign(expect, chai.expect);
Object.assign(expect, globalThis[ASYMMETRIC_MATCHERS_OBJECT]);
setState(
  {
    assertionCalls: 0,
    isExpectingAssertions: false,
    isExpectingAssertionsError: null,
    expectedAssertionsNumber: null,
    expectedAssertionsNumberErrorGen: null,
    currentTestName: '',
  },
  expect,
);
globalThis[GLOBAL_EXPECT] = expect;
expect.unreachable = (message) => chai.assert.fail(`expected${message ? ` "${message}" ` : ' '}not to be reached`);
expect.fail = (message) => chai.assert.fail(message);

const root = { name: '', children: [], before: [], after: [] };
let current = root;

export function describe(name, fn) {
  const node = { name, children: [], before: [], after: [] };
  current.children.push({ suite: node });
  const parent = current;
  current = node;
  try {
    fn();
  } finally {
    current = parent;
  }
}
export function it(name, fn, timeout) {
  current.children.push({ test: { name, fn, timeout: typeof timeout === 'number' ? timeout : 120_000 } });
}
/** vitest's printf-style test names: %s %i %d %f %j %o take the case's arguments in turn, %% is a percent sign. */
function caseName(name, args) {
  let next = 0;
  return name.replace(/%([sidfjo%])/g, (whole, kind) => {
    if (kind === '%') return '%';
    if (next >= args.length) return whole;
    const value = args[next++];
    return kind === 'j' || kind === 'o' ? JSON.stringify(value) : String(value);
  });
}
/** it.each(cases)(name, fn, timeout): one spec a case; an array case is spread into fn's arguments. */
it.each = (cases) => (name, fn, timeout) => {
  for (const c of cases) {
    const args = Array.isArray(c) ? c : [c];
    it(caseName(name, args), () => fn(...args), timeout);
  }
};
export const test = it;
export function beforeAll(fn) {
  current.before.push(fn);
}
export function afterAll(fn) {
  current.after.push(fn);
}
export function inject(key) {
  return key === 'tridentBackends' ? (process.env.TRIDENT_BACKENDS ?? '') : undefined;
}

function withTimeout(promise, ms, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** Runs every collected spec; resolves to { passed, failed, failures }. */
export async function run() {
  const stats = { passed: 0, failed: 0, failures: [] };
  async function visit(node, path) {
    const name = node.name ? [...path, node.name] : path;
    let setupError;
    for (const f of node.before) {
      try {
        await withTimeout(Promise.resolve().then(f), 120_000, 'beforeAll');
      } catch (err) {
        setupError = err;
      }
    }
    for (const child of node.children) {
      if (child.suite) {
        await visit(child.suite, name);
        continue;
      }
      const full = [...name, child.test.name].join(' > ');
      const started = performance.now();
      try {
        if (setupError) throw setupError;
        await withTimeout(Promise.resolve().then(child.test.fn), child.test.timeout, full);
        stats.passed++;
        console.log(`  ok   ${full} (${Math.round(performance.now() - started)} ms)`);
      } catch (err) {
        stats.failed++;
        stats.failures.push({ test: full, error: String(err?.stack ?? err) });
        console.log(
          `  FAIL ${full}: ${String(err?.message ?? err)
            .split('\n')
            .slice(0, 6)
            .join(' | ')}`,
        );
      }
    }
    for (const f of node.after) {
      try {
        await f();
      } catch (err) {
        console.log(`  afterAll failed in ${name.join(' > ')}: ${err}`);
      }
    }
  }
  await visit(root, []);
  return stats;
}
