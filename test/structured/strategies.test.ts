/**
 * The strategy per model, through the real ChatBedrockConverse (AWS SDK included) against the Converse stub,
 * which enforces B1..B10, prefill (B7), `outputConfig` support per model, and forced tool choice with thinking:
 * - Claude 4.5 and 4.6 use `native` (or `tool`), with no instructions added to the prompt;
 * - Claude before 4.5 uses `tool`; Llama uses `prompted`;
 * - Claude with thinking uses `native` or `prompted`, never a forced tool;
 * - the structured response equals the parsed object, a tool round works in the same run, and no request ends on
 *   an assistant message.
 */
import { AIMessage } from "@langchain/core/messages";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent, initChatModel, modelFallbackMiddleware, providerStrategy } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { promptedStructuredOutputMiddleware } from "../../src/structured/middleware";
import { withPromptedStructuredOutput } from "../../src/structured/react-agent";
import type { StructuredResponseReport } from "../../src/structured/parse";
import { anthropicModel, startAnthropicStub } from "../support/stubs/anthropic";
import { bedrockModel } from "../support/stubs/bedrock";
import { openAIModel } from "../support/stubs/openai";
import type { RunningStub } from "../support/stubs/common";
import {
  bedrockStubs,
  getWeather,
  input,
  lastText,
  LLAMA,
  outputSchemaOf,
  requestsOf,
  systemOf,
  VALID,
  Weather,
  weatherCall,
  type ConverseRequest,
} from "./fixtures";
import { pinnedTo, ZOD_4_PINNED } from "../support/versions";

const stub = bedrockStubs();
const tools = [getWeather];
const PARSED = { city: "Paris", tempC: 21, sky: "sunny" };
const PROSE = "It is 21C and sunny in Paris.";

const CLAUDE_45 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const CLAUDE_46 = "us.anthropic.claude-sonnet-4-6-v1:0";
const OPUS_41 = "us.anthropic.claude-opus-4-1-20250805-v1:0";
const THINKING = { additionalModelRequestFields: { thinking: { type: "enabled", budget_tokens: 1024 } } };

const endsOnUser = (request: ConverseRequest) => request.messages.at(-1)?.role === "user";
const forcedToolChoice = (request: ConverseRequest) => {
  const choice = request.toolConfig?.toolChoice as Record<string, unknown> | undefined;
  return choice !== undefined && ("tool" in choice || "any" in choice);
};
/** What every request of every scenario must satisfy. */
function expectSound(s: RunningStub) {
  expect(s.rejections).toEqual([]);
  for (const request of requestsOf(s)) expect(endsOnUser(request)).toBe(true);
}

