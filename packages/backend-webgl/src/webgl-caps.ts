import type { DeviceCaps, DeviceInfo, Feature } from '@trident/core';
import { floorPow2, LANES } from './webgl-texture.ts';

/**
 * The largest count of unit increments a float shadow holds exactly (2^24, the
 * f32 mantissa): the cap on `atomicChunk` and the `maxExactAtomicCount` limit.
 */
export const MAX_EXACT = 2 ** 24;

/** The part of EXT_disjoint_timer_query_webgl2 the device uses. */
export type TimerExt = { readonly TIME_ELAPSED_EXT: number; readonly GPU_DISJOINT_EXT: number };

/** What one WebGL2 context offers, read once when its device is made. */
export interface GlContextCaps {
  readonly info: DeviceInfo;
  readonly caps: DeviceCaps;
  readonly maxTextureSize: number;
  /** Outputs one gather pass can write: MAX_DRAW_BUFFERS, bounded by the colour attachments. */
  readonly maxDrawBuffers: number;
  /** EXT_color_buffer_float and EXT_float_blend both enabled: atomics can blend. */
  readonly floatBlend: boolean;
  readonly timer: TimerExt | null;
}

/**
 * Reads limits and enables the extensions the device needs. Extensions are
 * enabled by asking for them, so this runs before any shader is compiled.
 */
export function readContextCaps(gl: WebGL2RenderingContext, atomicChunk: number): GlContextCaps {
  const maxTextureSize = gl.getParameter(gl.MAX_TEXTURE_SIZE) as number;
  const maxDrawBuffers = Math.min(gl.getParameter(gl.MAX_DRAW_BUFFERS) as number, gl.getParameter(gl.MAX_COLOR_ATTACHMENTS) as number);
  // Atomics blend into R32F shadows: rendering to them needs EXT_color_buffer_float, blending EXT_float_blend.
  const floatBlend = gl.getExtension('EXT_color_buffer_float') !== null && gl.getExtension('EXT_float_blend') !== null;
  const timer = gl.getExtension('EXT_disjoint_timer_query_webgl2') as TimerExt | null;

  const dbg = gl.getExtension('WEBGL_debug_renderer_info');
  const renderer = String(dbg ? gl.getParameter(dbg.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER));
  const vendor = String(dbg ? gl.getParameter(dbg.UNMASKED_VENDOR_WEBGL) : gl.getParameter(gl.VENDOR));
  const units = Math.min(
    gl.getParameter(gl.MAX_TEXTURE_IMAGE_UNITS) as number,
    gl.getParameter(gl.MAX_VERTEX_TEXTURE_IMAGE_UNITS) as number,
  );
  const info: DeviceInfo = {
    backend: 'webgl2',
    adapter: renderer,
    software: /swiftshader|llvmpipe|softpipe|software/i.test(renderer),
    details: {
      vendor,
      version: String(gl.getParameter(gl.VERSION)),
      maxTextureSize,
      maxDrawBuffers,
      floatBlend,
      atomicChunk,
    },
  };
  const features = new Set<Feature>(['gather', 'scatter']);
  if (floatBlend) {
    features.add('atomic');
    features.add('atomics-via-blending');
  }
  if (timer) features.add('timestamp');
  const caps: DeviceCaps = {
    limits: {
      // Four elements a texel, power-of-two widths (webgl-texture.ts).
      maxBufferElements: LANES * floorPow2(maxTextureSize) * maxTextureSize,
      maxStorageBufferBindingSize: LANES * floorPow2(maxTextureSize) * maxTextureSize * 4,
      // WebGL reports no memory size either: a texture it cannot hold is a GL_OUT_OF_MEMORY.
      maxTotalBufferBytes: 0,
      maxBuffersPerKernel: units,
      maxComputeInvocationsPerWorkgroup: 1024,
      maxComputeWorkgroupStorageSize: 0,
      maxComputeWorkgroupsPerDimension: 65535,
      minSubgroupSize: 0,
      maxSubgroupSize: 0,
      maxExactAtomicCount: floatBlend ? MAX_EXACT : 0,
    },
    features,
    timerSource: timer ? 'gpu-timestamp' : 'wall',
    preferredWorkgroupSize: 64,
    // Every texel of a pass is an invocation: grid-stride kernels should use many.
    concurrency: 1 << 16,
    // Program, framebuffer and uniform changes plus a draw; software rasterisers pay far more.
    dispatchCostMicros: info.software ? 300 : 30,
  };
  return { info, caps, maxTextureSize, maxDrawBuffers, floatBlend, timer };
}
