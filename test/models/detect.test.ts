import { ChatAnthropic } from "@langchain/anthropic";
import { ChatBedrockConverse } from "@langchain/aws";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { RunnableLambda, RunnableSequence } from "@langchain/core/runnables";
import { ChatPromptTemplate } from "@langchain/core/prompts";
import { tool } from "@langchain/core/tools";
import { AzureChatOpenAI, ChatOpenAI } from "@langchain/openai";
import { initChatModel } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  cannotPrefill,
  claudeVersionOf,
  describeModels,
  envSelectsBedrock,
  isBedrockModel,
  providerOfAnswer,
  providerOfThread,
} from "../../src/models/detect";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import {
  anthropicModel,
  bedrockModel,
  geminiModel,
  openAIModel,
  startAnthropicStub,
  startBedrockStub,
  startGeminiStub,
  startOpenAIStub,
  type RunningStub,
} from "../support/stubs";
import { pinnedTo } from "../support/versions";
import { boundaryError, errorOf, revokedObject, throwingObject } from "../support/hostile";

/** The Google clients need @langchain/core 1.2.11 or later: below it (the minimum-peers run) their rows are left out. */
const GOOGLE_PINNED = pinnedTo(
  "@langchain/core",
  "1.2.11",
  "the Google clients (@langchain/google-genai, google-vertexai)",
);
const google = GOOGLE_PINNED
  ? undefined
  : { ...(await import("@langchain/google-genai")), ...(await import("@langchain/google-vertexai")) };

/** What the surfaces read of a model: the primary's provider and thinking, the first model id of the chain. */
const providerOfModel = (model: unknown) => describeModels(model)[0]?.provider;
const thinkingEnabled = (model: unknown) => describeModels(model)[0]?.thinking ?? false;
const modelIdOf = (model: unknown) => describeModels(model).find((d) => d.modelId !== undefined)?.modelId;

const NO_ENV = {};
const credentials = { accessKeyId: "x", secretAccessKey: "x" };
const bedrock = (model = "us.anthropic.claude-sonnet-4-6-v1:0") =>
  new ChatBedrockConverse({ model, region: "us-east-1", credentials });
const openai = () => new ChatOpenAI({ model: "gpt-4o", apiKey: "x" });
const anthropic = (model: string) => new ChatAnthropic({ model, apiKey: "x" });
const lookup = tool(async () => "ok", { name: "lookup", description: "d", schema: z.object({ q: z.string() }) });

