/**
 * promptedStructuredOutputMiddleware in langchain createAgent, against the real ChatBedrockConverse and a
 * local Converse stub that enforces B1..B10 (prefill included).
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, toolStrategy } from "langchain";
import { describe, expect, expectTypeOf, it, vi } from "vitest";
import { promptedStructuredOutputMiddleware } from "../../src/structured/middleware";
import { PromptedStructuredOutputError } from "../../src/structured/parse";
import { bedrockModel } from "../support/stubs/bedrock";
import {
  bedrockStubs,
  getWeather,
  input,
  lastTurn,
  requestAt,
  systemOf,
  VALID,
  Weather,
  weatherCall,
} from "./fixtures";
import { boundaryError, errorOf, inputError, throwingObject } from "../support/hostile";

const stub = bedrockStubs();

const LLAMA = "meta.llama3-1-70b-instruct-v1:0";

const tools = [getWeather];

describe("createAgent on a Bedrock model without tool_choice", () => {
  it("without the middleware, the tool strategy throws before any request", async () => {
    const s = await stub({ script: [{ text: VALID }] });
    const agent = createAgent({ model: bedrockModel(s, { model: LLAMA }), tools, responseFormat: Weather });
    await expect(agent.invoke(input)).rejects.toThrow(/does not currently support 'tool_choice'/);
    expect(s.calls).toBe(0);
  });

  it("with it, tool calls first, then a validated structuredResponse of the inferred type", async () => {
    const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: `Result:\n\`\`\`json\n${VALID}\n\`\`\`` }] });
    const agent = createAgent({
      model: bedrockModel(s, { model: LLAMA }),
      tools,
      systemPrompt: "You are a weather bot.",
      responseFormat: Weather,
      middleware: [promptedStructuredOutputMiddleware()],
    });
    const result = await agent.invoke(input);

    expect(result.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
    expectTypeOf(result.structuredResponse).toEqualTypeOf<{ city: string; tempC: number; sky: string }>();
    expect(s.rejections).toEqual([]);
    expect(s.calls).toBe(2);
    for (const i of [0, 1]) {
      const request = requestAt(s, i);
      expect(systemOf(request).startsWith("You are a weather bot.")).toBe(true);
      expect(systemOf(request)).toContain('"sky":{"type":"string"}');
      expect(request.toolConfig?.tools.map((t) => t.toolSpec.name)).toEqual(["get_weather"]);
      expect(request.toolConfig?.toolChoice).toBeUndefined();
      expect(lastTurn(request).role).toBe("user");
    }
  });

  it("accepts toolStrategy(...) as the response format", async () => {
    const s = await stub({ script: [{ text: VALID }] });
    const agent = createAgent({
      model: bedrockModel(s, { model: LLAMA }),
      tools,
      responseFormat: toolStrategy(Weather),
      middleware: [promptedStructuredOutputMiddleware()],
    });
    const result = await agent.invoke(input);
    expect(result.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
  });

  it("corrects an invalid answer with one call that ends with a user message", async () => {
    const s = await stub({
      script: [{ toolCalls: [weatherCall] }, { text: "Sunny and 21C in Paris." }, { text: VALID }],
    });
    const agent = createAgent({
      model: bedrockModel(s, { model: LLAMA }),
      tools,
      responseFormat: Weather,
      middleware: [promptedStructuredOutputMiddleware()],
    });
    const result = await agent.invoke(input);

    expect(result.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
    expect(s.calls).toBe(3);
    expect(s.rejections).toEqual([]);
    const correction = requestAt(s, 2);
    expect(lastTurn(correction).role).toBe("user");
    expect(lastTurn(correction).content[0].text).toMatch(/no JSON value/);
    expect(correction.messages.at(-2)?.content[0].text).toBe("Sunny and 21C in Paris.");
    // The stored final answer is the corrected one; the corrective exchange itself is not stored.
    expect(result.messages.map((m) => m.getType())).toEqual(["human", "ai", "tool", "ai"]);
    expect(result.messages.at(-1)?.content).toBe(VALID);
  });

  it("throws PromptedStructuredOutputError (inside langchain's MiddlewareError) when still invalid", async () => {
    const s = await stub({ script: [{ text: "Sunny." }, { text: '{"city":"Paris"}' }] });
    const agent = createAgent({
      model: bedrockModel(s, { model: LLAMA }),
      tools,
      responseFormat: Weather,
      middleware: [promptedStructuredOutputMiddleware()],
    });
    const error = await agent.invoke(input).catch((e: unknown) => e);
    const found = PromptedStructuredOutputError.find(error);
    expect(found).toBeDefined();
    expect(found?.raw).toBe('{"city":"Paris"}');
    expect(found?.issues.join("\n")).toMatch(/tempC/);
    expect(found?.attempts).toHaveLength(2);
    expect(s.calls).toBe(2);
  });

  it("works on the default Claude 4.6 Bedrock model and across turns with a checkpointer", async () => {
    const s = await stub({ script: [{ text: VALID }, { text: '{"city":"Lyon","tempC":18,"sky":"rain"}' }] });
    const agent = createAgent({
      model: bedrockModel(s),
      tools,
      responseFormat: Weather,
      middleware: [promptedStructuredOutputMiddleware()],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "t" } };
    await agent.invoke(input, config);
    const second = await agent.invoke({ messages: [new HumanMessage("And Lyon?")] }, config);
    expect(second.structuredResponse).toEqual({ city: "Lyon", tempC: 18, sky: "rain" });
    expect(s.rejections).toEqual([]);
    expect(requestAt(s, 1).toolConfig?.toolChoice).toBeUndefined();
  });
});

describe("calls the middleware leaves alone", () => {
  type WrapModelCall = (request: unknown, handler: (request: unknown) => Promise<AIMessage>) => Promise<unknown>;
  const wrap = (options = {}) => promptedStructuredOutputMiddleware(options).wrapModelCall as unknown as WrapModelCall;
  const baseRequest = (model: unknown, responseFormat: unknown) => ({
    model,
    messages: [new HumanMessage("hi")],
    systemPrompt: "",
    systemMessage: new SystemMessage(""),
    tools: [],
    responseFormat,
    state: { messages: [] },
    runtime: {},
  });

  it.each([
    ["ChatOpenAI", new ChatOpenAI({ model: "gpt-4o", apiKey: "x" })],
    [
      "ChatAnthropic claude-sonnet-4-6 (createAgent never prefills)",
      new ChatAnthropic({ model: "claude-sonnet-4-6", apiKey: "x" }),
    ],
  ])("passes the very same request through on %s", async (_name, model) => {
    const request = baseRequest(model, Weather);
    const answer = new AIMessage("{}");
    const handler = vi.fn(async () => answer);
    await expect(wrap({ env: {} })(request, handler)).resolves.toBe(answer);
    expect(handler).toHaveBeenCalledTimes(1);
    expect((handler.mock.calls[0] as unknown[])[0]).toBe(request);
  });

  it("passes through on Bedrock when there is no response format", async () => {
    const request = baseRequest(bedrockModel({ url: "http://127.0.0.1:1" }), undefined);
    const handler = vi.fn(async () => new AIMessage("x"));
    await wrap()(request, handler);
    expect((handler.mock.calls[0] as unknown[])[0]).toBe(request);
  });

  it("LLM_PROVIDER=aws-bedrock turns it on for any model", async () => {
    const handler = vi.fn(async () => new AIMessage(VALID));
    const other = baseRequest(new ChatOpenAI({ model: "gpt-4o", apiKey: "x" }), Weather);
    const result = await wrap({ env: { LLM_PROVIDER: "aws-bedrock" } })(other, handler);
    const sent = (handler.mock.calls[0] as unknown[])[0] as { responseFormat: unknown; systemMessage: SystemMessage };
    expect(sent.responseFormat).toEqual({ __responseFormatUndefined: true });
    expect(sent.systemMessage.content).toContain('"tempC"');
    expect(result).toMatchObject({ update: { structuredResponse: { city: "Paris", tempC: 21, sky: "sunny" } } });
  });
});

describe("promptedStructuredOutputMiddleware checks its options when it is built", () => {
  it("each option of the wrong kind, or that cannot be read, is named", () => {
    expect(
      errorOf(() =>
        promptedStructuredOutputMiddleware({
          get strategy(): never {
            throw new Error("x");
          },
        } as never),
      ),
    ).toMatchObject(boundaryError("promptedStructuredOutputMiddleware", "x"));
    expect(errorOf(() => promptedStructuredOutputMiddleware({ name: "" }))).toMatchObject(inputError("options.name"));
    expect(errorOf(() => promptedStructuredOutputMiddleware({ onFallback: 1 } as never))).toMatchObject(
      inputError("options.onFallback"),
    );
    expect(errorOf(() => promptedStructuredOutputMiddleware({ onStructuredResponse: 1 } as never))).toMatchObject(
      inputError("options.onStructuredResponse"),
    );
    expect(errorOf(() => promptedStructuredOutputMiddleware(throwingObject() as never))).toMatchObject(
      boundaryError("promptedStructuredOutputMiddleware", "GETTER"),
    );
    expect(errorOf(() => promptedStructuredOutputMiddleware("x" as never))).toMatchObject(inputError("options"));
  });
});
