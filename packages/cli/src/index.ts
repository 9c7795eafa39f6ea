/**
 * @trident/cli as a library: the pieces behind the `trident` binary, for scripts
 * and tests that want them without spawning a process.
 */
export type { BenchResults, Measurement, Stats } from './bench/schema.ts';
export { SCHEMA_ID } from './bench/schema.ts';
export { buildReport } from './commands/report.ts';
export { main } from './main.ts';
export { encodeNpy, type NpyArray, NpyError, parseNpy, readNpy } from './npy.ts';
export { analyze, pennycook } from './report/analysis.ts';
export { loadResultsFile, ResultsFileError, readResults } from './report/load.ts';
