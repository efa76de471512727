/**
 * withPromptedStructuredOutput against the real ChatBedrockConverse (AWS SDK included) and a local Converse
 * stub that enforces B1..B10, prefill (B7) included.
 */
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableLambda } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { ChatAnthropic } from "@langchain/anthropic";
import { ChatOpenAI } from "@langchain/openai";
import { Annotation, MemorySaver, MessagesAnnotation, MessagesZodState } from "@langchain/langgraph";
import { createReactAgent, type CreateReactAgentParams } from "@langchain/langgraph/prebuilt";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import { repairToolCalls } from "../../src/engine";
import type { RepairContext, ToolCallRepair } from "../../src/types";
import { PromptedStructuredOutputError } from "../../src/structured/parse";
import { withPromptedStructuredOutput } from "../../src/structured/react-agent";
import { bedrockModel } from "../support/stubs/bedrock";
import {
  bedrockStubs,
  getWeather,
  LLAMA,
  input,
  lastText,
  lastTurn,
  requestAt,
  systemOf,
  VALID,
  Weather,
  weatherCall,
} from "./fixtures";
import { boundaryError, errorOf, inputError, throwingObject } from "../support/hostile";

const stub = bedrockStubs();

/** A Bedrock model that gets the prompted strategy (no native structured output, no forced tool choice). */
const llama = (s: { url: string }) => bedrockModel(s, { model: LLAMA });

const PREFILL_ERROR = /This model does not support assistant message prefill/;

const getTime = tool(async ({ city }) => `It is 14:00 in ${city}.`, {
  name: "get_time",
  description: "Local time in a city.",
  schema: z.object({ city: z.string() }),
});
const tools = [getWeather, getTime];

