/**
 * `trident <command>`: the entry point behind bin/trident.mjs. Each command is a
 * module under commands/ that takes its argv and resolves to an exit code;
 * errors it throws are printed here as one line (see errors.ts for the codes).
 */
import { prepareEnvironment } from './environment.ts';
import { describeError, EXIT_USAGE } from './errors.ts';

const USAGE = `usage: trident <command> [options]

commands:
  devices [--json]                       every backend, available or not (and why), adapter and caps
  run <algorithm> [--backend B] ...      run one algorithm on NumPy .npy files (trident run --help)
  bench [--backends ...] [--algorithms ...] [--sizes ...] [--repeats N] [--out results.json]
  report [--from results.json ...] [--out report/]`;

type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  devices: async () => (await import('./commands/devices.ts')).devicesCommand,
  run: async () => (await import('./commands/run.ts')).runCommand,
  bench: async () => (await import('./commands/bench.ts')).benchCommand,
  report: async () => (await import('./commands/report.ts')).reportCommand,
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? process.stderr : process.stdout).write(`${USAGE}\n`);
    return name === undefined ? EXIT_USAGE : 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`trident: unknown command '${name}'\n${USAGE}\n`);
    return EXIT_USAGE;
  }
  try {
    prepareEnvironment();
    const command = await load();
    return await command(rest);
  } catch (err) {
    const { code, line } = describeError(err);
    process.stderr.write(`trident ${name}: ${line}\n`);
    if (process.env.TRIDENT_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    return code;
  } finally {
    // A SIGINT / SIGTERM held during the synchronous output commit (output.ts) is
    // delivered from the event loop's poll phase: give the loop two turns (one was
    // seen not to be enough when the signal watcher started in the same task), or
    // the process would exit 0 with the signal never handled.
    for (let turn = 0; turn < 2; turn++) await new Promise((done) => setImmediate(done));
  }
}
