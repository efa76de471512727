/**
 * Progress on stderr when it is a terminal: a bar with rate and ETA redrawn in place (every 100 ms at most).
 * Anything else (a CI log, a pipe) gets none.
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
  private last = Number.NEGATIVE_INFINITY;
  private readonly now;
  private readonly started;

  /** `total`: threads to go through, when known (ETA and bar need it); `now`: milliseconds, monotonic. */
  constructor(
    private readonly stream: ProgressStream,
    private readonly options: { total?: number; now?: () => number },
  ) {
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
  }

  /** One more thread done; `note` is a short tally shown after the rate ("12 broken"). */
  tick(note: string): void {
    this.done++;
    this.note = note;
    const now = this.now();
    if (this.stream.isTTY && now - this.last >= 100) this.draw((this.last = now));
  }

  /** Prints a line of output without tearing the bar (stdout and stderr share the terminal). */
  above(write: () => void): void {
    if (this.drawn) this.stream.write(CLEAR);
    write();
    if (this.drawn) this.draw(this.now());
  }

  /** Clears the bar. */
  finish(): void {
    if (this.drawn) this.stream.write(CLEAR);
  }

  private draw(now: number): void {
    const { total } = this.options;
    const { done, note } = this;
    const rate = now > this.started ? (done * 1000) / (now - this.started) : 0;
    const eta = total !== undefined && rate > 0 && total >= done ? formatDuration(((total - done) / rate) * 1000) : "";
    const bar = total ? `[${"#".repeat(Math.round(Math.min(1, done / total) * 24)).padEnd(24, ".")}] ` : "";
    const of = total !== undefined ? `/${num(total)}` : "";
    const text = `${bar}${num(done)}${of} threads  ${num(Math.round(rate))}/s${eta && `  ETA ${eta}`}${note && `  ${note}`}`;
    this.stream.write(`${CLEAR}${text.slice(0, Math.max(20, (this.stream.columns ?? 100) - 1))}`);
    this.drawn = true;
  }
}
