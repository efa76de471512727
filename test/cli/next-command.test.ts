/**
 * What the command says to run next, and what its exit code says when --limit stopped it: the `Next:` line
 * keeps the store and the flags that chose the threads (never a connection string), and a repair that reached
 * its limit exits with 1 because the threads after it were not read. Real SqliteSaver files and a real
 * PostgresSaver schema, seeded by real agent runs.
 */
import { afterEach, describe, expect, it } from "vitest";
import { runCliHere } from "./support/run-cli";
import { POSTGRES_URL, postgresSaverOrSkip } from "../support/services";
import { seedThreads, startSeedModel, type SeedModel } from "../threads/support/seed";
import { copyThread, openTestStore } from "../threads/support/stores";

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

const CMD = "npx langgraph-tool-repair repair";
const DRY_NOTE = "   (a dry run: shows each fix; add --apply to write it)";

describe("--limit: a repair that reached it says the store may still hold broken threads", () => {
  it("exits with 1 and gives the same command again; the run that repairs the last ones exits with 0", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 3, clean: 1 });
    const argv = ["repair", "--sqlite", store.file!, "--apply", "--limit", "2", "--concurrency", "1"];

    const first = await runWithNext(argv);
    expect(first.stdout).toContain("Stopped early: --limit 2 reached; run again for the rest");
    expect(first.stdout).toMatch(/ 2 {2}repaired \(new checkpoint on top\)/);
    expect(first.next).toBe(
      `${CMD} --sqlite ${store.file} --limit 2 --apply   (goes on with the next 2 broken threads)`,
    );
    expect(first.code).toBe(1);

    const second = await runWithNext(argv);
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
    expect(dry.next).toBe(`${CMD} --sqlite ${store.file} --limit 1 --apply`);
  });
});

describe("Next: the store and the flags that chose the threads", () => {
  it(
    "SQLite: --thread (each id, quoted for the shell when it must be), --provider, --messages-key " +
      "and --since as typed",
    async (context) => {
      const store = await openTestStore("SqliteSaver", context);
      const seeded = await seedThreads(store.saver, await model(), { brokenSend: 2 });
      await copyThread(store.saver, seeded.broken[0], "ann's trip");
      const selection = [
        "--thread",
        "ann's trip",
        "--thread",
        seeded.broken[1],
        "--provider",
        "openai",
        "--messages-key",
        "messages",
        "--since",
        "7d",
      ];
      const printed = `--thread 'ann'\\''s trip' --thread ${seeded.broken[1]} --provider openai --messages-key messages --since 7d`;

      const scan = await runWithNext(["scan", "--sqlite", store.file!, ...selection, "--concurrency", "2"]);
      expect(scan.code).toBe(1);
      expect(scan.next).toBe(`${CMD} --sqlite ${store.file} ${printed}${DRY_NOTE}`);

      // The dry run that Next names works on the same threads, and names the --apply that writes their fixes.
      const dry = await runWithNext(["repair", "--sqlite", store.file!, ...selection]);
      expect(dry.stdout.match(/^thread .*: would repair/gm)).toEqual([
        `thread ann's trip: would repair`,
        `thread ${seeded.broken[1]}: would repair`,
      ]);
      expect(dry.next).toBe(`${CMD} --sqlite ${store.file} ${printed} --apply`);
      expect(dry.code).toBe(1);
    },
  );

  it("started with `npm run cli` in this repository, Next says the same (npx finds no bin in the checkout)", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    await seedThreads(store.saver, await model(), { brokenSend: 1 });
    const checkout = { npm_lifecycle_event: "cli", npm_package_name: "langgraph-tool-repair" };
    const scan = await runWithNext(["scan", "--sqlite", store.file!], { env: checkout });
    expect(scan.next).toBe(`npm run cli -- repair --sqlite ${store.file}${DRY_NOTE}`);
    // Another package's own `cli` script is not this checkout: npx, as installed.
    const elsewhere = await runWithNext(["scan", "--sqlite", store.file!], {
      env: { ...checkout, npm_package_name: "my-app" },
    });
    expect(elsewhere.next).toBe(`${CMD} --sqlite ${store.file}${DRY_NOTE}`);
  });

  it("PostgreSQL: --postgres env:NAME as given, a literal URL as <URL>, --saver-options as <JSON>", async (context) => {
    const handle = await postgresSaverOrSkip(context, "cli_next");
    const seeded = await seedThreads(handle.saver, await model(), { brokenSend: 1, clean: 1 });
    const options = ["--saver-options", JSON.stringify({ schema: handle.schema })];
    const selection = ["--thread", seeded.broken[0], "--provider", "bedrock"];

    const fromEnv = await runWithNext(["scan", "--postgres", "env:LGTR_NEXT_URL", ...options, ...selection], {
      env: { LGTR_NEXT_URL: POSTGRES_URL },
    });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.next).toBe(
      `${CMD} --postgres env:LGTR_NEXT_URL --saver-options <JSON> --thread ${seeded.broken[0]} --provider bedrock${DRY_NOTE}`,
    );

    const literal = await runWithNext(["repair", "--postgres", POSTGRES_URL, ...options, ...selection]);
    expect(literal.code).toBe(1);
    expect(literal.next).toBe(
      `${CMD} --postgres <URL> --saver-options <JSON> --thread ${seeded.broken[0]} --provider bedrock --apply`,
    );
    expect(literal.stdout + literal.stderr).not.toContain(POSTGRES_URL);
  });
});
