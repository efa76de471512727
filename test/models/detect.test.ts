import { ChatAnthropic } from "@langchain/anthropic";
import { ChatBedrockConverse } from "@langchain/aws";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { RunnableLambda, RunnableSequence } from "@langchain/core/runnables";
import { ChatPromptTemplate } from "@langchain/core/prompts";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { initChatModel } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  cannotPrefill,
  claudeVersionOf,
  envSelectsBedrock,
  isBedrockModel,
  isModelChooser,
  modelIdOf,
  needsPromptedStructuredOutput,
} from "../../src/models/detect";

const NO_ENV = {};
const credentials = { accessKeyId: "x", secretAccessKey: "x" };
const bedrock = (model = "us.anthropic.claude-sonnet-4-6-v1:0") =>
  new ChatBedrockConverse({ model, region: "us-east-1", credentials });
const openai = () => new ChatOpenAI({ model: "gpt-4o", apiKey: "x" });
const anthropic = (model: string) => new ChatAnthropic({ model, apiKey: "x" });
const lookup = tool(async () => "ok", { name: "lookup", description: "d", schema: z.object({ q: z.string() }) });

describe("isBedrockModel", () => {
  it("recognises ChatBedrockConverse itself", () => {
    expect(isBedrockModel(bedrock(), { env: NO_ENV })).toBe(true);
  });

  it("sees through bindTools, withConfig, withRetry, sequences and fallbacks", () => {
    const model = bedrock();
    expect(isBedrockModel(model.bindTools([lookup]), { env: NO_ENV })).toBe(true);
    expect(isBedrockModel(model.withConfig({ tags: ["x"] }), { env: NO_ENV })).toBe(true);
    expect(isBedrockModel(model.withRetry(), { env: NO_ENV })).toBe(true);
    expect(isBedrockModel(model.bindTools([lookup]).withRetry(), { env: NO_ENV })).toBe(true);
    const prompt = ChatPromptTemplate.fromMessages([["human", "{q}"]]);
    expect(isBedrockModel(RunnableSequence.from([prompt, model]), { env: NO_ENV })).toBe(true);
    expect(isBedrockModel(model.withFallbacks([openai()]), { env: NO_ENV })).toBe(true);
  });

  it("recognises an initChatModel configurable model on bedrock", async () => {
    const configurable = await initChatModel("meta.llama3-1-70b-instruct-v1:0", {
      modelProvider: "bedrock",
      region: "us-east-1",
      credentials,
    });
    expect(isBedrockModel(configurable, { env: NO_ENV })).toBe(true);
    expect(isBedrockModel(configurable.withConfig({ tags: ["x"] }), { env: NO_ENV })).toBe(true);
    expect(isBedrockModel(configurable.bindTools([lookup]), { env: NO_ENV })).toBe(true);
    const openaiConfigurable = await initChatModel("gpt-4o", { modelProvider: "openai", apiKey: "x" });
    expect(isBedrockModel(openaiConfigurable, { env: NO_ENV })).toBe(false);
  });

  it("is false for other providers and for things that are not models", () => {
    expect(isBedrockModel(openai(), { env: NO_ENV })).toBe(false);
    expect(isBedrockModel(anthropic("claude-sonnet-4-6").bindTools([lookup]), { env: NO_ENV })).toBe(false);
    expect(isBedrockModel(new FakeListChatModel({ responses: [] }), { env: NO_ENV })).toBe(false);
    expect(isBedrockModel(undefined, { env: NO_ENV })).toBe(false);
    expect(isBedrockModel("bedrock", { env: NO_ENV })).toBe(false);
    expect(isBedrockModel(RunnableLambda.from((x: string) => x), { env: NO_ENV })).toBe(false);
  });

  it("cannot see the model behind a function: false unless an option or the environment decides", () => {
    const chooser = () => bedrock();
    expect(isModelChooser(chooser)).toBe(true);
    expect(isModelChooser(bedrock())).toBe(false);
    expect(isBedrockModel(chooser, { env: NO_ENV })).toBe(false);
    expect(isBedrockModel(chooser, { env: { LLM_PROVIDER: "aws-bedrock" } })).toBe(true);
  });

  it("lets an explicit option override both the model and the environment", () => {
    expect(isBedrockModel(bedrock(), { bedrock: false, env: NO_ENV })).toBe(false);
    expect(isBedrockModel(openai(), { bedrock: true, env: NO_ENV })).toBe(true);
    expect(isBedrockModel(openai(), { bedrock: false, env: { LLM_PROVIDER: "aws-bedrock" } })).toBe(false);
  });

  it("reads LLM_PROVIDER=aws-bedrock from the environment", () => {
    expect(isBedrockModel(openai(), { env: { LLM_PROVIDER: "aws-bedrock" } })).toBe(true);
    expect(isBedrockModel(openai(), { env: { LLM_PROVIDER: " AWS-Bedrock " } })).toBe(true);
    expect(isBedrockModel(openai(), { env: { LLM_PROVIDER: "openai" } })).toBe(false);
    expect(envSelectsBedrock({})).toBe(false);
  });

  it("reads process.env by default", () => {
    const saved = process.env.LLM_PROVIDER;
    try {
      process.env.LLM_PROVIDER = "aws-bedrock";
      expect(isBedrockModel(openai())).toBe(true);
      delete process.env.LLM_PROVIDER;
      expect(isBedrockModel(openai())).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.LLM_PROVIDER;
      else process.env.LLM_PROVIDER = saved;
    }
  });
});

