import { type BaseMessage, HumanMessage, RemoveMessage } from "@langchain/core/messages";
import { MemorySaver, REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { findToolCallProblems } from "../../src/engine";
import { toolCallRepairHook } from "../../src/integrations/hook";
import type { ToolCallRepair } from "../../src/types";
import { bedrockModel, openAIModel, startBedrockStub, startOpenAIStub } from "../support/stubs";
import {
  bedrockShape,
  brokenHistory,
  cleanHistory,
  customEventsOf,
  openAIShape,
  openAIUserTexts,
  rejectionOf,
  shapeOf,
  stubTracker,
  weatherTool,
} from "./fixtures";

const track = stubTracker();
const thread = (id: string) => ({ configurable: { thread_id: id } });

describe("toolCallRepairHook as createReactAgent's preModelHook", () => {
  it("without the hook, a broken thread makes the real ChatBedrockConverse call fail", async () => {
    const stub = await track(startBedrockStub());
    const { getWeather } = weatherTool();
    const agent = createReactAgent({ llm: bedrockModel(stub), tools: [getWeather], checkpointer: new MemorySaver() });
    const error = await rejectionOf(() => agent.invoke({ messages: brokenHistory() }, thread("t")));
    expect(error.message).toBe(
      "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_abandoned1",
    );
  });

  it("request-only by default: the model gets a valid list, state keeps what happened", async () => {
    const stub = await track(startBedrockStub());
    const { getWeather } = weatherTool();
    const repairs: ToolCallRepair[] = [];
    const agent = createReactAgent({
      llm: bedrockModel(stub),
      tools: [getWeather],
      preModelHook: toolCallRepairHook({ onRepair: (r) => repairs.push(r) }),
      checkpointer: new MemorySaver(),
    });
    const result = await agent.invoke({ messages: brokenHistory() }, thread("t"));

    expect(result.messages.at(-1)?.text).toBe("ok");
    expect(stub.rejections).toEqual([]);
    expect(bedrockShape(stub.requests[0])).toEqual([
      "user(text)",
      "assistant(toolUse:tooluse_abandoned1)",
      "user(toolResult:tooluse_abandoned1)",
      "assistant(text)",
      "user(text)",
    ]);
    const stored = (await agent.getState(thread("t"))).values.messages as BaseMessage[];
    expect(shapeOf(stored)).toEqual(["human", "ai[tooluse_abandoned1]", "human", "ai"]);
    expect(repairs.map((r) => r.action)).toEqual(["synthesized_result", "inserted_assistant_message"]);
  });

  it("persist: true rewrites the stored messages instead", async () => {
    const stub = await track(startBedrockStub());
    const { getWeather } = weatherTool();
    const agent = createReactAgent({
      llm: bedrockModel(stub),
      tools: [getWeather],
      preModelHook: toolCallRepairHook({ persist: true, provider: "bedrock" }),
      checkpointer: new MemorySaver(),
    });
    await agent.invoke({ messages: brokenHistory() }, thread("t"));

    expect(stub.rejections).toEqual([]);
    const values = (await agent.getState(thread("t"))).values as {
      messages: BaseMessage[];
      llmInputMessages?: BaseMessage[];
    };
    // Stored: the structural fix only. The request also got Bedrock's shaping (an assistant turn between the
    // placeholder result and the user's message), which is never stored.
    expect(shapeOf(values.messages)).toEqual([
      "human",
      "ai[tooluse_abandoned1]",
      "tool(tooluse_abandoned1)*",
      "human",
      "ai",
    ]);
    expect(findToolCallProblems(values.messages, { provider: "bedrock", level: "structural" })).toEqual([]);
    expect(bedrockShape(stub.requests.at(-1))).toEqual([
      "user(text)",
      "assistant(toolUse:tooluse_abandoned1)",
      "user(toolResult:tooluse_abandoned1)",
      "assistant(text)",
      "user(text)",
    ]);
  });

  it("returns the current messages as llmInputMessages on a clean state, in both modes", () => {
    const messages = cleanHistory();
    for (const persist of [false, true]) {
      const update = toolCallRepairHook({ persist })({ messages });
      expect(update).toEqual({ llmInputMessages: messages });
      expect((update as { llmInputMessages: BaseMessage[] }).llmInputMessages).toBe(messages);
    }
  });

  it("dispatches each repair as the custom event 'tool_call_repair' (streamEvents v2)", async () => {
    const stub = await track(startOpenAIStub());
    const { getWeather } = weatherTool();
    const agent = createReactAgent({
      llm: openAIModel(stub),
      tools: [getWeather],
      preModelHook: toolCallRepairHook({ provider: "openai" }),
    });
    const events = await customEventsOf(agent.streamEvents({ messages: brokenHistory("call_1") }, { version: "v2" }));
    expect(events).toEqual([
      {
        name: "tool_call_repair",
        data: expect.objectContaining({ problem: "orphan_call", action: "synthesized_result", toolCallId: "call_1" }),
      },
    ]);
    expect(stub.rejections).toEqual([]);
  });
});

describe("the sticky llmInputMessages channel", () => {
  /** Turn 1 repaired in the request only; the thread then repaired out of band; turn 2 asks something new. */
  async function secondTurnAfterRepair(preModelHook: ReturnType<typeof toolCallRepairHook>) {
    const stub = await track(startOpenAIStub());
    const { getWeather } = weatherTool();
    const agent = createReactAgent({
      llm: openAIModel(stub),
      tools: [getWeather],
      preModelHook,
      checkpointer: new MemorySaver(),
    });
    const config = thread("sticky");
    await agent.invoke({ messages: brokenHistory("call_1") }, config);
    await agent.updateState(config, { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...cleanHistory()] });
    await agent.invoke({ messages: [new HumanMessage({ content: "what about Rome?", id: "h3" })] }, config);
    expect(stub.rejections).toEqual([]);
    return stub.requests.at(-1);
  }

  it("is a real trap: a hook that returns {} once the state is clean feeds the model the previous turn's list", async () => {
    const repairOnlyWhenBroken = toolCallRepairHook({ provider: "openai" });
    const naiveHook: ReturnType<typeof toolCallRepairHook> = (state, config) => {
      const update = repairOnlyWhenBroken(state, config);
      return "then" in update ? update : update.llmInputMessages === state.messages ? {} : update;
    };
    const request = await secondTurnAfterRepair(naiveHook);
    expect(openAIUserTexts(request)).not.toContain("what about Rome?");
    expect(openAIShape(request)).toEqual(["user", "assistant[call_1]", "tool:call_1", "user"]);
  });

  it("persist: true also writes the current list every call, so one left by request-only calls is never used", async () => {
    const stub = await track(startOpenAIStub());
    const { getWeather } = weatherTool();
    const checkpointer = new MemorySaver();
    const config = thread("switch");
    const agentWith = (preModelHook: ReturnType<typeof toolCallRepairHook>) =>
      createReactAgent({ llm: openAIModel(stub), tools: [getWeather], preModelHook, checkpointer });
    await agentWith(toolCallRepairHook({ provider: "openai" })).invoke({ messages: brokenHistory("call_1") }, config);
    const persisting = agentWith(toolCallRepairHook({ provider: "openai", persist: true }));
    await persisting.invoke({ messages: [new HumanMessage({ content: "what about Rome?", id: "h3" })] }, config);

    expect(stub.rejections).toEqual([]);
    expect(openAIUserTexts(stub.requests.at(-1))).toContain("what about Rome?");
    expect(openAIShape(stub.requests.at(-1))).toEqual([
      "user",
      "assistant[call_1]",
      "tool:call_1",
      "user",
      "assistant",
      "user",
    ]);
    const values = (await persisting.getState(config)).values as { llmInputMessages?: BaseMessage[] };
    expect(values.llmInputMessages?.at(-1)?.content).toBe("what about Rome?");
  });

  it("this hook hands the model the current list on a clean turn after a repaired one", async () => {
    const request = await secondTurnAfterRepair(toolCallRepairHook({ provider: "openai" }));
    expect(openAIUserTexts(request)).toEqual(["weather in Paris?", "thanks, and 2 + 2?", "what about Rome?"]);
    expect(openAIShape(request)).toEqual([
      "user",
      "assistant[tooluse_done1]",
      "tool:tooluse_done1",
      "assistant",
      "user",
      "user",
    ]);
  });
});
