/**
 * The registry wiring: importing 'trident' registers every backend package with
 * @trident/core and re-exports core, so `createDevice()` can choose among them.
 * This is the only library module that imports backend packages.
 */
import { cpuAdapter } from '@trident/backend-cpu';
import { registerBackend } from '@trident/core';

registerBackend(cpuAdapter);

export * from '@trident/core';
