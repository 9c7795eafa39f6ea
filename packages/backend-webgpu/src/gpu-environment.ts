/// <reference types="@webgpu/types" preserve="true" />
import { BackendUnavailableError } from '@trident/core';

/**
 * Where the `GPU` object comes from: `navigator.gpu` in browsers, the `webgpu`
 * package (Dawn) in Node. Nothing else here touches globals, except that Dawn's
 * WebGPU classes (GPUBufferUsage and friends) are installed on `globalThis` once,
 * as the package requires.
 */
export interface GpuEnvironment {
  readonly gpu: GPU;
  readonly runtime: 'browser' | 'node' | 'provided';
  /**
   * What must stay reachable while any device lives. In Node this is Dawn's
   * instance: if it is collected, Dawn frees it under live devices and the process
   * dies later in event processing (PLATFORM.md).
   */
  readonly keepAlive: unknown;
}

/** Dawn toggles: unquantised timestamps, or timings come in 65.5 µs steps. */
export const DAWN_TOGGLES: readonly string[] = ['disable-dawn-features=timestamp_quantization'];

interface DawnModule {
  create(options: string[]): GPU;
  globals: object;
}

let globalsInstalled = false;

export async function gpuEnvironment(): Promise<GpuEnvironment> {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  if (nav?.gpu) return { gpu: nav.gpu, runtime: 'browser', keepAlive: nav.gpu };
  const proc = (globalThis as { process?: { versions?: { node?: string } } }).process;
  if (!proc?.versions?.node) {
    throw new BackendUnavailableError('webgpu', 'navigator.gpu is missing (WebGPU needs a secure context and a browser that has it)');
  }
  let dawn: DawnModule;
  try {
    // A variable specifier keeps browser bundlers from pulling Dawn's native addon in.
    const specifier = 'webgpu';
    dawn = (await import(/* @vite-ignore */ specifier)) as DawnModule;
  } catch (err) {
    throw new BackendUnavailableError('webgpu', `the 'webgpu' package (Dawn for Node) could not be loaded: ${String(err)}`, {
      cause: err,
    });
  }
  return nodeEnvironment(dawn);
}

/** Where the process-wide Dawn instance is pinned (see nodeEnvironment). */
const DAWN_INSTANCE = Symbol.for('trident.webgpu.dawnInstance');

/**
 * The environment for a Dawn module already imported (bundles import it statically).
 * One Dawn instance serves every device of the process and is pinned on globalThis
 * for the life of the process: an instance collected after its devices were
 * destroyed still crashed the process later, in Dawn's event processing, when each
 * device had its own (seen in the full test run).
 */
export function nodeEnvironment(dawn: DawnModule): GpuEnvironment {
  if (!globalsInstalled) {
    Object.assign(globalThis, dawn.globals);
    globalsInstalled = true;
  }
  const pinned = globalThis as { [DAWN_INSTANCE]?: GPU };
  pinned[DAWN_INSTANCE] ??= dawn.create([...DAWN_TOGGLES]);
  const gpu = pinned[DAWN_INSTANCE];
  return { gpu, runtime: 'node', keepAlive: gpu };
}

/** Why no adapter came back, with the fix where we know it. */
export function noAdapterReason(runtime: GpuEnvironment['runtime']): string {
  if (runtime !== 'node') return 'requestAdapter() returned no adapter';
  // Named properties, not an index signature: consumers may compile with noPropertyAccessFromIndexSignature.
  type VulkanEnv = { VK_ICD_FILENAMES?: string | undefined; VK_DRIVER_FILES?: string | undefined };
  const env: VulkanEnv = (globalThis as { process?: { env?: VulkanEnv } }).process?.env ?? {};
  if (!env.VK_ICD_FILENAMES && !env.VK_DRIVER_FILES) {
    return (
      'Dawn found no adapter. Without a GPU, point Vulkan at SwiftShader: ' +
      'VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json (Debian packages chromium and libvulkan1)'
    );
  }
  return `Dawn found no adapter (VK_ICD_FILENAMES=${env.VK_ICD_FILENAMES ?? ''}, VK_DRIVER_FILES=${env.VK_DRIVER_FILES ?? ''})`;
}
