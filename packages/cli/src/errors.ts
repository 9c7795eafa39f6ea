/**
 * CLI errors. Each prints as one line; the exit code says whose fault it was:
 * 2 for the user's input (arguments, files), 1 for a failure while running.
 */
import { NpyError } from './npy.ts';
import { InputTooLargeError } from './run/device-fit.ts';

/** Bad arguments or an input file the command cannot use (wrong shape, dtype, length). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** An input file that parsed but does not fit the command; the message names the file. */
export class InputError extends UsageError {
  readonly file: string;
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`);
    this.name = 'InputError';
    this.file = file;
  }
}

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** The exit code and single line to print for an error thrown by a command. */
export function describeError(err: unknown): { code: number; line: string } {
  if (err instanceof NpyError || err instanceof UsageError || err instanceof InputTooLargeError)
    return { code: EXIT_USAGE, line: oneLine(err.message) };
  if (err instanceof Error) return { code: EXIT_FAILURE, line: oneLine(`${err.name}: ${err.message}`) };
  return { code: EXIT_FAILURE, line: oneLine(String(err)) };
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').trim();
}
