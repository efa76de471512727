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
const CLEAR = "\r\x1b[2K";

export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const two = (n: number) => String(n).padStart(2, "0");
  const [h, m, s] = [Math.floor(seconds / 3600), Math.floor((seconds % 3600) / 60), seconds % 60];
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

export class Progress {
  private done = 0;
  private note = "";
  private readonly started: number;
  private lastDraw = Number.NEGATIVE_INFINITY;
  private drawn = false;
  private readonly now: () => number;
  private readonly tty: boolean;
  private readonly lineEveryMs: number;

  constructor(
    private readonly stream: ProgressStream,
    private readonly options: ProgressOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
    this.tty = stream.isTTY === true;
    this.lineEveryMs = options.lineEveryMs ?? 10_000;
    // A plain log gets its first line after the first interval, not at once.
    if (!this.tty) this.lastDraw = this.started;
  }

  /** One more thread done; `note` is a short tally shown after the rate ("12 broken"). */
  tick(note: string): void {
    this.done++;
    this.note = note;
    const now = this.now();
    if (now - this.lastDraw < (this.tty ? (this.options.redrawEveryMs ?? 100) : this.lineEveryMs)) return;
    this.lastDraw = now;
    this.draw(now);
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
    else if (!this.tty && this.done > 0 && this.now() - this.started >= this.lineEveryMs) this.draw(this.now());
  }

  private draw(now: number): void {
    const { total } = this.options;
    const seconds = (now - this.started) / 1000;
    const rate = seconds > 0 ? this.done / seconds : 0;
    const eta =
      total !== undefined && rate > 0 && total >= this.done ? formatDuration(((total - this.done) / rate) * 1000) : "";
    const speed = number(Math.round(rate));
    if (!this.tty) {
      const of = total !== undefined ? ` of ${number(total)}` : "";
      const note = this.note ? `, ${this.note}` : "";
      this.stream.write(
        `${this.options.verb} ${number(this.done)}${of} threads (${speed}/s${eta && `, ETA ${eta}`})${note}\n`,
      );
      return;
    }
    const width = 24;
    const bar = total ? `[${"#".repeat(Math.round(Math.min(1, this.done / total) * width)).padEnd(width, ".")}] ` : "";
    const count = total !== undefined ? `${number(this.done)}/${number(total)}` : number(this.done);
    const text = `${bar}${count} threads  ${speed}/s${eta && `  ETA ${eta}`}${this.note ? `  ${this.note}` : ""}`;
    this.stream.write(`${CLEAR}${text.slice(0, Math.max(20, (this.stream.columns ?? 100) - 1))}`);
    this.drawn = true;
  }
}
