import { describe, expect, it } from "vitest";
import { progressLine } from "../../src/cli/progress";
import { renderSummary, Tally } from "../../src/cli/render";
import { countThreads } from "../../src/threads/source";
import { POSTGRES_URL } from "../support/services";
import { seedThreads, startSeedModel } from "../threads/support/seed";
import { openTestStore } from "../threads/support/stores";
import { runCliHere } from "./support/run-cli";

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

describe("Progress: totals, narrow terminals, pipes", () => {
  it("on a terminal: the total once known; a terminal of 0 columns gets the whole line, a narrow one a cut line", () => {
    for (const [columns, expected] of [
      [0, "\r\x1b[2K1,500 of 120,002 threads  1,500/s  12 broken"],
      [undefined, "\r\x1b[2K1,500 of 120,002 threads  1,500/s  12 broken"],
      [20, "\r\x1b[2K1,500 of 120,002 th"],
    ] as const) {
      const writes: string[] = [];
      let now = 0;
      const progress = progressLine({ write: (t: string) => writes.push(t), isTTY: true, columns }, () => now);
      progress.total(120_002);
      for (let i = 0; i < 1_500; i++) {
        if (i === 1_499) now = 1_000; // the first thread and the last are drawn
        progress.tick("12 broken");
      }
      expect(writes.at(-1)).toBe(expected);
    }
  });

  it("forced (--progress) into a pipe: a plain line a second, and the last count at the end", () => {
    const writes: string[] = [];
    let now = 0;
    const progress = progressLine({ write: (t: string) => writes.push(t) }, () => now, true);
    progress.total(3_000);
    for (let i = 0; i < 3_000; i++) {
      now += 1; // 1,000 threads a second
      progress.tick("");
    }
    progress.finish("2 broken");
    expect(writes).toEqual([
      "1 of 3,000 threads  1,000/s\n",
      "1,001 of 3,000 threads  1,000/s\n",
      "2,001 of 3,000 threads  1,000/s\n",
      "3,000 of 3,000 threads  1,000/s  2 broken\n",
    ]);
  });
});

describe("one number format", () => {
  it("counts in the summary and in the problem tally are written alike (120,002)", () => {
    const tally = new Tally();
    tally.threads = 120_002;
    tally.counts.set("broken", 120_002);
    tally.kinds.set("orphan_call", 120_002);
    const text = renderSummary(tally, { label: "SQLite x", repair: false, next: true }).join("\n");
    expect(text).toContain("SQLite x: 120,002 threads read");
    expect(text).toContain("120,002  broken");
    expect(text).toContain("Problems: orphan_call x120,002");
    expect(text).not.toMatch(/\d{4}/);
  });
});

describe("--progress on a real store", () => {
  it.for(["SqliteSaver", "PostgresSaver"] as const)(
    "%s: counted with one query; progress into a pipe only when asked",
    async (name, context) => {
      const store = await openTestStore(name, context);
      const model = await startSeedModel("openai");
      context.onTestFinished(() => model.stub.close());
      const seeded = await seedThreads(store.saver, model, { brokenSend: 1, clean: 2 });
      const flags = store.file
        ? ["--sqlite", store.file]
        : ["--postgres", POSTGRES_URL, "--saver-options", JSON.stringify({ schema: store.schema })];
      expect(await countThreads(store.saver)).toBe(3);
      expect(await countThreads(store.saver, { threads: [seeded.clean[0], "nosuch"] })).toBe(1);
      expect(await countThreads(store.saver, { since: new Date(Date.now() + 86_400_000) })).toBe(0);
      const quiet = await runCliHere(["scan", ...flags]);
      expect(quiet.stderr).toBe("");
      const forced = await runCliHere(["scan", ...flags, "--progress"]);
      expect(forced.code).toBe(1);
      expect(forced.stderr.split("\n").at(-2)).toMatch(/^3 of 3 threads {2}[\d,]+\/s {2}1 broken$/);
      // The first line may come before the count: then without the total.
      for (const line of forced.stderr.trim().split("\n")) expect(line).toMatch(/^\d (of 3 )?threads {2}/);
    },
  );
});
