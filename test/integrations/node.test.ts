import { AIMessage, type BaseMessage, HumanMessage, RemoveMessage, ToolMessage } from "@langchain/core/messages";
import type { Runnable } from "@langchain/core/runnables";
import {
  Annotation,
  END,
  MemorySaver,
  MessagesAnnotation,
  messagesStateReducer,
  REMOVE_ALL_MESSAGES,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { findToolCallProblems } from "../../src/engine";
import { TOOL_CALL_REPAIR_EVENT } from "../../src/integrations/events";
import { toolCallRepairNode } from "../../src/integrations/node";
import { NO_UPDATE, replaceAllMessages, withUniqueIds } from "../../src/integrations/state-update";
import { isSyntheticResult } from "../../src/messages/inspect";
import type { ToolCallRepair } from "../../src/types";
import { withRequestRepair } from "../../src/integrations/model-wrapper";
import { bedrockModel, openAIModel, startBedrockStub, startOpenAIStub, type RunningStub } from "../support/stubs";
import {
  bedrockShape,
  brokenHistory,
  callWeather,
  cleanHistory,
  customEventsOf,
  openAIShape,
  rejectionOf,
  runUntilAborted,
  shapeOf,
  stubTracker,
  weatherTool,
} from "./fixtures";

const track = stubTracker();

type ChatModel = Runnable<BaseMessage[], AIMessage>;

/** START -> [repair] -> agent -> tools -> [repair] -> agent ...; without `repair` the node is left out. */
function agentGraph(
  model: ChatModel,
  tools: ReturnType<typeof weatherTool>["getWeather"][],
  repair?: ReturnType<typeof toolCallRepairNode>,
) {
  const entry = repair ? "repair" : "agent";
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("tools", new ToolNode(tools))
    .addNode("repair", repair ?? (() => ({})))
    .addEdge(START, entry)
    .addEdge("repair", "agent")
    .addConditionalEdges("agent", toolsCondition)
    .addEdge("tools", entry);
  return graph.compile({ checkpointer: new MemorySaver() });
}

/**
 * A thread whose run was aborted mid-tool, then given a new question (the incident). With `wrapModel`, the
 * model node's model repairs each request for its provider (what is never stored).
 */
async function abandonedThread(
  stub: RunningStub,
  makeModel: (stub: RunningStub) => { bindTools: (...args: never[]) => unknown },
  withNode: boolean,
  onRepair?: (r: ToolCallRepair) => void,
  wrapModel = false,
) {
  const { getWeather, gate } = weatherTool();
  const base = wrapModel ? withRequestRepair(makeModel(stub) as never) : makeModel(stub);
  const model = ((base as { bindTools: unknown }).bindTools as (tools: unknown[]) => ChatModel)([getWeather]);
  const graph = agentGraph(model, [getWeather], withNode ? toolCallRepairNode({ onRepair }) : undefined);
  const config = { configurable: { thread_id: "incident" } };
  gate.abortNextCall = true;
  await runUntilAborted(() =>
    graph.invoke({ messages: [new HumanMessage("weather in Paris?")] }, { ...config, signal: gate.controller.signal }),
  );
  return { graph, config, gate };
}

describe("toolCallRepairNode in a StateGraph (the incident: abort mid-tool, then a new message)", () => {
  it("without the node, the real ChatBedrockConverse call is rejected by the strict stub", async () => {
    const stub = await track(startBedrockStub({ script: [callWeather] }));
    const { graph, config } = await abandonedThread(stub, bedrockModel, false);
    const error = await rejectionOf(() => graph.invoke({ messages: [new HumanMessage("never mind")] }, config));
    expect(error.message).toMatch(
      /^Expected toolResult blocks at messages\.2\.content for the following Ids: tooluse_/,
    );
    expect(stub.rejections.map((r) => r.rule)).toEqual(["B1"]);
  });

  it("without the node, the real ChatOpenAI call is rejected by the strict stub", async () => {
    const stub = await track(startOpenAIStub({ script: [callWeather] }));
    const { graph, config } = await abandonedThread(stub, openAIModel, false);
    const error = await rejectionOf(() => graph.invoke({ messages: [new HumanMessage("never mind")] }, config));
    expect(error.message).toContain(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'",
    );
    expect(stub.rejections.map((r) => r.rule)).toEqual(["O1"]);
  });

  it("with the node alone, the stored thread is repaired structurally but Bedrock still needs the request shaped", async () => {
    const stub = await track(startBedrockStub({ script: [callWeather] }));
    const { graph, config } = await abandonedThread(stub, bedrockModel, true);
    await expect(graph.invoke({ messages: [new HumanMessage("never mind")] }, config)).rejects.toThrow(
      /alternate between user and assistant/,
    );
    expect(stub.rejections.map((r) => r.rule)).toEqual(["B6"]);
  });

  it("with the node and withRequestRepair on the model, the Bedrock call succeeds and only the structural fix is persisted", async () => {
    const stub = await track(startBedrockStub({ script: [callWeather] }));
    const repairs: ToolCallRepair[] = [];
    const { graph, config, gate } = await abandonedThread(stub, bedrockModel, true, (r) => repairs.push(r), true);
    const result = await graph.invoke({ messages: [new HumanMessage("never mind")] }, config);

    expect(result.messages.at(-1)?.text).toBe("ok");
    expect(stub.rejections).toEqual([]);
    const callId = (result.messages[1] as AIMessage).tool_calls![0].id!;
    // The request gets a short assistant turn that keeps user and assistant turns alternating (B6).
    expect(bedrockShape(stub.requests.at(-1))).toEqual([
      "user(text)",
      `assistant(toolUse:${callId})`,
      `user(toolResult:${callId})`,
      "assistant(text)",
      "user(text)",
    ]);

    // The stored thread holds the structural fix only: no placeholder assistant turn.
    const stored = (await graph.getState(config)).values.messages as BaseMessage[];
    expect(shapeOf(stored)).toEqual(["human", `ai[${callId}]`, `tool(${callId})*`, "human", "ai"]);
    expect(findToolCallProblems(stored, { provider: "bedrock", level: "structural" })).toEqual([]);
    expect(new Set(stored.map((m) => m.id)).size).toBe(stored.length);
    expect(repairs).toEqual([
      expect.objectContaining({ problem: "orphan_call", action: "synthesized_result", toolCallId: callId }),
    ]);
    expect(gate.calls).toBe(1); // the abandoned call was answered, not re-run
  });

  it("with the node, the OpenAI call succeeds and a later turn in the thread repairs nothing again", async () => {
    const stub = await track(startOpenAIStub({ script: [callWeather] }));
    const repairs: ToolCallRepair[] = [];
    const { graph, config } = await abandonedThread(stub, openAIModel, true, (r) => repairs.push(r));
    await graph.invoke({ messages: [new HumanMessage("never mind")] }, config);
    const repairedOnce = repairs.length;
    await graph.invoke({ messages: [new HumanMessage("and tomorrow?")] }, config);

    expect(stub.rejections).toEqual([]);
    expect(repairs.length).toBe(repairedOnce);
    const callId = repairs[0].toolCallId;
    expect(repairs[0]).toMatchObject({ problem: "orphan_call", action: "synthesized_result" });
    expect(openAIShape(stub.requests.at(-1))).toEqual([
      "user",
      `assistant[${callId}]`,
      `tool:${callId}`,
      "user",
      "assistant",
      "user",
    ]);
  });

  it("a run whose tool finishes is left alone: the node's update is empty at every step", async () => {
    const stub = await track(startBedrockStub({ script: [callWeather] }));
    const { getWeather } = weatherTool();
    const graph = agentGraph(bedrockModel(stub).bindTools([getWeather]), [getWeather], toolCallRepairNode());
    const updates: Record<string, unknown>[] = [];
    for await (const update of await graph.stream(
      { messages: [new HumanMessage("weather in Paris?")] },
      { configurable: { thread_id: "clean" }, streamMode: "updates" },
    ))
      updates.push(update);
    expect(updates.filter((u) => "repair" in u)).toEqual([{ repair: {} }, { repair: {} }]);
    expect(stub.rejections).toEqual([]);
  });
});

describe("toolCallRepairNode as a function", () => {
  it("returns the shared empty update on a clean state and leaves the state object untouched", () => {
    const messages = Object.freeze(cleanHistory()) as BaseMessage[];
    const state = Object.freeze({ messages });
    const node = toolCallRepairNode();
    const update = node(state);
    expect(update).toBe(NO_UPDATE);
    expect(update).toEqual({});
    expect(state.messages).toBe(messages);
    expect(shapeOf(state.messages)).toEqual(shapeOf(cleanHistory()));
    expect(node({})).toBe(NO_UPDATE);
  });

  it("persists a broken state as RemoveMessage(all) + the repaired list, without changing the input", async () => {
    const messages = brokenHistory("tooluse_x");
    const update = await toolCallRepairNode()({ messages });
    const [remove, ...repaired] = update.messages!;
    expect(RemoveMessage.isInstance(remove) && remove.id).toBe(REMOVE_ALL_MESSAGES);
    // Structural only: the placeholder result, no placeholder assistant turn (that is request shaping).
    expect(shapeOf(repaired)).toEqual(["human", "ai[tooluse_x]", "tool(tooluse_x)*", "human"]);
    expect(repaired[0]).toBe(messages[0]);
    expect(shapeOf(messages)).toEqual(["human", "ai[tooluse_x]", "human"]);
    const stored = messagesStateReducer(messages, update.messages!);
    expect(stored.map((m) => m.id)).toEqual(["h1", "a1", "tool-repair-tooluse_x", "h2"]);
  });

  it("a state it cannot read (a throwing getter, a revoked proxy) goes on unchanged and is reported: the run never fails", async () => {
    const errors: unknown[] = [];
    const node = toolCallRepairNode({ onError: (error) => errors.push(error) });
    const throwing = {
      get messages(): BaseMessage[] {
        throw new Error("boom");
      },
    };
    const { proxy, revoke } = Proxy.revocable({ messages: cleanHistory() }, {});
    revoke();
    const revokedList = Proxy.revocable(cleanHistory(), {});
    revokedList.revoke();
    for (const state of [throwing, proxy, { messages: revokedList.proxy }]) {
      let update: unknown;
      expect(() => (update = node(state as never))).not.toThrow();
      await expect(Promise.resolve(update)).resolves.toBe(NO_UPDATE);
    }
    expect(errors).toHaveLength(3);
    // A throwing getter is no realistic state: onError hears what it threw.
    expect(errors[0]).toMatchObject({ message: "boom" });
    // Without onError it still never throws.
    await expect(Promise.resolve(toolCallRepairNode()(throwing as never))).resolves.toBe(NO_UPDATE);
  });

  it("options are read once, behind the boundary: a throwing getter is an input error naming the function, with the cause", () => {
    const throwing = {
      get provider(): string {
        throw new Error("x");
      },
    };
    expect(() => toolCallRepairNode(throwing as never)).toThrow(
      expect.objectContaining({
        name: "ToolCallRepairInputError",
        message: "langgraph-tool-repair: toolCallRepairNode: arguments could not be read (x)",
      }),
    );
    const throwingKey = {
      get messagesKey(): string {
        throw new Error("y");
      },
    };
    expect(() => toolCallRepairNode(throwingKey as never)).toThrow(
      expect.objectContaining({ name: "ToolCallRepairInputError", message: expect.stringContaining("(y)") }),
    );
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(() => toolCallRepairNode(proxy as never)).toThrow(
      expect.objectContaining({ name: "ToolCallRepairInputError", argument: "options" }),
    );
  });

  it("reads the configured messages key", async () => {
    const update = await toolCallRepairNode({ messagesKey: "history", provider: "openai" })({
      history: brokenHistory(),
    });
    expect(shapeOf(update.history!.slice(1))).toEqual([
      "human",
      "ai[tooluse_abandoned1]",
      "tool(tooluse_abandoned1)*",
      "human",
    ]);
    expect(toolCallRepairNode({ messagesKey: "history" })({ history: cleanHistory() })).toBe(NO_UPDATE);
  });

  it("never stores a provider's shaping: an id only Anthropic and Bedrock reject, two user turns in a row, are left alone", () => {
    const messages = [
      new HumanMessage({ content: "hi", id: "h1" }),
      new AIMessage({
        content: "",
        id: "a1",
        tool_calls: [{ id: "call.1", name: "get_weather", args: {}, type: "tool_call" }],
      }),
      new ToolMessage({ content: "sunny", tool_call_id: "call.1", id: "t1" }),
      new HumanMessage({ content: "and tomorrow?", id: "h2" }),
      new HumanMessage({ content: "in Rome", id: "h3" }),
    ];
    for (const provider of ["openai", "bedrock", "anthropic", "strict"] as const)
      expect(toolCallRepairNode({ provider })({ messages })).toBe(NO_UPDATE);
  });

  it("answers a trailing open exchange by default (it runs before a model call) and keeps it with trailing: 'keep'", async () => {
    const messages = brokenHistory("tooluse_t").slice(0, 2);
    const answered = await toolCallRepairNode()({ messages });
    expect(shapeOf(answered.messages!.slice(1))).toEqual(["human", "ai[tooluse_t]", "tool(tooluse_t)*"]);
    expect(toolCallRepairNode({ trailing: "keep" })({ messages })).toBe(NO_UPDATE);
  });

  it("works in a graph whose messages live under another key", async () => {
    const stub = await track(startOpenAIStub());
    const model = openAIModel(stub);
    const State = Annotation.Root({
      history: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
    });
    const graph = new StateGraph(State)
      .addNode("repair", toolCallRepairNode({ messagesKey: "history", provider: "openai" }))
      .addNode("agent", async (state) => ({ history: [await model.invoke(state.history)] }))
      .addEdge(START, "repair")
      .addEdge("repair", "agent")
      .addEdge("agent", END)
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "history" } };
    await graph.invoke({ history: brokenHistory("call_1") }, config);
    expect(stub.rejections).toEqual([]);
    expect(shapeOf((await graph.getState(config)).values.history)).toEqual([
      "human",
      "ai[call_1]",
      "tool(call_1)*",
      "human",
      "ai",
    ]);
  });

  it("dispatches each repair as the custom event 'tool_call_repair' (streamEvents v2)", async () => {
    const stub = await track(startOpenAIStub());
    const model = openAIModel(stub);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("repair", toolCallRepairNode({ provider: "openai" }))
      .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addEdge(START, "repair")
      .addEdge("repair", "agent")
      .addEdge("agent", END)
      .compile();
    const events = await customEventsOf(graph.streamEvents({ messages: brokenHistory("call_1") }, { version: "v2" }));
    expect(TOOL_CALL_REPAIR_EVENT).toBe("tool_call_repair");
    expect(events).toEqual([
      {
        name: "tool_call_repair",
        data: expect.objectContaining({ problem: "orphan_call", action: "synthesized_result", toolCallId: "call_1" }),
      },
    ]);
  });
});

