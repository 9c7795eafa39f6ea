// Does Dawn (the carried dawn.node) get a Vulkan adapter here? Exit 0 and print it if so.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { create, globals } = require(process.argv[2] ?? './dist/linux-x64/dawn.node');
Object.assign(globalThis, globals);
const gpu = create(['disable-dawn-features=timestamp_quantization']);
const adapter = await gpu.requestAdapter();
if (!adapter) {
  console.log('probe: no adapter');
  process.exit(1);
}
const i = adapter.info;
console.log(`probe: adapter ${i.vendor} | ${i.architecture} | ${i.device} | ${i.description}; features ${[...adapter.features].join(',')}`);
process.exit(0);
