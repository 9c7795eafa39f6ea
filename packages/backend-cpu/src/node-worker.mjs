// @ts-check
// Worker thread for the CPU backend in Node (see worker-loop.mjs).
import { parentPort } from 'node:worker_threads';
import { createWorker } from './worker-loop.mjs';

if (!parentPort) throw new Error('node-worker.mjs must run in a worker thread');
const port = parentPort;
const onMessage = createWorker({ post: (m) => port.postMessage(m) });
port.on('message', onMessage);
