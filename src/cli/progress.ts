/**
 * Progress on stderr when it is a terminal: the threads done, the rate and a short tally, redrawn in place (every
 * 100 ms at most). Anything else (a CI log, a pipe) gets none.
 */

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export const num = (n: number) => n.toLocaleString("en-US");
const CLEAR = "\r\x1b[2K";

export class Progress {
  private done = 0;
  /** The line on screen ("" until the first draw). */
  private line = "";
  private last = Number.NEGATIVE_INFINITY;
  private readonly started: number;

  /** `now`: milliseconds, monotonic. */
  constructor(
    private readonly stream: ProgressStream,
    private readonly now = () => performance.now(),
  ) {
    this.started = now();
  }

  /** One more thread done; `note` is a short tally shown after the rate ("12 broken"). */
  tick(note: string): void {
    this.done++;
    const now = this.now();
    if (!this.stream.isTTY || now - this.last < 100) return;
    this.last = now;
    const rate = now > this.started ? (this.done * 1000) / (now - this.started) : 0;
    const text = `${num(this.done)} threads  ${num(Math.round(rate))}/s${note && `  ${note}`}`;
    this.line = text.slice(0, Math.max(20, (this.stream.columns ?? 100) - 1));
    this.stream.write(CLEAR + this.line);
  }

  /** Prints a line of output without tearing the progress line (stdout and stderr share the terminal). */
  above(write: () => void): void {
    if (this.line) this.stream.write(CLEAR);
    write();
    if (this.line) this.stream.write(CLEAR + this.line);
  }

  /** Clears the progress line. */
  finish(): void {
    if (this.line) this.stream.write(CLEAR);
  }
}
