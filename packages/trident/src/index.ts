/**
 * The registry wiring: importing 'trident' registers every backend package with
 * @trident/core and re-exports core, so `createDevice()` can choose among them.
 * This is the only library module that imports backend packages.
 * It imports cleanly in Node and in browsers: @trident/backend-cpu resolves to its
 * Web Worker pool under the "browser" export condition, and the WebGL2 adapter
 * reports itself unavailable in Node instead of failing to load.
 */
import { cpuAdapter } from '@trident/backend-cpu';
import { webglAdapter } from '@trident/backend-webgl';
import { webgpuAdapter } from '@trident/backend-webgpu';
import { registerBackend } from '@trident/core';

registerBackend(webgpuAdapter);
registerBackend(webglAdapter);
registerBackend(cpuAdapter);

export * from '@trident/core';
