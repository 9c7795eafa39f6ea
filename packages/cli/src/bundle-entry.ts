/**
 * Entry of the self-contained Node bundle (scripts/bundle-node.sh) for machines
 * without node_modules, such as the H100 GPU machine: same commands as bin/trident.mjs.
 */
import { main } from './main.ts';

process.exitCode = await main(process.argv.slice(2));
