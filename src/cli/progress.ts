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

/** `now`: milliseconds, monotonic. */
export function progressLine(stream: ProgressStream, now = () => performance.now()) {
  let done = 0;
  /** The line on screen ("" until the first draw). */
  let line = "";
  let last = Number.NEGATIVE_INFINITY;
  const started = now();
  return {
    /** One more thread done; `note` is a short tally shown after the rate ("12 broken"). */
    tick(note: string) {
      done++;
      const at = now();
      if (!stream.isTTY || at - last < 100) return;
      last = at;
      const rate = at > started ? (done * 1000) / (at - started) : 0;
      const text = `${num(done)} threads  ${num(Math.round(rate))}/s${note && `  ${note}`}`;
      line = text.slice(0, Math.max(20, (stream.columns ?? 100) - 1));
      stream.write(CLEAR + line);
    },
    /** Prints a line of output without tearing the progress line (stdout and stderr share the terminal). */
    above(write: () => void) {
      if (line) stream.write(CLEAR);
      write();
      if (line) stream.write(CLEAR + line);
    },
    /** Clears the progress line. */
    finish() {
      if (line) stream.write(CLEAR);
    },
  };
}