describe("claudeVersionOf", () => {
  it.each([
    ["claude-sonnet-4-6", "sonnet", 4, 6],
    ["us.anthropic.claude-opus-4-6-v1:0", "opus", 4, 6],
    ["claude-opus-5", "opus", 5, 0],
    ["claude-sonnet-4-20250514", "sonnet", 4, 0],
    ["claude-opus-4-1-20250805", "opus", 4, 1],
    ["claude-sonnet-4-5-20250929", "sonnet", 4, 5],
    ["anthropic.claude-3-5-sonnet-20240620-v1:0", "sonnet", 3, 5],
    ["claude-3-7-sonnet-latest", "sonnet", 3, 7],
    ["anthropic/claude-sonnet-4.6", "sonnet", 4, 6],
    ["claude-opus-4-6@20260101", "opus", 4, 6],
    ["arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-4-6-v1:0", "opus", 4, 6],
  ])("%s is %s %i.%i", (id, family, major, minor) => {
    expect(claudeVersionOf(id)).toEqual({ family, major, minor });
  });

  it("is undefined for ids that name no Claude model", () => {
    expect(claudeVersionOf("gpt-4o")).toBeUndefined();
    expect(claudeVersionOf("meta.llama3-70b-instruct-v1:0")).toBeUndefined();
  });
});

describe("cannotPrefill", () => {
  it.each([
    ["claude-sonnet-4-6", true],
    ["us.anthropic.claude-opus-4-6-v1:0", true],
    ["claude-opus-5", true],
    ["claude-haiku-5-0", true],
    ["claude-sonnet-4-5-20250929", false],
    ["claude-opus-4-20250514", false],
    ["anthropic.claude-3-5-sonnet-20240620-v1:0", false],
    ["meta.llama3-1-70b-instruct-v1:0", true],
    ["us.meta.llama4-maverick-17b-instruct-v1:0", true],
    ["gpt-4o", false],
    ["amazon.nova-pro-v1:0", false],
  ])("model id %s: %s", (id, expected) => {
    expect(cannotPrefill(id)).toBe(expected);
  });

  it("reads the id of a model on any provider, wrapped or not", () => {
    expect(cannotPrefill(anthropic("claude-sonnet-4-6"))).toBe(true);
    expect(cannotPrefill(anthropic("claude-sonnet-4-6").bindTools([lookup]))).toBe(true);
    expect(cannotPrefill(anthropic("claude-sonnet-4-5"))).toBe(false);
    expect(cannotPrefill(bedrock("us.anthropic.claude-opus-4-6-v1:0"))).toBe(true);
    expect(cannotPrefill(openai())).toBe(false);
  });

  it("treats any Llama id as no-prefill on a Bedrock model only", () => {
    expect(cannotPrefill(bedrock("my-llama-finetune"))).toBe(true);
    expect(cannotPrefill(new ChatOpenAI({ model: "llama-3.3-70b", apiKey: "x" }))).toBe(false);
  });
});

describe("needsPromptedStructuredOutput and modelIdOf", () => {
  it("is true for Bedrock models and for no-prefill models elsewhere", () => {
    expect(needsPromptedStructuredOutput(bedrock("amazon.nova-pro-v1:0"), { env: NO_ENV })).toBe(true);
    expect(needsPromptedStructuredOutput(anthropic("claude-opus-4-6"), { env: NO_ENV })).toBe(true);
    expect(needsPromptedStructuredOutput(anthropic("claude-opus-4-5"), { env: NO_ENV })).toBe(false);
    expect(needsPromptedStructuredOutput(openai(), { env: NO_ENV })).toBe(false);
  });

  it("reads the model id through wrappers", () => {
    expect(modelIdOf(bedrock("amazon.nova-pro-v1:0").bindTools([lookup]))).toBe("amazon.nova-pro-v1:0");
    expect(modelIdOf(openai())).toBe("gpt-4o");
    expect(modelIdOf(() => openai())).toBeUndefined();
  });
});
