/**
 * `trident bench` as the GPU machine runs it: bundled by `bash bench/h100/run.sh pack` into
 * .gpu/trident.mjs with 'trident' resolved to ./trident-webgpu-only.mjs (WebGPU alone, on a Dawn
 * instance the bundle creates: the CPU backend's worker pool cannot run from a bundle), run by
 * `run.sh suite | quick` as `node .gpu/trident.mjs bench --suite h100 …`. The bench command
 * alone: the report's charts and the browser runs need packages that are not carried.
 */
import { benchCommand } from '../../packages/cli/src/commands/bench.ts';
import { prepareEnvironment } from '../../packages/cli/src/environment.ts';
import { describeError, EXIT_USAGE } from '../../packages/cli/src/errors.ts';

const [command, ...args] = process.argv.slice(2);
if (command !== 'bench') {
  process.stderr.write(`usage: node .gpu/trident.mjs bench [options] (this bundle runs \`trident bench\` only; got '${command ?? ''}')\n`);
  process.exitCode = EXIT_USAGE;
} else {
  try {
    prepareEnvironment();
    process.exitCode = await benchCommand(args);
  } catch (err) {
    const { code, line } = describeError(err);
    process.stderr.write(`trident bench: ${line}\n`);
    process.exitCode = code;
  }
}
