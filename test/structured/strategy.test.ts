import { ChatAnthropic } from "@langchain/anthropic";
import { ChatBedrockConverse } from "@langchain/aws";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import {
  STRUCTURED_OUTPUT_TABLE,
  structuredOutputStrategies,
  type StructuredOutputStrategy,
} from "../../src/structured/strategy";
import { boundaryError, errorOf, inputError, throwingObject } from "../support/hostile";

const credentials = { accessKeyId: "x", secretAccessKey: "x" };
const THINKING = { thinking: { type: "enabled", budget_tokens: 1024 } };
const bedrock = (model: string, fields: Partial<ConstructorParameters<typeof ChatBedrockConverse>[0] & object> = {}) =>
  new ChatBedrockConverse({ model, region: "us-east-1", credentials, ...fields });
const strategyOf = (model: unknown, options = {}) => structuredOutputStrategies(model, options).map((c) => c.strategy);

describe("the strategy table", () => {
  it("names a source for every row", () => {
    for (const row of STRUCTURED_OUTPUT_TABLE) {
      expect(row.source.length).toBeGreaterThan(20);
    }
  });

  it.each<[string, StructuredOutputStrategy, StructuredOutputStrategy]>([
    ["us.anthropic.claude-haiku-4-5-20251001-v1:0", "native", "native"],
    ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", "native", "native"],
    ["global.anthropic.claude-opus-4-5-20251101-v1:0", "native", "native"],
    ["us.anthropic.claude-opus-4-6-v1:0", "native", "native"],
    ["us.anthropic.claude-sonnet-4-6-v1:0", "native", "native"],
    ["anthropic.claude-opus-5-v1:0", "native", "native"],
    ["us.anthropic.claude-opus-4-7-v1:0", "tool", "prompted"],
    ["us.anthropic.claude-opus-4-1-20250805-v1:0", "tool", "prompted"],
    ["us.anthropic.claude-sonnet-4-20250514-v1:0", "tool", "prompted"],
    ["anthropic.claude-3-5-sonnet-20240620-v1:0", "tool", "prompted"],
    ["meta.llama3-1-70b-instruct-v1:0", "prompted", "prompted"],
    ["us.meta.llama4-maverick-17b-instruct-v1:0", "prompted", "prompted"],
    ["amazon.nova-pro-v1:0", "prompted", "prompted"],
    ["mistral.mistral-large-2407-v1:0", "prompted", "prompted"],
    ["arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123", "prompted", "prompted"],
  ])("Bedrock %s: %s (thinking: %s)", (id, plain, withThinking) => {
    expect(strategyOf(bedrock(id))).toEqual([plain]);
    expect(strategyOf(bedrock(id, { additionalModelRequestFields: THINKING }))).toEqual([withThinking]);
  });

  it("each row says where its facts come from and how sure they are (H documented, M reported)", () => {
    const sourceOf = (id: string) => structuredOutputStrategies(bedrock(id)).map((c) => [c.strategy, c.rule?.source]);
    const source = (pattern: RegExp) => expect.stringMatching(pattern);
    expect(sourceOf("us.anthropic.claude-opus-4-6-v1:0")).toEqual([
      ["native", source(/^AWS Bedrock user guide.*\(H\)/)],
    ]);
    expect(sourceOf("us.anthropic.claude-sonnet-4-6-v1:0")).toEqual([
      ["native", source(/^Anthropic, 'Structured.*\(H\)/)],
    ]);
    // Reports only: refused on Converse, so the forced tool (a refusal of a forced native still falls back).
    expect(sourceOf("us.anthropic.claude-opus-4-7-v1:0")).toEqual([
      ["tool", source(/Extra inputs are not permitted.*\(M\)/)],
    ]);
    expect(sourceOf("anthropic.claude-opus-5-v1:0")).toEqual([["native", source(/\(M\).*falls back/)]]);
    for (const row of STRUCTURED_OUTPUT_TABLE) expect(row.source).toMatch(/\b[HM]\)|this package/);
  });

  it("reports the row that decided", () => {
    const [choice] = structuredOutputStrategies(bedrock("us.anthropic.claude-opus-4-6-v1:0"));
    expect(choice.rule?.models).toMatch(/Opus 4.6/);
    expect(choice.rule?.source).toMatch(/AWS/);
    expect(choice.model.modelId).toBe("us.anthropic.claude-opus-4-6-v1:0");
  });

  it("ChatAnthropic: native from Claude 4.5 on, tool before (prompted with thinking)", () => {
    expect(strategyOf(new ChatAnthropic({ model: "claude-opus-4-6", apiKey: "x" }))).toEqual(["native"]);
    expect(
      strategyOf(new ChatAnthropic({ model: "claude-sonnet-4-5", apiKey: "x", thinking: THINKING.thinking as never })),
    ).toEqual(["native"]);
    expect(strategyOf(new ChatAnthropic({ model: "claude-3-7-sonnet-latest", apiKey: "x" }))).toEqual(["tool"]);
    expect(
      strategyOf(
        new ChatAnthropic({ model: "claude-3-7-sonnet-latest", apiKey: "x", thinking: THINKING.thinking as never }),
      ),
    ).toEqual(["prompted"]);
  });

  it("other providers get prompted when acted on; LLM_PROVIDER=aws-bedrock reads an unknown model as Bedrock", () => {
    expect(strategyOf(new ChatOpenAI({ model: "gpt-4o", apiKey: "x" }))).toEqual(["prompted"]);
    expect(strategyOf(new FakeListChatModel({ responses: [] }), { env: { LLM_PROVIDER: "aws-bedrock" } })).toEqual([
      "prompted",
    ]);
  });

  it("a fallback chain gets a strategy per model", () => {
    const chain = new ChatOpenAI({ model: "gpt-4o", apiKey: "x" }).withFallbacks([
      bedrock("us.anthropic.claude-sonnet-4-6-v1:0"),
      bedrock("meta.llama3-1-70b-instruct-v1:0"),
    ]);
    expect(structuredOutputStrategies(chain).map((c) => [c.model.role, c.strategy])).toEqual([
      ["primary", "prompted"],
      ["fallback", "native"],
      ["fallback", "prompted"],
    ]);
  });

  it("falls back to what the client can send: a Claude id ChatBedrockConverse will not force a tool for is prompted", () => {
    const custom = bedrock("us.anthropic.claude-opus-4-1-20250805-v1:0", { supportsToolChoiceValues: [] });
    expect(strategyOf(custom)).toEqual(["prompted"]);
    expect(() => structuredOutputStrategies(custom, { strategy: "tool" })).toThrow(/does not force a tool choice/);
  });
});

describe("a forced strategy", () => {
  it("applies to every model", () => {
    expect(strategyOf(bedrock("meta.llama3-1-70b-instruct-v1:0"), { strategy: "native" })).toEqual(["native"]);
    expect(strategyOf(bedrock("us.anthropic.claude-sonnet-4-6-v1:0"), { strategy: "prompted" })).toEqual(["prompted"]);
  });

  it("tool with thinking on is an error, naming the model", () => {
    const thinking = bedrock("us.anthropic.claude-sonnet-4-6-v1:0", { additionalModelRequestFields: THINKING });
    expect(() => structuredOutputStrategies(thinking, { strategy: "tool" })).toThrow(
      /strategy "tool" cannot be used for us\.anthropic\.claude-sonnet-4-6-v1:0: extended thinking is on/,
    );
    // Named as the option it is, not as arguments that could not be read.
    expect(() => structuredOutputStrategies(thinking, { strategy: "tool" })).toThrow(
      expect.objectContaining({ name: "ToolCallRepairInputError", argument: "options.strategy" }),
    );
  });

  it("native where this package cannot send it is an error", () => {
    expect(() =>
      structuredOutputStrategies(new ChatOpenAI({ model: "gpt-4o", apiKey: "x" }), { strategy: "native" }),
    ).toThrow(/Bedrock and Anthropic models only/);
    expect(() => structuredOutputStrategies(new FakeListChatModel({ responses: [] }), { strategy: "native" })).toThrow(
      /not one this package knows/,
    );
  });

  it("an unknown strategy is a TypeError", () => {
    expect(() => structuredOutputStrategies(bedrock("x"), { strategy: "json" as never })).toThrow(TypeError);
  });
});

describe("structuredOutputStrategies checks its options and reads the model under the input guard", () => {
  it("each option named; a BigInt strategy is described, not a JSON.stringify crash", () => {
    expect(errorOf(() => structuredOutputStrategies({}, { strategy: 10n } as never))).toMatchObject(
      inputError("options.strategy", 'expected "native", "tool" or "prompted"'),
    );
    expect(errorOf(() => structuredOutputStrategies({}, { env: "x" } as never))).toMatchObject(
      inputError("options.env"),
    );
    expect(
      errorOf(() =>
        structuredOutputStrategies({}, {
          get strategy(): string {
            throw new Error("x");
          },
        } as never),
      ),
    ).toMatchObject(boundaryError("structuredOutputStrategies", "x"));
    expect(errorOf(() => structuredOutputStrategies(throwingObject()))).toMatchObject(
      boundaryError("structuredOutputStrategies", "GETTER"),
    );
    expect(structuredOutputStrategies({})).toEqual([]);
  });
});
