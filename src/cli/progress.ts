/**
 * Progress on stderr: on a terminal, the threads done (of the total, when the store can count it cheaply), the rate
 * and a short tally, redrawn in place (every 100 ms at most); elsewhere (a CI log, a pipe) nothing, unless `force`
 * (`--progress`): then the same text as a line a second.
 */

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** The one number format of the command's output: `120,002`. */
export const num = (n: number) => n.toLocaleString("en-US");
const CLEAR = "\r\x1b[2K";

/** `now`: milliseconds, monotonic. */
export function progressLine(stream: ProgressStream, now = () => performance.now(), force = false) {
  let done = 0;
  let total: number | undefined;
  /** The line on screen ("" until the first draw; never on a stream that is not a terminal). */
  let line = "";
  let last = -Infinity;
  const started = now();
  const live = !!stream.isTTY;
  const text = (note: string, at = now()) => {
    const rate = at > started ? (done * 1000) / (at - started) : 0;
    const of = total === undefined ? "" : ` of ${num(total)}`;
    return `${num(done)}${of} threads  ${num(Math.round(rate))}/s${note && `  ${note}`}`;
  };
  return {
    /** The number of threads to go through, once known. */
    total(n?: number) {
      total = n;
    },
    /** One more thread done; `note` is a short tally shown after the rate ("12 broken"). */
    tick(note = "") {
      done++;
      const at = now();
      if (!(live || force) || at - last < (live ? 100 : 1000)) return;
      last = at;
      if (!live) return void stream.write(`${text(note, at)}\n`);
      // A terminal that says it has no width (a pty of 0 columns) gets the whole line.
      line = text(note, at).slice(0, (stream.columns || Infinity) - 1);
      stream.write(CLEAR + line);
    },
    /** Prints a line of output without tearing the progress line (stdout and stderr share the terminal). */
    above(write: () => void) {
      if (line) stream.write(CLEAR);
      write();
      if (line) stream.write(CLEAR + line);
    },
    /** Clears the progress line; forced progress ends with the last count. */
    finish(note = "") {
      if (line) stream.write(CLEAR);
      else if (force && !live && done > 0) stream.write(`${text(note)}\n`);
    },
  };
}
