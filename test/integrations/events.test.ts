import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { END, MemorySaver, MessagesAnnotation, Send, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { reportRepairs, TOOL_CALL_REPAIR_EVENT } from "../../src/integrations/events";
import { toolCallRepairHook } from "../../src/integrations/hook";
import { toolCallRepairMiddleware } from "../../src/integrations/middleware";
import { toolCallRepair } from "../../src/integrations/middleware";
import { toolCallRepairKit } from "../../src/integrations/node";
import type { ToolCallRepair } from "../../src/types";
import { bedrockModel, startBedrockStub, type RunningStub } from "../support/stubs";
import {
  bothToolsThenAnswer,
  endsOnUserText,
  runAbortedMidTool,
  storedThread,
  ToolBench,
  threadConfig,
} from "./support/checkpoint-scenarios";

const repair = (toolCallId: string): ToolCallRepair => ({
  problem: "orphan_call",
  action: "synthesized_result",
  index: 1,
  toolCallId,
  detail: `synthetic error result added for ${toolCallId}`,
});

class CustomEventRecorder extends BaseCallbackHandler {
  name = "custom_event_recorder";
  events: { name: string; data: unknown; runId: string }[] = [];
  chains: string[] = [];
  override async handleCustomEvent(name: string, data: unknown, runId: string) {
    this.events.push({ name, data, runId });
  }
  override async handleChainStart(
    _chain: unknown,
    _inputs: unknown,
    _runId: string,
    _parent?: string,
    _tags?: string[],
    _meta?: unknown,
    _type?: string,
    runName?: string,
  ) {
    this.chains.push(runName ?? "");
  }
}

describe("reportRepairs", () => {
  it("calls onRepair once per repair, in order", async () => {
    const seen: string[] = [];
    await reportRepairs([repair("a"), repair("b")], { onRepair: (r) => seen.push(r.toolCallId!) }, { surface: "node" });
    expect(seen).toEqual(["a", "b"]);
  });

  it("does not throw outside any runnable context", async () => {
    await expect(reportRepairs([repair("a")], {}, { surface: "node" })).resolves.toBeUndefined();
  });

  it("dispatches one custom event per repair on the run it is called from", async () => {
    const node = RunnableLambda.from(async (_: number, config) => {
      await reportRepairs([repair("a"), repair("b")], {}, { surface: "node", config });
      return 1;
    });
    const events: { name: string; data: ToolCallRepair }[] = [];
    for await (const event of node.streamEvents(1, { version: "v2" }))
      if (event.event === "on_custom_event") events.push({ name: event.name, data: event.data as ToolCallRepair });
    expect(events).toEqual([
      { name: TOOL_CALL_REPAIR_EVENT, data: { ...repair("a"), surface: "node" } },
      { name: TOOL_CALL_REPAIR_EVENT, data: { ...repair("b"), surface: "node" } },
    ]);
  });

  it("with callbacks but no run to attach to (a checkpointer's config), opens a tool_call_repair run for the events", async () => {
    const recorder = new CustomEventRecorder();
    await reportRepairs([repair("a")], {}, { surface: "checkpointer", config: { callbacks: [recorder] } });
    await awaitAllCallbacks();
    expect(recorder.chains).toEqual([TOOL_CALL_REPAIR_EVENT]);
    expect(recorder.events.map((e) => [e.name, e.data])).toEqual([
      [TOOL_CALL_REPAIR_EVENT, { ...repair("a"), surface: "checkpointer" }],
    ]);
  });
});

// --- through the agents: what onRepair hears over several model calls -------------------------------------

/**
 * A Bedrock thread whose stored form is structurally valid but needs a placeholder assistant turn in every
 * request (a user message right after tool results: B6). Each model call is shaped; onRepair hears it once.
 */
const shapedThread = () => [
  new HumanMessage({ content: "weather in Paris?", id: "h1" }),
  new AIMessage({
    id: "a1",
    content: "",
    tool_calls: [{ id: "tooluse_paris", name: "lookup", args: { q: "paris" }, type: "tool_call" }],
  }),
  new ToolMessage({ id: "r1", tool_call_id: "tooluse_paris", name: "lookup", content: "sunny in Paris" }),
  new HumanMessage({ content: "and Rome?", id: "h2" }),
];

/** Calls `lookup` after a user turn, answers in text after its result. */
const lookupThenAnswer = (request: unknown) =>
  endsOnUserText("bedrock", request) ? { toolCalls: [{ name: "lookup", args: { q: "rome" } }] } : { text: "answer" };

const actionsOf = (repairs: ToolCallRepair[]) => repairs.map((r) => r.action);

/** Every request the stub took was shaped: no two user turns in a row reached it (it would have refused). */
const everyRequestShaped = (stub: RunningStub, calls: number) => {
  expect(stub.calls).toBe(calls);
  expect(stub.rejections).toEqual([]);
};

describe("onRepair: request shaping once per thread and kind, stored repairs always", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const stub = async () => {
    const started = await startBedrockStub({ script: lookupThenAnswer });
    cleanups.push(() => started.close());
    return started;
  };

  it("createAgent + toolCallRepairMiddleware: four model calls of a thread shaped, one inserted_assistant_message", async () => {
    const model = await stub();
    const repairs: ToolCallRepair[] = [];
    const agent = createAgent({
      model: bedrockModel(model),
      tools: new ToolBench().all,
      middleware: [toolCallRepairMiddleware({ onRepair: (r) => repairs.push(r) })],
      checkpointer: new MemorySaver(),
    });
    await agent.invoke({ messages: shapedThread() }, threadConfig("t1"));
    await agent.invoke({ messages: [new HumanMessage("and Lisbon?")] }, threadConfig("t1"));
    everyRequestShaped(model, 4);
    expect(actionsOf(repairs)).toEqual(["inserted_assistant_message"]);

    // Another thread is another report.
    await agent.invoke({ messages: shapedThread() }, threadConfig("t2"));
    expect(actionsOf(repairs)).toEqual(["inserted_assistant_message", "inserted_assistant_message"]);
  });

  it("toolCallRepairHook (createReactAgent): shaped on every call, reported once", async () => {
    const model = await stub();
    const repairs: ToolCallRepair[] = [];
    const agent = createReactAgent({
      llm: bedrockModel(model),
      tools: new ToolBench().all,
      preModelHook: toolCallRepairHook({ provider: "bedrock", onRepair: (r) => repairs.push(r) }),
      checkpointer: new MemorySaver(),
    });
    await agent.invoke({ messages: shapedThread() }, threadConfig("t1"));
    await agent.invoke({ messages: [new HumanMessage("and Lisbon?")] }, threadConfig("t1"));
    everyRequestShaped(model, 4);
    expect(actionsOf(repairs)).toEqual(["inserted_assistant_message"]);
  });

  // The exchange a request ends on is answered for the model only: the stored thread keeps it open (the tools or a
  // resume run it), so no stored piece ever reports that placeholder. It is the request's repair, reported as such.
  const openExchange = () => [
    new HumanMessage({ content: "weather in Oslo?", id: "h1" }),
    new AIMessage({
      id: "a1",
      content: "",
      tool_calls: [{ id: "tooluse_oslo", name: "lookup", args: { q: "oslo" }, type: "tool_call" }],
    }),
  ];

  it("toolCallRepairKit: a placeholder only the request holds (the thread keeps it open) reaches onRepair once per thread", async () => {
    const model = await stub();
    const repairs: ToolCallRepair[] = [];
    const llm = toolCallRepairKit({ onRepair: (r) => repairs.push(r) })
      .model(bedrockModel(model))
      .bindTools(new ToolBench().all);
    await RunnableLambda.from(async () => {
      await llm.invoke(openExchange());
      await llm.invoke(openExchange());
    }).invoke(null, threadConfig("t1"));
    await RunnableLambda.from(() => llm.invoke(openExchange())).invoke(null, threadConfig("t2"));
    expect(model.rejections).toEqual([]);
    expect(repairs.filter((r) => r.toolCallId === "tooluse_oslo").map((r) => r.action)).toEqual([
      "synthesized_result",
      "synthesized_result",
    ]);
    expect(repairs.every((r) => r.problem === "trailing_open_exchange")).toBe(true);
  });

  it("toolCallRepair: the middleware's placeholder for the open exchange of a request reaches onRepair, once", async () => {
    const model = await stub();
    const repairs: ToolCallRepair[] = [];
    const { middleware } = toolCallRepair({ onRepair: (r) => repairs.push(r) });
    const sent: BaseMessage[][] = [];
    const request = { model: bedrockModel(model), messages: openExchange(), state: {} };
    const handler = async (req: { messages: BaseMessage[] }) => {
      sent.push(req.messages);
      return new AIMessage("answer");
    };
    const wrap = middleware.wrapModelCall as unknown as (r: typeof request, h: typeof handler) => Promise<unknown>;
    await wrap(request, handler);
    await wrap(request, handler);
    expect(sent.map((messages) => messages.length)).toEqual([3, 3]);
    expect(repairs.map((r) => [r.action, r.toolCallId])).toEqual([["synthesized_result", "tooluse_oslo"]]);
  });

  it("toolCallRepairKit: a call the request answered with a placeholder, the store with its real result: once, salvaged", async () => {
    const model = await startBedrockStub({ script: bothToolsThenAnswer() });
    cleanups.push(() => model.close());
    const bench = new ToolBench();
    const inner = new MemorySaver();
    const repairs: ToolCallRepair[] = [];
    const kit = toolCallRepairKit({ onRepair: (r) => repairs.push(r) });
    const llm = kit.model(bedrockModel(model)).bindTools(bench.all);
    // One task per call (Send), no kit node: the model's request is repaired before the store is.
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", async (state) => ({ messages: [await llm.invoke(state.messages)] }))
      .addNode("tools", new ToolNode(bench.all))
      .addEdge(START, "agent")
      .addConditionalEdges(
        "agent",
        (state) => {
          const calls = (state.messages.at(-1) as AIMessage).tool_calls ?? [];
          return calls.length === 0 ? END : calls.map((call) => new Send("tools", { ...state, lg_tool_call: call }));
        },
        ["tools", END],
      )
      .addEdge("tools", "agent")
      .compile({ checkpointer: kit.checkpointer(inner) });
    const agent = { graph, netRepairs: 0 } as unknown as Parameters<typeof runAbortedMidTool>[0];
    const first = { messages: [new HumanMessage({ content: "first", id: "h1" })] };
    await runAbortedMidTool(agent, bench, first, "t", inner);
    await graph.invoke({ messages: [new HumanMessage({ content: "second", id: "h2" })] }, threadConfig("t"));
    await graph.invoke({ messages: [new HumanMessage({ content: "third", id: "h3" })] }, threadConfig("t"));
    expect(model.rejections).toEqual([]);

    const ofCall = (id: string) => repairs.filter((r) => r.toolCallId === id).map((r) => r.action);
    const [alpha, beta] = firstCalls(await storedThread(inner, "t"));
    expect(ofCall(alpha)).toEqual(["salvaged_result"]);
    expect(ofCall(beta)).toEqual(["synthesized_result"]);
    expect(repairs.filter((r) => r.action === "inserted_assistant_message")).toHaveLength(1);
  });
});

/** The ids of the first assistant message's calls (`lookup` first, then `slow_lookup`). */
function firstCalls(messages: BaseMessage[]): string[] {
  const first = messages.find((m) => AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0) as AIMessage;
  return (first.tool_calls ?? []).map((c) => c.id!);
}
