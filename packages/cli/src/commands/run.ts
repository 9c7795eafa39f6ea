/**
 * `trident run <algorithm> [--backend B] --in FILE.npy ... --out FILE.npy`:
 * one algorithm on NumPy files. Inputs are read and checked before a device is
 * made, so malformed files fail fast (exit 2), and so are the output paths;
 * outputs are written atomically only after everything succeeded (output.ts),
 * so `--out` may name the `--in` file.
 *
 * Where a file can declare more than it holds (a `.npz` matrix shape), its
 * headers are read first (still before a device), the device is made, the
 * declared sizes are checked against its largest buffer, and only then is the
 * rest read: a tiny file declaring a huge matrix costs neither the host's
 * memory nor a failure part-way through.
 *
 * Backends Node does not have run in headless Chromium transparently: always
 * `--backend webgl2`, and `--backend webgpu` when Dawn gives no adapter here.
 * Without --backend, Node's best available backend runs.
 */
import { type BackendKind, createDevice, probeBackends } from 'trident';
import { backendKind, parse, workerCount } from '../args.ts';
import { deviceOptions } from '../device-options.ts';
import { UsageError } from '../errors.ts';
import { encodeNpy } from '../npy.ts';
import { checkOutputTargets, commitOutputs } from '../output.ts';
import { ALGORITHMS, RUN_OPTIONS, type RunValues } from '../run/algorithms.ts';
import { checkDeclaredFits, checkJobFitsDevice, type DeclaredBuffer } from '../run/device-fit.ts';
import { executeJob, type JobOutputs, type JobSpec } from '../run/execute.ts';

/** The flags that name output files. */
const OUTPUT_FLAGS = ['out', 'out-values', 'out-velocities', 'out-weight'] as const;

function usage(): string {
  const lines = ['usage: trident run <algorithm> [--backend webgpu|webgl2|cpu] [--workers N] ...', '', 'algorithms:'];
  for (const a of Object.values(ALGORITHMS)) lines.push(`  ${a.usage}`);
  lines.push(
    '',
    'Without --backend the best backend available in Node is used (and named on stderr).',
    '--backend webgl2 (and webgpu where Node has no adapter) runs in headless Chromium.',
  );
  return lines.join('\n');
}

/** Whether `kind` needs the browser: webgl2 always; others when Node cannot make a device. */
async function needsBrowser(kind: BackendKind | undefined, workers: number | undefined): Promise<boolean> {
  if (kind === undefined || kind === 'cpu') return false;
  if (kind === 'webgl2') return true;
  const [probe] = await probeBackends([kind], deviceOptions(workers));
  if (probe?.available) await probe.device.destroy();
  return !probe?.available;
}

/** The file each input role was read from, for messages. */
function inputLabels(given: RunValues): Record<string, string> {
  const labels: Record<string, string> = {};
  const from: Array<[string, string | undefined]> = [
    ['in', given.in],
    ['flags', given.flags],
    ['values', given.values],
    ['velocities', given.velocities],
    ['indptr', given.graph],
    ['indices', given.graph],
    ['weights', given.graph],
  ];
  for (const [role, file] of from) if (file !== undefined) labels[role] = file;
  return labels;
}

async function runInNode(
  prepared: () => JobSpec,
  declared: readonly DeclaredBuffer[],
  kind: BackendKind | undefined,
  workers: number | undefined,
  labels: Record<string, string>,
): Promise<JobOutputs> {
  const device = await createDevice({ ...(kind !== undefined ? { backend: kind } : {}), options: deviceOptions(workers) });
  try {
    checkDeclaredFits(device.caps, declared);
    const spec = prepared();
    const skipped = device.skipped.map((s) => `${s.backend}: ${s.reason}`).join('; ');
    process.stderr.write(
      `trident run: ${spec.algorithm} on ${device.backend} (${device.info.adapter})${kind === undefined && skipped ? ` — skipped ${skipped}` : ''}\n`,
    );
    checkJobFitsDevice(device.caps, spec, labels);
    return await executeJob(device, spec);
  } finally {
    await device.destroy();
  }
}

async function runInBrowser(spec: JobSpec, kind: BackendKind, workers: number | undefined): Promise<JobOutputs> {
  // Loaded only when needed: bundling the page pulls in esbuild and playwright.
  const { runJobInChromium } = await import('../browser/host.ts');
  let r: Awaited<ReturnType<typeof runJobInChromium>>;
  try {
    r = await runJobInChromium(kind, spec, workers);
  } catch (err) {
    // The page reports errors as text: an input too large for the page's device is still the input's fault.
    const tooLarge = /^InputTooLargeError: (.*)$/s.exec(err instanceof Error ? err.message : '');
    if (tooLarge) throw new UsageError(tooLarge[1] as string);
    throw err;
  }
  process.stderr.write(`trident run: ${spec.algorithm} on ${r.backend} (${r.adapter}) in headless Chromium\n`);
  return r.outputs;
}

export async function runCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, RUN_OPTIONS, true);
  if (values.help) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  const [name, ...extra] = positionals;
  if (name === undefined) throw new UsageError(`missing algorithm\n${usage()}`);
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  const algorithm = ALGORITHMS[name];
  if (!algorithm) throw new UsageError(`unknown algorithm '${name}' (known: ${Object.keys(ALGORITHMS).join(', ')})`);
  const given = values as RunValues;
  for (const flag of Object.keys(given)) {
    if (!['backend', 'workers', 'help', ...algorithm.flags].includes(flag)) {
      throw new UsageError(`${name} takes no --${flag} (usage: ${algorithm.usage})`);
    }
  }
  const workers = workerCount(given.workers);
  const kind = given.backend === undefined ? undefined : backendKind(given.backend);
  // Everything host-side first: a bad file must not cost a device. Where the files can declare more
  // than they hold, only their headers now, the rest once the device has been checked.
  const declared = algorithm.declare?.(given);
  let job = declared === undefined ? algorithm.prepare(given) : undefined;
  const prepared = () => {
    job ??= algorithm.prepare(given);
    return job;
  };
  // Output roles are named after their flags (out, out-values, ...), and prepare adds exactly those given.
  checkOutputTargets(
    OUTPUT_FLAGS.flatMap((role) => (given[role] !== undefined ? [{ flag: `--${role}`, path: given[role] as string }] : [])),
  );
  const outputs = (await needsBrowser(kind, workers))
    ? await runInBrowser(prepared().spec, kind as BackendKind, workers)
    : await runInNode(() => prepared().spec, declared ?? [], kind, workers, inputLabels(given));
  commitOutputs(
    Object.entries(prepared().outputs).map(([role, path]) => {
      const a = outputs[role];
      if (!a) throw new Error(`${name} produced no '${role}' output`);
      return { path, bytes: encodeNpy(a.data, a.shape) };
    }),
  );
  return 0;
}