describe("createReactAgent on Bedrock", () => {
  it("without the swap, Bedrock rejects responseFormat's extra call as prefill", async () => {
    const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: "It is 21C and sunny in Paris." }] });
    const agent = createReactAgent({ llm: bedrockModel(s), tools, responseFormat: Weather });
    await expect(agent.invoke(input)).rejects.toThrow(PREFILL_ERROR);
    expect(s.rejections.map((r) => r.rule)).toEqual(["B7"]);
    expect(lastTurn(requestAt(s, 2)).role).toBe("assistant");
  });

  it.each(["v1", "v2"] as const)(
    "with it (%s), tool calls first, then a validated structuredResponse from the answer",
    async (version) => {
      const s = await stub({
        script: [
          { toolCalls: [weatherCall, { name: "get_time", args: { city: "Paris" } }] },
          { toolCalls: [{ name: "get_weather", args: { city: "Lyon" } }] },
          { text: `Here you go:\n\`\`\`json\n${VALID}\n\`\`\`` },
        ],
      });
      const params = withPromptedStructuredOutput({ llm: llama(s), tools, responseFormat: Weather, version });
      expect(params.responseFormat).toBeUndefined();
      const result = await createReactAgent(params).invoke(input);

      expect(result.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
      expectTypeOf(result.structuredResponse).toEqualTypeOf<{ city: string; tempC: number; sky: string }>();
      expect(s.rejections).toEqual([]);
      expect(s.calls).toBe(3);
      for (let i = 0; i < 3; i++) {
        expect(systemOf(requestAt(s, i))).toContain('"tempC":{"type":"number"}');
        expect(lastTurn(requestAt(s, i)).role).toBe("user");
        expect(requestAt(s, i).toolConfig?.tools.map((t) => t.toolSpec.name)).toEqual(["get_weather", "get_time"]);
      }
      expect(result.messages.at(-1)?.content).toContain(VALID);
    },
  );

  it("corrects an invalid answer with one call that ends with a user message", async () => {
    const s = await stub({
      script: [{ toolCalls: [weatherCall] }, { text: "It is 21 degrees and sunny in Paris." }, { text: VALID }],
    });
    const agent = createReactAgent(withPromptedStructuredOutput({ llm: llama(s), tools, responseFormat: Weather }));
    const result = await agent.invoke(input);

    expect(result.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
    expect(s.rejections).toEqual([]);
    expect(s.calls).toBe(3);
    const correction = requestAt(s, 2);
    expect(lastTurn(correction).role).toBe("user");
    expect(lastText(correction)).toMatch(/no JSON value/);
    expect(correction.messages.at(-2)?.content[0].text).toBe("It is 21 degrees and sunny in Paris.");
    expect(systemOf(correction)).toContain('"sky"');
    // The state's final answer is the corrected one, in place of the invalid one.
    const answers = result.messages.filter((m) => AIMessage.isInstance(m) && !m.tool_calls?.length);
    expect(answers.map((m) => m.content)).toEqual([VALID]);
    expect(result.messages).toHaveLength(4);
  });

  it("throws PromptedStructuredOutputError with the raw answer when the correction is invalid too", async () => {
    const s = await stub({ script: [{ text: "Sunny, 21C." }, { text: '{"city":"Paris","tempC":"21"}' }] });
    const agent = createReactAgent(withPromptedStructuredOutput({ llm: llama(s), tools, responseFormat: Weather }));
    const error = await agent.invoke(input).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PromptedStructuredOutputError);
    const typed = error as PromptedStructuredOutputError;
    expect(typed.raw).toBe('{"city":"Paris","tempC":"21"}');
    expect(typed.issues.join("\n")).toMatch(/tempC/);
    expect(typed.issues.join("\n")).toMatch(/sky/);
    expect(typed.attempts.map((a) => a.raw)).toEqual(["Sunny, 21C.", '{"city":"Paris","tempC":"21"}']);
    expect(s.calls).toBe(2);
    expect(s.rejections).toEqual([]);
  });

  it("works when streamed (converse-stream), correction included", async () => {
    const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: "Sunny." }, { text: VALID }] });
    const agent = createReactAgent(withPromptedStructuredOutput({ llm: llama(s), tools, responseFormat: Weather }));
    let last: { structuredResponse?: unknown } = {};
    let tokens = 0;
    for await (const [mode, chunk] of await agent.stream(input, { streamMode: ["messages", "values"] })) {
      if (mode === "values") last = chunk as typeof last;
      else tokens++;
    }
    expect(tokens).toBeGreaterThan(0);
    expect(last.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
    expect(s.rejections).toEqual([]);
  });

  it("keeps the thread usable on the next turn with a checkpointer", async () => {
    const s = await stub({
      script: [{ toolCalls: [weatherCall] }, { text: VALID }, { text: '{"city":"Lyon","tempC":18,"sky":"rain"}' }],
    });
    const agent = createReactAgent(
      withPromptedStructuredOutput({ llm: llama(s), tools, responseFormat: Weather, checkpointer: new MemorySaver() }),
    );
    const config = { configurable: { thread_id: "t1" } };
    await agent.invoke(input, config);
    const second = await agent.invoke({ messages: [new HumanMessage("And Lyon?")] }, config);
    expect(second.structuredResponse).toEqual({ city: "Lyon", tempC: 18, sky: "rain" });
    expect(s.rejections).toEqual([]);
  });
});

