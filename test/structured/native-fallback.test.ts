/**
 * Native structured output that Bedrock never rejects, through the real ChatBedrockConverse (AWS SDK included)
 * against the strict Converse stub, which refuses an `outputConfig` schema outside the documented subset and a
 * model outside the documented list (400 ValidationException with Bedrock's texts):
 * - the schema sent natively is always inside the subset (constraints moved into its description), and the
 *   answer is validated against the user's full schema, with the corrective call when it fails;
 * - a schema the subset cannot express (a record, a recursive schema) is never sent natively;
 * - a native request refused for the model or the schema falls back once to the next strategy (tool, or prompted
 *   with thinking on), is remembered for that model for the setup's lifetime, and is reported once.
 * For createReactAgent and createAgent, on converse and converse-stream.
 */
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { STRUCTURED_OUTPUT_FALLBACK_EVENT, type StructuredOutputFallback } from "../../src/structured/strategy";
import { promptedStructuredOutputMiddleware } from "../../src/structured/middleware";
import { withPromptedStructuredOutput } from "../../src/structured/react-agent";
import { bedrockModel } from "../support/stubs/bedrock";
import { schemaSubsetViolation } from "../support/stubs/bedrock-structured";
import type { RunningStub, ScriptedTurn, StubOptions } from "../support/stubs/common";
import {
  bedrockStubs,
  getWeather,
  input,
  lastText,
  outputSchemaOf,
  requestsOf,
  systemOf,
  weatherCall,
  type ConverseRequest,
} from "./fixtures";

const stub = bedrockStubs();
const tools = [getWeather];

/** An ordinary schema with bounds: Bedrock refuses minimum / maximum / maxLength / maxItems as they are. */
const Reading = z.object({
  city: z.string().min(1).max(40),
  tempC: z.number().int().min(-50).max(60),
  sky: z.enum(["sunny", "rain"]),
  tags: z.array(z.string()).max(3).optional(),
});
const READING = { city: "Paris", tempC: 21, sky: "sunny" };
const VALID = JSON.stringify(READING);
/** Inside the subset sent (the bound is in the description only), outside the user's schema. */
const TOO_HOT = JSON.stringify({ ...READING, tempC: 99 });
const PROSE = "It is 21C and sunny in Paris.";
const Scores = z.object({ scores: z.record(z.string(), z.number()) });
const SCORES = { scores: { paris: 3 } };
const Tree: z.ZodType = z.lazy(() => z.object({ name: z.string(), children: z.array(Tree) }));

/** Inside the subset keyword by keyword, over Anthropic's complexity limits: 17 nullable (union) fields, 25 optional ones. */
const fieldsOf = (count: number, field: z.ZodType) =>
  z.object(Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, field])));
const Nullables = fieldsOf(17, z.string().nullable());
const NULLABLES = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`f${i}`, null]));
const Optionals = fieldsOf(25, z.string().optional());
const OPTIONALS = { f0: "a" };
const UNION_REFUSAL =
  "The model returned the following errors: Schemas contains too many parameters with union types " +
  "(17 parameters with type arrays or anyOf) which exceeds the limit: 16";

const CLAUDE_46 = "us.anthropic.claude-sonnet-4-6-v1:0";
const OPUS_47 = "us.anthropic.claude-opus-4-7-v1:0";
const THINKING = { additionalModelRequestFields: { thinking: { type: "enabled", budget_tokens: 1024 } } };
const SCHEMA_REFUSAL =
  "The model returned the following errors: For 'integer' type, properties maximum, minimum are not supported";

const native = (s: RunningStub) => requestsOf(s).filter((r) => r.outputConfig !== undefined);
const forcedTool = (request: ConverseRequest) => {
  const choice = request.toolConfig?.toolChoice as Record<string, unknown> | undefined;
  return choice !== undefined && ("tool" in choice || "any" in choice);
};
/** Every native request's schema is inside the documented subset (the stub would have refused it otherwise: checked twice). */
function expectSubset(s: RunningStub) {
  expect(native(s).length).toBeGreaterThan(0);
  for (const request of native(s)) expect(schemaSubsetViolation(outputSchemaOf(request)!)).toBeUndefined();
}
/** A scripted turn that calls the answer tool of the request (whatever createAgent or the wrapper named it). */
const answerTool =
  (args: Record<string, unknown>) =>
  (request: unknown): ScriptedTurn => {
    const names = ((request as ConverseRequest).toolConfig?.tools ?? [])
      .map((t) => t.toolSpec.name)
      .filter((n) => n !== "get_weather");
    return { toolCalls: [{ name: names.at(-1)!, args }] };
  };
