// @ts-check
// Web Worker for the CPU backend in browsers: the same slice runner as the Node
// (piscina) worker, driven by postMessage. Buffers are SharedArrayBuffers, so only
// their handles travel; results are written in place.
import { runSlice } from './runner.mjs';

/** @param {MessageEvent<{ job: number, task: Parameters<typeof runSlice>[0] }>} event */
self.onmessage = (event) => {
  const { job, task } = event.data;
  try {
    runSlice(task);
    self.postMessage({ job, ok: true });
  } catch (err) {
    self.postMessage({ job, ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
};