describe("createReactAgent: native for Claude 4.5 and 4.6", () => {
  it.each([
    ["Claude Sonnet 4.5", CLAUDE_45],
    ["Claude Sonnet 4.6", CLAUDE_46],
  ])(
    "%s: the loop is untouched; the structured call ends on a closing user turn and sends outputConfig",
    async (_name, model) => {
      const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: PROSE }, { text: VALID }] });
      const reports: StructuredResponseReport[] = [];
      const agent = createReactAgent(
        withPromptedStructuredOutput(
          { llm: bedrockModel(s, { model }), tools, responseFormat: Weather, prompt: "You are a weather bot." },
          { onStructuredResponse: (r) => reports.push(r) },
        ),
      );
      const result = await agent.invoke(input);

      expect(result.structuredResponse).toEqual(PARSED);
      expectSound(s);
      const [first, second, structured] = requestsOf(s);
      expect(requestsOf(s)).toHaveLength(3);
      // The agent's own calls: its prompt, no format instructions, no constraint.
      for (const request of [first, second]) {
        expect(systemOf(request)).toBe("You are a weather bot.");
        expect(request.outputConfig).toBeUndefined();
      }
      expect(second.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
      // The structured call: the history, the prose answer, a closing user turn; the schema as outputConfig.
      expect(outputSchemaOf(structured)).toMatchObject({
        type: "object",
        additionalProperties: false,
        required: ["city", "tempC", "sky"],
      });
      expect(structured.messages.at(-2)?.content[0].text).toBe(PROSE);
      expect(lastText(structured)).toMatch(/final answer now/);
      expect(structured.toolConfig?.tools.map((t) => t.toolSpec.name)).toEqual(["get_weather"]);
      expect(forcedToolChoice(structured)).toBe(false);
      // The stored final answer is the model's prose; the structured call is not stored.
      expect(result.messages.at(-1)?.content).toBe(PROSE);
      expect(reports).toEqual([expect.objectContaining({ strategy: "native", corrections: 0, modelId: model })]);
    },
  );

  it("streams (converse-stream) with the same requests", async () => {
    const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: PROSE }, { text: VALID }] });
    const agent = createReactAgent(
      withPromptedStructuredOutput({ llm: bedrockModel(s), tools, responseFormat: Weather }),
    );
    let last: { structuredResponse?: unknown } = {};
    for await (const [mode, chunk] of await agent.stream(input, { streamMode: ["messages", "values"] })) {
      if (mode === "values") last = chunk as typeof last;
    }
    expect(last.structuredResponse).toEqual(PARSED);
    expectSound(s);
    expect(requestsOf(s).at(-1)?.outputConfig).toBeDefined();
  });

  it("the constrained answer is corrected when the schema rejects it (a check JSON Schema cannot express)", async () => {
    const Strict = Weather.refine((w) => w.tempC > -50 && w.tempC < 60, {
      message: "tempC out of range",
      path: ["tempC"],
    });
    const s = await stub({
      script: [{ text: PROSE }, { text: '{"city":"Paris","tempC":99,"sky":"sunny"}' }, { text: VALID }],
    });
    const agent = createReactAgent(
      withPromptedStructuredOutput({ llm: bedrockModel(s), tools, responseFormat: Strict }),
    );
    const result = await agent.invoke(input);
    expect(result.structuredResponse).toEqual(PARSED);
    expectSound(s);
    const correction = requestsOf(s)[2];
    expect(correction.outputConfig).toBeDefined();
    expect(lastText(correction)).toMatch(/tempC out of range/);
  });

  it("forced native on Claude 4.1 (no outputConfig): refused with Bedrock's text, then the tool strategy", async () => {
    const s = await stub({ script: [{ text: PROSE }, { toolCalls: [{ name: "structured_response", args: PARSED }] }] });
    const agent = createReactAgent(
      withPromptedStructuredOutput(
        { llm: bedrockModel(s, { model: OPUS_41 }), tools, responseFormat: Weather },
        { strategy: "native" },
      ),
    );
    expect((await agent.invoke(input)).structuredResponse).toEqual(PARSED);
    expect(s.rejections.map((r) => r.rule)).toEqual(["outputConfig-unsupported"]);
    expect(s.rejections[0].message).toMatch(/output_config.format: Extra inputs are not permitted/);
    expect(forcedToolChoice(requestsOf(s).at(-1)!)).toBe(true);
  });
});