/** The stub refuses every native request with Bedrock's schema text, as if Bedrock were stricter than its docs. */
const refusesNative: StubOptions["fail"] = (request) =>
  (request as ConverseRequest).outputConfig
    ? { status: 400, type: "ValidationException", message: SCHEMA_REFUSAL }
    : undefined;

async function streamed(agent: { stream(input: unknown, options: unknown): Promise<AsyncIterable<unknown>> }) {
  let last: { structuredResponse?: unknown } = {};
  const stream = (await agent.stream(input, { streamMode: ["messages", "values"] })) as AsyncIterable<
    [string, unknown]
  >;
  for await (const [mode, chunk] of stream) {
    if (mode === "values") last = chunk as typeof last;
  }
  return last;
}

describe("createReactAgent: the schema sent natively is inside the subset", () => {
  const agentOn = (s: RunningStub, options = {}) =>
    createReactAgent(
      withPromptedStructuredOutput(
        { llm: bedrockModel(s, { model: CLAUDE_46 }), tools, responseFormat: Reading },
        options,
      ),
    );

  it("invoke: bounds go into the description; an answer outside them is corrected against the full schema", async () => {
    const s = await stub({
      script: [{ toolCalls: [weatherCall] }, { text: PROSE }, { text: TOO_HOT }, { text: VALID }],
    });
    const result = await agentOn(s).invoke(input);
    expect(result.structuredResponse).toEqual(READING);
    expect(s.rejections).toEqual([]);
    expectSubset(s);
    const [structured, correction] = native(s);
    expect(outputSchemaOf(structured)).toMatchObject({
      additionalProperties: false,
      required: ["city", "tempC", "sky"],
      properties: { tempC: { type: "integer", description: expect.stringContaining("minimum: -50, maximum: 60") } },
    });
    expect(lastText(correction)).toMatch(/tempC/);
  });

  it("stream: the same on converse-stream", async () => {
    const s = await stub({ script: [{ text: PROSE }, { text: TOO_HOT }, { text: VALID }] });
    expect((await streamed(agentOn(s))).structuredResponse).toEqual(READING);
    expect(s.rejections).toEqual([]);
    expectSubset(s);
    expect(s.paths.filter((p) => p.endsWith("/converse-stream")).length).toBeGreaterThan(0);
  });

  it.each([
    ["a z.record", Scores, SCORES],
    ["a recursive z.lazy", Tree, { name: "root", children: [] }],
    ["17 nullable fields", Nullables, NULLABLES],
    ["25 optional fields", Optionals, OPTIONALS],
  ])("%s is never sent natively: the tool strategy, reported once per setup", async (_name, schema, value) => {
    const s = await stub({ script: [{ text: PROSE }, { toolCalls: [{ name: "structured_response", args: value }] }] });
    const fallbacks: StructuredOutputFallback[] = [];
    const llm = bedrockModel(s, { model: CLAUDE_46 });
    const onFallback = (f: StructuredOutputFallback) => void fallbacks.push(f);
    const agent = createReactAgent(
      withPromptedStructuredOutput({ llm, tools, responseFormat: schema }, { onFallback }),
    );
    expect((await agent.invoke(input)).structuredResponse).toEqual(value);
    expect(native(s)).toEqual([]);
    expect(forcedTool(requestsOf(s)[1])).toBe(true);
    const reason = expect.stringMatching(/record|propertyNames|recursive|union types|optional properties/);
    expect(fallbacks).toEqual([{ modelId: CLAUDE_46, from: "native", to: "tool", cause: "schema", reason }]);
  });
});

