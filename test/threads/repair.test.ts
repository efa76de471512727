/**
 * repairThreads on real stores: live writers are never overwritten, pending work is never dropped, the new
 * checkpoint is written like updateState's, the graph goes on from it (resume and new input), and a stopped
 * or bounded run resumes where it stopped.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  uuid6,
  type BaseCheckpointSaver,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import { afterEach, describe, expect, it } from "vitest";
import { storedProblems } from "../../src/threads/repair-thread";
import { repairThreads, type ThreadRepairOptions, type ThreadRepairReport } from "../../src/threads/repair";
import { REPAIR_METADATA_KEY } from "../../src/threads/write";
import {
  abortedRun,
  buildSeedAgent,
  resultsByTool,
  say,
  seedThreads,
  SeedTools,
  startSeedModel,
  storedMessages,
  threadConfig,
  type SeedModel,
} from "./support/seed";
import { shardOf } from "../../src/threads/source";
import { copyThread, openTestStore, STORE_NAMES, type StoreName } from "./support/stores";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function model(): Promise<SeedModel> {
  const started = await startSeedModel("openai");
  cleanups.push(() => started.stub.close());
  return started;
}

async function repairAll(saver: BaseCheckpointSaver, options: ThreadRepairOptions = {}): Promise<ThreadRepairReport[]> {
  const reports: ThreadRepairReport[] = [];
  for await (const report of repairThreads(saver, options)) reports.push(report);
  return reports;
}

const byThread = (reports: ThreadRepairReport[]) => new Map(reports.map((r) => [r.threadId, r]));
const latest = (saver: BaseCheckpointSaver, thread: string) =>
  saver.getTuple(threadConfig(thread)) as Promise<CheckpointTuple>;
const idOf = (tuple: CheckpointTuple | undefined) => tuple?.config.configurable?.checkpoint_id as string | undefined;

/** `saver` with `getTuple` / `put` intercepted (every other member is the saver's own). */
function intercepted(
  saver: BaseCheckpointSaver,
  overrides: Partial<Pick<BaseCheckpointSaver, "getTuple" | "put">>,
): BaseCheckpointSaver {
  return new Proxy(saver, {
    get(target, property) {
      if (property in overrides) return overrides[property as keyof typeof overrides];
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe.each(STORE_NAMES)("repairThreads on %s", (name: StoreName) => {
  it("a thread a live run writes to while it is being repaired is skipped and left as the live run wrote it", async (context) => {
    const store = await openTestStore(name, context);
    const seedModel = await model();
    const seeded = await seedThreads(store.saver, seedModel, { brokenSend: 2 });
    const [busy, quiet] = seeded.broken;
    // The live agent repairs its own requests (so its run succeeds) and writes to `busy` right before the
    // repair checks whether `busy` moved on. The file saver's scan read does not go through getTuple.
    const live = buildSeedAgent("createAgent", seedModel, new SeedTools(), store.saver, true);
    const checkAt = name === "FileSaver" ? 1 : 2;
    let latestReads = 0;
    const saver = intercepted(store.saver, {
      getTuple: async (config: RunnableConfig) => {
        const { thread_id, checkpoint_id } = config.configurable ?? {};
        if (thread_id === busy && !checkpoint_id && ++latestReads === checkAt)
          await live.invoke(say("still there?"), threadConfig(busy));
        return store.saver.getTuple(config);
      },
    });

    const reports = byThread(await repairAll(saver, { apply: true }));
    expect(reports.get(busy)).toMatchObject({
      status: "skipped",
      reason: expect.stringContaining("a live run is using this thread"),
    });
    expect(reports.get(quiet)?.status).toBe("repaired");
    const reader = store.reopen();
    const busyLatest = await latest(reader, busy);
    expect(busyLatest.metadata?.[REPAIR_METADATA_KEY as keyof CheckpointMetadata]).toBeUndefined(); // the live run's own checkpoint
    expect((await storedMessages(reader, busy)).at(-1)?.content).toMatch(/^answer/);
  });

  it("every earlier checkpoint of the thread reads back as it was: the fix is one more on top", async (context) => {
    const store = await openTestStore(name, context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 1 });
    const [thread] = seeded.broken;
    /** Every checkpoint of the thread, newest first, as stored (its messages serialized as the saver revives them). */
    const history = async (saver: BaseCheckpointSaver) => {
      const tuples: string[] = [];
      for await (const { config, parentConfig, checkpoint, metadata, pendingWrites } of saver.list(
        threadConfig(thread),
      ))
        tuples.push(JSON.stringify({ config, parentConfig, checkpoint, metadata, pendingWrites }));
      return tuples;
    };
    const before = await history(store.reopen()); // read as the later read is, by another process
    const [report] = await repairAll(store.saver, { apply: true });
    expect(report.status).toBe("repaired");
    const after = await history(store.reopen());
    expect(after).toHaveLength(before.length + 1);
    expect(after.slice(1)).toEqual(before);
    expect(JSON.parse(after[0]).config.configurable.checkpoint_id).toBe(report.written?.configurable?.checkpoint_id);
  });

  it("shard i/n: each shard's run repairs the broken threads of its shard, and together they repair every one once", async (context) => {
    const store = await openTestStore(name, context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 1, clean: 1 });
    const broken = [seeded.broken[0]];
    for (let i = 0; i < 9; i++) {
      const copy = `copy-${i}`;
      await copyThread(store.saver, i % 3 ? seeded.broken[0] : seeded.clean[0], copy);
      if (i % 3) broken.push(copy);
    }
    const count = 3;
    const repairedBy = new Map<string, number[]>();
    for (let index = 1; index <= count; index++)
      for (const report of await repairAll(store.saver, { apply: true, shard: { index, count } })) {
        expect(shardOf(report.threadId, count)).toBe(index);
        if (report.status === "repaired")
          repairedBy.set(report.threadId, [...(repairedBy.get(report.threadId) ?? []), index]);
      }
    expect([...repairedBy.keys()].sort()).toEqual(broken.sort());
    for (const [thread, shards] of repairedBy) expect(shards).toEqual([shardOf(thread, count)]);
    expect((await repairAll(store.reopen())).filter((r) => r.found === "broken")).toEqual([]);
  });

  it("a live checkpoint stored between the check and the put is put back on top, so it is never hidden", async (context) => {
    const store = await openTestStore(name, context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 1 });
    const [thread] = seeded.broken;
    const read = await latest(store.saver, thread);
    // A live run made its checkpoint (id) before the repair made its own, and stores it late.
    const liveId = uuid6(-1);
    const liveMessages = [
      ...(read.checkpoint.channel_values.messages as BaseMessage[]),
      new AIMessage({ content: "live answer", id: "live-1" }),
    ];
    const version = store.saver.getNextVersion(read.checkpoint.channel_versions.messages as number);
    const liveCheckpoint: Checkpoint = {
      ...read.checkpoint,
      id: liveId,
      channel_values: { ...read.checkpoint.channel_values, messages: liveMessages },
      channel_versions: { ...read.checkpoint.channel_versions, messages: version },
    };
    const saver = intercepted(store.saver, {
      put: async (config, checkpoint, metadata, newVersions) => {
        if ((metadata as Record<string, unknown>)[REPAIR_METADATA_KEY])
          await store.saver.put(
            read.config,
            liveCheckpoint,
            { source: "loop", step: 99, parents: {} },
            { messages: version },
          );
        return store.saver.put(config, checkpoint, metadata, newVersions);
      },
    });

    const [report] = await repairAll(saver, { apply: true });
    expect(report).toMatchObject({ status: "skipped", reason: expect.stringContaining("it was put back on top") });
    const now = await latest(store.reopen(), thread);
    expect((now.checkpoint.channel_values.messages as BaseMessage[]).at(-1)?.content).toBe("live answer");
    expect(now.metadata).toMatchObject({ source: "loop", step: 99, [REPAIR_METADATA_KEY]: { restored: liveId } });
  });
});

describe("repairThreads", () => {
  it("writes the fix like updateState: one more step, the messages channel at a new version, nothing else changed", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 1 });
    const parent = await latest(store.saver, seeded.broken[0]);
    const [report] = await repairAll(store.saver, { apply: true });
    expect(report.status).toBe("repaired");
    const fixed = await latest(store.saver, seeded.broken[0]);
    expect(idOf({ config: fixed.parentConfig! } as CheckpointTuple)).toBe(idOf(parent));
    const { messages: oldVersion, ...otherVersions } = parent.checkpoint.channel_versions;
    const { messages: newVersion, ...keptVersions } = fixed.checkpoint.channel_versions;
    expect(keptVersions).toEqual(otherVersions);
    // One integer step past the highest version, plus a fraction no live run from the same parent draws.
    const highest = Math.max(...(Object.values(parent.checkpoint.channel_versions) as number[]));
    expect(Math.floor(newVersion as number)).toBe(Math.floor(highest) + 1);
    expect(newVersion).toBeGreaterThan(Math.floor(highest) + 1);
    expect(newVersion).not.toBe(oldVersion);
    expect(fixed.checkpoint.versions_seen).toEqual(parent.checkpoint.versions_seen);
    expect(fixed.metadata).toMatchObject({
      source: "update",
      step: (parent.metadata!.step as number) + 1,
      parents: parent.metadata!.parents,
    });
    expect(fixed.pendingWrites).toEqual([]);
    expect((fixed.metadata as Record<string, unknown>)[REPAIR_METADATA_KEY]).toMatchObject({
      repairs: [
        { action: "salvaged_result", problem: "orphan_call", toolName: "fast" },
        { action: "synthesized_result", problem: "orphan_call", toolName: "slow" },
      ],
      salvaged: [expect.any(String)],
    });
  });

  it("the graph goes on from the fix: a resume answers the message the provider had refused", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const seedModel = await model();
    const seeded = await seedThreads(store.saver, seedModel, { brokenSend: 1 });
    const rejections = seedModel.stub.rejections.length;
    await repairAll(store.saver, { apply: true });
    const agent = buildSeedAgent("createAgent", seedModel, new SeedTools(), store.saver);
    const config = threadConfig(seeded.broken[0]);
    const graph = (agent as unknown as { graph: { getState(c: RunnableConfig): Promise<{ next: string[] }> } }).graph;
    expect((await graph.getState(config)).next).toEqual(["model_request"]); // the refused model step is still pending
    const result = (await agent.invoke(null as never, config)) as { messages: BaseMessage[] };
    expect(result.messages.at(-1)?.content).toMatch(/^answer/);
    expect(seedModel.stub.rejections.length).toBe(rejections);
    const stored = await storedMessages(store.saver, seeded.broken[0]);
    expect(storedProblems(stored, "openai")).toEqual([]);
    // The salvaged result stays; the answered message made the model call the tools again (its script).
    expect(resultsByTool(stored).fast[0]).toEqual({ synthetic: false, content: "fast result for flights" });
  });

  it("a broken thread whose latest checkpoint holds finished results for a resume is skipped, not superseded", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const seedModel = await model();
    const seeded = await seedThreads(store.saver, seedModel, { brokenSend: 1 });
    // A later run (its requests repaired on the fly) is aborted mid-tool: its finished result waits for a resume.
    const tools = new SeedTools();
    await abortedRun(
      buildSeedAgent("createAgent", seedModel, tools, store.saver, true),
      tools,
      store.saver,
      seeded.broken[0],
      true,
    );
    const before = idOf(await latest(store.saver, seeded.broken[0]));
    const [report] = await repairAll(store.saver, { apply: true });
    expect(report).toMatchObject({
      found: "broken",
      status: "skipped",
      reason: expect.stringContaining("pending writes (messages"),
    });
    expect(idOf(await latest(store.saver, seeded.broken[0]))).toBe(before);
  });

  it("stopped by the signal, it ends between threads; run again, it repairs the rest", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 3 });
    const controller = new AbortController();
    const first: ThreadRepairReport[] = [];
    for await (const report of repairThreads(store.saver, { apply: true, concurrency: 1, signal: controller.signal })) {
      first.push(report);
      controller.abort();
    }
    expect(first.map((r) => r.status)).toEqual(["repaired"]);
    const second = await repairAll(store.saver, { apply: true });
    expect(second.map((r) => [r.threadId, r.status])).toEqual(
      seeded.broken.map((t) => [t, t === first[0].threadId ? "unchanged" : "repaired"]),
    );
  });

  it("limit bounds the threads repaired per run; the next run goes on", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    await seedThreads(store.saver, await model(), { brokenSend: 3, clean: 1 });
    const count = (reports: ThreadRepairReport[], status: string) => reports.filter((r) => r.status === status).length;
    expect(count(await repairAll(store.saver, { apply: true, limit: 2, concurrency: 1 }), "repaired")).toBe(2);
    expect(count(await repairAll(store.saver, { apply: true, limit: 2, concurrency: 1 }), "repaired")).toBe(1);
    expect(count(await repairAll(store.saver, { apply: true, limit: 2 }), "repaired")).toBe(0);
  });

  it("a thread whose judgement throws is a failed report for that thread; the run goes on and repairs the others", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 3 });
    const [, bad] = seeded.broken;
    // The stored thread as read, with one message the engine cannot read (its tool_calls getter throws).
    const saver = intercepted(store.saver, {
      getTuple: async (config: RunnableConfig) => {
        const tuple = await store.saver.getTuple(config);
        if (config.configurable?.thread_id === bad && !config.configurable?.checkpoint_id && tuple) {
          const ai = (tuple.checkpoint.channel_values.messages as BaseMessage[]).find((m) => m.getType() === "ai")!;
          Object.defineProperty(ai, "tool_calls", {
            get: () => {
              throw new Error("tool_calls cannot be read");
            },
          });
        }
        return tuple;
      },
    });
    const reports = byThread(await repairAll(saver, { apply: true, concurrency: 1 }));
    expect([...reports.keys()]).toEqual(seeded.broken);
    expect(reports.get(bad)).toMatchObject({
      status: "failed",
      found: "unreadable",
      reason: expect.stringContaining("tool_calls cannot be read"),
    });
    for (const thread of seeded.broken.filter((t) => t !== bad)) expect(reports.get(thread)?.status).toBe("repaired");
    expect(storedProblems(await storedMessages(store.reopen(), bad), "openai")).not.toEqual([]); // left as it was
  });

  it("a dry run reports the fix and writes nothing", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 1, clean: 1 });
    const before = idOf(await latest(store.saver, seeded.broken[0]));
    const reports = byThread(await repairAll(store.saver));
    expect(reports.get(seeded.clean[0])?.status).toBe("unchanged");
    const dry = reports.get(seeded.broken[0])!;
    expect(dry).toMatchObject({ status: "would_repair", found: "broken", checkpointId: before });
    expect(storedProblems(dry.after!, "openai")).toEqual([]);
    expect(idOf(await latest(store.saver, seeded.broken[0]))).toBe(before);
  });

  it("a misspelt option is refused, not read as a dry run: `aply: true` used to report would_repair and write nothing", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    expect(() => repairThreads(store.saver, { aply: true } as ThreadRepairOptions)).toThrow(
      /repairThreads: options\.aply is not an option \(did you mean apply\?\)/,
    );
    expect(() => repairThreads(store.saver, { apply: "yes" } as never)).toThrow(
      /repairThreads: options\.apply is "yes"; expected a boolean/,
    );
  });
});
