/**
 * Gives TensorFlow.js's webgpu backend a `navigator.gpu` in Node: the Dawn `GPU`
 * object that Trident's bundle uses (one Dawn instance per process, PLATFORM.md).
 * Imported before '@tensorflow/tfjs-backend-webgpu', which registers its backend
 * only if `navigator.gpu` exists when the module is evaluated.
 */
import { dawnGpu } from './trident-webgpu-only.mjs';

const nav = globalThis.navigator;
if (nav === undefined) Object.defineProperty(globalThis, 'navigator', { value: { gpu: dawnGpu }, configurable: true, writable: true });
else if (!nav.gpu) Object.defineProperty(nav, 'gpu', { value: dawnGpu, configurable: true });