describe("ids of a persisted repair", () => {
  it("gives every message a unique id without mutating the caller's messages", () => {
    const noId = new HumanMessage("no id");
    const first = new AIMessage({ content: "first", id: "same" });
    const second = new AIMessage({ content: "second", id: "same" });
    const result = withUniqueIds([noId, first, second]);
    expect(noId.id).toBeUndefined();
    expect(result[1]).toBe(first);
    expect(result[0]).not.toBe(noId);
    expect(result[0].text).toBe("no id");
    expect(result[2].text).toBe("second");
    const ids = result.map((m) => m.id);
    expect(ids.every((id) => typeof id === "string" && id !== "")).toBe(true);
    expect(new Set(ids).size).toBe(3);
  });

  it("keeps every message when the messages reducer applies RemoveMessage(all) + the list", () => {
    const noId = new ToolMessage({ content: "r", tool_call_id: "c1" });
    const list = [
      new AIMessage({ content: "", id: "x", tool_calls: [{ id: "c1", name: "t", args: {}, type: "tool_call" }] }),
      noId,
      new HumanMessage({ content: "h", id: "x" }),
    ];
    const stored = messagesStateReducer([new HumanMessage({ content: "old", id: "old" })], replaceAllMessages(list));
    expect(shapeOf(stored)).toEqual(["ai[c1]", "tool(c1)", "human"]);
    expect(noId.id).toBeUndefined(); // the reducer would have set it on the caller's object
    expect(new Set(stored.map((m) => m.id)).size).toBe(3);
    // A later update with one of these ids replaces that one message only.
    const later = messagesStateReducer(stored, [new HumanMessage({ content: "edited", id: stored[2].id })]);
    expect(later.map((m) => m.text)).toEqual(["", "r", "edited"]);
    expect(isSyntheticResult(later[1])).toBe(false);
  });
});
