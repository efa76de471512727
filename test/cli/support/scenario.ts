/**
 * The end-to-end story the command must tell on any store, run the same way for SQLite, PostgreSQL and a
 * `--saver` module: threads broken by real agent runs are all found (and only they), a dry run writes
 * nothing, `--apply` makes each of them valid with a new checkpoint on top (the parent untouched, the
 * discarded real result back), a second run finds nothing, and each repaired thread answers its next message
 * through the real client against the stub.
 */
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { expect } from "vitest";
import { storedProblems } from "../../../src/threads/repair-thread";
import { name as TOOL_NAME, version as TOOL_VERSION } from "../../../package.json";
import { REPAIR_METADATA_KEY } from "../../../src/threads/write";
import {
  nextMessage,
  resultsByTool,
  seedThreads,
  startSeedModel,
  storedMessages,
  threadConfig,
  type SeedPlan,
  type SeedProvider,
} from "../../threads/support/seed";
import { applyFlags, jsonLines, runCliProcess } from "./run-cli";

export interface StoreUnderTest {
  /** The connection flags of the command (e.g. ["--sqlite", file]). */
  flags: string[];
  /** A saver on the same store in this process; called again after the command wrote (a fresh view). */
  open(): BaseCheckpointSaver;
}

const idOf = (tuple: CheckpointTuple | undefined) => tuple?.config.configurable?.checkpoint_id as string | undefined;
/** What a checkpoint holds, as text: its values, versions, metadata, pending writes and parent. */
const contentOf = (tuple: CheckpointTuple | undefined) =>
  JSON.stringify({
    checkpoint: tuple?.checkpoint,
    metadata: tuple?.metadata,
    pendingWrites: tuple?.pendingWrites,
    parent: tuple?.parentConfig?.configurable?.checkpoint_id,
  });

async function latestIds(saver: BaseCheckpointSaver, threads: string[]): Promise<Record<string, string | undefined>> {
  const ids: Record<string, string | undefined> = {};
  for (const thread of threads) ids[thread] = idOf(await saver.getTuple(threadConfig(thread)));
  return ids;
}

