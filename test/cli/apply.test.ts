/**
 * Writing safely by hand: `repair --apply` asks first (with the count) on a terminal, refuses without one unless
 * `--yes`, lists what it changed in a manifest, and `revert --manifest` undoes it as new checkpoints (nothing
 * deleted), skipping a thread that moved on. Real SqliteSaver files and PostgresSaver schemas, seeded by real agent
 * runs (ChatOpenAI against the strict stub).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { afterEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../src/cli/main";
import { storedProblems } from "../../src/threads/repair-thread";
import { REPAIR_METADATA_KEY } from "../../src/threads/write";
import { POSTGRES_URL } from "../support/services";
import { nextMessage, seedThreads, startSeedModel, storedMessages, threadConfig } from "../threads/support/seed";
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

async function checkpointIds(saver: BaseCheckpointSaver, thread: string) {
  const ids: string[] = [];
  for await (const tuple of saver.list(threadConfig(thread))) ids.push(tuple.config.configurable?.checkpoint_id);
  return ids;
}

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

  it("Ctrl-C at the question: nothing written, exit 130 (stopped), not 1 (declined)", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const { broken } = await seeded(store, { brokenSend: 1, clean: 0 });
    const head = await headOf(store.saver, broken[0]);
    const manifest = manifestPath();
    const stop = new AbortController();
    let stdout = "";
    const stdin = Object.assign(new PassThrough(), { isTTY: true }); // nobody answers
    const write = (t: string) => ((stdout += t), t.includes("[y/N]") && stop.abort(), true);
    const run = await runCliHere(["repair", ...flagsOf(store), "--apply", "--manifest", manifest], {
      stdin,
      stdout: { isTTY: true, write },
      signal: stop.signal,
    });
    expect(stdout).toContain("[y/N] Nothing written.");
    expect(run.code).toBe(130);
    expect(await headOf(store.saver, broken[0])).toBe(head);
    expect(existsSync(manifest)).toBe(false);
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
    expect(run.stdout).toContain(
      `Manifest: ${name} (2 threads changed); undo with: langgraph-tool-repair revert <the same store flags> --manifest ${name}\n`,
    );
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

  it("revert: a missing manifest, a directory or a line that is not one is a usage error (exit 2)", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    await seeded(store, { brokenSend: 0, clean: 1 });
    const bad = manifestPath();
    writeFileSync(bad, '{"thread":"a","namespace":"","previousCheckpointId":"p","checkpointId":"c"}\n{"thread":"b"}\n');
    for (const [path, says] of [
      [`${bad}.missing`, `--manifest: no such file: ${bad}.missing`],
      [tmpdir(), `--manifest: no such file: ${tmpdir()}`],
      [bad, `--manifest ${bad}: line 2 is not a manifest line (thread, namespace, previousCheckpointId, checkpointId)`],
    ])
      expect(await runCliHere(["revert", ...flagsOf(store), "--manifest", path, "--yes"])).toEqual({
        code: 2,
        stdout: "",
        stderr: `langgraph-tool-repair: ${says}\n`,
      });
    expect((await runCliHere(["revert", ...flagsOf(store)])).stderr).toContain("revert needs --manifest FILE");
  });
});

describe("revert asks before writing", () => {
  it("asks with the manifest's count: no writes nothing (exit 1); no terminal, no --yes: exit 2", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const { broken } = await seeded(store);
    const manifest = manifestPath();
    expect((await runCliHere(["repair", ...flagsOf(store), "--apply", "--yes", "--manifest", manifest])).code).toBe(0);
    const repaired = await Promise.all(broken.map((thread) => headOf(store.saver, thread)));
    const argv = ["revert", ...flagsOf(store), "--manifest", manifest];

    const declined = await atTerminal(argv, "no\n");
    expect(declined.stdout).toContain(
      `Revert 2 threads in SQLite ${store.file} to what they held before the repair? [y/N] `,
    );
    expect(declined.stdout).toContain("Nothing written.");
    expect(declined.code).toBe(1);
    const refused = await runCliHere(argv);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("revert writes to the store and there is no terminal to confirm on: add --yes");
    expect(await Promise.all(broken.map((thread) => headOf(store.saver, thread)))).toEqual(repaired);

    const accepted = await atTerminal(argv, "yes\n");
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toMatch(/: 2 reverted, 0 skipped, 0 failed\n$/);
  });
});

describe.each(["SqliteSaver", "PostgresSaver"] as const)("revert on %s", (name) => {
  const title = "apply, then revert: each head holds its original messages again as a new checkpoint, history kept";
  it(`${title}; a thread that moved on is skipped (exit 1)`, async (context) => {
    const store = await openTestStore(name, context);
    const { broken, clean, kinds, model } = await seeded(store, { brokenSend: 3, clean: 1 });
    const flags = flagsOf(store);
    const original = new Map<string, { head: string; messages: string; ids: string[] }>();
    for (const thread of broken)
      original.set(thread, {
        head: await headOf(store.saver, thread),
        messages: JSON.stringify(await storedMessages(store.saver, thread)),
        ids: await checkpointIds(store.saver, thread),
      });
    const manifest = manifestPath();
    const applied = await runCliHere(["repair", ...flags, "--apply", "--yes", "--manifest", manifest]);
    expect(applied.code).toBe(0);
    const repairedHeads = new Map(
      await Promise.all(broken.map(async (t) => [t, await headOf(store.saver, t)] as const)),
    );

    // One thread goes on after the repair: the agent answers its next message.
    const [moved, ...others] = [...broken].sort();
    await expect(nextMessage(kinds.get(moved)!, model, store.saver, moved, false)).resolves.toMatch(/^answer/);
    const movedHead = await headOf(store.saver, moved);

    const reverted = await runCliHere(["revert", ...flags, "--manifest", manifest, "--yes"]);
    expect(reverted.stderr).toBe("");
    expect(reverted.code).toBe(1);
    expect(reverted.stdout).toContain(
      `thread ${moved}: skipped: it moved on since the repair: its head is ${movedHead}, not ${repairedHeads.get(moved)}`,
    );
    expect(reverted.stdout).toMatch(/: 2 reverted, 1 skipped, 0 failed\n$/);
    expect(await headOf(store.saver, moved)).toBe(movedHead);

    const reader = store.reopen();
    for (const thread of others) {
      const { head, messages, ids } = original.get(thread)!;
      const now = (await reader.getTuple(threadConfig(thread)))!;
      const nowId = now.config.configurable?.checkpoint_id;
      expect(reverted.stdout).toContain(`thread ${thread}: reverted; new checkpoint ${nowId} holds what ${head} held`);
      // What the head holds is what the head before the repair held, message for message.
      expect(JSON.stringify(now.checkpoint.channel_values.messages)).toBe(messages);
      // A new checkpoint on top of the repair's, which is on top of the old head: nothing deleted.
      expect(now.parentConfig?.configurable?.checkpoint_id).toBe(repairedHeads.get(thread));
      expect(now.metadata).toMatchObject({
        source: "update",
        [REPAIR_METADATA_KEY]: { reverted: repairedHeads.get(thread), restores: head },
      });
      expect(await checkpointIds(reader, thread)).toEqual([nowId, repairedHeads.get(thread), ...ids]);
    }
    // The reverted threads are broken again, as before the repair; the clean one was never touched.
    const scan = await runCliHere(["scan", ...flags, "--json"]);
    const status = Object.fromEntries(
      scan.stdout
        .trim()
        .split("\n")
        .map((l) => [JSON.parse(l).thread, JSON.parse(l).status]),
    );
    expect(status).toEqual({
      ...Object.fromEntries(others.map((t) => [t, "broken"])),
      [moved]: "clean",
      [clean[0]]: "clean",
    });

    // Reverting again: every thread moved on since (the revert is their head now); nothing written.
    const twice = await runCliHere(["revert", ...flags, "--manifest", manifest, "--yes", "--json"]);
    expect(twice.code).toBe(1);
    expect(
      twice.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).status),
    ).toEqual(["skipped", "skipped", "skipped"]);
  });
});