describe("createReactAgent: tool, prompted, thinking, forced strategies", () => {
  it("Claude 4.1: one forced tool call after a closing user turn", async () => {
    const s = await stub({
      script: [
        { toolCalls: [weatherCall] },
        { text: PROSE },
        { toolCalls: [{ name: "structured_response", args: PARSED }] },
      ],
    });
    const agent = createReactAgent(
      withPromptedStructuredOutput({ llm: bedrockModel(s, { model: OPUS_41 }), tools, responseFormat: Weather }),
    );
    const result = await agent.invoke(input);
    expect(result.structuredResponse).toEqual(PARSED);
    expectSound(s);
    const structured = requestsOf(s)[2];
    expect(structured.toolConfig?.toolChoice).toEqual({ tool: { name: "structured_response" } });
    expect(structured.toolConfig?.tools.map((t) => t.toolSpec.name)).toEqual(["get_weather", "structured_response"]);
    expect(structured.outputConfig).toBeUndefined();
    expect(systemOf(requestsOf(s)[0])).toBe("");
  });

  it("tool: invalid arguments get one correction that ends on a user turn, forced again", async () => {
    const s = await stub({
      script: [
        { text: PROSE },
        { toolCalls: [{ name: "structured_response", args: { city: "Paris" } }] },
        { toolCalls: [{ name: "structured_response", args: PARSED }] },
      ],
    });
    const agent = createReactAgent(
      withPromptedStructuredOutput({ llm: bedrockModel(s, { model: OPUS_41 }), tools, responseFormat: Weather }),
    );
    expect((await agent.invoke(input)).structuredResponse).toEqual(PARSED);
    expectSound(s);
    const correction = requestsOf(s)[2];
    expect(forcedToolChoice(correction)).toBe(true);
    expect(lastText(correction)).toMatch(/tempC/);
    // The forced call went back as text (its arguments), so no call is left unanswered (B1).
    expect(correction.messages.at(-2)?.content[0].text).toBe('{"city":"Paris"}');
  });

  it("Llama: prompted (instructions in the prompt, the answer is the JSON, no extra call)", async () => {
    const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: VALID }] });
    const agent = createReactAgent(
      withPromptedStructuredOutput({ llm: bedrockModel(s, { model: LLAMA }), tools, responseFormat: Weather }),
    );
    const result = await agent.invoke(input);
    expect(result.structuredResponse).toEqual(PARSED);
    expectSound(s);
    expect(requestsOf(s)).toHaveLength(2);
    for (const request of requestsOf(s)) {
      expect(systemOf(request)).toContain('"sky":{"type":"string"}');
      expect(request.outputConfig).toBeUndefined();
    }
  });

  it("Claude 4.6 with thinking: native, never a forced tool", async () => {
    const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: PROSE }, { text: VALID }] });
    const agent = createReactAgent(
      withPromptedStructuredOutput({ llm: bedrockModel(s, THINKING), tools, responseFormat: Weather }),
    );
    expect((await agent.invoke(input)).structuredResponse).toEqual(PARSED);
    expectSound(s);
    expect(requestsOf(s).some(forcedToolChoice)).toBe(false);
    expect(requestsOf(s)[2].outputConfig).toBeDefined();
    expect(requestsOf(s)[2].additionalModelRequestFields).toEqual(THINKING.additionalModelRequestFields);
  });

  it("Claude 4.1 with thinking: prompted, never a forced tool", async () => {
    const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: VALID }] });
    const agent = createReactAgent(
      withPromptedStructuredOutput({
        llm: bedrockModel(s, { model: OPUS_41, ...THINKING }),
        tools,
        responseFormat: Weather,
      }),
    );
    expect((await agent.invoke(input)).structuredResponse).toEqual(PARSED);
    expectSound(s);
    expect(requestsOf(s).some(forcedToolChoice)).toBe(false);
    expect(systemOf(requestsOf(s)[0])).toContain('"tempC"');
  });

  it("forcing tool with thinking on throws before any request; forcing tool or prompted on Claude 4.6 is obeyed", async () => {
    const s = await stub({
      script: [{ text: PROSE }, { toolCalls: [{ name: "structured_response", args: PARSED }] }, { text: VALID }],
    });
    expect(() =>
      withPromptedStructuredOutput(
        { llm: bedrockModel(s, THINKING), tools, responseFormat: Weather },
        { strategy: "tool" },
      ),
    ).toThrow(/extended thinking is on/);
    const tool = createReactAgent(
      withPromptedStructuredOutput({ llm: bedrockModel(s), tools, responseFormat: Weather }, { strategy: "tool" }),
    );
    expect((await tool.invoke(input)).structuredResponse).toEqual(PARSED);
    expect(forcedToolChoice(requestsOf(s)[1])).toBe(true);
    const prompted = createReactAgent(
      withPromptedStructuredOutput({ llm: bedrockModel(s), tools, responseFormat: Weather }, { strategy: "prompted" }),
    );
    expect((await prompted.invoke(input)).structuredResponse).toEqual(PARSED);
    expect(systemOf(requestsOf(s)[2])).toContain('"tempC"');
    expectSound(s);
  });
});