describe("isBedrockModel", () => {
  it("recognises ChatBedrockConverse itself", () => {
    expect(isBedrockModel(bedrock(), NO_ENV)).toBe(true);
  });

  it("sees through bindTools, withConfig, withRetry, sequences and fallbacks", () => {
    const model = bedrock();
    expect(isBedrockModel(model.bindTools([lookup]), NO_ENV)).toBe(true);
    expect(isBedrockModel(model.withConfig({ tags: ["x"] }), NO_ENV)).toBe(true);
    expect(isBedrockModel(model.withRetry(), NO_ENV)).toBe(true);
    expect(isBedrockModel(model.bindTools([lookup]).withRetry(), NO_ENV)).toBe(true);
    const prompt = ChatPromptTemplate.fromMessages([["human", "{q}"]]);
    expect(isBedrockModel(RunnableSequence.from([prompt, model]), NO_ENV)).toBe(true);
    expect(isBedrockModel(model.withFallbacks([openai()]), NO_ENV)).toBe(true);
  });

  it("recognises an initChatModel configurable model on bedrock", async () => {
    const configurable = await initChatModel("meta.llama3-1-70b-instruct-v1:0", {
      modelProvider: "bedrock",
      region: "us-east-1",
      credentials,
    });
    expect(isBedrockModel(configurable, NO_ENV)).toBe(true);
    expect(isBedrockModel(configurable.withConfig({ tags: ["x"] }), NO_ENV)).toBe(true);
    expect(isBedrockModel(configurable.bindTools([lookup]), NO_ENV)).toBe(true);
    const openaiConfigurable = await initChatModel("gpt-4o", { modelProvider: "openai", apiKey: "x" });
    expect(isBedrockModel(openaiConfigurable, NO_ENV)).toBe(false);
  });

  it("is false for other providers and for things that are not models", () => {
    expect(isBedrockModel(openai(), NO_ENV)).toBe(false);
    expect(isBedrockModel(anthropic("claude-sonnet-4-6").bindTools([lookup]), NO_ENV)).toBe(false);
    expect(isBedrockModel(new FakeListChatModel({ responses: [] }), NO_ENV)).toBe(false);
    expect(isBedrockModel(undefined, NO_ENV)).toBe(false);
    expect(isBedrockModel("bedrock", NO_ENV)).toBe(false);
    expect(
      isBedrockModel(
        RunnableLambda.from((x: string) => x),
        NO_ENV,
      ),
    ).toBe(false);
  });

  it("cannot see the model behind a function: false unless an option or the environment decides", () => {
    const chooser = () => bedrock();
    expect(isBedrockModel(chooser, NO_ENV)).toBe(false);
    expect(isBedrockModel(chooser, { LLM_PROVIDER: "aws-bedrock" })).toBe(true);
  });

  it("reads LLM_PROVIDER=aws-bedrock from the environment", () => {
    expect(isBedrockModel(openai(), { LLM_PROVIDER: "aws-bedrock" })).toBe(true);
    expect(isBedrockModel(openai(), { LLM_PROVIDER: " AWS-Bedrock " })).toBe(true);
    expect(isBedrockModel(openai(), { LLM_PROVIDER: "openai" })).toBe(false);
    expect(isBedrockModel(openai(), { LLM_PROVIDER: 42 as never })).toBe(false); // not a string: not a choice
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

describe("prompted structured output (a Bedrock model or one that cannot prefill) and modelIdOf", () => {
  it("is needed for Bedrock models and for no-prefill models elsewhere", () => {
    const needsPrompted = (model: unknown) => isBedrockModel(model, NO_ENV) || cannotPrefill(model);
    expect(needsPrompted(bedrock("amazon.nova-pro-v1:0"))).toBe(true);
    expect(needsPrompted(anthropic("claude-opus-4-6"))).toBe(true);
    expect(needsPrompted(anthropic("claude-opus-4-5"))).toBe(false);
    expect(needsPrompted(openai())).toBe(false);
  });

  it("reads the model id through wrappers", () => {
    expect(modelIdOf(bedrock("amazon.nova-pro-v1:0").bindTools([lookup]))).toBe("amazon.nova-pro-v1:0");
    expect(modelIdOf(openai())).toBe("gpt-4o");
    expect(modelIdOf(() => openai())).toBeUndefined();
  });
});

describe("providerOfModel (real classes)", () => {
  const webSearch = { type: "web_search_preview" };

  it.each<[string, () => unknown, string | undefined]>([
    ["ChatBedrockConverse", () => bedrock(), "bedrock"],
    ["ChatOpenAI", () => openai(), "openai"],
    [
      "ChatOpenAI with useResponsesApi",
      () => new ChatOpenAI({ model: "gpt-4o", apiKey: "x", useResponsesApi: true }),
      "openai-responses",
    ],
    [
      "a codex model (Responses by itself)",
      () => new ChatOpenAI({ model: "gpt-5-codex", apiKey: "x" }),
      "openai-responses",
    ],
    [
      "gpt-5.2-pro (Responses by itself)",
      () => new ChatOpenAI({ model: "gpt-5.2-pro", apiKey: "x" }),
      "openai-responses",
    ],
    ["ChatOpenAI with a built-in tool bound", () => openai().bindTools([webSearch]), "openai-responses"],
    ["ChatOpenAI with a function tool bound", () => openai().bindTools([lookup]), "openai"],
    [
      "AzureChatOpenAI",
      () =>
        new AzureChatOpenAI({
          azureOpenAIApiKey: "x",
          azureOpenAIApiInstanceName: "i",
          azureOpenAIApiDeploymentName: "d",
          azureOpenAIApiVersion: "2024-10-21",
        }),
      "openai",
    ],
    ["ChatAnthropic", () => anthropic("claude-sonnet-4-5"), "anthropic"],
    ...(google
      ? ([
          [
            "ChatGoogleGenerativeAI",
            () => new google.ChatGoogleGenerativeAI({ model: "gemini-2.5-pro", apiKey: "x" }),
            "gemini",
          ],
          ["ChatVertexAI (Gemini)", () => new google.ChatVertexAI({ model: "gemini-2.5-pro" }), "gemini"],
          [
            "ChatVertexAI (Claude on Vertex AI)",
            () => new google.ChatVertexAI({ model: "claude-sonnet-4-5@20250929" }),
            "anthropic",
          ],
        ] satisfies [string, () => unknown, string][])
      : []),
    ["a model of another class", () => new FakeListChatModel({ responses: [] }), undefined],
    ["a function", () => () => openai(), undefined],
    ["not a model", () => ({ model: "gpt-4o" }), undefined],
  ])("%s", (_name, make, expected) => {
    expect(providerOfModel(make())).toBe(expected);
  });

  it("reads through bindings, retries and sequences", () => {
    const prompt = ChatPromptTemplate.fromMessages([["human", "{q}"]]);
    expect(providerOfModel(anthropic("claude-opus-4-6").bindTools([lookup]).withRetry())).toBe("anthropic");
    expect(providerOfModel(RunnableSequence.from([prompt, bedrock()]))).toBe("bedrock");
  });

  it("a fallback chain: the primary decides; describeModels gives each model with its own provider", () => {
    const chain = openai().withFallbacks([bedrock("meta.llama3-1-70b-instruct-v1:0")]);
    expect(providerOfModel(chain)).toBe("openai");
    expect(describeModels(chain).map((m) => [m.role, m.provider, m.modelId])).toEqual([
      ["primary", "openai", "gpt-4o"],
      ["fallback", "bedrock", "meta.llama3-1-70b-instruct-v1:0"],
    ]);
    // A request may reach any model of the chain: these checks count every one.
    expect(isBedrockModel(chain, NO_ENV)).toBe(true);
    expect(cannotPrefill(chain)).toBe(true);
  });
});

describe("providerOfAnswer / providerOfThread: what the real clients store on their answers", () => {
  /** One answer of a real client against its stub. */
  async function answerOf(start: () => Promise<RunningStub>, invoke: (stub: RunningStub) => Promise<BaseMessage>) {
    const stub = await start();
    try {
      return await invoke(stub);
    } finally {
      await stub.close();
    }
  }
  const ask = [new HumanMessage("hi")];
  const answers = {
    openai: () => answerOf(startOpenAIStub, (stub) => openAIModel(stub).invoke(ask)),
    "openai-responses": () =>
      answerOf(startOpenAIStub, (stub) => openAIModel(stub, { useResponsesApi: true }).invoke(ask)),
    anthropic: () => answerOf(startAnthropicStub, (stub) => anthropicModel(stub).invoke(ask)),
    bedrock: () => answerOf(startBedrockStub, (stub) => bedrockModel(stub).invoke(ask)),
    gemini: () => answerOf(startGeminiStub, (stub) => geminiModel(stub).invoke(ask)),
  } as const;

  for (const [provider, answer] of Object.entries(answers))
    it.skipIf(provider === "gemini" && GOOGLE_PINNED)(`${provider}: read from its client's answer`, async () => {
      expect(providerOfAnswer(await answer())).toBe(provider);
    });

  it("a thread: its latest answer that tells decides (a switch of provider, a hand-written message)", async () => {
    const fromOpenAI = await answers.openai();
    const fromBedrock = await answers.bedrock();
    const handWritten = new AIMessage("noted");
    expect(providerOfThread([new HumanMessage("a"), fromOpenAI, new HumanMessage("b"), fromBedrock])).toBe("bedrock");
    expect(providerOfThread([new HumanMessage("a"), fromBedrock, new HumanMessage("b"), fromOpenAI])).toBe("openai");
    expect(providerOfThread([fromBedrock, new HumanMessage("b"), handWritten])).toBe("bedrock");
    expect(providerOfThread([new HumanMessage("a"), handWritten])).toBeUndefined();
    expect(providerOfAnswer(new HumanMessage({ content: "a", response_metadata: { model_provider: "openai" } }))).toBe(
      "openai",
    );
    expect(
      providerOfThread([new HumanMessage({ content: "a", response_metadata: { model_provider: "openai" } })]),
    ).toBe(undefined);
  });

  it("older answers with a model id only: the provider initChatModel would infer; a Claude on Vertex is Anthropic", () => {
    expect(providerOfAnswer(new AIMessage({ content: "x", response_metadata: { model_name: "gpt-4o" } }))).toBe(
      "openai",
    );
    expect(providerOfAnswer(new AIMessage({ content: "x", response_metadata: { model: "claude-3-5-sonnet" } }))).toBe(
      "anthropic",
    );
    const vertexClaude = { model_provider: "google-vertexai", model: "claude-sonnet-4-5@20250929" };
    expect(providerOfAnswer(new AIMessage({ content: "x", response_metadata: vertexClaude }))).toBe("anthropic");
    expect(providerOfAnswer(new AIMessage({ content: "x", response_metadata: { model_provider: "acme" } }))).toBe(
      undefined,
    );
  });
});

describe("initChatModel configurable models", () => {
  it("the issue's case: a bound configurable model with no cached instance cannot prefill (Claude 4.6)", async () => {
    const configurable = await initChatModel("anthropic:claude-opus-4-6", { apiKey: "x" });
    const bound = configurable.bindTools([lookup]);
    expect(cannotPrefill(bound)).toBe(true);
    expect(providerOfModel(bound)).toBe("anthropic");
    expect(modelIdOf(bound)).toBe("claude-opus-4-6");
    const [description] = describeModels(bound);
    expect(description.instance).toBeUndefined();
    expect(description.callOptions).toEqual({});
  });

  it("reads the provider from the config, or infers it as initChatModel does", async () => {
    expect(providerOfModel(await initChatModel("gpt-4o", { apiKey: "x" }))).toBe("openai");
    expect(
      providerOfModel(
        (await initChatModel("openai:gpt-4o", { apiKey: "x", useResponsesApi: true })).bindTools([lookup]),
      ),
    ).toBe("openai-responses");
    const llama = await initChatModel("meta.llama3-1-70b-instruct-v1:0", {
      modelProvider: "bedrock",
      region: "us-east-1",
      credentials,
    });
    expect(providerOfModel(llama.bindTools([lookup]))).toBe("bedrock");
    expect(cannotPrefill(llama.bindTools([lookup]))).toBe(true);
    if (google)
      expect(
        providerOfModel(
          (await initChatModel("gemini-2.5-pro", { modelProvider: "google-genai", apiKey: "x" })).bindTools([lookup]),
        ),
      ).toBe("gemini");
  });

  it("the options of a queued bindTools and of an outer binding are read (thinking)", async () => {
    const configurable = await initChatModel("anthropic:claude-sonnet-4-5", {
      apiKey: "x",
      thinking: { type: "enabled", budget_tokens: 1024 },
    });
    expect(thinkingEnabled(configurable)).toBe(true);
    expect(thinkingEnabled(configurable.bindTools([lookup]))).toBe(true);
  });
});

describe("thinkingEnabled", () => {
  const thinking = { type: "enabled", budget_tokens: 1024 };

  it("ChatAnthropic `thinking` (field or bound call option), enabled or adaptive", () => {
    expect(
      thinkingEnabled(new ChatAnthropic({ model: "claude-sonnet-4-5", apiKey: "x", thinking: thinking as never })),
    ).toBe(true);
    expect(
      thinkingEnabled(
        new ChatAnthropic({ model: "claude-opus-4-6", apiKey: "x", thinking: { type: "adaptive" } as never }),
      ),
    ).toBe(true);
    expect(thinkingEnabled(anthropic("claude-sonnet-4-5"))).toBe(false);
    expect(thinkingEnabled(anthropic("claude-sonnet-4-5").withConfig({ thinking } as never))).toBe(true);
  });

  it("ChatBedrockConverse `additionalModelRequestFields.thinking` (field, or bound call option when the field is unset)", () => {
    const withField = new ChatBedrockConverse({
      model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      region: "us-east-1",
      credentials,
      additionalModelRequestFields: { thinking },
    });
    expect(thinkingEnabled(withField)).toBe(true);
    expect(thinkingEnabled(bedrock().withConfig({ additionalModelRequestFields: { thinking } }))).toBe(true);
    expect(thinkingEnabled(bedrock())).toBe(false);
    expect(
      thinkingEnabled(
        new ChatBedrockConverse({
          region: "us-east-1",
          credentials,
          additionalModelRequestFields: { thinking: { type: "disabled" } },
        }),
      ),
    ).toBe(false);
  });
});

describe("argument checks: an input error naming the argument, never a raw error", () => {
  it("a model whose fields cannot be read is the function's boundary error", () => {
    for (const [name, fn] of [
      ["describeModels", describeModels],
      ["isBedrockModel", isBedrockModel],
      ["cannotPrefill", cannotPrefill],
    ] as const) {
      expect(errorOf(() => (fn as (m: unknown) => unknown)(throwingObject()))).toMatchObject(
        boundaryError(name, "GETTER"),
      );
      expect(errorOf(() => (fn as (m: unknown) => unknown)(revokedObject()))).toMatchObject(boundaryError(name));
    }
  });
});
