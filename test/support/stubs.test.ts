import { AIMessage, type AIMessageChunk, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  anthropicModel,
  bedrockModel,
  openAIModel,
  startAnthropicStub,
  startBedrockStub,
  startOpenAIStub,
  type RunningStub,
  type Script,
} from "./stubs";
import { schemaSubsetViolation, supportsOutputConfig } from "./stubs/bedrock-structured";

const getWeather = tool(async ({ city }) => `sunny in ${city}`, {
  name: "get_weather",
  description: "Weather for a city",
  schema: z.object({ city: z.string() }),
});

const script: Script = [{ text: "checking", toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }];

/** An AIMessage whose call `a` is followed by a new human message instead of its result. */
const brokenHistory = (): BaseMessage[] => [
  new HumanMessage("weather?"),
  new AIMessage({ content: "", tool_calls: [{ id: "a", name: "get_weather", args: { city: "Paris" } }] }),
  new HumanMessage("never mind"),
];

const running: RunningStub[] = [];
async function track<T extends RunningStub>(stub: Promise<T>): Promise<T> {
  const started = await stub;
  running.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((stub) => stub.close()));
});

async function collect(stream: AsyncIterable<AIMessageChunk>): Promise<AIMessageChunk> {
  let merged: AIMessageChunk | undefined;
  for await (const chunk of stream) merged = merged ? merged.concat(chunk) : chunk;
  if (!merged) throw new Error("empty stream");
  return merged;
}

/** Invokes and returns the thrown error (fails the test if nothing is thrown). */
async function rejectionOf(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the call to be rejected");
}

/** A full tool loop: the scripted call comes back, its result is sent, the exhausted script answers "ok". */
async function runToolLoop(model: {
  invoke(messages: BaseMessage[]): Promise<AIMessage>;
}): Promise<{ first: AIMessage; second: AIMessage }> {
  const question = new HumanMessage("weather in Paris?");
  const first = await model.invoke([question]);
  const call = first.tool_calls?.[0];
  if (!call?.id) throw new Error("no tool call came back");
  const result = new ToolMessage({ content: "sunny", tool_call_id: call.id, name: call.name });
  const second = await model.invoke([question, first, result]);
  return { first, second };
}

describe("Bedrock stub through ChatBedrockConverse", () => {
  it("answers a scripted tool call (converse) with a tooluse_ id, then accepts its result", async () => {
    const stub = await track(startBedrockStub({ script }));
    const { first, second } = await runToolLoop(bedrockModel(stub).bindTools([getWeather]));
    expect(first.tool_calls).toEqual([
      expect.objectContaining({
        name: "get_weather",
        args: { city: "Paris" },
        id: expect.stringMatching(/^tooluse_[A-Za-z0-9]+$/),
      }),
    ]);
    expect(second.text).toBe("ok");
    expect(stub.calls).toBe(2);
    expect(stub.rejections).toEqual([]);
    expect(stub.requests[1]).toMatchObject({ toolConfig: { tools: [{ toolSpec: { name: "get_weather" } }] } });
  });

  it("streams a scripted tool call over converse-stream (AWS event stream)", async () => {
    const stub = await track(startBedrockStub({ script }));
    const merged = await collect(
      await bedrockModel(stub)
        .bindTools([getWeather])
        .stream([new HumanMessage("hi")]),
    );
    expect(merged.tool_calls).toEqual([expect.objectContaining({ name: "get_weather", args: { city: "Paris" } })]);
    expect(merged.text).toBe("checking");
  });

  it("a midStream failure reaches the streaming caller as the SDK's error, after the message started", async () => {
    const stub = await track(
      startBedrockStub({ fail: () => ({ status: 400, message: "Input is invalid mid-stream", midStream: true }) }),
    );
    const error = await rejectionOf(async () => collect(await bedrockModel(stub).stream([new HumanMessage("hi")])));
    expect(error.message).toBe("Input is invalid mid-stream");
    expect(error.name).toBe("ValidationException");
  });

  it("rejects an unanswered call with Bedrock's ValidationException text", async () => {
    const stub = await track(startBedrockStub());
    const error = await rejectionOf(() => bedrockModel(stub).bindTools([getWeather]).invoke(brokenHistory()));
    expect(error.name).toBe("ValidationException");
    expect(error.message).toBe("Expected toolResult blocks at messages.2.content for the following Ids: a");
    expect(stub.rejections).toEqual([{ rule: "B1", message: error.message }]);
  });

  it("rejects a history ending on an AIMessage as prefill (no-prefill by default, also when streaming)", async () => {
    const stub = await track(startBedrockStub());
    const history = [new HumanMessage("hi"), new AIMessage("Sure, here is")];
    const error = await rejectionOf(() => bedrockModel(stub).invoke(history));
    expect(error.message).toContain("This model does not support assistant message prefill");
    const streamed = await rejectionOf(async () => collect(await bedrockModel(stub).stream(history)));
    expect(streamed.message).toContain("This model does not support assistant message prefill");

    const prefillAllowed = await track(startBedrockStub({ noPrefill: false }));
    expect((await bedrockModel(prefillAllowed).invoke(history)).text).toBe("ok");
  });

  it("runs a script function with the request and the index of accepted calls", async () => {
    const seen: number[] = [];
    const stub = await track(
      startBedrockStub({
        script: (request, callIndex) => {
          seen.push(callIndex);
          const { messages } = request as { messages: unknown[] };
          return { text: `call ${callIndex} with ${messages.length} messages` };
        },
      }),
    );
    const model = bedrockModel(stub);
    await rejectionOf(() => model.invoke([new HumanMessage("hi"), new AIMessage("x")]));
    expect((await model.invoke([new HumanMessage("hi")])).text).toBe("call 0 with 1 messages");
    expect(seen).toEqual([0]);
    expect(stub.calls).toBe(2);
  });
});

