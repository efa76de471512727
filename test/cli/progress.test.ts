import { describe, expect, it } from "vitest";
import { progressLine } from "../../src/cli/progress";

/** A stream that records writes, and a clock the test moves. */
function setup(isTTY: boolean) {
  const writes: string[] = [];
  let now = 0;
  const progress = progressLine({ write: (t: string) => writes.push(t), isTTY, columns: 120 }, () => now);
  return { writes, progress, advance: (ms: number) => (now += ms) };
}

describe("Progress", () => {
  it("on a terminal: a line redrawn in place with count, rate and tally, cleared at the end", () => {
    const { writes, progress, advance } = setup(true);
    for (let i = 0; i < 250; i++) {
      advance(4); // 250 threads/s
      progress.tick("3 broken");
    }
    const last = writes.at(-1)!;
    expect(last.startsWith("\r\x1b[2K")).toBe(true);
    // Redrawn every 100 ms: the last redraw was at the 226th thread.
    expect(last).toBe("\r\x1b[2K226 threads  250/s  3 broken");
    progress.finish("");
    expect(writes.at(-1)).toBe("\r\x1b[2K");
  });

  it("on a terminal: output printed meanwhile goes above the progress line", () => {
    const { writes, progress, advance } = setup(true);
    advance(200);
    progress.tick("");
    const printed: string[] = [];
    progress.above(() => printed.push("thread t1: repaired"));
    expect(printed).toEqual(["thread t1: repaired"]);
    expect(writes.slice(-2)[0]).toBe("\r\x1b[2K");
    expect(writes.at(-1)).toContain("1 threads");
  });

  it("not on a terminal: nothing", () => {
    const { writes, progress, advance } = setup(false);
    for (let i = 0; i < 60; i++) {
      advance(500);
      progress.tick(`${i} broken`);
    }
    progress.above(() => {});
    progress.finish("");
    expect(writes).toEqual([]);
  });

  it("count and rate", () => {
    const { writes, progress, advance } = setup(true);
    advance(1_000);
    progress.tick("");
    expect(writes.at(-1)).toBe("\r\x1b[2K1 threads  1/s");
  });
});
