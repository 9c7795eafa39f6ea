/**
 * The leak check's page in headless Chromium (bundled by bench/leaks/leaks.ts):
 * runs the same cycles as Node; each sample is taken by Node (a GC and the heap
 * through the DevTools protocol, RSS of every Chromium process from /proc).
 */
import type { BackendKind } from 'trident';
import { type LeakReport, type LeakSample, measureLeaks } from './cycles.ts';

declare global {
  interface Window {
    tridentLeaks?: (kind: BackendKind, counts: { buffers: number; devices: number }) => Promise<LeakReport>;
    /** Exposed by Node (page.exposeFunction). */
    tridentLeakSample?: (label: string) => Promise<LeakSample>;
  }
}

window.tridentLeaks = (kind, counts) =>
  measureLeaks(kind, 'chromium', counts, (label) => (window.tridentLeakSample as NonNullable<typeof window.tridentLeakSample>)(label));