describe("createReactAgent: fallbacks get a strategy each (llm chosen by a function)", () => {
  const unreachableOpenAI = () => openAIModel({ url: "http://127.0.0.1:9" });

  it("OpenAI first, Bedrock Claude 4.6 as fallback: the fallback answers, native", async () => {
    const s = await stub({ script: [{ text: PROSE }, { text: VALID }] });
    const llm = () =>
      unreachableOpenAI()
        .bindTools(tools)
        .withFallbacks([bedrockModel(s).bindTools(tools)]);
    const agent = createReactAgent(withPromptedStructuredOutput({ llm, tools, responseFormat: Weather }, { env: {} }));
    const result = await agent.invoke(input);
    expect(result.structuredResponse).toEqual(PARSED);
    expectSound(s);
    expect(systemOf(requestsOf(s)[0])).toBe("");
    expect(requestsOf(s)[1].outputConfig).toBeDefined();
  });

  it("OpenAI first, Bedrock Llama as fallback: only the fallback gets the instructions, and its answer is the JSON", async () => {
    const s = await stub({ script: [{ text: VALID }] });
    const llm = () =>
      unreachableOpenAI()
        .bindTools(tools)
        .withFallbacks([bedrockModel(s, { model: LLAMA }).bindTools(tools)]);
    const agent = createReactAgent(withPromptedStructuredOutput({ llm, tools, responseFormat: Weather }, { env: {} }));
    const result = await agent.invoke(input);
    expect(result.structuredResponse).toEqual(PARSED);
    expect(requestsOf(s)).toHaveLength(1);
    expect(systemOf(requestsOf(s)[0])).toContain('"sky"');
  });
});

describe("createReactAgent: ChatAnthropic Claude 4.6 (cannot prefill)", () => {
  it("native through output_config, after a closing user turn", async () => {
    const s = await startAnthropicStub({ script: [{ toolCalls: [weatherCall] }, { text: PROSE }, { text: VALID }] });
    try {
      const agent = createReactAgent(
        withPromptedStructuredOutput({ llm: anthropicModel(s), tools, responseFormat: Weather }),
      );
      expect((await agent.invoke(input)).structuredResponse).toEqual(PARSED);
      expect(s.rejections).toEqual([]);
      const requests = s.requests as {
        messages: { role: string }[];
        output_config?: { format?: { schema?: unknown } };
        system?: unknown;
      }[];
      expect(requests).toHaveLength(3);
      expect(requests[0].output_config).toBeUndefined();
      expect(requests[2].output_config?.format?.schema).toMatchObject({ additionalProperties: false });
      for (const request of requests) expect(request.messages.at(-1)?.role).toBe("user");
    } finally {
      await s.close();
    }
  });
});

describe('createReactAgent: initChatModel("anthropic:claude-opus-4-6").bindTools(tools), no instance built yet', () => {
  it("is read as Claude 4.6 (cannot prefill): native after a closing user turn, never a prefill request", async () => {
    const s = await startAnthropicStub({ script: [{ toolCalls: [weatherCall] }, { text: PROSE }, { text: VALID }] });
    try {
      const configurable = await initChatModel("anthropic:claude-opus-4-6", {
        apiKey: "sk-ant-test",
        maxRetries: 0,
        clientOptions: { baseURL: s.url },
      });
      const llm = configurable.bindTools(tools);
      const agent = createReactAgent(withPromptedStructuredOutput({ llm, tools, responseFormat: Weather }));
      expect((await agent.invoke(input)).structuredResponse).toEqual(PARSED);
      expect(s.rejections).toEqual([]);
      const requests = s.requests as { model: string; messages: { role: string }[]; output_config?: unknown }[];
      expect(requests.map((r) => r.model)).toEqual(["claude-opus-4-6", "claude-opus-4-6", "claude-opus-4-6"]);
      expect(requests[2].output_config).toBeDefined();
      for (const request of requests) expect(request.messages.at(-1)?.role).toBe("user");
    } finally {
      await s.close();
    }
  });
});