describe("OpenAI stub through ChatOpenAI", () => {
  it("answers a scripted tool call (Chat Completions) with a call_ id, then accepts its result", async () => {
    const stub = await track(startOpenAIStub({ script }));
    const { first, second } = await runToolLoop(openAIModel(stub).bindTools([getWeather]));
    expect(first.tool_calls).toEqual([
      expect.objectContaining({
        name: "get_weather",
        args: { city: "Paris" },
        id: expect.stringMatching(/^call_[A-Za-z0-9]+$/),
      }),
    ]);
    expect(second.text).toBe("ok");
    expect(stub.rejections).toEqual([]);
  });

  it("streams a scripted tool call over SSE", async () => {
    const stub = await track(startOpenAIStub({ script }));
    const merged = await collect(
      await openAIModel(stub)
        .bindTools([getWeather])
        .stream([new HumanMessage("hi")]),
    );
    expect(merged.tool_calls).toEqual([expect.objectContaining({ name: "get_weather", args: { city: "Paris" } })]);
  });

  it("rejects an unanswered call with OpenAI's error text", async () => {
    const stub = await track(startOpenAIStub());
    const error = await rejectionOf(() => openAIModel(stub).bindTools([getWeather]).invoke(brokenHistory()));
    expect(error.message).toContain(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
        "'tool_call_id'. The following tool_call_ids did not have response messages: a",
    );
    expect(stub.rejections.map((r) => r.rule)).toEqual(["O1"]);
  });

  it("serves the Responses API: a scripted call comes back, an unanswered one is rejected", async () => {
    const stub = await track(startOpenAIStub({ script }));
    const model = openAIModel(stub, { useResponsesApi: true }).bindTools([getWeather]);
    const { first, second } = await runToolLoop(model);
    expect(first.tool_calls).toEqual([expect.objectContaining({ name: "get_weather", args: { city: "Paris" } })]);
    expect(second.text).toBe("ok");
    const error = await rejectionOf(() => model.invoke(brokenHistory()));
    expect(error.message).toContain("No tool output found for function call a.");
    expect(stub.rejections.map((r) => r.rule)).toEqual(["R1"]);
  });
});

