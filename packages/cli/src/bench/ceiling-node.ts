/** The plain-JS ceiling's threads in Node: worker_threads running ceiling.ts's source (plain JavaScript, no loader). */
import { Worker } from 'node:worker_threads';
import { CEILING_THREAD_SOURCE, type CeilingThread, CeilingThreads } from './ceiling.ts';

export function nodeCeilingThreads(count: number): CeilingThreads {
  const threads = Array.from({ length: count }, (): CeilingThread => {
    const w = new Worker(CEILING_THREAD_SOURCE, { eval: true });
    return {
      post: (m) => w.postMessage(m),
      onReply: (listener) => w.on('message', listener),
      onError: (listener) => w.on('error', listener),
      terminate: () => w.terminate(),
    };
  });
  return new CeilingThreads(threads);
}