describe("createAgent", () => {
  const agentOn = (s: RunningStub, fields = {}, options = {}, responseFormat: unknown = Weather) =>
    createAgent({
      model: bedrockModel(s, fields),
      tools,
      systemPrompt: "You are a weather bot.",
      responseFormat: responseFormat as typeof Weather,
      middleware: [promptedStructuredOutputMiddleware(options)],
    });

  it.each([
    ["Claude Sonnet 4.5", CLAUDE_45],
    ["Claude Sonnet 4.6", CLAUDE_46],
  ])(
    "%s: native on every call (the model keeps its tools), no instructions, the answer parsed",
    async (_name, model) => {
      const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: VALID }] });
      const result = await agentOn(s, { model }).invoke(input);
      expect(result.structuredResponse).toEqual(PARSED);
      expectSound(s);
      for (const request of requestsOf(s)) {
        expect(systemOf(request)).toBe("You are a weather bot.");
        expect(outputSchemaOf(request)).toMatchObject({ required: ["city", "tempC", "sky"] });
        expect(request.toolConfig?.tools.map((t) => t.toolSpec.name)).toEqual(["get_weather"]);
        expect(forcedToolChoice(request)).toBe(false);
      }
      expect(result.messages.map((m) => m.getType())).toEqual(["human", "ai", "tool", "ai"]);
      expect(result.messages.at(-1)?.content).toBe(VALID);
    },
  );

  it("the stub constrains a prose answer to the schema, as Bedrock does", async () => {
    const s = await stub({ script: [{ text: PROSE }] });
    const result = await agentOn(s).invoke(input);
    expect(result.structuredResponse).toEqual({ city: "text", tempC: 0, sky: "text" });
  });

  it("providerStrategy(...) on Bedrock works (createAgent alone fails: ChatBedrockConverse ignores its call options)", async () => {
    const s = await stub({ script: [{ text: VALID }] });
    const result = await agentOn(s, {}, {}, providerStrategy(Weather)).invoke(input);
    expect(result.structuredResponse).toEqual(PARSED);
    expect(requestsOf(s)[0].outputConfig).toBeDefined();

    // The failure without it, as langchain 1.5.14 (the lockfile's) has it; langchain 1.2.39 does not reject.
    if (pinnedTo("langchain", "1.5.14", "createAgent's providerStrategy rejecting an unconstrained answer")) return;
    const plain = await stub({ script: [{ text: PROSE }] });
    const without = createAgent({ model: bedrockModel(plain), tools, responseFormat: providerStrategy(Weather) });
    await expect(without.invoke(input)).rejects.toThrow(/did not satisfy the provided response schema/);
    expect(requestsOf(plain)[0].outputConfig).toBeUndefined();
  });

  it.skipIf(ZOD_4_PINNED !== undefined)(
    "Claude 4.1: createAgent's own tool strategy (forced, ending on a user or tool turn)",
    async () => {
      const s = await stub({
        script: [{ toolCalls: [weatherCall] }, { toolCalls: [{ name: "Weather", args: PARSED }] }],
      });
      const result = await agentOn(
        s,
        { model: OPUS_41 },
        {},
        z
          .object({ city: z.string(), tempC: z.number(), sky: z.string() })
          .describe("Weather")
          .meta({ title: "Weather" }),
      ).invoke(input);
      expect(result.structuredResponse).toEqual(PARSED);
      expectSound(s);
      for (const request of requestsOf(s)) {
        expect(request.toolConfig?.toolChoice).toEqual({ any: {} });
        expect(request.outputConfig).toBeUndefined();
        expect(systemOf(request)).toBe("You are a weather bot.");
      }
    },
  );

  it("Claude 4.6 with thinking: native, no forced tool; forcing tool with thinking is an error", async () => {
    const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: VALID }] });
    expect((await agentOn(s, THINKING).invoke(input)).structuredResponse).toEqual(PARSED);
    expectSound(s);
    expect(requestsOf(s).some(forcedToolChoice)).toBe(false);
    expect(requestsOf(s).every((r) => r.outputConfig !== undefined)).toBe(true);
    await expect(agentOn(s, THINKING, { strategy: "tool" }).invoke(input)).rejects.toThrow(/extended thinking is on/);
  });

  it("a model bound with withConfig (thinking as a call option) keeps its options under native", async () => {
    const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: VALID }] });
    const agent = createAgent({
      model: bedrockModel(s).withConfig(THINKING) as unknown as ReturnType<typeof bedrockModel>,
      tools,
      responseFormat: Weather,
      middleware: [promptedStructuredOutputMiddleware()],
    });
    expect((await agent.invoke(input)).structuredResponse).toEqual(PARSED);
    expectSound(s);
    for (const request of requestsOf(s)) {
      expect(request.additionalModelRequestFields).toEqual(THINKING.additionalModelRequestFields);
      expect(request.outputConfig).toBeDefined();
      expect(forcedToolChoice(request)).toBe(false);
    }
  });

  it("Claude 4.1 with thinking: prompted (instructions, no tool choice)", async () => {
    const s = await stub({ script: [{ text: VALID }] });
    expect((await agentOn(s, { model: OPUS_41, ...THINKING }).invoke(input)).structuredResponse).toEqual(PARSED);
    expectSound(s);
    expect(forcedToolChoice(requestsOf(s)[0])).toBe(false);
    expect(systemOf(requestsOf(s)[0])).toContain('"tempC"');
  });

  it(
    "without the middleware, Claude 4.6 with thinking fails on createAgent's forced tool strategy " +
      "(the stub's Anthropic text)",
    async () => {
      const s = await stub({ script: [{ text: VALID }] });
      const agent = createAgent({ model: bedrockModel(s, THINKING), tools, responseFormat: Weather });
      await expect(agent.invoke(input)).rejects.toThrow(/Thinking may not be enabled when tool_choice forces tool use/);
      expect(s.rejections.map((r) => r.rule)).toEqual(["thinking-forced-tool"]);
    },
  );

  it("several valid objects: the last one, reported", async () => {
    const second = '{"city":"Lyon","tempC":18,"sky":"rain"}';
    const s = await stub({ script: [{ text: `Draft: ${VALID}\nFinal: ${second}` }] });
    const reports: StructuredResponseReport[] = [];
    const result = await agentOn(
      s,
      { model: LLAMA },
      { onStructuredResponse: (r: StructuredResponseReport) => reports.push(r) },
    ).invoke(input);
    expect(result.structuredResponse).toEqual({ city: "Lyon", tempC: 18, sky: "rain" });
    expect(reports).toEqual([
      expect.objectContaining({
        strategy: "prompted",
        value: { city: "Lyon", tempC: 18, sky: "rain" },
        corrections: 0,
      }),
    ]);
  });

  it("the stored final message keeps the JSON", async () => {
    const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: VALID }] });
    const raw = await agentOn(s).invoke(input);
    expect(raw.messages.map((m) => m.getType())).toEqual(["human", "ai", "tool", "ai"]);
    expect(raw.messages.at(-1)?.content).toBe(VALID);
    expect(raw.structuredResponse).toEqual(PARSED);
  });

  it("modelFallbackMiddleware: the Bedrock fallback (inside it) gets its own strategy", async () => {
    const s = await stub({ script: [{ text: VALID }] });
    const agent = createAgent({
      model: openAIModel({ url: "http://127.0.0.1:9" }),
      tools,
      responseFormat: Weather,
      middleware: [modelFallbackMiddleware(bedrockModel(s)), promptedStructuredOutputMiddleware()],
    });
    const result = await agent.invoke(input);
    expect(result.structuredResponse).toEqual(PARSED);
    expect(requestsOf(s)[0].outputConfig).toBeDefined();
    expect(AIMessage.isInstance(result.messages.at(-1))).toBe(true);
  });
});
