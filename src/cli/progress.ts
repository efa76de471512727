/**
 * Progress on stderr: a bar with rate and ETA redrawn in place on a terminal, plain periodic lines in CI logs
 * (which keep every line, so redrawing would flood them).
 */

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressOptions {
  /** Threads to go through, when known (ETA and bar need it). */
  total?: number;
  /** What is counted, e.g. "scanned". */
  verb: string;
  /** Milliseconds, monotonic. */
  now?: () => number;
  /** Between plain lines (not a terminal). Default 10 s. */
  lineEveryMs?: number;
  /** Between redraws on a terminal. Default 100 ms. */
  redrawEveryMs?: number;
}

const number = (n: number) => n.toLocaleString("en-US");

export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0
    ? `${h}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}`
    : `${m}:${String(s).padStart(2, "0")}`;
}

export class Progress {
  private done = 0;
  private note = "";
  private readonly started: number;
  private lastDraw = Number.NEGATIVE_INFINITY;
  private drawn = false;
  private readonly now: () => number;
  private readonly tty: boolean;

  constructor(
    private readonly stream: ProgressStream,
    private readonly options: ProgressOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
    this.tty = stream.isTTY === true;
    // A plain log gets its first line after the first interval, not at once.
    if (!this.tty) this.lastDraw = this.started;
  }

  /** One more thread done; `note` is a short tally shown after the rate ("12 broken"). */
  tick(note: string): void {
    this.done++;
    this.note = note;
    const now = this.now();
    const every = this.tty ? (this.options.redrawEveryMs ?? 100) : (this.options.lineEveryMs ?? 10_000);
    if (now - this.lastDraw < every) return;
    this.lastDraw = now;
    this.draw(now);
  }

  /** Prints a line of output without tearing the bar (stdout and stderr share the terminal). */
  above(write: () => void): void {
    if (this.tty && this.drawn) this.stream.write("\r\x1b[2K");
    write();
    if (this.tty && this.drawn) this.draw(this.now());
  }

  /** Clears the bar (a terminal) or prints the last count (a log). */
  finish(): void {
    if (this.tty) {
      if (this.drawn) this.stream.write("\r\x1b[2K");
    } else if (this.done > 0 && this.now() - this.started >= (this.options.lineEveryMs ?? 10_000)) {
      this.stream.write(`${this.line(this.now())}\n`);
    }
  }

  private rate(now: number): number {
    const seconds = (now - this.started) / 1000;
    return seconds > 0 ? this.done / seconds : 0;
  }

  private line(now: number): string {
    const { total, verb } = this.options;
    const rate = this.rate(now);
    const of = total !== undefined ? ` of ${number(total)}` : "";
    const eta =
      total !== undefined && rate > 0 && total >= this.done
        ? `, ETA ${formatDuration(((total - this.done) / rate) * 1000)}`
        : "";
    return `${verb} ${number(this.done)}${of} threads (${number(Math.round(rate))}/s${eta})${this.note ? `, ${this.note}` : ""}`;
  }

  private draw(now: number): void {
    if (!this.tty) {
      this.stream.write(`${this.line(now)}\n`);
      return;
    }
    const { total } = this.options;
    const rate = this.rate(now);
    const width = 24;
    const share = total ? Math.min(1, this.done / total) : 0;
    const bar = total ? `[${"#".repeat(Math.round(share * width)).padEnd(width, ".")}] ` : "";
    const count = total !== undefined ? `${number(this.done)}/${number(total)}` : number(this.done);
    const eta =
      total !== undefined && rate > 0 && total >= this.done
        ? `  ETA ${formatDuration(((total - this.done) / rate) * 1000)}`
        : "";
    const text = `${bar}${count} threads  ${number(Math.round(rate))}/s${eta}${this.note ? `  ${this.note}` : ""}`;
    this.stream.write(`\r\x1b[2K${text.slice(0, Math.max(20, (this.stream.columns ?? 100) - 1))}`);
    this.drawn = true;
  }
}
