/**
 * Short leak check (the full one is bench/leaks/leaks.ts): buffer and
 * device cycles on cpu and webgpu in a fresh Node process each, which must exit
 * on its own afterwards. Bounds are generous (the heap is measured after a full
 * GC; RSS includes allocator growth that is not a leak); a leak of a buffer or a
 * device per cycle would pass them by far: each cycle holds 4 KiB of data.
 */
import { expect, it } from 'vitest';
import { runNodeLeaks } from '../bench/leaks/leaks.ts';
import { TEST_BACKENDS } from './harness.ts';

const COUNTS = { buffers: 2000, devices: 40 };
const MiB = 2 ** 20;

for (const kind of TEST_BACKENDS) {
  it(`${kind}: ${COUNTS.buffers} buffer cycles and ${COUNTS.devices} device cycles, heap flat, the process exits on its own`, async () => {
    const { report, exitSeconds } = await runNodeLeaks(kind, COUNTS, 20);
    expect(exitSeconds, 'the process did not exit on its own within 20 s').not.toBeNull();
    const { buffers, devices } = report.growth;
    // 1000 leaked 4 KiB buffers would be ~4 MiB of heap-held views and data in the second half alone.
    expect(buffers.secondHalf.heap).toBeLessThan(0.5 * MiB);
    // Off-heap array buffers (read-backs, WebGPU staging): 1000 leaked 4 KiB ones would hold 4 MiB there. The CPU
    // backend's buffers are blocks of one WebAssembly.Memory, which this figure does not count: that destroyed
    // blocks are reused, so the memory does not grow over cycles, is checked in cpu-wasm.node.test.ts.
    expect(buffers.secondHalf.arrayBuffers).toBeLessThan(1 * MiB);
    expect(devices.secondHalf.heap).toBeLessThan(1 * MiB);
  }, 120_000);
}
