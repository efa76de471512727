/**
 * Each failure issue 13 lists, pinned on its own, with its cause. A test written `it.fails` asserts what must
 * hold and fails today; its comment names the cause (file and line, ours or LangGraph's or the saver's) and the
 * fix. When the cause is fixed the `it.fails` starts failing: turn it into `it`.
 *
 * Savers: MemorySaver, SqliteSaver, and PostgresSaver on 127.0.0.1:5432 (skipped with the reason when
 * unreachable, failing under LGTR_REQUIRE_SERVICES=1). The model is the real ChatOpenAI against the strict stub.
 */
import { HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { emptyCheckpoint, type BaseCheckpointSaver, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { withToolCallRepair } from "../../src/integrations/checkpointer";
import { isSyntheticResult } from "../../src/messages/inspect";
import { postgresSkipReason } from "../support/services";
import { openAIModel, startOpenAIStub } from "../support/stubs";
import {
  buildSurface,
  gateWrites,
  HeldTools,
  openSaver,
  runSweepCase,
  TOOL_NAMES,
  toolsThenAnswer,
  type SaverName,
  type SweepCase,
} from "./support/abort-sweep";

const postgresSkip = await postgresSkipReason();
const SAVERS: { name: SaverName; skip?: string }[] = [
  { name: "MemorySaver" },
  { name: "SqliteSaver" },
  { name: "PostgresSaver", skip: postgresSkip },
];
const skipNote = (skip?: string) => (skip ? ` (skipped: ${skip})` : "");

/** One sweep case on a fresh saver of its own. */
async function sweepCase(c: SweepCase) {
  const handle = await openSaver(c.saver, "known");
  try {
    return await runSweepCase(c, handle.saver, "t");
  } finally {
    await handle.dispose();
  }
}

const OPENAI = { provider: "openai" } as const;

describe.each(SAVERS)("known failures on $name", ({ name, skip }) => {
  describe.skipIf(skip !== undefined)(`issue 13 failures${skipNote(skip)}`, () => {
    // Was failing (ours, fixed in checkpointer.ts `put`): with `durability: "exit"` LangGraph writes no
    // new-input checkpoint (pregel/loop.js `_putCheckpoint`: `doCheckpoint` is false until the exit write), so
    // the wrapper never saw an abandoning input; the run's only write (loop.js `finishAndHandleError`) held the
    // placeholders the middleware / node had persisted, looked clean, and was stored as it was. The wrapper now
    // looks up the real results of such placeholders in the put's parent's pending writes.
    it.each(["createAgent+middleware", "StateGraph+node"] as const)(
      "(a) durability exit, %s + wrapper: a finished sibling's result survives a new input",
      async (surface) => {
        const outcome = await sweepCase({
          saver: name,
          surface,
          wrap: true,
          durability: "exit",
          point: "tools 2/3",
          continuation: "new input",
          repairOptions: OPENAI,
        });
        expect(outcome.failures).toEqual([]);
      },
    );

    it("(a) the same with durability sync and async: the new-input checkpoint is written and the result salvaged", async () => {
      for (const durability of ["sync", "async"] as const) {
        const outcome = await sweepCase({
          saver: name,
          surface: "createAgent+middleware",
          wrap: true,
          durability,
          point: "tools 2/3",
          continuation: "new input",
          repairOptions: OPENAI,
        });
        expect(outcome.failures).toEqual([]);
      }
    });

    // Was failing (LangGraph, put back by the wrapper): pregel/loop.js `_first` (new input branch, about line
    // 920) applies the pending `__start__` task with no writes and the new input overwrites the `__start__`
    // channel, so the message of a run aborted before its first step is dropped. The wrapper now notes such an
    // input when the run loads the checkpoint and puts it back, before the new input, in each of the run's
    // puts. Without the wrapper it is still lost (sweep cause `start-dropped`).
    it("(c) a new input after an abort before the first step keeps the earlier user message", async () => {
      const outcome = await sweepCase({
        saver: name,
        surface: "createAgent+middleware",
        wrap: true,
        durability: "sync",
        point: "before first step",
        continuation: "new input",
        repairOptions: OPENAI,
      });
      expect(outcome.failures).toEqual([]);
    });

    // Was failing (ours): the default `provider: "strict"` profile merged two user messages in a row (Bedrock
    // B6), and the middleware's `beforeAgent` persisted the merge: the second message lost its id and text of
    // its own. Fixed: only structural repairs are stored; alternation is request shaping.
    it("(d) default options: two user messages in a row are stored as sent, each with its own id", async () => {
      const outcome = await sweepCase({
        saver: name,
        surface: "createAgent+middleware",
        wrap: true,
        durability: "sync",
        point: "first model call",
        continuation: "new input",
      });
      expect(outcome.failures).toEqual([]);
    });

    // Cause (LangGraph / @langchain/core): an aborted run's invoke() rejects as soon as the signal fires
    // (@langchain/core utils/stream.js `raceWithSignal` around each `next()` of the graph's stream), while the
    // Pregel loop goes on in the background: it still writes its last checkpoint (pregel/index.js
    // `createAndRunLoop` awaits `loop.checkpointerPromises` only after the caller has been answered; with
    // `durability: "exit"` this is the run's only write, loop.js `finishAndHandleError`). The caller cannot
    // await the end of the run. With MemorySaver and SqliteSaver the write lands within a few promise hops;
    // with PostgreSQL it takes a round trip, and the next run on the thread starts before it (sweep with
    // `immediate: true`). The writes are held back here so the order is the same on every saver.
    // Fix: LangGraph should settle invoke()/stream() only after the loop has finished writing. Through the
    // wrapper the next run waits for those writes in the same process (thread-order.ts; "(e) through the
    // wrapper" below); a read of the saver itself, as here, does not (see docs/checkpointer.md).
    it.fails("(R) when an aborted invoke() rejects, the run's last checkpoint is stored", async () => {
      const handle = await openSaver(name, "race");
      const stub = await startOpenAIStub({
        script: () => ({ toolCalls: TOOL_NAMES.map((n) => ({ name: n, args: { q: n } })) }),
      });
      try {
        const gate = gateWrites(handle.saver);
        const tools = new HeldTools();
        const graph = buildSurface("StateGraph+node", openAIModel(stub), tools, gate.saver, OPENAI);
        const controller = new AbortController();
        const run = graph.invoke(
          { messages: [new HumanMessage({ content: "first", id: "h1" })] },
          { configurable: { thread_id: "t" }, durability: "exit", signal: controller.signal },
        );
        await tools.when(() => tools.started.length === 3);
        gate.hold();
        controller.abort();
        await expect(run).rejects.toThrow(/abort/i);
        const stored = await handle.saver.getTuple({ configurable: { thread_id: "t" } });
        gate.release();
        // The first message and the model's calls: what the run held when it was aborted.
        expect((stored?.checkpoint.channel_values.messages as unknown[] | undefined)?.length ?? 0).toBe(2);
      } finally {
        await stub.close();
        await handle.dispose();
      }
    });

    // Cause (LangGraph): the same early rejection, then `_first` (loop.js about line 936) throws
    // EmptyInputError for a null input on a thread that has no checkpoint yet: the aborted run's only write
    // (durability "exit") has not landed. With PostgreSQL this happens without holding anything back. On
    // MemorySaver the same overlap shows as the MemorySaver race pinned below ("undefined is not iterable").
    it.fails('(e) bare saver, exit: a resume right after the aborted invoke() rejects runs (no "Received no input writes")', async () => {
      const handle = await openSaver(name, "race");
      const stub = await startOpenAIStub({
        script: () => ({ toolCalls: TOOL_NAMES.map((n) => ({ name: n, args: { q: n } })) }),
      });
      try {
        const gate = gateWrites(handle.saver);
        const tools = new HeldTools();
        const graph = buildSurface("StateGraph+node", openAIModel(stub), tools, gate.saver, OPENAI);
        const controller = new AbortController();
        const config = { configurable: { thread_id: "t" }, durability: "exit" as const };
        const run = graph.invoke(
          { messages: [new HumanMessage({ content: "first", id: "h1" })] },
          { ...config, signal: controller.signal },
        );
        await tools.when(() => tools.started.length === 3);
        gate.hold();
        controller.abort();
        await expect(run).rejects.toThrow(/abort/i);
        tools.hold = false;
        const resumed = graph.invoke(null, config).then(
          () => undefined,
          (error: Error) => error.message,
        );
        gate.release();
        expect(await resumed).toBeUndefined();
      } finally {
        await stub.close();
        await handle.dispose();
      }
    });

    // Was failing through the wrapper as well (the same (e), the writes held below the wrapper). Fixed in
    // thread-order.ts: a read of the thread's head waits while an aborted run of the thread still has writes
    // under way (in this process), so the resume reads the aborted run's only checkpoint. (R) stays: it reads
    // the saver itself, which nothing of ours stands in front of.
    it("(e) through the wrapper: a resume started right after the aborted invoke() rejects runs", async () => {
      const handle = await openSaver(name, "race");
      const stub = await startOpenAIStub({
        script: (request) => {
          const messages = (request as { messages: { role: string }[] }).messages;
          const calls = TOOL_NAMES.map((n) => ({ name: n, args: { q: n } }));
          return messages.at(-1)?.role === "user" ? { toolCalls: calls } : { text: "answer" };
        },
      });
      const gate = gateWrites(handle.saver);
      try {
        const tools = new HeldTools();
        const graph = buildSurface(
          "StateGraph+node",
          openAIModel(stub),
          tools,
          withToolCallRepair(gate.saver, OPENAI),
          OPENAI,
        );
        const controller = new AbortController();
        const config = { configurable: { thread_id: "t" }, durability: "exit" as const };
        const input = { messages: [new HumanMessage({ content: "first", id: "h1" })] };
        const run = graph.invoke(input, { ...config, signal: controller.signal });
        await tools.when(() => tools.started.length === 3);
        gate.hold();
        controller.abort();
        await expect(run).rejects.toThrow(/abort/i);
        tools.hold = false;
        const resumed = graph.invoke(null, config).then(
          () => undefined,
          (error: Error) => error.message,
        );
        for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
        gate.release();
        expect(await resumed).toBeUndefined();
        const tuple = await handle.saver.getTuple({ configurable: { thread_id: "t" } });
        const stored = (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
        expect(stored.map((m) => m.getType())).toEqual(["human", "ai", "tool", "tool", "tool", "ai"]);
        expect(stub.rejections).toEqual([]);
      } finally {
        gate.release();
        await stub.close();
        await handle.dispose();
      }
    });
  });
});

/** A checkpoint of `thread` whose messages channel is at `version`. */
function checkpointWith(messages: BaseMessage[], version: number): Checkpoint {
  return { ...emptyCheckpoint(), channel_values: { messages }, channel_versions: { messages: version } };
}

describe.each(SAVERS)("two branches of one thread on $name", ({ name, skip }) => {
  // Cause (saver): @langchain/langgraph-checkpoint-postgres dist/index.js `put` stores each channel as a blob
  // keyed by (thread, namespace, channel, version), with `ON CONFLICT ... DO NOTHING` (dist/sql.js
  // UPSERT_CHECKPOINT_BLOBS_SQL), and versions are the integers of BaseCheckpointSaver.getNextVersion
  // (langgraph-checkpoint dist/base.js about line 185). Two checkpoints of the same thread that write the same
  // channel at the same version (two branches from one parent: two runs that overlap, as after an abort, or
  // two workers) share one blob: the second one silently reads the first one's value. That is how a stored
  // thread ends "without the follow-up user message and with an unanswered call". The Python saver avoids it
  // with versions that carry a random part (get_next_version). Fix: the saver (versions unique per branch).
  // MemorySaver and SqliteSaver store every checkpoint's values whole and keep both branches apart.
  const check = name === "PostgresSaver" ? it.fails : it;
  describe.skipIf(skip !== undefined)(`branches${skipNote(skip)}`, () =>
    check("each checkpoint reads back the messages it was written with", async () => {
      const handle = await openSaver(name, "branches");
      try {
        const root = await handle.saver.put(
          { configurable: { thread_id: "t", checkpoint_ns: "" } },
          checkpointWith([new HumanMessage({ content: "hi", id: "h1" })], 1),
          { source: "input", step: -1, parents: {} },
          { messages: 1 },
        );
        const branch = async (text: string) => {
          const checkpoint = checkpointWith(
            [new HumanMessage({ content: "hi", id: "h1" }), new HumanMessage({ content: text, id: text })],
            2,
          );
          const config = await handle.saver.put(
            root,
            checkpoint,
            { source: "loop", step: 0, parents: {} },
            { messages: 2 },
          );
          return config;
        };
        await branch("from run A");
        const b = await branch("from run B");
        const readB = (await handle.saver.getTuple(b))?.checkpoint.channel_values.messages as BaseMessage[];
        expect(readB.map((m) => m.content)).toEqual(["hi", "from run B"]);
      } finally {
        await handle.dispose();
      }
    }),
  );
});

// Cause (checkpoint package): @langchain/langgraph-checkpoint 1.2.2 dist/memory.js `put` creates the thread's
// namespace object (line 228) before it awaits serialization (line 229) and stores the checkpoint after it; a
// `getTuple` of the latest checkpoint in between takes the newest key of an empty object (line 151) and
// destructures undefined: "undefined is not iterable". Seen in the sweep when a run starts while an aborted
// one is still writing a thread's first checkpoint. Fix (upstream): build the entry before publishing it.
it.fails("MemorySaver: getTuple while the first checkpoint of a thread is being stored answers without throwing", async () => {
  const saver: BaseCheckpointSaver = new MemorySaver();
  const writing = saver.put(
    { configurable: { thread_id: "t", checkpoint_ns: "" } },
    checkpointWith([new HumanMessage("hi")], 1),
    { source: "input", step: -1, parents: {} },
    { messages: 1 },
  );
  const read = saver.getTuple({ configurable: { thread_id: "t" } });
  await writing;
  await expect(read).resolves.toBeDefined();
});

describe.each(SAVERS)("a wrapped $name under an agent compiled with checkpointer: true", ({ name, skip }) => {
  // Was failing (ours, fixed in checkpointer.ts): the wrapper looked for real results only in the pending
  // writes of a put's own parent, per namespace. The subgraph's finished tool results are pending writes in
  // the subgraph's namespace; the parent graph stores the subgraph's returned (stale) list, placeholders
  // included, in namespace "". A result salvaged in one namespace of a thread now also replaces the
  // placeholder in the thread's other namespaces (remembered per process: parent and subgraph run together).
  describe.skipIf(skip !== undefined)(`subgraph${skipNote(skip)}`, () =>
    it("(b) the parent's state holds the finished sibling's real result, not a placeholder", async () => {
      const handle = await openSaver(name, "subgraph");
      const stub = await startOpenAIStub({ script: toolsThenAnswer });
      try {
        const tools = new HeldTools();
        const agent = buildSurface(
          "StateGraph+node",
          openAIModel(stub),
          tools,
          true as unknown as BaseCheckpointSaver,
          OPENAI,
        );
        const parent = new StateGraph(MessagesAnnotation)
          .addNode("agent", agent as never)
          .addEdge(START, "agent")
          .addEdge("agent", END)
          .compile({ checkpointer: withToolCallRepair(handle.saver, OPENAI) });
        const config = { configurable: { thread_id: "t" } };
        const controller = new AbortController();
        const first = parent
          .invoke(
            { messages: [new HumanMessage({ content: "first", id: "h1" })] },
            { ...config, signal: controller.signal },
          )
          .catch(() => undefined);
        await tools.when(() => tools.started.length === 3);
        const finished = tools.started[0];
        tools.release(finished);
        // Wait until the finished call's result is a pending write somewhere in the thread (the agent's namespace).
        for (let turn = 0; turn < 10_000 && !(await resultStored(handle.saver, finished)); turn++)
          await new Promise((r) => setImmediate(r));
        controller.abort();
        await first;
        for (let turn = 0; turn < 50; turn++) await new Promise((r) => setImmediate(r));
        tools.hold = false;
        await parent.invoke({ messages: [new HumanMessage({ content: "second", id: "h2" })] }, config);

        const state = (await parent.getState(config)).values.messages as BaseMessage[];
        const result = state.find((m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === finished);
        expect(result && isSyntheticResult(result)).toBe(false);
        expect(result?.content).toMatch(/result for/);
        // As stored in the parent's namespace, not only as read back through the wrapper.
        const stored = ((await handle.saver.getTuple(config))?.checkpoint.channel_values.messages ??
          []) as BaseMessage[];
        const storedResult = stored.find(
          (m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === finished,
        );
        expect(storedResult && !isSyntheticResult(storedResult) && storedResult.content).toMatch(/result for/);
      } finally {
        await stub.close();
        await handle.dispose();
      }
    }),
  );
});

/** True when some checkpoint of thread "t", in any namespace, has a pending write with the call's real result. */
async function resultStored(saver: BaseCheckpointSaver, callId: string): Promise<boolean> {
  for await (const tuple of saver.list({ configurable: { thread_id: "t" } })) {
    for (const [, channel, value] of tuple.pendingWrites ?? []) {
      if (channel !== "messages") continue;
      for (const m of Array.isArray(value) ? value : [value])
        if (ToolMessage.isInstance(m) && m.tool_call_id === callId) return true;
    }
  }
  return false;
}
