/**
 * What the command says to do next, and what its exit code says when --limit stopped it: a repair that reached
 * its limit exits with 1 because the threads after it were not read. Real SqliteSaver files and a real
 * PostgresSaver schema, seeded by real agent runs.
 */
import { afterEach, describe, expect, it } from "vitest";
import { storedProblems } from "../../src/threads/repair-thread";
import { applyFlags, runCliHere } from "./support/run-cli";
import { POSTGRES_URL, postgresSaverOrSkip } from "../support/services";
import { seedThreads, startSeedModel, storedMessages, type SeedModel } from "../threads/support/seed";
import { openTestStore } from "../threads/support/stores";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function model(): Promise<SeedModel> {
  const started = await startSeedModel("openai");
  cleanups.push(() => started.stub.close());
  return started;
}

/** runCliHere, with the "Next:" line it printed. */
async function runWithNext(argv: string[], io: Parameters<typeof runCliHere>[1] = {}) {
  const run = await runCliHere(argv, io);
  return { ...run, next: /^Next: (.*)$/m.exec(run.stdout)?.[1] };
}

const TO_DRY_RUN = "repair with the same flags shows each fix (a dry run; add --apply to write it)";
const TO_APPLY = "the same command with --apply writes these fixes";

describe("--limit: a repair that reached it says the store may still hold broken threads", () => {
  it("exits with 1 and gives the same command again; the run that repairs the last ones exits with 0", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 3, clean: 1 });
    const argv = () => ["repair", "--sqlite", store.file!, ...applyFlags(), "--limit", "2", "--concurrency", "1"];

    const first = await runWithNext(argv());
    expect(first.stdout).toContain("Stopped early: --limit 2 reached; run again for the rest");
    expect(first.stdout).toMatch(/ 2 {2}repaired \(new checkpoint on top\)/);
    expect(first.next).toBeUndefined();
    expect(first.code).toBe(1);

    const second = await runWithNext(argv());
    expect(second.stdout).toMatch(/ 1 {2}repaired \(new checkpoint on top\)/);
    expect(second.stdout).not.toContain("Stopped early");
    expect(second.next).toBeUndefined();
    expect(second.code).toBe(0);

    const scan = await runWithNext(["scan", "--sqlite", store.file!]);
    expect(scan.stdout).toMatch(/\b0 {2}broken/);
    expect(scan.code).toBe(0);
    expect(seeded.broken).toHaveLength(3);
  });

  it("a dry run that reached it hands the same limit to --apply", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    await seedThreads(store.saver, await model(), { brokenSend: 2 });
    const dry = await runWithNext(["repair", "--sqlite", store.file!, "--limit", "1"]);
    expect(dry.code).toBe(1);
    expect(dry.stdout.match(/: would repair/g)).toHaveLength(1);
    expect(dry.next).toBe(TO_APPLY);
  });
});

describe("Next: what to run after a scan and a dry run", () => {
  it("PostgreSQL, the URL given literally: never printed", async (context) => {
    const handle = await postgresSaverOrSkip(context, "cli_next");
    const seeded = await seedThreads(handle.saver, await model(), { brokenSend: 1, clean: 1 });
    const flags = ["--postgres", POSTGRES_URL, "--saver-options", JSON.stringify({ schema: handle.schema })];

    const scan = await runWithNext(["scan", ...flags, "--thread", seeded.broken[0]]);
    expect(scan.code).toBe(1);
    expect(scan.next).toBe(TO_DRY_RUN);

    const dry = await runWithNext(["repair", ...flags, "--thread", seeded.broken[0]]);
    expect(dry.code).toBe(1);
    expect(dry.next).toBe(TO_APPLY);
    expect(scan.stdout + scan.stderr + dry.stdout + dry.stderr).not.toContain(POSTGRES_URL);
  });
});

describe("--thread", () => {
  it("names a thread id the store has no checkpoint for (a typo would otherwise read as a clean store)", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 1 });
    for (const argv of [["scan"], ["repair", ...applyFlags()]]) {
      const run = await runCliHere([
        ...argv,
        "--sqlite",
        store.file!,
        "--thread",
        seeded.broken[0],
        "--thread",
        "nosuch",
      ]);
      expect(run.stderr).toMatch(/^langgraph-tool-repair: --thread: no checkpoint in SQLite .* for "nosuch"\n$/);
      expect(run.stdout).toBe(""); // nothing read, nothing written
      expect(run.code).toBe(2);
    }
    // Still broken: --apply wrote nothing.
    expect(storedProblems(await storedMessages(store.saver, seeded.broken[0]), "openai")).not.toEqual([]);
  });

  it("says nothing of a thread a --limit left unread", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 2 });
    const [a, b] = seeded.broken;
    const run = await runCliHere(["scan", "--sqlite", store.file!, "--thread", a, "--thread", b, "--limit", "1"]);
    expect(run.stdout).toContain("--limit 1 reached");
    expect(run.stderr).not.toContain("no checkpoint");
  });
});
