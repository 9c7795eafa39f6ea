// @ts-check
// Web Worker for the CPU backend in browsers: the same worker loop as in Node
// (worker-loop.mjs). Buffers are blocks of the device's shared WebAssembly.Memory, so only
// the memory (once) and offsets travel; results are written in place.
import { createWorker } from './worker-loop.mjs';

const onMessage = createWorker({ post: (m) => self.postMessage(m) });
/** @param {MessageEvent<Parameters<typeof onMessage>[0]>} event */
self.onmessage = (event) => onMessage(event.data);
