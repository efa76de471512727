/**
 * The one-line setups: `toolCallRepair()` for createAgent and `toolCallRepairKit()` for createReactAgent and a
 * StateGraph. The incident end to end through the real ChatBedrockConverse (the strictest provider: alternation
 * and id patterns on top of the pairing rules): parallel calls, one finished, the run aborted while the other
 * runs, then a new message. The next request is accepted, the finished result is kept, and the stored thread
 * holds structural repairs only.
 */
import { HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { MemorySaver, MessagesAnnotation, StateGraph, START } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createReactAgent, ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { findToolCallProblems } from "../../src/engine";
import { toolCallRepair } from "../../src/integrations/middleware";
import { toolCallRepairKit } from "../../src/integrations/node";
import { toolCallRepairHook } from "../../src/integrations/hook";
import { aiWithCalls, human, toolResult } from "../support/builders";
import { isSyntheticResult, repairMarkerOf } from "../../src/messages/inspect";
import type { ToolCallRepair } from "../../src/types";
import { bedrockModel, startBedrockStub, type RunningStub } from "../support/stubs";
import { bothToolsThenAnswer, ToolBench, storedThread, threadConfig, until } from "./support/checkpoint-scenarios";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Calls both tools on the first request, answers in text after that. */
async function stub(): Promise<RunningStub> {
  const started = await startBedrockStub({ script: bothToolsThenAnswer() });
  cleanups.push(() => started.close());
  return started;
}

interface Runnable {
  invoke(input: unknown, config?: RunnableConfig): Promise<unknown>;
}

/** The first run, aborted while `slow_lookup` is held (after `lookup`'s result is stored, when `siblingStored`). */
async function abortMidTool(
  agent: Runnable,
  bench: ToolBench,
  inner: BaseCheckpointSaver,
  siblingStored: boolean,
): Promise<void> {
  const controller = new AbortController();
  bench.holdSlow = true;
  const slowStarted = bench.nextSlowStart();
  const outcome = agent
    .invoke(
      { messages: [new HumanMessage({ content: "first question", id: "h1" })] },
      { ...threadConfig("t"), signal: controller.signal },
    )
    .then(
      () => new Error("expected an abort"),
      (error: Error) => error,
    );
  await slowStarted;
  if (siblingStored)
    await until(async () => {
      const tuple = await inner.getTuple(threadConfig("t"));
      return (tuple?.pendingWrites ?? []).some(
        ([, channel, value]) =>
          channel === "messages" && Array.isArray(value) && value.some((m) => ToolMessage.isInstance(m)),
      );
    }, "the finished sibling's pending write");
  controller.abort();
  expect((await outcome).message).toMatch(/abort/i);
  bench.holdSlow = false;
}

/** What a stored thread must be after the repair: structurally valid, the user's messages as they were sent. */
function expectStoredAsSent(stored: BaseMessage[]) {
  expect(findToolCallProblems(stored, { level: "structural" })).toEqual([]);
  const humans = stored.filter((m) => HumanMessage.isInstance(m));
  expect(humans.map((m) => [m.id, m.content])).toEqual([
    ["h1", "first question"],
    ["h2", "and the second one?"],
  ]);
  // No placeholder turn or merge: only tool results may be made up.
  expect(stored.filter((m) => repairMarkerOf(m) !== undefined && !ToolMessage.isInstance(m))).toEqual([]);
}

const second = { messages: [new HumanMessage({ content: "and the second one?", id: "h2" })] };
const resultOf = (messages: BaseMessage[], q: string) =>
  messages.find((m) => ToolMessage.isInstance(m) && m.content === `lookup result for ${q}`);

describe("toolCallRepair(): createAgent", () => {
  it(
    "the next message goes through on the first request, the finished sibling's real result is kept, " +
      "each repair reported once",
    async () => {
      const model = await stub();
      const bench = new ToolBench();
      const inner = SqliteSaver.fromConnString(":memory:");
      cleanups.push(() => inner.db.close());
      const repairs: ToolCallRepair[] = [];
      const repair = toolCallRepair({ onRepair: (r) => repairs.push(r) });
      const agent = createAgent({
        model: bedrockModel(model),
        tools: bench.all,
        middleware: [repair.middleware],
        checkpointer: repair.checkpointer(inner),
      });

      await abortMidTool(agent, bench, inner, true);
      const before = model.calls;
      const result = (await agent.invoke(second, threadConfig("t"))) as { messages: BaseMessage[] };
      expect(result.messages.at(-1)?.text).toMatch(/^answer/);
      expect(model.calls - before).toBe(1);
      expect(model.rejections).toEqual([]);

      const stored = await storedThread(inner, "t");
      expectStoredAsSent(stored);
      expect(resultOf(stored, "alpha")).toBeDefined();
      expect(stored.filter((m) => ToolMessage.isInstance(m) && isSyntheticResult(m))).toHaveLength(1);
      const keys = repairs.filter((r) => r.toolCallId).map((r) => `${r.action}:${r.toolCallId}`);
      expect(new Set(keys).size).toBe(keys.length);
      expect(repairs.map((r) => r.action)).toEqual(expect.arrayContaining(["salvaged_result", "synthesized_result"]));
    },
  );
});

describe("toolCallRepair(): reports across threads", () => {
  // Servers that reuse ids (`call_0` in every thread) must not hide a thread's repair behind another's.
  it("the same call id broken in two threads is reported for each thread, once per thread", async () => {
    const model = await startBedrockStub({ script: () => ({ text: "answer" }) });
    cleanups.push(() => model.close());
    const repairs: ToolCallRepair[] = [];
    const repair = toolCallRepair({ onRepair: (r) => repairs.push(r) });
    const agent = createAgent({
      model: bedrockModel(model),
      tools: new ToolBench().all,
      middleware: [repair.middleware],
      checkpointer: repair.checkpointer(new MemorySaver()),
    });
    const broken = () => [human("look it up"), aiWithCalls("call_0"), human("never mind")];
    for (const thread of ["t1", "t2"]) await agent.invoke({ messages: broken() }, threadConfig(thread));

    const closed = repairs.filter((r) => r.action === "synthesized_result" && r.toolCallId === "call_0");
    expect(closed).toHaveLength(2);
    expect(model.rejections).toEqual([]);
  });
});

describe("toolCallRepairKit(): createReactAgent and a StateGraph", () => {
  it("createReactAgent: model, preModelHook and checkpointer from the kit", async () => {
    const model = await stub();
    const bench = new ToolBench();
    const inner = new MemorySaver();
    const kit = toolCallRepairKit();
    const agent = createReactAgent({
      llm: kit.model(bedrockModel(model)),
      tools: bench.all,
      preModelHook: kit.preModelHook,
      checkpointer: kit.checkpointer(inner),
    });

    await abortMidTool(agent, bench, inner, false);
    const result = (await agent.invoke(second, threadConfig("t"))) as { messages: BaseMessage[] };
    expect(result.messages.at(-1)?.text).toMatch(/^answer/);
    expect(model.rejections).toEqual([]);
    expectStoredAsSent(await storedThread(inner, "t"));
  });

  it("a StateGraph: the kit's node before the model node, its model in the model node, its checkpointer", async () => {
    const model = await stub();
    const bench = new ToolBench();
    const inner = new MemorySaver();
    const kit = toolCallRepairKit();
    const llm = kit.model(bedrockModel(model)).bindTools(bench.all);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("repair", kit.node)
      .addNode("agent", async (state) => ({ messages: [await llm.invoke(state.messages)] }))
      .addNode("tools", new ToolNode(bench.all))
      .addEdge(START, "repair")
      .addEdge("repair", "agent")
      .addConditionalEdges("agent", toolsCondition)
      .addEdge("tools", "repair")
      .compile({ checkpointer: kit.checkpointer(inner) });

    await abortMidTool(graph, bench, inner, false);
    const result = (await graph.invoke(second, threadConfig("t"))) as { messages: BaseMessage[] };
    expect(result.messages.at(-1)?.text).toMatch(/^answer/);
    expect(model.rejections).toEqual([]);
    expectStoredAsSent(await storedThread(inner, "t"));
  });
});

describe("toolCallRepairKit(): the request is shaped once, by the kit's model", () => {
  // Structurally valid, but a user message right after tool results: Bedrock and strict need a bridging turn.
  const history = () => [
    new HumanMessage({ content: "question", id: "h1" }),
    aiWithCalls("a"),
    toolResult("a"),
    new HumanMessage({ content: "and now?", id: "h2" }),
  ];

  it("the kit's preModelHook gives the model the messages as stored, unshaped (the model shapes them for its provider)", async () => {
    const kit = toolCallRepairKit();
    const messages = history();
    const update = await kit.preModelHook({ messages });
    expect(update.llmInputMessages).toBe(messages);
    expect(update.messages).toBeUndefined();
  });

  it("a hook with shapeRequests left on shapes for strict instead (what the kit's hook used to send)", async () => {
    const messages = history();
    const update = await toolCallRepairHook({ persist: true })({ messages });
    expect(update.llmInputMessages).not.toBe(messages);
    expect(update.llmInputMessages!.length).toBe(messages.length + 1);
    expect(() => toolCallRepairHook({ shapeRequests: "no" as never })).toThrow(
      /options.shapeRequests is "no"; expected a boolean/,
    );
  });
});
