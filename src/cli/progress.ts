/**
 * Progress on stderr: a bar with rate and ETA redrawn in place on a terminal (every 100 ms at most), plain
 * periodic lines in CI logs (which keep every line, so redrawing would flood them).
 */

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export const num = (n: number) => n.toLocaleString("en-US");
const CLEAR = "\r\x1b[2K";

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const two = (n: number) => `${n}`.padStart(2, "0");
  return `${s >= 3600 ? `${Math.floor(s / 3600)}:${two(Math.floor(s / 60) % 60)}` : Math.floor(s / 60)}:${two(s % 60)}`;
}

export class Progress {
  private done = 0;
  private note = "";
  private drawn = false;
  private readonly now;
  private readonly started;
  private readonly tty;
  private readonly every;
  // A plain log gets its first line after the first interval, not at once.
  private last;

  /**
   * `total`: threads to go through, when known (ETA and bar need it); `verb`: what is counted ("scanned");
   * `now`: milliseconds, monotonic; `lineEveryMs`: between plain lines (not a terminal), 10 s by default.
   */
  constructor(
    private readonly stream: ProgressStream,
    private readonly options: { total?: number; verb: string; now?: () => number; lineEveryMs?: number },
  ) {
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
    this.tty = !!stream.isTTY;
    this.every = this.tty ? 100 : (options.lineEveryMs ?? 10_000);
    this.last = this.tty ? Number.NEGATIVE_INFINITY : this.started;
  }

  /** One more thread done; `note` is a short tally shown after the rate ("12 broken"). */
  tick(note: string): void {
    this.done++;
    this.note = note;
    const now = this.now();
    if (now - this.last >= this.every) this.draw((this.last = now));
  }

  /** Prints a line of output without tearing the bar (stdout and stderr share the terminal). */
  above(write: () => void): void {
    if (this.drawn) this.stream.write(CLEAR);
    write();
    if (this.drawn) this.draw(this.now());
  }

  /** Clears the bar (a terminal) or prints the last count (a log). */
  finish(): void {
    if (this.drawn) this.stream.write(CLEAR);
    else if (!this.tty && this.done && this.now() - this.started >= this.every) this.draw(this.now());
  }

  private draw(now: number): void {
    const { total, verb } = this.options;
    const { done, note } = this;
    const known = total !== undefined;
    const rate = now > this.started ? (done * 1000) / (now - this.started) : 0;
    const eta = known && rate > 0 && total >= done ? formatDuration(((total - done) / rate) * 1000) : "";
    const speed = `${num(Math.round(rate))}/s`;
    if (!this.tty) {
      const of = known ? ` of ${num(total)}` : "";
      return void this.stream.write(
        `${verb} ${num(done)}${of} threads (${speed}${eta && `, ETA ${eta}`})${note && `, ${note}`}\n`,
      );
    }
    const bar = total ? `[${"#".repeat(Math.round(Math.min(1, done / total) * 24)).padEnd(24, ".")}] ` : "";
    const text = `${bar}${num(done)}${known ? `/${num(total)}` : ""} threads  ${speed}${eta && `  ETA ${eta}`}${note && `  ${note}`}`;
    this.stream.write(`${CLEAR}${text.slice(0, Math.max(20, (this.stream.columns ?? 100) - 1))}`);
    this.drawn = true;
  }
}
