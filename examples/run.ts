/**
 * Runs the examples on one device and checks each against its plain-JavaScript reference:
 *
 *   npx tsx examples/run.ts [stencil|matmul|histogram|csr ...] [--backend cpu|webgpu]
 *
 * (webgl2 needs a browser: examples/browser/ runs them there.)
 */
import { parseArgs } from 'node:util';
import { type BackendKind, createDevice } from 'trident';
import { EXAMPLES, type ExampleName } from './index.ts';

const { values, positionals } = parseArgs({ options: { backend: { type: 'string' } }, allowPositionals: true });
const names = (positionals.length > 0 ? positionals : Object.keys(EXAMPLES)) as ExampleName[];
const device = await createDevice(values.backend ? { backend: values.backend as BackendKind } : {});
console.log(`device: ${device.backend} (${device.info.adapter})`);
let failed = 0;
for (const name of names) {
  const run = EXAMPLES[name];
  if (!run) throw new Error(`unknown example '${name}'; choose from ${Object.keys(EXAMPLES).join(', ')}`);
  const result = await run(device);
  if (!result.ok) failed++;
  console.log(`${result.ok ? 'ok  ' : 'FAIL'} ${name}: ${JSON.stringify(result)}`);
}
await device.destroy();
process.exitCode = failed > 0 ? 1 : 0;