export async function runStoreScenario(
  store: StoreUnderTest,
  provider: SeedProvider,
  plan: SeedPlan,
  cleanups: (() => unknown)[],
): Promise<void> {
  const model = await startSeedModel(provider);
  cleanups.push(() => model.stub.close());
  const seeded = await seedThreads(store.open(), model, plan);
  const all = [...seeded.broken, ...seeded.clean, ...seeded.open];
  const rejectedWhileSeeding = model.stub.rejections.length;
  expect(rejectedWhileSeeding).toBe(seeded.broken.length); // each broken thread's follow-up was refused

  // The parents-to-be, as stored before any repair.
  const before = store.open();
  const parents = new Map<string, { id: string; stored: string }>();
  for (const thread of seeded.broken) {
    const tuple = (await before.getTuple(threadConfig(thread)))!;
    parents.set(thread, { id: idOf(tuple)!, stored: contentOf(tuple) });
  }
  const idsBefore = await latestIds(before, all);

  // scan: every broken thread, and only those.
  const scan = await runCliProcess(["scan", ...store.flags, "--provider", provider, "--json"]);
  expect(scan.stderr).toBe("");
  expect(scan.code).toBe(1);
  const lines = jsonLines(scan.stdout);
  expect(lines.map((l) => l.thread).sort()).toEqual([...all].sort());
  expect(
    lines
      .filter((l) => l.status === "broken")
      .map((l) => l.thread)
      .sort(),
  ).toEqual([...seeded.broken].sort());
  expect(
    lines
      .filter((l) => l.status === "open")
      .map((l) => l.thread)
      .sort(),
  ).toEqual([...seeded.open].sort());
  expect(
    lines
      .filter((l) => l.status === "clean")
      .map((l) => l.thread)
      .sort(),
  ).toEqual([...seeded.clean].sort());

  // The summary, as a person reads it.
  const summary = await runCliProcess(["scan", ...store.flags, "--provider", provider]);
  expect(summary.code).toBe(1);
  expect(summary.stdout).toMatch(new RegExp(`\\b${seeded.broken.length}  broken`));
  expect(summary.stdout).toContain("orphan_call");
  expect(summary.stdout).toContain("Next: repair with the same flags");

  // repair, dry run: each fix said, nothing written.
  const dry = await runCliProcess(["repair", ...store.flags, "--provider", provider]);
  expect(dry.code).toBe(1);
  for (const thread of seeded.broken) {
    const salvaged = seeded.salvageable.includes(thread) ? ", 1 real result put back from pending writes" : "";
    expect(dry.stdout).toMatch(new RegExp(`^thread ${thread}: would repair \\(\\d+ repairs${salvaged}\\) on top`, "m"));
  }
  expect(await latestIds(store.open(), all)).toEqual(idsBefore);

  // repair --apply.
  const applied = await runCliProcess(["repair", ...store.flags, "--provider", provider, ...applyFlags()]);
  expect(applied.stderr).toBe("");
  expect(applied.code).toBe(0);
  for (const thread of seeded.broken) expect(applied.stdout).toContain(`thread ${thread}: repaired`);

  const after = store.open();
  for (const thread of seeded.broken) {
    const tuple = (await after.getTuple(threadConfig(thread)))!;
    const parent = parents.get(thread)!;
    // A new checkpoint on top, written as an update, naming this tool; its parent is the old latest, unchanged.
    expect(idOf(tuple)).not.toBe(parent.id);
    expect(idOf({ config: tuple.parentConfig! } as CheckpointTuple)).toBe(parent.id);
    expect(tuple.metadata).toMatchObject({
      source: "update",
      [REPAIR_METADATA_KEY]: { tool: TOOL_NAME, version: TOOL_VERSION, repaired: parent.id },
    });
    expect(
      contentOf(
        await after.getTuple({ configurable: { thread_id: thread, checkpoint_ns: "", checkpoint_id: parent.id } }),
      ),
    ).toBe(parent.stored);
    // Valid, and the finished result that LangGraph discarded is back as the real one.
    const messages = await storedMessages(after, thread);
    expect(storedProblems(messages, provider)).toEqual([]);
    const results = resultsByTool(messages);
    expect(results.slow).toEqual([expect.objectContaining({ synthetic: true })]);
    if (seeded.salvageable.includes(thread))
      expect(results.fast).toEqual([{ synthetic: false, content: "fast result for flights" }]);
    else expect(results.fast).toEqual([expect.objectContaining({ synthetic: true })]); // one ToolNode task: nothing was stored
  }
  const idsAfter = await latestIds(after, all);
  for (const thread of [...seeded.clean, ...seeded.open]) expect(idsAfter[thread]).toBe(idsBefore[thread]);

  // A second run finds nothing and writes nothing.
  const rescan = await runCliProcess(["scan", ...store.flags, "--provider", provider]);
  expect(rescan.code).toBe(0);
  expect(rescan.stdout).toMatch(/\b0 {2}broken/);
  const again = await runCliProcess(["repair", ...store.flags, "--provider", provider, ...applyFlags()]);
  expect(again.code).toBe(0);
  expect(again.stdout).toContain("nothing to repair");
  expect(await latestIds(store.open(), all)).toEqual(idsAfter);

  // Each repaired thread answers its next message through the real client (Bedrock: with the request-level
  // shaping a stored structural repair leaves to the agent, see docs/cli.md).
  for (const thread of seeded.broken) {
    const answer = await nextMessage(seeded.kinds.get(thread)!, model, store.open(), thread, provider === "bedrock");
    expect(answer).toMatch(/^answer \d+$/);
  }
  expect(model.stub.rejections.length).toBe(rejectedWhileSeeding);
}
