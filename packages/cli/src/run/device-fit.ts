/**
 * The sizes a `trident run` job declares, checked against the device's limits
 * once the device exists and before any buffer is made on it: an input larger
 * than the device's largest buffer is the input's fault (exit 2, one line), not
 * a failure part-way through the algorithm. Free of Node APIs: it runs in the
 * Chromium page too.
 */
import type { DeviceCaps } from 'trident';
import type { JobSpec } from './execute.ts';

/** An input the device cannot hold; the CLI prints it as one line, exit 2. */
export class InputTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputTooLargeError';
  }
}

/** A device buffer a job will need, known from its files' headers before they are read. */
export interface DeclaredBuffer {
  /** What needs it, for the message: the file and what of it. */
  readonly what: string;
  readonly elements: number;
}

/**
 * Checks the declared buffers against the device's largest buffer, and together against
 * what all its buffers may hold where the device says (`maxTotalBufferBytes`), before
 * the files are read in full.
 */
export function checkDeclaredFits(caps: DeviceCaps, declared: readonly DeclaredBuffer[]): void {
  const max = caps.limits.maxBufferElements;
  for (const d of declared) {
    if (d.elements > max)
      throw new InputTooLargeError(`${d.what} needs a buffer of ${d.elements} elements; this device holds at most ${max}`);
  }
  const total = caps.limits.maxTotalBufferBytes;
  const bytes = declared.reduce((sum, d) => sum + 4 * d.elements, 0);
  if (total > 0 && bytes > total) {
    const what = declared.map((d) => d.what).join(', ');
    throw new InputTooLargeError(`${what} need ${bytes} bytes of buffers together; this device holds at most ${total}`);
  }
}

/** `labels` names the file each input role came from (Node knows them; the page does not). */
export function checkJobFitsDevice(caps: DeviceCaps, spec: JobSpec, labels: Readonly<Record<string, string>> = {}): void {
  const max = caps.limits.maxBufferElements;
  const fail = (what: string, elements: number): never => {
    throw new InputTooLargeError(`${what} needs a buffer of ${elements} elements; this device holds at most ${max}`);
  };
  for (const [role, a] of Object.entries(spec.inputs)) {
    // 4 × 32-bit lanes per element at most (vec4 rows such as nbody's are counted as their elements).
    if (a.data.length > max) fail(labels[role] ?? `input '${role}'`, a.data.length);
  }
  const rows = spec.params.rows;
  if (typeof rows === 'number') {
    const graph = labels.indptr ?? labels.indices ?? 'the graph';
    // The CSR row offsets hold rows + 1 entries; apsp's distance matrix rows².
    if (rows + 1 > max) fail(`${graph} (${rows} vertices)`, rows + 1);
    if (spec.algorithm === 'apsp' && rows * rows > max) fail(`${graph}: apsp's ${rows} x ${rows} distance matrix`, rows * rows);
  }
}
