import { type BackendAdapter, type BackendDevice, BackendUnavailableError } from '@trident/core';
import { MAX_EXACT } from './webgl-caps.ts';
import { WebGLDevice } from './webgl-device.ts';

export interface WebGLBackendOptions {
  /** A canvas to draw with (default: a 1x1 OffscreenCanvas, or a detached <canvas>). */
  readonly canvas?: OffscreenCanvas | HTMLCanvasElement;
  /**
   * Atomic operations blended into one float shadow before it is folded into the
   * integer buffer (default 2^24). Partial sums stay exact while they stay below
   * 2^24, so unit increments (counts, histograms) are exact for any total.
   */
  readonly atomicChunk?: number;
  /**
   * Reads of at most this many bytes (within one texture row) block on readPixels instead of
   * polling a fence from the event loop: a small result (a reduction's value) then reaches the
   * host in one round trip, while the page's thread waits for the work issued before it.
   * Default BLOCKING_READ_BYTES (webgl-transfer.ts); 0: every read polls.
   */
  readonly blockingReadBytes?: number;
}

declare module '@trident/core' {
  interface BackendOptionsMap {
    webgl2: WebGLBackendOptions;
  }
}

/**
 * The context every device draws with: nothing is ever shown, so no depth,
 * stencil or antialiasing; buffers are textures, never the drawing buffer.
 */
const CONTEXT_ATTRIBUTES: WebGLContextAttributes = {
  antialias: false,
  depth: false,
  stencil: false,
  alpha: true,
  preserveDrawingBuffer: false,
  powerPreference: 'high-performance',
};

function makeCanvas(): OffscreenCanvas | HTMLCanvasElement | undefined {
  if (typeof OffscreenCanvas !== 'undefined') return new OffscreenCanvas(1, 1);
  if (typeof document !== 'undefined') return document.createElement('canvas');
  return undefined;
}

/** Makes a WebGL2 device on a fresh context, or says why it cannot (no canvas in Node, WebGL2 off, a bad option). */
export const webglAdapter: BackendAdapter<'webgl2'> = {
  kind: 'webgl2',
  async create(options?: WebGLBackendOptions): Promise<BackendDevice> {
    const canvas = options?.canvas ?? makeCanvas();
    if (!canvas) {
      throw new BackendUnavailableError(
        'webgl2',
        'WebGL2 needs a browser: this runtime has neither OffscreenCanvas nor document (Node has no WebGL2)',
      );
    }
    const gl = canvas.getContext('webgl2', CONTEXT_ATTRIBUTES) as WebGL2RenderingContext | null;
    if (!gl) throw new BackendUnavailableError('webgl2', 'canvas.getContext("webgl2") returned null (WebGL2 disabled or unsupported)');
    if (
      options?.atomicChunk !== undefined &&
      !(Number.isInteger(options.atomicChunk) && options.atomicChunk >= 1 && options.atomicChunk <= MAX_EXACT)
    ) {
      throw new BackendUnavailableError(
        'webgl2',
        `option 'atomicChunk' must be an integer in [1, 2^24], got ${String(options.atomicChunk)}`,
      );
    }
    const blocking = options?.blockingReadBytes;
    if (blocking !== undefined && !(Number.isSafeInteger(blocking) && blocking >= 0)) {
      throw new BackendUnavailableError('webgl2', `option 'blockingReadBytes' must be an integer >= 0, got ${String(blocking)}`);
    }
    return new WebGLDevice(gl, canvas, options);
  },
};