describe("createReactAgent: a refused native request falls back once and is remembered", () => {
  it("Opus 4.7 forced native (refused on Converse): tool for that call, then straight to tool; a new setup tries again", async () => {
    const s = await stub({
      script: (request, i) => (i % 2 === 0 ? { text: PROSE } : answerTool(READING)(request)),
    });
    const fallbacks: StructuredOutputFallback[] = [];
    const events: [string, unknown][] = [];
    const params = { llm: bedrockModel(s, { model: OPUS_47 }), tools, responseFormat: Reading };
    const agent = createReactAgent(
      withPromptedStructuredOutput(params, { strategy: "native", onFallback: (f) => fallbacks.push(f) }),
    );
    const config = {
      callbacks: [{ handleCustomEvent: (name: string, data: unknown) => void events.push([name, data]) }],
    };

    expect((await agent.invoke(input, config)).structuredResponse).toEqual(READING);
    expect(s.rejections.map((r) => r.rule)).toEqual(["outputConfig-unsupported"]);
    expect(s.rejections[0].message).toMatch(/output_config.format: Extra inputs are not permitted/);
    const [, refused, retried] = requestsOf(s);
    expect(refused.outputConfig).toBeDefined();
    expect(retried.outputConfig).toBeUndefined();
    expect(forcedTool(retried)).toBe(true);
    const reason = expect.stringMatching(/Extra inputs are not permitted/);
    const expected = { modelId: OPUS_47, from: "native", to: "tool", cause: "refused", reason };
    expect(fallbacks).toEqual([expected]);
    expect(events).toEqual([[STRUCTURED_OUTPUT_FALLBACK_EVENT, expected]]);

    // Remembered for this setup: the next run sends no native request and reports nothing new.
    const before = requestsOf(s).length;
    expect((await agent.invoke(input)).structuredResponse).toEqual(READING);
    expect(native(s)).toHaveLength(1);
    expect(requestsOf(s)).toHaveLength(before + 2);
    expect(fallbacks).toHaveLength(1);

    // Not global: another setup of the same model tries native once, and falls back on its own.
    const other = createReactAgent(withPromptedStructuredOutput({ ...params }, { strategy: "native" }));
    expect((await other.invoke(input)).structuredResponse).toEqual(READING);
    expect(native(s)).toHaveLength(2);
  });

  it("a schema refusal with thinking on falls back to prompted (never a forced tool), on converse-stream", async () => {
    const s = await stub({ script: [{ text: PROSE }, { text: VALID }], fail: refusesNative });
    const fallbacks: StructuredOutputFallback[] = [];
    const agent = createReactAgent(
      withPromptedStructuredOutput(
        { llm: bedrockModel(s, { model: CLAUDE_46, ...THINKING }), tools, responseFormat: Reading },
        { onFallback: (f) => fallbacks.push(f) },
      ),
    );
    expect((await streamed(agent)).structuredResponse).toEqual(READING);
    expect(s.rejections.map((r) => r.message)).toEqual([SCHEMA_REFUSAL]);
    expect(requestsOf(s).some(forcedTool)).toBe(false);
    expect(lastText(requestsOf(s).at(-1)!)).toContain('"tempC"');
    expect(fallbacks).toEqual([expect.objectContaining({ to: "prompted", cause: "refused", reason: SCHEMA_REFUSAL })]);
  });
});

