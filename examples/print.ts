/** Printing for the demos: lines wrapped at spaces to the terminal width, never cut. */

/** A string's length on screen (colour codes take no room). */
export const visibleLength = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "").length;

/** The terminal's width (100 when not a terminal), never below 60. */
export const WIDTH = Math.max(60, process.stdout.columns ?? 100);

/**
 * Prints `head` followed by `text`, wrapped at spaces to the terminal width; continuation lines are indented
 * by `hang` (default: to where the text started). A word longer than a line (a URL) gets a line of its own
 * rather than being cut.
 */
export function printWrapped(head: string, text: string, hang = visibleLength(head)): void {
  const indent = " ".repeat(hang);
  // The first line has the head's width taken, later ones the hang's.
  const roomOf = (lineIndex: number) => Math.max(20, WIDTH - (lineIndex === 0 ? visibleLength(head) : hang));
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > roomOf(lines.length)) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  console.log(lines.map((l, i) => (i === 0 ? head : indent) + l).join("\n"));
}
