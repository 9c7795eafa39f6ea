// @ts-check
/**
 * The shared control block between the CPU backend's device (the calling thread)
 * and its persistent workers: Int32 slots of one SharedArrayBuffer. Plain
 * JavaScript so that workers load it without a build step.
 *
 * Why not a message per dispatch (piscina, or postMessage to a Web Worker): a
 * message costs a structured clone, an event-loop turn in the worker and another in
 * the caller (LEDGER.md, cpu.controlBlock, has the measured cost). Here the workers
 * sleep in `Atomics.wait` on EPOCH; the caller writes a batch of dispatches into a
 * shared command area, bumps EPOCH and notifies; the workers run every dispatch of
 * the batch, joining among themselves between dispatches (a shared-memory barrier),
 * and the last one out bumps DONE. Messages remain only for what cannot travel
 * through shared memory: a kernel's code, the device's WebAssembly.Memory, its host blocks (buffers
 * outside that memory) and a buffer's offset, sent once each (registration generation REG).
 */

/** Bumped by the caller to start a batch. */
export const EPOCH = 0;
/** Workers that finished the current batch. */
export const DONE = 1;
/** 1 + the index of the first dispatch of the batch that threw (0: none). */
export const ERROR = 2;
/** Registrations (kernels, buffers, command areas) the batch needs: a worker with fewer returns to its event loop for them. */
export const REG = 3;
/** Inter-worker barrier: arrivals, and the generation that releases them. */
export const BAR_COUNT = 4;
export const BAR_GEN = 5;
/** 1: the last worker also posts a 'done' message (runtimes without Atomics.waitAsync). */
export const NOTIFY_BY_MESSAGE = 6;
/** 1: the workers stop (pool destroyed). */
export const STOP = 7;
export const CONTROL_SLOTS = 8;
