/**
 * How Trident starts headless Chromium, shared by the CLI's browser runs and the
 * browser test project (vitest.config.ts). Flags from shared/PLATFORM.md: headless
 * without background traffic, WebGPU on Vulkan (SwiftShader where there is no GPU),
 * WebGL2 on ANGLE/SwiftShader with timer queries.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--enable-unsafe-webgpu',
  '--enable-features=Vulkan',
  '--use-angle=swiftshader',
];