describe("createAgent", () => {
  const agentOn = (s: RunningStub, model: string, options = {}, responseFormat: unknown = Reading, fields = {}) =>
    createAgent({
      model: bedrockModel(s, { model, ...fields }),
      tools,
      responseFormat: responseFormat as typeof Reading,
      middleware: [promptedStructuredOutputMiddleware(options)],
    });

  it("invoke: every call native inside the subset; an answer outside the bounds is corrected", async () => {
    const s = await stub({ script: [{ toolCalls: [weatherCall] }, { text: TOO_HOT }, { text: VALID }] });
    const result = await agentOn(s, CLAUDE_46).invoke(input);
    expect(result.structuredResponse).toEqual(READING);
    expect(s.rejections).toEqual([]);
    expectSubset(s);
    expect(native(s)).toHaveLength(3);
    expect(lastText(requestsOf(s)[2])).toMatch(/tempC/);
  });

  it("stream: the same on converse-stream", async () => {
    const s = await stub({ script: [{ text: TOO_HOT }, { text: VALID }] });
    expect((await streamed(agentOn(s, CLAUDE_46))).structuredResponse).toEqual(READING);
    expect(s.rejections).toEqual([]);
    expectSubset(s);
    expect(s.paths.every((p) => p.endsWith("/converse-stream"))).toBe(true);
  });

  it("Opus 4.7 forced native: refused once, createAgent's tool strategy for that call and every later one of the setup", async () => {
    const s = await stub({ script: (request) => answerTool(READING)(request) });
    const fallbacks: StructuredOutputFallback[] = [];
    const agent = agentOn(s, OPUS_47, {
      strategy: "native",
      onFallback: (f: StructuredOutputFallback) => fallbacks.push(f),
    });
    expect((await agent.invoke(input)).structuredResponse).toEqual(READING);
    expect(s.rejections.map((r) => r.rule)).toEqual(["outputConfig-unsupported"]);
    expect(requestsOf(s).map((r) => [r.outputConfig !== undefined, forcedTool(r)])).toEqual([
      [true, false],
      [false, true],
    ]);
    expect((await agent.invoke(input)).structuredResponse).toEqual(READING);
    expect(native(s)).toHaveLength(1);
    expect(fallbacks).toEqual([expect.objectContaining({ modelId: OPUS_47, to: "tool", cause: "refused" })]);
  });

  it("two calls at once on a refused model: both fall back, reported once", async () => {
    const s = await stub({ script: (request) => answerTool(READING)(request) });
    const fallbacks: StructuredOutputFallback[] = [];
    const agent = agentOn(s, OPUS_47, {
      strategy: "native",
      onFallback: (f: StructuredOutputFallback) => fallbacks.push(f),
    });
    const results = await Promise.all([agent.invoke(input), agent.invoke(input)]);
    expect(results.map((r) => r.structuredResponse)).toEqual([READING, READING]);
    expect(s.rejections.every((r) => r.rule === "outputConfig-unsupported")).toBe(true);
    expect(fallbacks).toHaveLength(1);
  });

  it("a schema refusal with thinking on: prompted (instructions, no forced tool), streamed", async () => {
    const s = await stub({ script: [{ text: VALID }], fail: refusesNative });
    const agent = agentOn(s, CLAUDE_46, {}, Reading, THINKING);
    expect((await streamed(agent)).structuredResponse).toEqual(READING);
    expect(s.rejections.map((r) => r.message)).toEqual([SCHEMA_REFUSAL]);
    const retried = requestsOf(s)[1];
    expect(retried.outputConfig).toBeUndefined();
    expect(forcedTool(retried)).toBe(false);
    expect(systemOf(retried)).toContain('"tempC"');
  });

  it("a schema refused as too complex (union types) falls back to tool; the event reaches the run's callbacks", async () => {
    const refuses: StubOptions["fail"] = (request) =>
      (request as ConverseRequest).outputConfig
        ? { status: 400, type: "ValidationException", message: UNION_REFUSAL }
        : undefined;
    const s = await stub({ script: (request) => answerTool(READING)(request), fail: refuses });
    const events: [string, unknown][] = [];
    const config = {
      callbacks: [{ handleCustomEvent: (name: string, data: unknown) => void events.push([name, data]) }],
    };
    expect((await agentOn(s, CLAUDE_46).invoke(input, config)).structuredResponse).toEqual(READING);
    expect(s.rejections.map((r) => r.message)).toEqual([UNION_REFUSAL]);
    expect(forcedTool(requestsOf(s)[1])).toBe(true);
    expect(events).toEqual([
      [STRUCTURED_OUTPUT_FALLBACK_EVENT, expect.objectContaining({ cause: "refused", reason: UNION_REFUSAL })],
    ]);
  });

  it("a schema refusal is remembered for that schema only: a middleware shared by two agents, the other stays native", async () => {
    // As if Bedrock counted stricter than its docs: the Scan schema (two nullable fields) is refused, Reading is not.
    const Scan = z.object({ a: z.string().nullable(), b: z.string().nullable() });
    const SCAN = { a: null, b: "x" };
    const refusesScan: StubOptions["fail"] = (request) => {
      const properties = outputSchemaOf(request as ConverseRequest)?.properties as object | undefined;
      return properties && "a" in properties
        ? { status: 400, type: "ValidationException", message: UNION_REFUSAL }
        : undefined;
    };
    const s = await stub({ script: (request) => answerTool(SCAN)(request), fail: refusesScan });
    const shared = promptedStructuredOutputMiddleware();
    const scan = createAgent({
      model: bedrockModel(s, { model: CLAUDE_46 }),
      tools,
      responseFormat: Scan,
      middleware: [shared],
    });
    expect((await scan.invoke(input)).structuredResponse).toEqual(SCAN);
    expect(s.rejections.map((r) => r.message)).toEqual([UNION_REFUSAL]);

    const t = await stub({ script: [{ text: VALID }] });
    const reading = createAgent({
      model: bedrockModel(t, { model: CLAUDE_46 }),
      tools,
      responseFormat: Reading,
      middleware: [shared],
    });
    expect((await reading.invoke(input)).structuredResponse).toEqual(READING);
    expect(native(t)).toHaveLength(1);
    // The refused schema itself is remembered: straight to tool.
    expect((await scan.invoke(input)).structuredResponse).toEqual(SCAN);
    expect(s.rejections).toHaveLength(1);
  });

  it.each([
    ["17 nullable fields", Nullables, NULLABLES],
    ["25 optional fields", Optionals, OPTIONALS],
  ])(
    "%s (over the complexity limits) are never sent natively: createAgent's tool strategy",
    async (_name, schema, value) => {
      const s = await stub({ script: (request) => answerTool(value)(request) });
      expect((await agentOn(s, CLAUDE_46, {}, schema).invoke(input)).structuredResponse).toEqual(value);
      expect(native(s)).toEqual([]);
      expect(s.rejections).toEqual([]);
    },
  );

  it.each([
    ["createAgent", (s: RunningStub) => agentOn(s, CLAUDE_46)],
    [
      "createReactAgent",
      (s: RunningStub) =>
        createReactAgent(
          withPromptedStructuredOutput({ llm: bedrockModel(s, { model: CLAUDE_46 }), tools, responseFormat: Reading }),
        ),
    ],
  ])("%s: a refusal arriving inside the converse-stream (an exception event) falls back too", async (_name, build) => {
    const midStream: StubOptions["fail"] = (request) =>
      (request as ConverseRequest).outputConfig ? { status: 400, message: SCHEMA_REFUSAL, midStream: true } : undefined;
    // The answer tool when the request has one (a fallback), else the agent's prose answer (createReactAgent's loop).
    const hasAnswerTool = (request: unknown) => ((request as ConverseRequest).toolConfig?.tools ?? []).length > 1;
    const script = (request: unknown) => (hasAnswerTool(request) ? answerTool(READING)(request) : { text: PROSE });
    const s = await stub({ script, fail: midStream });
    expect((await streamed(build(s) as never)).structuredResponse).toEqual(READING);
    expect(s.rejections.map((r) => r.message)).toEqual([SCHEMA_REFUSAL]);
    expect(s.paths.every((p) => p.endsWith("/converse-stream"))).toBe(true);
    expect(forcedTool(requestsOf(s).at(-1)!)).toBe(true);
  });

  it("a z.record is never sent natively: createAgent's tool strategy, reported once", async () => {
    const s = await stub({ script: (request) => answerTool(SCORES)(request) });
    const fallbacks: StructuredOutputFallback[] = [];
    const agent = agentOn(s, CLAUDE_46, { onFallback: (f: StructuredOutputFallback) => fallbacks.push(f) }, Scores);
    expect((await agent.invoke(input)).structuredResponse).toEqual(SCORES);
    expect((await agent.invoke(input)).structuredResponse).toEqual(SCORES);
    expect(native(s)).toEqual([]);
    expect(s.rejections).toEqual([]);
    expect(requestsOf(s).every(forcedTool)).toBe(true);
    expect(fallbacks).toEqual([expect.objectContaining({ cause: "schema", to: "tool" })]);
  });
});
