/**
 * Stored-thread repair (src/threads/repair-thread.ts): the repairer every stored fix uses, the judgements of a
 * stored thread, `repairStoredMessages` (the offline fix) and `repairThread` through a compiled graph.
 */
import { HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { afterEach, describe, expect, it } from "vitest";
import { findToolCallProblems } from "../../src/engine";
import { isSyntheticResult } from "../../src/messages/inspect";
import {
  awaitsResume,
  createStoredRepairer,
  repairStoredMessages,
  repairThread,
  storedProblems,
  type StoredRepairContext,
  type StoredRepairOptions,
} from "../../src/threads/repair-thread";
import type { ToolCallRepair } from "../../src/types";
import { ai, aiWithCalls, human, shape, toolResult } from "../support/builders";
import { errorOf, inputError, rejectionOf, revokedObject, throwingAt, throwingObject } from "../support/hostile";
import { pinnedTo } from "../support/versions";
import {
  buildAgent,
  firstCallIds,
  PROVIDER_NAMES,
  problemsOf,
  runAbortedMidTool,
  SERVER_SAVER_KINDS,
  startStubbedModel,
  storedThread,
  threadConfig,
  ToolBench,
  toolResults,
} from "../integrations/support/checkpoint-scenarios";

const valid = (messages: Parameters<typeof findToolCallProblems>[0]) =>
  findToolCallProblems(messages, { provider: "openai", trailingIsProblem: false });

/** One stored repair under `options`, knowing `context`. */
const repairStored = (messages: BaseMessage[], options: StoredRepairOptions = {}, context: StoredRepairContext = {}) =>
  createStoredRepairer(options).repair(messages, context);

describe("createStoredRepairer", () => {
  it("returns the very input array for a clean history, and for one that only ends on open calls", () => {
    const clean = [human(), aiWithCalls("a"), toolResult("a"), ai()];
    expect(repairStored(clean).messages).toBe(clean);
    const open = [human(), aiWithCalls("a", "b"), toolResult("a")];
    expect(repairStored(open)).toEqual({ messages: open, repairs: [], salvaged: [] });
  });

  it("answers an orphan call that is not the last exchange", () => {
    const history = [human(), aiWithCalls("a"), human("next"), ai("fine")];
    const { messages, repairs } = repairStored(history, { provider: "openai" });
    expect(shape(messages)).toBe("human, ai[a], tool(a), human, ai");
    expect(repairs.map((r) => r.action)).toEqual(["synthesized_result"]);
    expect(valid(messages)).toEqual([]);
  });

  it("keeps the last exchange untouched while it has unanswered calls, repairing only what is before it", () => {
    const last = aiWithCalls("b");
    const steer = human("steering");
    const history = [human(), aiWithCalls("a"), human("next"), last, steer];
    const { messages } = repairStored(history, { provider: "openai" });
    expect(shape(messages)).toBe("human, ai[a], tool(a), human, ai[b], human");
    expect(messages.slice(-2)).toEqual([last, steer]);
    expect(messages[4]).toBe(last);
  });

  it("drops duplicate results and converts orphan results even while the last exchange is open", () => {
    const history = [
      human(),
      aiWithCalls("a"),
      toolResult("a", "same"),
      toolResult("a", "same"),
      toolResult("ghost"),
      human(),
      aiWithCalls("b"),
    ];
    const { messages, repairs } = repairStored(history, { provider: "openai" });
    expect(shape(messages)).toBe("human, ai[a], tool(a), human, human, ai[b]");
    expect(repairs.map((r) => r.action).sort()).toEqual(["converted_result", "dropped_result"]);
  });

  it("with closeOpen, closes the exchange the history ends on", () => {
    const { messages } = repairStored(
      [human(), aiWithCalls("a", "b"), toolResult("a")],
      { provider: "openai" },
      { closeOpen: true },
    );
    expect(shape(messages)).toBe("human, ai[a,b], tool(a), tool(b)");
    expect(isSyntheticResult(messages[3])).toBe(true);
  });

  it("does not protect a last exchange whose open calls were all abandoned", () => {
    const history = [human(), aiWithCalls("a"), human("new input")];
    expect(repairStored(history, { provider: "openai" }).repairs).toEqual([]);
    const repaired = repairStored(history, { provider: "openai" }, { abandoned: new Set(["a"]) });
    expect(shape(repaired.messages)).toBe("human, ai[a], tool(a), human");
  });

  it("puts salvaged real results back instead of placeholders, and replaces placeholders already there", () => {
    const real = toolResult("a", "real a");
    const salvage = new Map([["a", real]]);
    const closed = repairStored([human(), aiWithCalls("a", "b")], { provider: "openai" }, { closeOpen: true, salvage });
    expect(shape(closed.messages)).toBe("human, ai[a,b], tool(a), tool(b)");
    expect(closed.messages[2]).toBe(real);
    expect(isSyntheticResult(closed.messages[3])).toBe(true);
    expect(closed.salvaged).toEqual(["a"]);
    expect(closed.repairs[0]).toMatchObject({ action: "salvaged_result", toolCallId: "a", index: 1 });

    const withPlaceholders = closed.messages.map((m, i) => (i === 2 ? placeholderFor("a") : m));
    const upgraded = repairStored(withPlaceholders, { provider: "openai" }, { salvage });
    expect(upgraded.messages[2]).toBe(real);
    expect(upgraded.messages).toHaveLength(4);
  });

  it("leaves calls that already have a real result alone", () => {
    const history = [human(), aiWithCalls("a"), toolResult("a", "kept"), ai()];
    const result = repairStored(history, {}, { salvage: new Map([["a", toolResult("a", "other")]]) });
    expect(result.messages).toBe(history);
    expect(result.repairs).toEqual([]);
  });
});

function placeholderFor(id: string): ToolMessage {
  return new ToolMessage({
    content: "did not run",
    tool_call_id: id,
    status: "error",
    id: `tool-repair-${id}`,
    additional_kwargs: { tool_call_repair: { synthetic: true, reason: "orphan_call" } },
  });
}

describe("createStoredRepairer on values that are not messages", () => {
  it("leaves them as they are (another reducer's data)", () => {
    const values = ["hi", { role: "user", content: "x" }] as never[];
    expect(repairStored(values).messages).toBe(values);
  });
});

describe("createStoredRepairer: options are the engine's", () => {
  it("an unknown provider is an input error naming it", () => {
    expect(errorOf(() => createStoredRepairer({ provider: "gpt" } as never))).toMatchObject(
      inputError("options.provider"),
    );
  });
});

describe("repairStoredMessages", () => {
  it("a list holding what is not a LangChain message is an input error naming the index (it came back unchanged)", () => {
    expect(errorOf(() => repairStoredMessages([null] as never))).toMatchObject({
      ...inputError("messages", "messages[0] is null, not a LangChain message"),
      index: 0,
    });
    expect(errorOf(() => repairStoredMessages([human(), { role: "user", content: "x" }] as never))).toMatchObject({
      index: 1,
    });
    expect(errorOf(() => repairStoredMessages([human(), , ai()] as never))).toMatchObject({
      ...inputError("messages", "messages[1] is a hole"),
      index: 1,
    });
    // A throwing getter is no realistic input: the entry's boundary answers for it, naming the function.
    expect(errorOf(() => repairStoredMessages(throwingAt([human(), ai()], 1)))).toMatchObject({
      ...inputError("arguments", "repairStoredMessages: arguments could not be read (IDX)"),
      cause: expect.any(Error),
    });
    expect(errorOf(() => repairStoredMessages(null as never))).toMatchObject(
      inputError("messages", "repairStoredMessages: messages is null"),
    );
  });

  it("options are checked: salvage is a Map", () => {
    expect(errorOf(() => repairStoredMessages([human()], { salvage: {} as never }))).toMatchObject(
      inputError("options.salvage"),
    );
    expect(errorOf(() => repairStoredMessages([human()], "x" as never))).toMatchObject(inputError("options"));
  });

  it("closes an exchange a new input abandoned, keeps one that awaits a resume, puts real results back", () => {
    const repaired = repairStoredMessages([human(), aiWithCalls("a"), human("next")]);
    expect(shape(repaired.messages)).toBe("human, ai[a], tool(a), human");
    expect(repairStoredMessages([human(), aiWithCalls("a"), toolResult("a")]).repairs).toEqual([]);
    const open = [human(), aiWithCalls("a", "b"), toolResult("a")];
    expect(repairStoredMessages(open).messages).toBe(open);
    const real = toolResult("a", "real a");
    const salvaged = repairStoredMessages([human(), aiWithCalls("a"), human("next")], {
      salvage: new Map([["a", real]]),
    });
    expect(salvaged.messages[2]).toBe(real);
    expect(salvaged.salvaged).toEqual(["a"]);
  });
});

describe("storedProblems / awaitsResume", () => {
  it("judge a stored thread: structural problems, an open last exchange only when asked, request shaping apart", () => {
    expect(storedProblems([human(), aiWithCalls("a"), human()], "openai").map((p) => p.kind)).toEqual(["orphan_call"]);
    const open = [human(), aiWithCalls("a")];
    expect(storedProblems(open)).toEqual([]);
    expect(storedProblems(open, "strict", "structural", true).map((p) => p.kind)).toEqual(["trailing_open_exchange"]);
    // Two user turns in a row: sound for storage, shaped per request on Bedrock.
    const twoUsers = [human("a"), human("b")];
    expect(storedProblems(twoUsers, "bedrock")).toEqual([]);
    expect(storedProblems(twoUsers, "bedrock", "request").length).toBeGreaterThan(0);
  });

  it("awaitsResume: an exchange followed only by its own results awaits a resume; one a user message follows does not", () => {
    expect(awaitsResume([human(), aiWithCalls("a", "b"), toolResult("a")])).toBe(true);
    expect(awaitsResume([human(), aiWithCalls("a"), human("next")])).toBe(false);
    expect(awaitsResume([human(), aiWithCalls("a"), toolResult("a")])).toBe(false);
  });
});

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A model node and a tool node (`tools`, a ToolNode, unless given), the thread seeded with `messages` (as the model wrote them). */
async function seededGraph(
  messages: BaseMessage[],
  key = "messages",
  tools: { name: string; node: ToolNode | (() => Promise<{ messages: BaseMessage[] }>) } = {
    name: "tools",
    node: new ToolNode([]),
  },
) {
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("model", async () => ({ messages: [ai("reply")] }))
    .addNode(tools.name, tools.node)
    .addEdge(START, "model")
    .addConditionalEdges("model", () => END, [tools.name, END])
    .addEdge(tools.name as "model", "model")
    .compile({ checkpointer: new MemorySaver() });
  const config = threadConfig("t");
  if (key === "messages") await graph.updateState(config, { messages }, "model");
  return { graph, config };
}

describe("repairThread", () => {
  it("is a dry run by default: reports what it would repair and writes nothing", async () => {
    const { graph, config } = await seededGraph([human(), aiWithCalls("a"), human("next"), ai()]);
    const before = await graph.getState(config);
    const repairs: ToolCallRepair[] = [];
    const report = await repairThread(graph, config, { provider: "openai", onRepair: (r) => repairs.push(r) });
    expect(report.applied).toBe(false);
    expect(report.problems.map((p) => p.kind)).toEqual(["orphan_call"]);
    expect(report.repairs.map((r) => r.action)).toEqual(["synthesized_result"]);
    expect(shape(report.messages)).toBe("human, ai[a], tool(a), human, ai");
    expect(repairs).toEqual([]);
    const after = await graph.getState(config);
    expect(after.config.configurable?.checkpoint_id).toBe(before.config.configurable?.checkpoint_id);
  });

  it("writes the fix as the tools node and reports it", async () => {
    const { graph, config } = await seededGraph([human(), aiWithCalls("a"), human("next"), ai()]);
    const repairs: ToolCallRepair[] = [];
    const report = await repairThread(graph, config, {
      provider: "openai",
      dryRun: false,
      onRepair: (r) => repairs.push(r),
    });
    expect(report.applied).toBe(true);
    expect(repairs.map((r) => r.toolCallId)).toEqual(["a"]);
    const state = await graph.getState(config);
    expect(shape(state.values.messages)).toBe("human, ai[a], tool(a), human, ai");
    expect(state.config.configurable?.checkpoint_id).toBe(report.config?.configurable?.checkpoint_id);
    expect(state.next).toEqual(["model"]);
  });

  it("does nothing to a clean thread", async () => {
    const messages = [human(), aiWithCalls("a"), toolResult("a"), ai()];
    const { graph, config } = await seededGraph(messages);
    const report = await repairThread(graph, config, { dryRun: false });
    expect(report).toMatchObject({ repairs: [], problems: [], applied: false });
    expect(report.messages.map((m) => m.id)).toEqual(messages.map((m) => m.id));
  });

  it("with closeOpen: false, repairs what is before an open last exchange and leaves it to a resume", async () => {
    const { graph, config } = await seededGraph([human(), aiWithCalls("a"), human("next"), aiWithCalls("b")]);
    const report = await repairThread(graph, config, { provider: "openai", closeOpen: false, dryRun: false });
    expect(report.problems.map((p) => p.kind)).toEqual(["orphan_call"]);
    expect(shape((await graph.getState(config)).values.messages)).toBe("human, ai[a], tool(a), human, ai[b]");
  });

  it("finds the graph's ToolNode whatever its name, and writes as it", async () => {
    const { graph, config } = await seededGraph([human(), aiWithCalls("a"), human("next"), ai()], "messages", {
      name: "act",
      node: new ToolNode([]),
    });
    const report = await repairThread(graph, config, { provider: "openai", dryRun: false });
    expect(report.applied).toBe(true);
    // Written as "act": the model runs next.
    expect((await graph.getState(config)).next).toEqual(["model"]);
  });

  it("a graph without one ToolNode: a TypeError naming `asNode`, nothing written; with `asNode`, written as that node", async () => {
    const { graph, config } = await seededGraph([human(), aiWithCalls("a"), human("next"), ai()], "messages", {
      name: "run_tools",
      node: async () => ({ messages: [] }),
    });
    const before = (await graph.getState(config)).config.configurable?.checkpoint_id;
    await expect(repairThread(graph, config, { dryRun: false })).rejects.toThrow(/no single ToolNode.*asNode/);
    expect((await graph.getState(config)).config.configurable?.checkpoint_id).toBe(before);
    const report = await repairThread(graph, config, { provider: "openai", dryRun: false, asNode: "run_tools" });
    expect(report.applied).toBe(true);
    const state = await graph.getState(config);
    expect(shape(state.values.messages)).toBe("human, ai[a], tool(a), human, ai");
    expect(state.next).toEqual(["model"]);
  });

  it("says no_messages for a thread with nothing stored, an unknown thread, or another messagesKey", async () => {
    const { graph, config } = await seededGraph([], "none");
    const none = { problems: [], repairs: [], messages: [], applied: false, status: "no_messages" };
    expect(await repairThread(graph, config)).toEqual(none);
    expect(await repairThread(graph, threadConfig("never-written"), { dryRun: false })).toEqual(none);
    const seeded = await seededGraph([human(), aiWithCalls("a"), human("next"), ai()]);
    expect(await repairThread(seeded.graph, seeded.config, { messagesKey: "msgs" })).toEqual(none);
    // A thread with a message list has no status: its problems say what it is.
    expect(await repairThread(seeded.graph, seeded.config, { provider: "openai" })).not.toHaveProperty("status");
  });

  it("refuses a misspelt option before reading the thread: `dryrun: false` is no silent dry run, stored or not", async () => {
    const { graph, config } = await seededGraph([], "none");
    await expect(repairThread(graph, config, { dryrun: false } as never)).rejects.toThrow(
      /options\.dryrun is not an option/,
    );
  });

  it("refuses a typo naming repairThread and its nearest option; `trailing` is no option of a stored fix", async () => {
    const { graph, config } = await seededGraph([], "none");
    const refused = (options: object) => repairThread(graph, config, options as never);
    await expect(refused({ dryrun: false })).rejects.toThrow(
      /repairThread: options\.dryrun is not an option \(did you mean dryRun\?\)/,
    );
    await expect(refused({ orphanCall: "remove" })).rejects.toThrow(
      /repairThread: options\.orphanCall is not an option \(did you mean orphanCalls\?\)/,
    );
    await expect(refused({ trailing: "keep" })).rejects.toThrow(/repairThread: options\.trailing is not an option/);
    await expect(refused({ level: "request" })).rejects.toThrow(/repairThread: options\.level is not an option/);
    await expect(refused({ closeOpen: "no" })).rejects.toThrow(
      'repairThread: options.closeOpen is "no"; expected a boolean',
    );
  });
});

describe.each(PROVIDER_NAMES)("repairThread end to end with %s", (provider) => {
  it.for(SERVER_SAVER_KINDS)(
    "closes an aborted exchange with $name, keeping the finished sibling's result; the model call then succeeds",
    async (kind, { skip }) => {
      if (kind.skip) skip(kind.skip);
      // Seen at the minimum peers (LangGraph 1.2.6, checkpoint 1.0.1, PostgresSaver 1.0.0 to 1.0.4): after the
      // write, the aborted run's Send tasks are still pending (next: tools, tools, model), so a resume re-runs
      // both tools. MemorySaver and SqliteSaver are not affected (docs/checkpointer.md, "repairThread").
      const pinned = pinnedTo(
        "@langchain/langgraph",
        "1.7.3",
        "repairThread over PostgresSaver clearing the aborted run's pending sends",
      );
      if (pinned) skip(pinned);
      const model = await startStubbedModel(provider, [
        { name: "lookup", args: { q: "alpha" } },
        { name: "slow_lookup", args: { q: "beta" } },
      ]);
      const saverOf = await kind.create();
      cleanups.push(() => model.stub.close(), saverOf.dispose);
      const bench = new ToolBench();
      // No wrapper and no request net: the repair is all repairThread's.
      const agent = buildAgent({ model, bench, checkpointer: saverOf.saver, mode: "send" });
      await runAbortedMidTool(agent, bench, { messages: [new HumanMessage("first")] }, "t", saverOf.saver);
      const [lookupId, slowId] = firstCallIds(await storedThread(saverOf.saver, "t"));

      const report = await repairThread(agent.graph, threadConfig("t"), { provider: model.provider, dryRun: false });
      expect(report.repairs.map((r) => [r.action, r.toolCallId])).toEqual([["synthesized_result", slowId]]);
      expect((await agent.graph.getState(threadConfig("t"))).next).toEqual(["model"]);

      // The model answers the closed exchange (no tool runs again), then the conversation goes on.
      const resumed = await agent.graph.invoke(null, threadConfig("t"));
      expect(resumed.messages.at(-1)?.content).toMatch(/^answer/);
      expect(bench.completions([lookupId, slowId])).toEqual([1, 0]);
      await agent.graph.invoke({ messages: [new HumanMessage("second")] }, threadConfig("t"));
      expect(model.stub.rejections).toEqual([]);

      const stored = await storedThread(saverOf.saver, "t");
      expect(problemsOf(stored, model.provider)).toEqual([]);
      const results = toolResults(stored);
      expect(results.filter((m) => m.tool_call_id === lookupId).map((m) => [m.content, isSyntheticResult(m)])).toEqual([
        ["lookup result for alpha", false],
      ]);
      expect(results.filter((m: ToolMessage) => m.tool_call_id === slowId).map(isSyntheticResult)).toEqual([true]);
    },
  );
});

describe("repairThread checks its arguments before asking the graph anything", () => {
  it("a graph without getState / updateState is refused naming it, not 'graph.getState is not a function'", async () => {
    expect(await rejectionOf(() => repairThread({} as never, {}))).toMatchObject(
      inputError(
        "graph",
        "repairThread: graph is an empty object without a getState method; expected a compiled graph",
      ),
    );
    for (const graph of [null, undefined, 42, "g"])
      expect(await rejectionOf(() => repairThread(graph as never, {}))).toMatchObject(
        inputError("graph", "expected a compiled graph"),
      );
    // A throwing getter is no realistic input: the boundary answers for it, naming the function.
    expect(await rejectionOf(() => repairThread(throwingObject() as never, {}))).toMatchObject({
      ...inputError("arguments", "repairThread: arguments could not be read (GETTER)"),
      cause: expect.any(Error),
    });
  });

  it("config and options are checked, each named", async () => {
    const { graph, config } = await seededGraph([human("q"), ai("a")]);
    // Without a thread id no thread is read: refused, not reported clean.
    for (const bad of [null, {}, { configurable: {} }, { configurable: { thread_id: 7 } }, { configurable: null }])
      expect(await rejectionOf(() => repairThread(graph, bad as never))).toMatchObject(
        inputError("config.configurable.thread_id", "expected a string"),
      );
    expect(await rejectionOf(() => repairThread(graph, config, { dryRun: "no" } as never))).toMatchObject(
      inputError("options.dryRun", "expected a boolean"),
    );
    expect(await rejectionOf(() => repairThread(graph, config, { messagesKey: "" }))).toMatchObject(
      inputError("options.messagesKey"),
    );
    expect(await rejectionOf(() => repairThread(graph, config, revokedObject() as never))).toMatchObject(
      inputError("options"),
    );
    expect(
      await rejectionOf(() =>
        repairThread(graph, config, {
          get closeOpen(): boolean {
            throw new Error("x");
          },
        }),
      ),
    ).toMatchObject({
      ...inputError("arguments", "repairThread: arguments could not be read (x)"),
      cause: expect.any(Error),
    });
    await expect(repairThread(graph, config)).resolves.toMatchObject({ applied: false, repairs: [] });
  });
});