describe("Anthropic stub through ChatAnthropic", () => {
  it("answers a scripted tool call with a toolu_ id, then accepts its result", async () => {
    const stub = await track(startAnthropicStub({ script }));
    const { first, second } = await runToolLoop(anthropicModel(stub).bindTools([getWeather]));
    expect(first.tool_calls).toEqual([
      expect.objectContaining({
        name: "get_weather",
        args: { city: "Paris" },
        id: expect.stringMatching(/^toolu_[A-Za-z0-9]+$/),
      }),
    ]);
    expect(second.text).toBe("ok");
    expect(stub.rejections).toEqual([]);
  });

  it("streams a scripted tool call over SSE", async () => {
    const stub = await track(startAnthropicStub({ script }));
    const merged = await collect(
      await anthropicModel(stub)
        .bindTools([getWeather])
        .stream([new HumanMessage("hi")]),
    );
    expect(merged.tool_calls).toEqual([expect.objectContaining({ name: "get_weather", args: { city: "Paris" } })]);
  });

  it("rejects an unanswered call with Anthropic's error text", async () => {
    const stub = await track(startAnthropicStub());
    const error = await rejectionOf(() => anthropicModel(stub).bindTools([getWeather]).invoke(brokenHistory()));
    expect(error.message).toContain(
      "`tool_use` ids were found without `tool_result` blocks immediately after: a. Each `tool_use` " +
        "block must have a corresponding `tool_result` block in the next message.",
    );
    expect(stub.rejections.map((r) => r.rule)).toEqual(["A1"]);
  });
});

/** A closed object of `count` properties of one schema, all required or none. */
const objectOf = (count: number, property: Record<string, unknown>, required: boolean) => {
  const keys = Array.from({ length: count }, (_, i) => `f${i}`);
  return {
    type: "object",
    properties: Object.fromEntries(keys.map((key) => [key, property])),
    ...(required ? { required: keys } : {}),
    additionalProperties: false,
  };
};

describe("Bedrock stub: structured output's schema subset and model list", () => {
  it.each<[string, Record<string, unknown>, RegExp | undefined]>([
    [
      "bounds on an integer",
      { type: "object", properties: { n: { type: "integer", minimum: 0, maximum: 9 } }, additionalProperties: false },
      /For 'integer' type, properties maximum, minimum are not supported/,
    ],
    [
      "an object without additionalProperties",
      { type: "object", properties: {} },
      /'additionalProperties' must be explicitly/,
    ],
    [
      "a record",
      { type: "object", additionalProperties: { type: "number" } },
      /'additionalProperties' must be explicitly set to false/,
    ],
    ["minItems 2", { type: "array", items: { type: "string" }, minItems: 2 }, /minItems/],
    ["maxLength", { type: "string", maxLength: 3 }, /For 'string' type, properties maxLength are not supported/],
    ["an unlisted format", { type: "string", format: "regex" }, /format "regex"/],
    [
      "a recursive $ref",
      { $ref: "#/$defs/T", $defs: { T: { type: "array", items: { $ref: "#/$defs/T" } } } },
      /Recursive schemas/,
    ],
    [
      "17 nullable fields",
      objectOf(17, { type: ["string", "null"] }, true),
      /too many parameters with union types \(17 .*limit: 16/,
    ],
    ["16 nullable fields", objectOf(16, { anyOf: [{ type: "string" }, { type: "null" }] }, true), undefined],
    ["25 optional fields", objectOf(25, { type: "string" }, false), /The compiled grammar is too large/],
    ["24 optional fields", objectOf(24, { type: "string" }, false), undefined],
    [
      "the subset itself",
      {
        type: "object",
        properties: {
          s: { type: "string", format: "date", pattern: "^2" },
          l: { type: "array", items: { enum: ["a", 1] }, minItems: 1 },
        },
        required: ["s"],
        additionalProperties: false,
      },
      undefined,
    ],
  ])("%s", (_name, schema, refused) => {
    const found = schemaSubsetViolation(schema);
    if (refused === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(refused);
  });

  it.each([
    ["us.anthropic.claude-haiku-4-5-20251001-v1:0", true],
    ["us.anthropic.claude-opus-4-6-v1:0", true],
    ["us.anthropic.claude-sonnet-4-6-v1:0", true],
    ["us.anthropic.claude-opus-4-7-v1:0", false],
    ["us.anthropic.claude-opus-4-1-20250805-v1:0", false],
    ["meta.llama3-1-70b-instruct-v1:0", false],
  ])("outputConfig on %s: %s", (id, supported) => {
    expect(supportsOutputConfig(id)).toBe(supported);
  });
});
