/**
 * `withRequestRepair`: the model itself recovers, wherever it is used (plain calls, createReactAgent,
 * a StateGraph node, bindTools, withConfig, withStructuredOutput, stream, streamEvents), through the real
 * clients against the stubs.
 */
import { ChatBedrockConverse } from "@langchain/aws";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import {
  AIMessage,
  AIMessageChunk,
  type BaseMessage,
  HumanMessage,
  RemoveMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { MemorySaver, MessagesAnnotation, REMOVE_ALL_MESSAGES, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { findToolCallProblems } from "../../src/engine";
import { forceRepairToolCalls } from "../../src/recovery/force-repair";
import { repairsRequests, withRequestRepair } from "../../src/integrations/model-wrapper";
import { rejectionDiagnosisOf } from "../../src/recovery/force-repair";
import type { ProviderRejection, ToolCallRepair } from "../../src/types";
import {
  anthropicModel,
  bedrockModel,
  droppedLargeResults,
  openAIModel,
  startAnthropicStub,
  startBedrockStub,
  startOpenAIStub,
} from "../support/stubs";
import { customEventsOf, rejectionOf, stubTracker, weatherTool } from "./fixtures";
import { pinnedTo } from "../support/versions";

/** `streamEvents()` without a version (the content-block protocol): @langchain/core 1.1.x requires a version. */
const NO_VERSIONLESS_EVENTS = pinnedTo("@langchain/core", "1.4.0", "streamEvents() without a version");

const track = stubTracker();

/**
 * Options of a wrapper told the wrong provider (what issue 10 calls a history repaired for the wrong provider):
 * its own request repair leaves OpenAI-valid ids alone, so Bedrock and Anthropic reject them and the recovery runs.
 */
const WRONG_PROVIDER = { provider: "openai" } as const;

/** A finished exchange whose ids another provider wrote, then a new question: Bedrock and Anthropic refuse the ids. */
function threadFromAnotherProvider(): BaseMessage[] {
  return [
    new HumanMessage({ content: "weather in Paris?", id: "h1" }),
    new AIMessage({
      content: "",
      id: "a1",
      tool_calls: [{ id: "functions.get_weather:0", name: "get_weather", args: { city: "Paris" }, type: "tool_call" }],
    }),
    new ToolMessage({
      content: "sunny in Paris",
      tool_call_id: "functions.get_weather:0",
      name: "get_weather",
      id: "t1",
    }),
    new AIMessage({ content: "It is sunny.", id: "a2" }),
    new HumanMessage({ content: "and tomorrow?", id: "h2" }),
  ];
}

/** A valid exchange with a result larger than the gateway in front of the provider lets through. */
function threadWithLargeResult(callId = "call_big"): BaseMessage[] {
  return [
    new HumanMessage({ content: "report?", id: "h1" }),
    new AIMessage({
      content: "",
      id: "a1",
      tool_calls: [{ id: callId, name: "get_weather", args: { city: "Paris" }, type: "tool_call" }],
    }),
    new ToolMessage({ content: `report ${"x".repeat(2000)}`, tool_call_id: callId, name: "get_weather", id: "t1" }),
    new HumanMessage({ content: "summarize it", id: "h2" }),
  ];
}

describe("every request repaired for the model's provider", () => {
  it("the provider comes from the model: ids Bedrock refuses are renamed before the first request, never rejected", async () => {
    const stub = await track(startBedrockStub());
    const repairs: ToolCallRepair[] = [];
    const model = withRequestRepair(bedrockModel(stub), { onRepair: (r) => repairs.push(r) });
    const input = threadFromAnotherProvider();
    const answer = await model.bindTools([weatherTool().getWeather]).invoke(input);
    expect(answer.text).toBe("ok");
    expect(stub.calls).toBe(1);
    expect(stub.rejections).toEqual([]);
    expect(repairs.map((r) => [r.action, r.rejection])).toEqual([["renamed_call_id", undefined]]);
    // The caller's messages are not touched: the repair is the request's only.
    expect((input[1] as AIMessage).tool_calls![0].id).toBe("functions.get_weather:0");
  });

  it("repairRequests: false leaves requests alone (recovery only)", async () => {
    const stub = await track(startBedrockStub());
    const model = withRequestRepair(bedrockModel(stub), { repairRequests: false }).bindTools([
      weatherTool().getWeather,
    ]);
    expect((await model.invoke(threadFromAnotherProvider())).text).toBe("ok");
    expect(stub.rejections.map((r) => r.rule)).toEqual(["B4"]);
    expect(stub.calls).toBe(2);
  });

  it("recoverRejections: false lets a rejection through after one request", async () => {
    const stub = await track(startBedrockStub());
    const model = withRequestRepair(bedrockModel(stub), { ...WRONG_PROVIDER, recoverRejections: false }).bindTools([
      weatherTool().getWeather,
    ]);
    await expect(model.invoke(threadFromAnotherProvider())).rejects.toThrow(/regular expression pattern/);
    expect(stub.calls).toBe(1);
  });

  it("refuses options of the wrong type when it is built", () => {
    expect(() =>
      withRequestRepair(bedrockModel({ url: "http://127.0.0.1:9" }), { repairRequests: "yes" as never }),
    ).toThrow(/options.repairRequests is "yes"; expected a boolean/);
    expect(() =>
      withRequestRepair(bedrockModel({ url: "http://127.0.0.1:9" }), { provider: "bogus" as never }),
    ).toThrow(/options\.provider/);
  });

  it("names a model that is not one, null and undefined included", () => {
    for (const model of [null, undefined, 42])
      expect(() => withRequestRepair(model as never)).toThrow(
        expect.objectContaining({ name: "ToolCallRepairInputError", argument: "model" }),
      );
  });
});

/** A thread that used a tool (a finished exchange, then an interrupted one) and now asks something of a model without tools. */
function threadThatUsedTools(): BaseMessage[] {
  return [
    new HumanMessage({ content: "weather in Paris?", id: "h1" }),
    new AIMessage({
      content: "",
      id: "a1",
      tool_calls: [{ id: "tooluse_paris", name: "get_weather", args: { city: "Paris" }, type: "tool_call" }],
    }),
    new ToolMessage({ content: "sunny in Paris", tool_call_id: "tooluse_paris", name: "get_weather", id: "t1" }),
    new AIMessage({
      content: "Checking Rome too.",
      id: "a2",
      tool_calls: [{ id: "tooluse_rome", name: "get_weather", args: { city: "Rome" }, type: "tool_call" }],
    }),
    new HumanMessage({ content: "Summarize this conversation in one line.", id: "h2" }),
  ];
}

type Dict = Record<string, unknown>;
/** Whether a Converse request holds any toolUse or toolResult block. */
const hasToolBlocks = (request: unknown): boolean =>
  ((request as Dict).messages as { content: Dict[] }[]).some((m) =>
    m.content.some((block) => "toolUse" in block || "toolResult" in block),
  );

describe("a model called without tools (an unbound ChatBedrockConverse: Bedrock B3)", () => {
  it("sent as it is, the stub refuses the thread with B3", async () => {
    const stub = await track(startBedrockStub());
    await expect(bedrockModel(stub).invoke(threadThatUsedTools())).rejects.toThrow(/toolConfig field must be defined/);
    expect(stub.rejections.map((r) => r.rule)).toEqual(["B3"]);
  });

  it("wrapped: calls and results are sent as text, accepted on the first request; the caller's messages are untouched", async () => {
    const stub = await track(startBedrockStub());
    const repairs: ToolCallRepair[] = [];
    const input = threadThatUsedTools();
    const answer = await withRequestRepair(bedrockModel(stub), { onRepair: (r) => repairs.push(r) }).invoke(input);
    expect(answer.text).toBe("ok");
    expect(stub.calls).toBe(1);
    expect(stub.rejections).toEqual([]);
    const sent = stub.requests[0] as Dict;
    expect(sent.toolConfig).toBeUndefined();
    expect(hasToolBlocks(sent)).toBe(false);
    expect(JSON.stringify(sent.messages)).toContain("sunny in Paris");
    expect(repairs.filter((r) => r.action === "converted_to_text").map((r) => r.toolCallId)).toEqual([
      "tooluse_paris",
      "tooluse_paris",
      "tooluse_rome",
      "tooluse_rome",
    ]);
    expect((input[1] as AIMessage).tool_calls).toHaveLength(1);
  });

  it("streamed: the same, through _streamResponseChunks", async () => {
    const stub = await track(startBedrockStub());
    let text = "";
    for await (const chunk of await withRequestRepair(bedrockModel(stub)).stream(threadThatUsedTools()))
      text += chunk.text;
    expect(text).toBe("ok");
    expect(stub.calls).toBe(1);
    expect(hasToolBlocks(stub.requests[0])).toBe(false);
  });

  it("with tools bound (bindTools), the calls stay tool blocks", async () => {
    const stub = await track(startBedrockStub());
    const repairs: ToolCallRepair[] = [];
    await withRequestRepair(bedrockModel(stub), { onRepair: (r) => repairs.push(r) })
      .bindTools([weatherTool().getWeather])
      .invoke(threadThatUsedTools());
    expect(stub.calls).toBe(1);
    expect((stub.requests[0] as Dict).toolConfig).toBeDefined();
    expect(hasToolBlocks(stub.requests[0])).toBe(true);
    expect(repairs.map((r) => r.action)).not.toContain("converted_to_text");
  });

  it(
    "recovery alone (repairRequests: false): the B3 rejection is force-repaired and the retry, still " +
      "without tools, is accepted",
    async () => {
      const stub = await track(startBedrockStub());
      const repairs: ToolCallRepair[] = [];
      const recoveries: BaseMessage[][] = [];
      const model = withRequestRepair(bedrockModel(stub), {
        repairRequests: false,
        onRepair: (r) => repairs.push(r),
        onRecovery: (r) => recoveries.push(r.messages),
      });
      expect((await model.invoke(threadThatUsedTools())).text).toBe("ok");
      expect(stub.calls).toBe(2);
      expect(stub.rejections.map((r) => r.rule)).toEqual(["B3"]);
      expect(hasToolBlocks(stub.requests[1])).toBe(false);
      expect(repairs.length).toBeGreaterThan(0);
      expect(repairs.every((r) => r.rejection?.rule === "B3")).toBe(true);
      expect(recoveries[0].some((m) => ToolMessage.isInstance(m))).toBe(false);
    },
  );

  it(
    "toolsInRequest: true given explicitly turns the detection off: the first request is refused, " +
      "the recovery still gets through",
    async () => {
      const stub = await track(startBedrockStub());
      expect(
        (await withRequestRepair(bedrockModel(stub), { toolsInRequest: true }).invoke(threadThatUsedTools())).text,
      ).toBe("ok");
      expect(stub.rejections.map((r) => r.rule)).toEqual(["B3"]);
      expect(stub.calls).toBe(2);
    },
  );
});

describe("the model call itself", () => {
  it("invoke after bindTools: rejected, force-repaired, answered with two requests; repairs reported with the rejection", async () => {
    const stub = await track(startBedrockStub());
    const repairs: ToolCallRepair[] = [];
    const recoveries: { rejection: ProviderRejection; messages: BaseMessage[] }[] = [];
    const model = withRequestRepair(bedrockModel(stub), {
      ...WRONG_PROVIDER,
      onRepair: (r) => repairs.push(r),
      onRecovery: (r) => recoveries.push(r),
    });
    const answer = await model.bindTools([weatherTool().getWeather]).invoke(threadFromAnotherProvider());

    expect(answer.text).toBe("ok");
    expect(stub.calls).toBe(2);
    expect(stub.rejections.map((r) => r.rule)).toEqual(["B4"]);
    expect((stub.requests[1] as { toolConfig?: unknown }).toolConfig).toBeDefined();
    expect(repairs).toEqual([
      expect.objectContaining({
        action: "renamed_call_id",
        rejection: expect.objectContaining({ provider: "bedrock", rule: "B4", messageIndex: 1 }),
      }),
    ]);
    expect(recoveries).toHaveLength(1);
    expect(findToolCallProblems(recoveries[0].messages, { provider: "bedrock" })).toEqual([]);
  });

  it("is still the model: instanceof, _llmType, and wrapping twice or a binding", async () => {
    const stub = await track(startBedrockStub());
    const base = bedrockModel(stub);
    const model = withRequestRepair(base);
    expect(model).toBeInstanceOf(ChatBedrockConverse);
    expect(model._llmType()).toBe(base._llmType());
    expect(model.model).toBe(base.model);
    expect(withRequestRepair(model)).toBe(model);
    expect(repairsRequests(model.bindTools([weatherTool().getWeather]))).toBe(true);
    const bound = withRequestRepair(base.bindTools([weatherTool().getWeather]));
    expect(repairsRequests(bound)).toBe(true);
    expect((await bound.invoke(threadFromAnotherProvider())).text).toBe("ok");
    expect(repairsRequests(base)).toBe(false);
    expect(() => withRequestRepair("gpt-4o" as never)).toThrow(TypeError);
  });

  it("ChatOpenAI, whose withConfig returns a new model: the new one recovers too", async () => {
    const stub = await track(startOpenAIStub({ extraRule: droppedLargeResults("openai", 1000) }));
    const model = withRequestRepair(openAIModel(stub)).bindTools([weatherTool().getWeather]);
    expect(repairsRequests(model)).toBe(true);
    expect((await model.invoke(threadWithLargeResult())).text).toBe("ok");
    expect(stub.calls).toBe(2);
    expect(stub.rejections.map((r) => r.rule)).toEqual(["O1"]);
  });

  it("withStructuredOutput: the structured answer after the retry", async () => {
    const stub = await track(
      startBedrockStub({
        script: (request) => {
          const name = (request as { toolConfig: { tools: { toolSpec: { name: string } }[] } }).toolConfig.tools[0]
            .toolSpec.name;
          return { toolCalls: [{ name, args: { answer: "sunny" } }] };
        },
      }),
    );
    const structured = withRequestRepair(bedrockModel(stub), WRONG_PROVIDER).withStructuredOutput(
      z.object({ answer: z.string() }),
      { name: "forecast" },
    );
    expect(await structured.invoke(threadFromAnotherProvider())).toEqual({ answer: "sunny" });
    expect(stub.calls).toBe(2);
  });

  it("a second rejection: the original error with the diagnosis, after exactly two requests", async () => {
    const stub = await track(
      startOpenAIStub({
        extraRule: () => ({
          rule: "O1",
          message:
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
            "'tool_call_id'. The following tool_call_ids did not have response messages: call_big",
        }),
      }),
    );
    const error = await rejectionOf(() => withRequestRepair(openAIModel(stub)).invoke(threadWithLargeResult()));
    expect(stub.calls).toBe(2);
    expect(error.message).toContain("did not have response messages: call_big");
    expect(rejectionDiagnosisOf(error)).toMatchObject({
      retried: true,
      rejection: { toolCallIds: ["call_big"] },
      retryRejection: { toolCallIds: ["call_big"] },
    });
  });

  it("openai: an error about a tool definition (its name) is not re-sent with a reshaped history", async () => {
    // OpenAI's text ends like O5, but names `tools[0]`: no change to the history can fix it.
    const message =
      "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.";
    const stub = await track(startOpenAIStub({ fail: () => ({ status: 400, message }) }));
    // Valid for OpenAI as it is (two user messages in a row); a strict reshaping would merge them.
    const error = await rejectionOf(() =>
      withRequestRepair(openAIModel(stub), { provider: "openai" }).invoke([
        new HumanMessage("a"),
        new HumanMessage("b"),
      ]),
    );
    expect(stub.calls).toBe(1);
    expect(error.message).toContain("tools[0]");
    expect(rejectionDiagnosisOf(error)).toBeUndefined();
  });

  // Not about the history: each provider's own text (as in rejection-recovery.test.ts), never retried.
  const contextTooLong = {
    bedrock: { status: 400, message: "Input is too long for requested model." },
    openai: {
      status: 400,
      message:
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
      type: "context_length_exceeded",
    },
    anthropic: { status: 400, message: "prompt is too long: 210000 tokens > 200000 maximum" },
  } as const;
  for (const [provider, start, make] of [
    ["bedrock", startBedrockStub, bedrockModel],
    ["openai", startOpenAIStub, openAIModel],
    ["anthropic", startAnthropicStub, anthropicModel],
  ] as const) {
    it(`${provider}: a 429 passes through unchanged after one request`, async () => {
      const stub = await track(start({ fail: () => ({ status: 429, message: "Too many requests, slow down." }) }));
      const error = await rejectionOf(() => withRequestRepair(make(stub as never)).invoke(threadFromAnotherProvider()));
      expect(stub.calls).toBe(1);
      expect(error.message).toContain("Too many requests, slow down.");
      expect(rejectionDiagnosisOf(error)).toBeUndefined();
    });

    it(`${provider}: a context-length error passes through unchanged after one request`, async () => {
      const failure = contextTooLong[provider];
      const bare = await track(start({ fail: () => failure }));
      const baseline = await rejectionOf(() => make(bare as never).invoke(threadFromAnotherProvider()));
      const stub = await track(start({ fail: () => failure }));
      const error = await rejectionOf(() => withRequestRepair(make(stub as never)).invoke(threadFromAnotherProvider()));
      expect(stub.calls).toBe(1);
      expect(error.constructor).toBe(baseline.constructor);
      expect(error.message).toBe(baseline.message);
      expect(error.message).toContain(failure.message);
      expect(rejectionDiagnosisOf(error)).toBeUndefined();
    });
  }
});

describe("streaming", () => {
  it("stream: the rejection comes before the first chunk, so the recovered answer streams", async () => {
    const stub = await track(startAnthropicStub({ script: [{ text: "Tomorrow too." }] }));
    const chunks: string[] = [];
    for await (const chunk of await withRequestRepair(anthropicModel(stub), WRONG_PROVIDER).stream(
      threadFromAnotherProvider(),
    ))
      chunks.push(chunk.text);
    expect(chunks.join("")).toBe("Tomorrow too.");
    expect(stub.calls).toBe(2);
    expect(stub.rejections.map((r) => r.rule)).toEqual(["A6"]);
    expect((stub.requests[1] as { stream?: boolean }).stream).toBe(true);
  });

  it("streamEvents v2: token events of the answer, and the repairs as 'tool_call_repair' events of the model's run", async () => {
    const stub = await track(startBedrockStub({ script: [{ text: "Tomorrow too." }] }));
    const model = withRequestRepair(bedrockModel(stub), WRONG_PROVIDER).bindTools([weatherTool().getWeather]);
    const events: { event: string; name: string; data: unknown }[] = [];
    for await (const event of model.streamEvents(threadFromAnotherProvider(), { version: "v2" })) events.push(event);
    const streamed = events
      .filter((e) => e.event === "on_chat_model_stream")
      .map((e) => (e.data as { chunk: AIMessageChunk }).chunk.text);
    expect(streamed.join("")).toBe("Tomorrow too.");
    expect(await customEventsOf(toAsync(events))).toEqual([
      {
        name: "tool_call_repair",
        data: expect.objectContaining({
          action: "renamed_call_id",
          rejection: expect.objectContaining({ rule: "B4" }),
        }),
      },
    ]);
    expect(stub.calls).toBe(2);
  });

  it.skipIf(NO_VERSIONLESS_EVENTS !== undefined)(
    "streamEvents() without a version (the content-block event protocol): ChatOpenAI's own event stream, recovered",
    async () => {
      const stub = await track(
        startOpenAIStub({ script: [{ text: "Tomorrow too." }], extraRule: droppedLargeResults("openai", 1000) }),
      );
      const stream = withRequestRepair(openAIModel(stub)).streamEvents(threadWithLargeResult());
      const events: string[] = [];
      for await (const event of stream) events.push(event.event);
      expect(events).toContain("content-block-delta");
      expect((await stream).text).toBe("Tomorrow too.");
      expect(stub.calls).toBe(2);
    },
  );

  it.skipIf(NO_VERSIONLESS_EVENTS !== undefined)(
    "streamEvents() without a version on a model without its own event stream (ChatAnthropic): recovered through its chunks",
    async () => {
      const stub = await track(startAnthropicStub({ script: [{ text: "Tomorrow too." }] }));
      const stream = withRequestRepair(anthropicModel(stub), WRONG_PROVIDER).streamEvents(threadFromAnotherProvider());
      expect((await stream).text).toBe("Tomorrow too.");
      expect(stub.calls).toBe(2);
    },
  );

  it("an error after the first chunk is passed on as it is: no retry (the chunks already reached the caller)", async () => {
    const model = new MidStreamFailure({});
    const recovering = withRequestRepair(model);
    const chunks: string[] = [];
    const error = await rejectionOf(async () => {
      for await (const chunk of await recovering.stream([new HumanMessage("hi")])) chunks.push(chunk.text);
    });
    expect(chunks).toEqual(["partial "]);
    expect(error.message).toContain("Expected toolResult blocks");
    // Fields the model writes land on the wrapper (its prototype is the model).
    expect(recovering.starts).toBe(1);
    expect(rejectionDiagnosisOf(error)).toBeUndefined();
  });
});

async function* toAsync<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

/** A model whose stream fails after its first chunk with a history-looking text (no stub can do that). */
class MidStreamFailure extends BaseChatModel {
  starts = 0;
  _llmType() {
    return "mid-stream-failure";
  }
  async _generate(): Promise<ChatResult> {
    throw new Error("not used");
  }
  override async *_streamResponseChunks(): AsyncGenerator<ChatGenerationChunk> {
    this.starts++;
    yield new ChatGenerationChunk({ text: "partial ", message: new AIMessageChunk("partial ") });
    throw new Error("Expected toolResult blocks at messages.2.content for the following Ids: tooluse_a");
  }
}

describe("in an agent", () => {
  it("createReactAgent({ llm }): the agent binds its tools to the wrapper and the call is recovered", async () => {
    const stub = await track(startBedrockStub());
    const agent = createReactAgent({
      llm: withRequestRepair(bedrockModel(stub), WRONG_PROVIDER),
      tools: [weatherTool().getWeather],
      checkpointSaver: new MemorySaver(),
    });
    const result = await agent.invoke({ messages: threadFromAnotherProvider() }, { configurable: { thread_id: "r" } });
    expect(result.messages.at(-1)?.text).toBe("ok");
    expect(stub.calls).toBe(2);
    expect((stub.requests[1] as { toolConfig?: { tools: unknown[] } }).toolConfig?.tools).toHaveLength(1);
  });

  it("createReactAgent with responseFormat: the structured call goes through the wrapper as well", async () => {
    const stub = await track(
      startOpenAIStub({
        extraRule: droppedLargeResults("openai", 1000),
        script: (request) => {
          const tools = ((request as { tools?: { function: { name: string } }[] }).tools ?? []).map(
            (t) => t.function.name,
          );
          const format = (request as { response_format?: unknown }).response_format;
          return format
            ? { text: JSON.stringify({ answer: "sunny" }) }
            : tools.length === 1 && tools[0] !== "get_weather"
              ? { toolCalls: [{ name: tools[0], args: { answer: "sunny" } }] }
              : { text: "done" };
        },
      }),
    );
    const agent = createReactAgent({
      llm: withRequestRepair(openAIModel(stub)),
      tools: [weatherTool().getWeather],
      responseFormat: z.object({ answer: z.string() }),
    });
    const result = await agent.invoke({ messages: threadWithLargeResult() });
    expect(result.structuredResponse).toEqual({ answer: "sunny" });
    // Agent call and structured call: each rejected once and recovered.
    expect(stub.rejections.map((r) => r.rule)).toEqual(["O1", "O1"]);
    expect(stub.calls).toBe(4);
  });

  it(
    "a StateGraph model node that stores the structural fix of a recovered rejection " +
      "(docs/recovery.md): the next turn is accepted on its first request",
    async () => {
      // A gateway in front of Bedrock drops results over 1,000 characters: a rule the engine cannot foresee.
      const stub = await track(startBedrockStub({ extraRule: droppedLargeResults("bedrock", 1000) }));
      const base = bedrockModel(stub).bindTools([weatherTool().getWeather]);
      const shapedRequests: BaseMessage[][] = [];
      const graph = new StateGraph(MessagesAnnotation)
        .addNode("agent", async (state) => {
          let rejection: ProviderRejection | undefined;
          const model = withRequestRepair(base, {
            onRecovery: (recovery) => {
              rejection = recovery.rejection;
              shapedRequests.push(recovery.messages);
            },
          });
          const answer = await model.invoke(state.messages);
          if (!rejection) return { messages: [answer] };
          // As documented: the structural fix of what the provider named, never the request's own shaping.
          const fixed = forceRepairToolCalls(state.messages, rejection, { level: "structural" }).messages;
          return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...fixed, answer] };
        })
        .addEdge("__start__", "agent")
        .compile({ checkpointer: new MemorySaver() });
      const config = { configurable: { thread_id: "g" } };
      await graph.invoke({ messages: threadWithLargeResult("tooluse_big") }, config);
      expect(stub.calls).toBe(2);
      expect(stub.rejections.map((r) => r.rule)).toEqual(["B1"]);
      const stored = (await graph.getState(config)).values.messages as BaseMessage[];
      expect(findToolCallProblems(stored, { level: "structural" })).toEqual([]);
      // The large result is no longer a result; its words are kept in the thread.
      expect(stored.some((m) => ToolMessage.isInstance(m) && m.text.startsWith("report x"))).toBe(false);
      expect(stored.some((m) => m.text.includes("report xxx"))).toBe(true);
      // What was stored is the structural fix, not the request that was sent (which Bedrock's alternation shaped).
      expect(shapedRequests).toHaveLength(1);
      expect(stored.map((m) => m.getType())).not.toEqual(shapedRequests[0].map((m) => m.getType()));
      await graph.invoke({ messages: [new HumanMessage("thanks")] }, config);
      expect(stub.calls).toBe(3);
      expect(stub.rejections).toHaveLength(1);
    },
  );
});
