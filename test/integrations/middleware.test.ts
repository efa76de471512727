import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, createMiddleware, toolStrategy } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { findToolCallProblems } from "../../src/engine";
import { toolCallRepairMiddleware } from "../../src/integrations/middleware";
import type { ToolCallRepair } from "../../src/types";
import { bedrockModel, openAIModel, startBedrockStub, startOpenAIStub, type Script } from "../support/stubs";
import {
  bedrockShape,
  brokenHistory,
  callWeather,
  customEventsOf,
  openAIShape,
  rejectionOf,
  runUntilAborted,
  shapeOf,
  stubTracker,
  weatherTool,
} from "./fixtures";

const track = stubTracker();
const thread = (id: string) => ({ configurable: { thread_id: id } });
const storedMessages = async (agent: { getState(config: object): Promise<{ values: unknown }> }, config: object) =>
  ((await agent.getState(config)).values as { messages: BaseMessage[] }).messages;

describe("toolCallRepairMiddleware in createAgent", () => {
  it("without the middleware, a run aborted mid-tool then a new message makes the real ChatOpenAI call fail", async () => {
    const stub = await track(startOpenAIStub({ script: [callWeather] }));
    const { getWeather, gate } = weatherTool();
    const agent = createAgent({ model: openAIModel(stub), tools: [getWeather], checkpointer: new MemorySaver() });
    gate.abortNextCall = true;
    await runUntilAborted(() =>
      agent.invoke(
        { messages: [new HumanMessage("weather in Paris?")] },
        { ...thread("t"), signal: gate.controller.signal },
      ),
    );
    const error = await rejectionOf(() => agent.invoke({ messages: [new HumanMessage("never mind")] }, thread("t")));
    expect(error.message).toContain(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
        "'tool_call_id'. The following tool_call_ids did not have response messages: call_",
    );
  });

  it("repairs the stored thread when a new input arrives (beforeAgent) and persists it", async () => {
    const stub = await track(startOpenAIStub({ script: [callWeather] }));
    const { getWeather, gate } = weatherTool();
    const repairs: ToolCallRepair[] = [];
    const agent = createAgent({
      model: openAIModel(stub),
      tools: [getWeather],
      middleware: [toolCallRepairMiddleware({ provider: "openai", onRepair: (r) => repairs.push(r) })],
      checkpointer: new MemorySaver(),
    });
    gate.abortNextCall = true;
    await runUntilAborted(() =>
      agent.invoke(
        { messages: [new HumanMessage("weather in Paris?")] },
        { ...thread("t"), signal: gate.controller.signal },
      ),
    );
    const result = await agent.invoke({ messages: [new HumanMessage("never mind")] }, thread("t"));

    expect(result.messages.at(-1)?.text).toBe("ok");
    expect(stub.rejections).toEqual([]);
    const callId = repairs[0]?.toolCallId;
    expect(repairs).toEqual([
      expect.objectContaining({ problem: "orphan_call", action: "synthesized_result", toolCallId: callId }),
    ]);
    const stored = await storedMessages(agent, thread("t"));
    expect(shapeOf(stored)).toEqual(["human", `ai[${callId}]`, `tool(${callId})*`, "human", "ai"]);
    expect(findToolCallProblems(stored, { provider: "openai" })).toEqual([]);
    expect(gate.calls).toBe(1);
  });

  it("leaves a resume alone: invoke(null) runs the interrupted tool, no placeholder is stored", async () => {
    const stub = await track(startOpenAIStub({ script: [callWeather] }));
    const { getWeather, gate } = weatherTool();
    const repairs: ToolCallRepair[] = [];
    const agent = createAgent({
      model: openAIModel(stub),
      tools: [getWeather],
      middleware: [toolCallRepairMiddleware({ onRepair: (r) => repairs.push(r) })],
      checkpointer: new MemorySaver(),
    });
    gate.abortNextCall = true;
    await runUntilAborted(() =>
      agent.invoke(
        { messages: [new HumanMessage("weather in Paris?")] },
        { ...thread("t"), signal: gate.controller.signal },
      ),
    );
    await agent.invoke(null, thread("t"));

    expect(gate.calls).toBe(2);
    expect(repairs).toEqual([]);
    const stored = await storedMessages(agent, thread("t"));
    expect(stored.filter(ToolMessage.isInstance).map((m) => m.text)).toEqual(["sunny in Paris"]);
    expect(stub.rejections).toEqual([]);
  });

  it("wrapModelCall repairs the request only: the model gets a valid list, state keeps what happened", async () => {
    const stub = await track(startBedrockStub());
    const { getWeather } = weatherTool();
    const agent = createAgent({
      model: bedrockModel(stub),
      tools: [getWeather],
      middleware: [toolCallRepairMiddleware({ repairOnInput: false })],
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
    expect(shapeOf(await storedMessages(agent, thread("t")))).toEqual([
      "human",
      "ai[tooluse_abandoned1]",
      "human",
      "ai",
    ]);
  });

  it("wrapModelCall catches what breaks during a run: a reminder inserted after tool results (Bedrock alternation)", async () => {
    const reminder = createMiddleware({
      name: "Reminder",
      beforeModel: (state) =>
        ToolMessage.isInstance(state.messages.at(-1))
          ? { messages: [new HumanMessage("Reminder: answer briefly.")] }
          : undefined,
    });
    const run = async (middleware: ReturnType<typeof createMiddleware>[]) => {
      const stub = await track(startBedrockStub({ script: [callWeather] }));
      const { getWeather } = weatherTool();
      const agent = createAgent({ model: bedrockModel(stub), tools: [getWeather], middleware });
      return { stub, result: agent.invoke({ messages: [new HumanMessage("weather in Paris?")] }) };
    };
    const without = await run([reminder]);
    expect((await rejectionOf(() => without.result)).message).toBe(
      "A conversation must alternate between user and assistant roles. Make sure the conversation " +
        "alternates between user and assistant roles and try again.",
    );
    const withRepair = await run([reminder, toolCallRepairMiddleware({ provider: "bedrock" })]);
    expect((await withRepair.result).messages.at(-1)?.text).toBe("ok");
    expect(withRepair.stub.rejections).toEqual([]);
  });

  it("dispatches each repair as the custom event 'tool_call_repair' (streamEvents v2)", async () => {
    const stub = await track(startOpenAIStub());
    const { getWeather } = weatherTool();
    const agent = createAgent({
      model: openAIModel(stub),
      tools: [getWeather],
      middleware: [toolCallRepairMiddleware({ provider: "openai" })],
    });
    const events = await customEventsOf(agent.streamEvents({ messages: brokenHistory("call_1") }, { version: "v2" }));
    expect(events).toEqual([
      {
        name: "tool_call_repair",
        data: expect.objectContaining({ problem: "orphan_call", action: "synthesized_result", toolCallId: "call_1" }),
      },
    ]);
  });
});

describe("createAgent with responseFormat (tool strategy): a real call mixed with the extract call", () => {
  /** Turn 1: the model calls get_weather AND the extract tool in one message; later turns call extract only. */
  const mixedCalls: Script = (request, callIndex) => {
    const tools = ((request as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name);
    const extract = tools.find((name) => name !== "get_weather")!;
    return callIndex === 0
      ? {
          toolCalls: [
            { name: "get_weather", args: { city: "Paris" } },
            { name: extract, args: { answer: "sunny" } },
          ],
        }
      : { toolCalls: [{ name: extract, args: { answer: "four" } }] };
  };

  async function twoTurns(withMiddleware: boolean) {
    const stub = await track(startOpenAIStub({ script: mixedCalls }));
    const { getWeather } = weatherTool();
    const agent = createAgent({
      model: openAIModel(stub),
      tools: [getWeather],
      responseFormat: toolStrategy(z.object({ answer: z.string() })),
      middleware: withMiddleware ? [toolCallRepairMiddleware({ provider: "openai" })] : [],
      checkpointer: new MemorySaver(),
    });
    const first = await agent.invoke({ messages: [new HumanMessage("weather in Paris?")] }, thread("t"));
    expect(first.structuredResponse).toEqual({ answer: "sunny" });
    const second = () => agent.invoke({ messages: [new HumanMessage("what is 2 + 2?")] }, thread("t"));
    return { stub, agent, second };
  }

  it("without the middleware the next turn in the thread is rejected", async () => {
    const { stub, second } = await twoTurns(false);
    const error = await rejectionOf(second);
    expect(error.message).toContain(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'",
    );
    expect(stub.rejections.map((r) => r.rule)).toEqual(["O1"]);
  });

  it("with the middleware the next turn is valid and the stored thread is repaired", async () => {
    const { stub, agent, second } = await twoTurns(true);
    expect((await second()).structuredResponse).toEqual({ answer: "four" });
    expect(stub.rejections).toEqual([]);
    const request = openAIShape(stub.requests[1]);
    expect(request.filter((role) => role.startsWith("tool:"))).toHaveLength(2);
    const stored = await storedMessages(agent, thread("t"));
    expect(findToolCallProblems(stored, { provider: "openai" })).toEqual([]);
    expect(shapeOf(stored).slice(0, 4)).toEqual([
      "human",
      expect.stringMatching(/^ai\[call_\w+,call_\w+\]$/),
      expect.stringMatching(/^tool\(call_\w+\)$/),
      expect.stringMatching(/^tool\(call_\w+\)\*$/),
    ]);
  });
});

describe("an agent without tools on a thread that used tools (Bedrock B3: no toolConfig)", () => {
  /** A finished tool exchange from an earlier agent, then a question for an agent that has no tools. */
  const usedTools = (): BaseMessage[] => [
    new HumanMessage({ content: "weather in Paris?", id: "h1" }),
    new AIMessage({
      content: "",
      id: "a1",
      tool_calls: [{ id: "tooluse_paris", name: "get_weather", args: { city: "Paris" }, type: "tool_call" }],
    }),
    new ToolMessage({ content: "sunny in Paris", tool_call_id: "tooluse_paris", name: "get_weather", id: "t1" }),
    new AIMessage({ content: "It is sunny.", id: "a2" }),
    new HumanMessage({ content: "Summarize our conversation.", id: "h2" }),
  ];
  type Dict = Record<string, unknown>;
  const hasToolBlocks = (request: unknown): boolean =>
    ((request as Dict).messages as { content: Dict[] }[]).some((m) =>
      m.content.some((block) => "toolUse" in block || "toolResult" in block),
    );

  it("without the middleware the request is refused (B3)", async () => {
    const stub = await track(startBedrockStub());
    const agent = createAgent({ model: bedrockModel(stub), tools: [] });
    await expect(agent.invoke({ messages: usedTools() })).rejects.toThrow(/toolConfig field must be defined/);
    expect(stub.rejections.map((r) => r.rule)).toEqual(["B3"]);
  });

  it("with the middleware: sent as text and accepted on the first request; the stored thread keeps its tool messages", async () => {
    const stub = await track(startBedrockStub());
    const repairs: ToolCallRepair[] = [];
    const agent = createAgent({
      model: bedrockModel(stub),
      tools: [],
      middleware: [toolCallRepairMiddleware({ onRepair: (r) => repairs.push(r) })],
      checkpointer: new MemorySaver(),
    });
    const result = await agent.invoke({ messages: usedTools() }, thread("t"));
    expect(result.messages.at(-1)?.text).toBe("ok");
    expect(stub.calls).toBe(1);
    expect(hasToolBlocks(stub.requests[0])).toBe(false);
    expect(JSON.stringify(stub.requests[0])).toContain("sunny in Paris");
    expect(repairs.map((r) => r.action)).toEqual(["converted_to_text", "converted_to_text"]);
    const stored = await storedMessages(agent, thread("t"));
    expect(shapeOf(stored)).toEqual(["human", "ai[tooluse_paris]", "tool(tooluse_paris)", "ai", "human", "ai"]);
  });

  it("recovery alone (repairModelRequest: false): the B3 rejection is force-repaired and retried once", async () => {
    const stub = await track(startBedrockStub());
    const agent = createAgent({
      model: bedrockModel(stub),
      tools: [],
      middleware: [toolCallRepairMiddleware({ repairModelRequest: false })],
    });
    const result = await agent.invoke({ messages: usedTools() });
    expect(result.messages.at(-1)?.text).toBe("ok");
    expect(stub.rejections.map((r) => r.rule)).toEqual(["B3"]);
    expect(stub.calls).toBe(2);
    expect(hasToolBlocks(stub.requests[1])).toBe(false);
  });

  it("an agent with tools, or with a tool-strategy response format, sends its tool blocks as they are", async () => {
    const withTools = await track(startBedrockStub());
    await createAgent({
      model: bedrockModel(withTools),
      tools: [weatherTool().getWeather],
      middleware: [toolCallRepairMiddleware()],
    }).invoke({ messages: usedTools() });
    expect(hasToolBlocks(withTools.requests[0])).toBe(true);

    const extract: Script = (request) => {
      const tools = (
        ((request as Dict).toolConfig as { tools: { toolSpec: { name: string } }[] } | undefined)?.tools ?? []
      ).map((t) => t.toolSpec.name);
      return { toolCalls: [{ name: tools[0], args: { summary: "sunny" } }] };
    };
    const structured = await track(startBedrockStub({ script: extract }));
    const agent = createAgent({
      model: bedrockModel(structured),
      tools: [],
      responseFormat: toolStrategy(z.object({ summary: z.string() })),
      middleware: [toolCallRepairMiddleware()],
    });
    expect((await agent.invoke({ messages: usedTools() })).structuredResponse).toEqual({ summary: "sunny" });
    expect(hasToolBlocks(structured.requests[0])).toBe(true);
    expect(structured.rejections).toEqual([]);
  });
});
