// Debug helper (not a test): runs one seed on a backend and prints the case and the outcome.
import { createDevice } from 'trident';
import { caseText, probeSubgroups, runCase } from './differential.ts';
import { generateCase, optionsForSeed } from './generate.ts';

const [backend = 'webgpu', ...seeds] = process.argv.slice(2);
const device = await createDevice({ backend: backend as 'webgpu', options: { cpu: { workers: 1 } } });
const sub = await probeSubgroups(device);
for (const s of seeds.map(Number)) {
  const c = generateCase(s, optionsForSeed(s));
  console.log(caseText(c));
  console.log(JSON.stringify(await runCase(device, c, sub.size)));
}
await device.destroy();
