/**
 * Writing safely by hand: `repair --apply` asks first (with the count) on a terminal, refuses without one unless
 * `--yes`, and lists what it changed in a manifest (each thread's head before and after). Real SqliteSaver files and
 * PostgresSaver schemas, seeded by real agent runs (ChatOpenAI against the strict stub).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { afterEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../src/cli/main";
import { storedProblems } from "../../src/threads/repair-thread";
import { POSTGRES_URL } from "../support/services";
import { seedThreads, startSeedModel, storedMessages, threadConfig } from "../threads/support/seed";
import { openTestStore, type TestStore } from "../threads/support/stores";
import { manifestPath, runCliHere } from "./support/run-cli";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function seeded(store: TestStore, plan = { brokenSend: 2, clean: 1 }) {
  const model = await startSeedModel("openai");
  cleanups.push(() => model.stub.close());
  return { model, ...(await seedThreads(store.saver, model, plan)) };
}

const flagsOf = (store: TestStore) =>
  store.file
    ? ["--sqlite", store.file]
    : ["--postgres", POSTGRES_URL, "--saver-options", JSON.stringify({ schema: store.schema })];

const headOf = async (saver: BaseCheckpointSaver, thread: string) =>
  (await saver.getTuple(threadConfig(thread)))?.config.configurable?.checkpoint_id as string;

/** The command at a terminal: stdin and stdout are TTYs, stdin holds what the person types. */
async function atTerminal(argv: string[], typed: string) {
  let stdout = "";
  const stdin = Object.assign(Readable.from([typed]), { isTTY: true });
  const io: Partial<CliIO> = { stdin, stdout: { isTTY: true, write: (t: string) => (stdout += t) } };
  const run = await runCliHere(argv, io);
  return { ...run, stdout };
}

describe("repair --apply asks before writing", () => {
  it("at a terminal: asks with the count; no writes nothing (exit 1), yes writes", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const { broken } = await seeded(store);
    const heads = await Promise.all(broken.map((thread) => headOf(store.saver, thread)));
    const manifest = manifestPath();
    const argv = ["repair", ...flagsOf(store), "--apply", "--manifest", manifest];

    const declined = await atTerminal(argv, "n\n");
    expect(declined.stdout).toContain(
      `Repair 2 broken threads in SQLite ${store.file} (a new checkpoint on top of each, listed in ${manifest})? [y/N] `,
    );
    expect(declined.stdout).toContain("Nothing written.");
    expect(declined.code).toBe(1);
    expect(await Promise.all(broken.map((thread) => headOf(store.saver, thread)))).toEqual(heads);
    expect(existsSync(manifest)).toBe(false); // nothing to undo: no manifest left behind

    const accepted = await atTerminal(argv, "y\n");
    expect(accepted.code).toBe(0);
    for (const thread of broken) expect(accepted.stdout).toContain(`thread ${thread}: repaired`);
    expect(readFileSync(manifest, "utf8").trim().split("\n")).toHaveLength(2);

    // Nothing broken any more: nothing to ask, nothing written.
    const nothing = await atTerminal(["repair", ...flagsOf(store), "--apply", "--manifest", manifestPath()], "");
    expect(nothing.stdout).not.toContain("[y/N]");
    expect(nothing.stdout).toContain("nothing to repair");
    expect(nothing.code).toBe(0);
  });

  it("without a terminal and without --yes: refused before anything is read or written (exit 2); --yes goes ahead", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const { broken } = await seeded(store, { brokenSend: 1, clean: 0 });
    const head = await headOf(store.saver, broken[0]);
    const manifest = manifestPath();
    const refused = await runCliHere(["repair", ...flagsOf(store), "--apply", "--manifest", manifest]);
    expect(refused).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "langgraph-tool-repair: repair --apply writes to the store and there is no terminal to confirm on: add --yes to go ahead\n",
    });
    expect(await headOf(store.saver, broken[0])).toBe(head);
    expect(existsSync(manifest)).toBe(false);
    // stdin a terminal, stdout a pipe: still nobody to read the question.
    const piped = await runCliHere(["repair", ...flagsOf(store), "--apply", "--manifest", manifest], {
      stdin: Object.assign(Readable.from(["y\n"]), { isTTY: true }),
    });
    expect(piped.code).toBe(2);
    const yes = await runCliHere(["repair", ...flagsOf(store), "--apply", "--yes", "--manifest", manifest]);
    expect(yes.code).toBe(0);
    expect(yes.stdout).not.toContain("[y/N]");
    expect(await headOf(store.saver, broken[0])).not.toBe(head);
  });
});

describe("the manifest", () => {
  it("one line per changed thread with exactly its id, namespace, previous and new head; the default name is printed", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const { broken } = await seeded(store);
    const before = Object.fromEntries(await Promise.all(broken.map(async (t) => [t, await headOf(store.saver, t)])));
    const dir = mkdtempSync(join(tmpdir(), "tool-repair-cwd-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const cwd = process.cwd();
    process.chdir(dir);
    const run = await runCliHere(["repair", ...flagsOf(store), "--apply", "--yes"]).finally(() => process.chdir(cwd));
    expect(run.code).toBe(0);
    const [name] = readdirSync(dir);
    expect(name).toMatch(/^tool-repair-manifest-\d{8}T\d{6}\.\d{3}Z\.jsonl$/);
    expect(run.stdout).toContain(`Manifest: ${name} (2 threads changed; each line names the head before the repair)\n`);
    const lines = readFileSync(join(dir, name), "utf8").trim().split("\n");
    for (const line of lines)
      expect(Object.keys(JSON.parse(line))).toEqual(["thread", "namespace", "previousCheckpointId", "checkpointId"]);
    expect(lines.map((line) => JSON.parse(line)).sort((a, b) => a.thread.localeCompare(b.thread))).toEqual(
      await Promise.all(
        broken.sort().map(async (thread) => ({
          thread,
          namespace: "",
          previousCheckpointId: before[thread],
          checkpointId: await headOf(store.saver, thread),
        })),
      ),
    );
    // A run that changes nothing leaves no manifest.
    process.chdir(dir);
    const again = await runCliHere(["repair", ...flagsOf(store), "--apply", "--yes"]).finally(() => process.chdir(cwd));
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain("Manifest:");
    expect(readdirSync(dir)).toEqual([name]);
  });

  it("an existing --manifest file is never overwritten (exit 2, nothing written)", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const { broken } = await seeded(store, { brokenSend: 1, clean: 0 });
    const manifest = manifestPath();
    writeFileSync(manifest, "mine\n");
    const run = await runCliHere(["repair", ...flagsOf(store), "--apply", "--yes", "--manifest", manifest]);
    expect(run.stderr).toBe(
      `langgraph-tool-repair: --manifest ${manifest}: already exists (a manifest is never overwritten)\n`,
    );
    expect(run.code).toBe(2);
    expect(readFileSync(manifest, "utf8")).toBe("mine\n");
    expect(storedProblems(await storedMessages(store.saver, broken[0]), "openai")).not.toEqual([]);
  });
});
