/**
 * A progress line on stderr. On a terminal it redraws one line with a bar; when
 * stderr is a file or pipe (CI logs) it prints one plain line per step instead,
 * so logs stay readable.
 */
export class Progress {
  private done = 0;
  private readonly total: number;
  private readonly tty: boolean;
  private readonly quiet: boolean;
  private readonly started = performance.now();

  constructor(total: number, options: { quiet?: boolean } = {}) {
    this.total = Math.max(1, total);
    this.tty = process.stderr.isTTY === true;
    this.quiet = options.quiet === true;
  }

  /** Announces the step about to run. */
  start(label: string): void {
    if (this.quiet) return;
    const pct = Math.floor((100 * this.done) / this.total);
    if (this.tty) {
      const width = 24;
      const filled = Math.round((width * this.done) / this.total);
      const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
      const line = `[${bar}] ${String(pct).padStart(3)}% ${this.done + 1}/${this.total} ${label}`;
      const cols = process.stderr.columns ?? 100;
      process.stderr.write(`\r\x1b[K${line.slice(0, cols - 1)}`);
    } else {
      process.stderr.write(`[${this.done + 1}/${this.total}] ${label}\n`);
    }
  }

  step(): void {
    this.done++;
  }

  /** Prints a note without breaking the bar. */
  note(message: string): void {
    if (this.quiet) return;
    process.stderr.write(this.tty ? `\r\x1b[K${message}\n` : `${message}\n`);
  }

  finish(): void {
    if (this.quiet) return;
    const s = ((performance.now() - this.started) / 1000).toFixed(1);
    process.stderr.write(this.tty ? `\r\x1b[K${this.total} steps in ${s} s\n` : `done: ${this.total} steps in ${s} s\n`);
  }
}
