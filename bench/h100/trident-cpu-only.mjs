/**
 * What 'trident' resolves to in the GPU machine's CPU bundle (.gpu/trident-cpu.mjs, for
 * `trident bench --worker-sweep` on its cores): core with the CPU backend alone registered.
 * The backend's worker scripts (node-worker.mjs and the modules it imports) are copied
 * beside the bundle by `bench/h100/run.sh pack`, where the bundled backend looks for them.
 */
import { cpuAdapter } from '@trident/backend-cpu';
import { registerBackend } from '@trident/core';

registerBackend(cpuAdapter);

export * from '@trident/core';
