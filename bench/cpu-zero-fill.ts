/**
 * How fast a view of shared memory is zeroed, per element width (the CPU backend zeroes
 * every buffer it takes from reused heap memory: heap.ts zeroShared). V8 fills a view of
 * a SharedArrayBuffer one element at a time, so the width decides the speed.
 *
 *   npx tsx bench/cpu-zero-fill.ts [MiB]
 *
 * Prints the median of 7 fills of each kind (after one untimed fill); evidence:
 * bench/results/tuning/cpu-zero-fill-2026-11-28.json, LEDGER.md cpu.zeroing.
 */
const mib = Number(process.argv[2] ?? 32);
const size = mib * 2 ** 20;
const memory = new WebAssembly.Memory({ initial: size / 65536, maximum: size / 65536, shared: true });
const plain = new ArrayBuffer(size);

function median(fill: () => void): number {
  fill();
  const samples: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    fill();
    samples.push(performance.now() - t0);
  }
  return samples.sort((a, b) => a - b)[3] as number;
}

const zeros = new Uint8Array(2 ** 20);
const kinds: Array<[string, () => void]> = [
  ['shared Uint8Array.fill(0)', () => new Uint8Array(memory.buffer).fill(0)],
  ['shared Uint32Array.fill(0)', () => new Uint32Array(memory.buffer).fill(0)],
  ['shared Float64Array.fill(0)', () => new Float64Array(memory.buffer).fill(0)],
  ['shared BigUint64Array.fill(0n)', () => new BigUint64Array(memory.buffer).fill(0n)],
  [
    'shared Uint8Array.set(1 MiB of zeros) repeated',
    () => {
      const view = new Uint8Array(memory.buffer);
      for (let o = 0; o < size; o += zeros.length) view.set(zeros, o);
    },
  ],
  ['unshared Uint8Array.fill(0)', () => new Uint8Array(plain).fill(0)],
];
for (const [name, fill] of kinds) console.log(`${name}: ${median(fill).toFixed(2)} ms for ${mib} MiB`);