describe("response formats and prompt forms", () => {
  const Z3Weather = z3.object({ city: z3.string(), tempC: z3.number(), sky: z3.string() });
  const jsonWeather = {
    type: "object",
    properties: { city: { type: "string" }, tempC: { type: "number" }, sky: { type: "string" } },
    required: ["city", "tempC", "sky"],
  };

  it.each([
    ["zod 4", Weather],
    ["zod 3", Z3Weather],
    ["JSON schema", jsonWeather],
    ["{ schema, prompt }", { schema: Weather, prompt: "Temperatures in Celsius, please." }],
  ])("%s", async (name, responseFormat) => {
    const s = await stub({ script: [{ text: `The answer: ${VALID}` }] });
    const agent = createReactAgent(withPromptedStructuredOutput({ llm: llama(s), tools, responseFormat }));
    const result = await agent.invoke(input);
    expect(result.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
    expect(systemOf(requestAt(s, 0))).toContain('"sky":{"type":"string"}');
    if (name === "{ schema, prompt }") expect(systemOf(requestAt(s, 0))).toContain("Temperatures in Celsius, please.");
  });

  const USER_PROMPT = "You are a weather bot.";
  const prompts: [string, CreateReactAgentParams["prompt"]][] = [
    ["string", USER_PROMPT],
    ["SystemMessage", new SystemMessage({ content: USER_PROMPT, id: "sys" })],
    ["function", (state) => [new SystemMessage(USER_PROMPT), ...state.messages]],
    ["async function", async (state) => [{ role: "system", content: USER_PROMPT }, ...state.messages]],
    [
      "Runnable",
      RunnableLambda.from((state: typeof MessagesAnnotation.State) => [
        new SystemMessage(USER_PROMPT),
        ...state.messages,
      ]),
    ],
    [
      "ChatPromptTemplate",
      ChatPromptTemplate.fromMessages([["system", USER_PROMPT], new MessagesPlaceholder("messages")]),
    ],
  ];

  it.each(prompts)(
    "prompt as %s: the user's prompt and the instructions both reach the model",
    async (_name, prompt) => {
      const s = await stub({ script: [{ text: "no json" }, { text: VALID }] });
      const params = { llm: llama(s), tools, responseFormat: Weather, prompt };
      const prompted = withPromptedStructuredOutput(params);
      expect(typeof prompted.prompt).toBe(typeof prompt);
      const result = await createReactAgent(prompted).invoke(input);
      expect(result.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
      for (const i of [0, 1]) {
        const system = systemOf(requestAt(s, i));
        expect(system.startsWith(USER_PROMPT)).toBe(true);
        expect(system).toContain('"tempC":{"type":"number"}');
      }
      expect(lastTurn(requestAt(s, 1)).role).toBe("user");
    },
  );
});

describe("state schemas and hooks", () => {
  it.each([
    [
      "Annotation without structuredResponse",
      Annotation.Root({ ...MessagesAnnotation.spec, topic: Annotation<string> }),
    ],
    ["zod 3 state (MessagesZodState)", MessagesZodState.extend({ topic: z3.string().optional() })],
  ])("%s gets the field added", async (_name, stateSchema) => {
    const s = await stub({ script: [{ text: VALID }] });
    const agent = createReactAgent(
      withPromptedStructuredOutput({
        llm: llama(s),
        tools,
        responseFormat: Weather,
        stateSchema: stateSchema as never,
      }),
    ) as unknown as { invoke(input: unknown): Promise<{ structuredResponse?: unknown }> };
    const result = await agent.invoke(input);
    expect(result.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
  });

  it("runs the user's postModelHook first and parses the answer it leaves", async () => {
    const s = await stub({
      script: [{ toolCalls: [weatherCall] }, { text: '{"city":"paris","tempC":21,"sky":"sunny"}' }],
    });
    const seen: string[] = [];
    const postModelHook = (state: typeof MessagesAnnotation.State) => {
      const last = state.messages.at(-1) as AIMessage;
      seen.push(last.tool_calls?.length ? "call" : "answer");
      if (last.tool_calls?.length) return {};
      return { messages: [new AIMessage({ id: last.id, content: String(last.content).replace("paris", "Paris") })] };
    };
    const agent = createReactAgent(
      withPromptedStructuredOutput({ llm: llama(s), tools, responseFormat: Weather, postModelHook }),
    );
    const result = await agent.invoke(input);
    expect(seen).toEqual(["call", "answer"]);
    expect(result.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
    expect(result.messages.at(-1)?.content).toBe(VALID);
  });
});

describe("with a repairing preModelHook", () => {
  it("the corrective call is repaired like the agent's own calls (llmInputMessages is not visible to it)", async () => {
    const s = await stub({ script: [{ text: "Sunny, 21C." }, { text: VALID }] });
    const brokenHistory = [
      new HumanMessage("Weather in Rome?"),
      new AIMessage({
        content: "",
        tool_calls: [{ id: "tooluse_orphan", name: "get_weather", args: { city: "Rome" } }],
      }),
      new HumanMessage("Never mind. What is the weather in Paris?"),
    ];
    const preModelHook = (state: typeof MessagesAnnotation.State) => ({
      llmInputMessages: repairToolCalls(state.messages, { provider: "bedrock" }).messages,
    });
    const repairs: (ToolCallRepair & RepairContext)[] = [];
    const agent = createReactAgent(
      withPromptedStructuredOutput(
        { llm: llama(s), tools, responseFormat: Weather, preModelHook },
        { onRepair: (r, context) => repairs.push({ ...r, ...context }) },
      ),
    );
    const events: { name: string; data: unknown }[] = [];
    const result = await agent.invoke(
      { messages: brokenHistory },
      { callbacks: [{ handleCustomEvent: (name, data) => void events.push({ name, data }) }] },
    );
    expect(s.rejections).toEqual([]);
    expect(s.calls).toBe(2);
    expect(result.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
    expect(lastTurn(requestAt(s, 1)).role).toBe("user");
    // The corrective request's repairs reach onRepair and the custom event, like every surface's.
    expect(repairs.map((r) => [r.action, r.toolCallId])).toContainEqual(["synthesized_result", "tooluse_orphan"]);
    expect(events.filter((e) => e.name === "tool_call_repair").map((e) => e.data)).toEqual(repairs);
    expect(repairs.map((r) => r.surface)).toEqual(repairs.map(() => "structured"));
  });
});

describe("models chosen by a function", () => {
  it("checks the chosen model at call time: a Bedrock one gets the prompted strategy", async () => {
    const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: "nope" }, { text: VALID }] });
    const llm = () => llama(s).bindTools(tools);
    const params = withPromptedStructuredOutput({ llm, tools, responseFormat: Weather }, { env: {} });
    expect(params).not.toBe(undefined);
    const result = await createReactAgent(params).invoke(input);
    expect(result.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
    expect(s.rejections).toEqual([]);
    for (const i of [0, 1, 2]) expect(systemOf(requestAt(s, i))).toContain('"sky"');
    expect(lastTurn(requestAt(s, 2)).role).toBe("user");
  });

  it("makes createReactAgent's own structured-output call for a model that can prefill", async () => {
    const structuredCalls: BaseMessage[][] = [];
    class StructuredFake extends FakeListChatModel {
      override withStructuredOutput(): never {
        return RunnableLambda.from((messages: BaseMessage[]) => {
          structuredCalls.push(messages);
          return { city: "Paris", tempC: 21, sky: "sunny" };
        }) as never;
      }
    }
    const model = new StructuredFake({ responses: ["It is sunny."] });
    const params = withPromptedStructuredOutput(
      { llm: () => model, tools: [], responseFormat: { schema: Weather, prompt: "Extract." } },
      { env: {} },
    );
    const result = await createReactAgent(params).invoke(input);
    expect(result.structuredResponse).toEqual({ city: "Paris", tempC: 21, sky: "sunny" });
    expect(structuredCalls).toHaveLength(1);
    expect(structuredCalls[0][0].content).toBe("Extract.");
    expect(structuredCalls[0].at(-1)?.content).toBe("It is sunny.");
  });
});

describe("models that need no swap", () => {
  it.each([
    ["ChatOpenAI", new ChatOpenAI({ model: "gpt-4o", apiKey: "x" })],
    ["ChatAnthropic claude-sonnet-4-5", new ChatAnthropic({ model: "claude-sonnet-4-5", apiKey: "x" })],
    ["a fake model", new FakeListChatModel({ responses: [] })],
  ])("%s: the params come back untouched (same object)", (_name, llm) => {
    const params = { llm, tools, responseFormat: Weather, prompt: "p" };
    expect(withPromptedStructuredOutput(params, { env: {} })).toBe(params);
  });

  it("params without responseFormat come back untouched, even on Bedrock", () => {
    const params = { llm: bedrockModel({ url: "http://127.0.0.1:1" }), tools };
    expect(withPromptedStructuredOutput(params)).toBe(params);
  });

  it("a forced strategy and LLM_PROVIDER=aws-bedrock swap on any model", () => {
    const params = { llm: new ChatOpenAI({ model: "gpt-4o", apiKey: "x" }), tools, responseFormat: Weather };
    expect(withPromptedStructuredOutput(params, { strategy: "prompted" }).responseFormat).toBeUndefined();
    expect(
      withPromptedStructuredOutput(params, { env: { LLM_PROVIDER: "aws-bedrock" } }).responseFormat,
    ).toBeUndefined();
  });

  it("a Claude 4.6 model on the Anthropic API is acted on (it cannot prefill): native, so the prompt is left alone", () => {
    const params = {
      llm: new ChatAnthropic({ model: "claude-opus-4-6", apiKey: "x" }),
      tools,
      responseFormat: Weather,
      prompt: "p",
    };
    const wrapped = withPromptedStructuredOutput(params, { env: {} });
    expect(wrapped).not.toBe(params);
    expect(wrapped.responseFormat).toBeUndefined();
    expect(wrapped.prompt).toBe("p");
    expect(typeof wrapped.postModelHook).toBe("function");
  });
});

describe("withPromptedStructuredOutput checks its arguments up front", () => {
  it("refuses createReactAgent's deprecated stateModifier / messageModifier when it acts (its own requests read prompt)", () => {
    const llm = bedrockModel({ url: "http://127.0.0.1:1" });
    for (const key of ["stateModifier", "messageModifier"])
      expect(
        errorOf(() => withPromptedStructuredOutput({ llm, tools: [], responseFormat: Weather, [key]: "be brief" })),
      ).toMatchObject({ name: "ToolCallRepairInputError", argument: `params.${key}` });
  });

  it("refuses a prompt createReactAgent would not take when it acts (createReactAgent no longer sees it to check)", () => {
    const llm = bedrockModel({ url: "http://127.0.0.1:1" });
    for (const prompt of [new HumanMessage("be brief"), 42, { role: "system", content: "be brief" }])
      expect(
        errorOf(() => withPromptedStructuredOutput({ llm, tools: [], responseFormat: Weather, prompt } as never)),
      ).toMatchObject({ name: "ToolCallRepairInputError", argument: "params.prompt" });
    for (const prompt of ["be brief", new SystemMessage("be brief"), () => [], RunnableLambda.from(() => [])])
      expect(
        withPromptedStructuredOutput({ llm, tools: [], responseFormat: Weather, prompt } as never).prompt,
      ).toBeDefined();
  });

  it("params that are not an object, or cannot be read, and each option of the wrong kind are named", () => {
    for (const params of [null, undefined, 42, "x"])
      expect(errorOf(() => withPromptedStructuredOutput(params as never))).toMatchObject({
        name: "ToolCallRepairInputError",
      });
    expect(
      errorOf(() =>
        withPromptedStructuredOutput({
          get llm(): never {
            throw new Error("x");
          },
        } as never),
      ),
    ).toMatchObject(boundaryError("withPromptedStructuredOutput", "x"));
    expect(errorOf(() => withPromptedStructuredOutput(throwingObject() as never))).toMatchObject(
      boundaryError("withPromptedStructuredOutput", "GETTER"),
    );
    const params = { llm: new FakeListChatModel({ responses: [] }), tools: [] };
    expect(errorOf(() => withPromptedStructuredOutput(params, { strategy: "json" } as never))).toMatchObject(
      inputError("options.strategy"),
    );
    expect(errorOf(() => withPromptedStructuredOutput(params, { onRepair: 1 } as never))).toMatchObject(
      inputError("options.onRepair"),
    );
    expect(errorOf(() => withPromptedStructuredOutput(params, throwingObject() as never))).toMatchObject(
      boundaryError("withPromptedStructuredOutput", "GETTER"),
    );
    expect(withPromptedStructuredOutput(params)).toBe(params);
  });
});
