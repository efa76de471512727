/**
 * How each model gives its structured response, in one table, with the source of each fact.
 *
 * - `native`: the provider constrains the answer to the JSON schema (Bedrock Converse `outputConfig.textFormat`,
 *   Anthropic `output_config.format`). The answer is JSON text, parsed and validated like a prompted one.
 * - `tool`: one forced tool call whose arguments are the answer, in a request that ends on a user turn.
 * - `prompted`: the schema in the system prompt, the answer read from the final message (no constraint).
 *
 * Extended thinking refuses a forced tool choice, so a model with thinking on never gets `tool`.
 */
import { boundary } from "../errors";
import {
  claudeAtLeast,
  claudeVersionOf,
  describeModels,
  envSelectsBedrock,
  type ClaudeVersion,
  type Env,
  type ModelDescription,
} from "../models/detect";
import { structuredOptions } from "./options";

export type StructuredOutputStrategy = "native" | "tool" | "prompted";

const STRUCTURED_OUTPUT_STRATEGIES: readonly StructuredOutputStrategy[] = ["native", "tool", "prompted"];

/** What the table is matched on. */
export interface ModelFacts {
  provider?: string;
  modelId?: string;
  claude?: ClaudeVersion;
}

export interface StrategyRule {
  /** The models the row covers, in words. */
  models: string;
  /** The client class (by provider) the row applies to; "other" for every other provider. */
  provider: "bedrock" | "anthropic" | "other";
  strategy: StructuredOutputStrategy;
  /** The strategy when extended thinking is on. */
  withThinking: Exclude<StructuredOutputStrategy, "tool">;
  /** Where the facts come from, and how sure they are (H: documented by the provider; M: reported or inferred). */
  source: string;
  /**
   * "documented": the provider's published lists say so; "reported": reports or inference only. A native row
   * of either kind is protected by the fallback: a native request refused for the model falls back once to
   * the next strategy, which is then remembered for that model (see fallback.ts).
   */
  evidence: "documented" | "reported";
  matches(model: ModelFacts): boolean;
}

const isClaude = (m: ModelFacts, test: (c: ClaudeVersion) => boolean) => m.claude !== undefined && test(m.claude);
const AT_LAUNCH = (c: ClaudeVersion) =>
  (c.major === 4 && c.minor === 5 && ["haiku", "sonnet", "opus"].includes(c.family)) ||
  (c.family === "opus" && c.major === 4 && c.minor === 6);

const THINKING_REFUSES_FORCED_TOOL =
  "Anthropic: a forced tool_choice is refused with extended thinking on (`Thinking may not be " +
  "enabled when tool_choice forces tool use.`, H)";

/** First matching row wins. */
export const STRUCTURED_OUTPUT_TABLE: readonly StrategyRule[] = [
  {
    models: "Claude Haiku 4.5, Sonnet 4.5, Opus 4.5, Opus 4.6",
    provider: "bedrock",
    strategy: "native",
    withThinking: "native",
    source:
      "AWS Bedrock user guide, 'Get validated JSON results from models' (structured outputs on " +
      "Converse `outputConfig.textFormat`, launched 2026-02-04): these four Claude models (H)",
    evidence: "documented",
    matches: (m) => isClaude(m, AT_LAUNCH),
  },
  {
    models: "Claude Sonnet 4.6",
    provider: "bedrock",
    strategy: "native",
    withThinking: "native",
    source:
      "Anthropic, 'Structured outputs': generally available on the Claude API and Amazon Bedrock for Opus 4.6, " +
      "Sonnet 4.6, Sonnet 4.5, Opus 4.5 and Haiku 4.5 (H)",
    evidence: "documented",
    matches: (m) => isClaude(m, (c) => c.family === "sonnet" && c.major === 4 && c.minor === 6),
  },
  {
    models: "Claude Opus 4.7",
    provider: "bedrock",
    strategy: "tool",
    withThinking: "prompted",
    source:
      "Reported: on Bedrock it has structured outputs only through the Messages-API endpoint; Converse answers " +
      '`output_config.format: Extra inputs are not permitted` (M). Force `strategy: "native"` once Converse takes it ' +
      "(a refusal still falls back)",
    evidence: "reported",
    matches: (m) => isClaude(m, (c) => c.family === "opus" && c.major === 4 && c.minor === 7),
  },
  {
    models: "later Claude models (Claude 4.8 and later, Claude 5, ...)",
    provider: "bedrock",
    strategy: "native",
    withThinking: "native",
    source:
      "Inferred: Anthropic lists structured outputs for its later GA models, AWS's list stops at Opus 4.6 (M); " +
      "a refusal falls back to tool (prompted with thinking) and is remembered for the model",
    evidence: "reported",
    matches: (m) => isClaude(m, (c) => claudeAtLeast(c, 4, 6)),
  },
  {
    models: "Claude 3.x to 4.1",
    provider: "bedrock",
    strategy: "tool",
    withThinking: "prompted",
    source:
      `Not in AWS's structured-outputs list; @langchain/aws 1.4.5 supports tool_choice "tool" for ` +
      `claude-3/4 ids (supportedToolChoiceValuesForModel). ${THINKING_REFUSES_FORCED_TOOL}`,
    evidence: "documented",
    matches: (m) => m.claude !== undefined,
  },
  {
    models: "Llama (meta.*)",
    provider: "bedrock",
    strategy: "prompted",
    withThinking: "prompted",
    source:
      "Not in AWS's structured-outputs list; ChatBedrockConverse throws locally on tool_choice for it; " +
      "Bedrock requires the request to end on a user turn (B7)",
    evidence: "documented",
    matches: (m) => m.modelId !== undefined && /llama/i.test(m.modelId),
  },
  {
    models:
      "every other Bedrock model: Amazon Nova and Titan, Mistral, Cohere, AI21, DeepSeek, Qwen, " +
      "application inference profile ARNs, unknown ids",
    provider: "bedrock",
    strategy: "prompted",
    withThinking: "prompted",
    source:
      'ChatBedrockConverse knows tool_choice only for Claude and mistral-large ("any" only, which with the ' +
      "agent's tools may pick one of them); AWS names 'select' open-weight models for structured outputs " +
      'without ids to match (M): force `strategy: "native"` for yours',
    evidence: "reported",
    matches: () => true,
  },
  {
    models:
      "Claude 4.5 and later (ChatAnthropic; acted on when the model cannot prefill, or when a strategy is forced)",
    provider: "anthropic",
    strategy: "native",
    withThinking: "native",
    source:
      "Anthropic structured outputs (`output_config.format`, Claude 4.5 and later, H); " +
      "@langchain/anthropic 1.5 sends the `outputConfig` call option",
    evidence: "documented",
    matches: (m) => isClaude(m, (c) => claudeAtLeast(c, 4, 5)),
  },
  {
    models: "earlier Claude models (ChatAnthropic)",
    provider: "anthropic",
    strategy: "tool",
    withThinking: "prompted",
    source: `Anthropic tool_choice {type: "tool"} (H). ${THINKING_REFUSES_FORCED_TOOL}`,
    evidence: "documented",
    matches: () => true,
  },
  {
    models:
      "any other model the wrappers act on (a no-prefill model behind another client, " +
      "`LLM_PROVIDER=aws-bedrock` on a model that is not recognised)",
    provider: "other",
    strategy: "prompted",
    withThinking: "prompted",
    source: "No constrained mechanism this package can send there",
    evidence: "documented",
    matches: () => true,
  },
];

export interface StrategyOptions {
  /** Force one strategy for every model (default: the table). */
  strategy?: StructuredOutputStrategy;
  /** Where `LLM_PROVIDER` is read (default `process.env`): `aws-bedrock` reads an unrecognised model as a Bedrock one. */
  env?: Env;
}

export interface StrategyChoice {
  strategy: StructuredOutputStrategy;
  /** The table row that decided; undefined when the strategy was forced. */
  rule?: StrategyRule;
  /** The model the choice is for. */
  model: ModelDescription;
}

/**
 * The strategy for every model behind `model` (the primary, then each fallback, each with its own), as the
 * agent wrappers pick it when they act on the model. A forced strategy applies to every model; `tool` with
 * thinking on throws (the provider would refuse it).
 */
export const structuredOutputStrategies = boundary(
  "structuredOutputStrategies",
  function structuredOutputStrategies(model: unknown, options: StrategyOptions = {}): StrategyChoice[] {
    const fn = "structuredOutputStrategies";
    options = structuredOptions<StrategyOptions>(options, fn, ["strategy", "env"]);
    return describeModels(model).map((description) => strategyChoiceFor(description, options));
  },
);

export function strategyChoiceFor(model: ModelDescription, options: StrategyOptions = {}): StrategyChoice {
  if (options.strategy !== undefined) {
    assertToolAllowed(options.strategy, model);
    const unavailable = whyNotSendable(options.strategy, model);
    if (unavailable !== undefined)
      throw new TypeError(
        `strategy "${options.strategy}" cannot be used for ${model.modelId ?? "this model"}: ${unavailable}.`,
      );
    return { strategy: options.strategy, model };
  }
  // LLM_PROVIDER=aws-bedrock: a model this package does not recognise is read as a Bedrock one.
  const provider = model.provider ?? (envSelectsBedrock(options.env) ? "bedrock" : undefined);
  const { modelId } = model;
  const facts: ModelFacts = { provider, modelId, claude: modelId === undefined ? undefined : claudeVersionOf(modelId) };
  const tableProvider = provider === "bedrock" || provider === "anthropic" ? provider : "other";
  const rule = STRUCTURED_OUTPUT_TABLE.find((row) => row.provider === tableProvider && row.matches(facts))!;
  // The table names what the model supports; the client object must be able to send it too.
  return { strategy: usableFrom(model.thinking ? rule.withThinking : rule.strategy, model), rule, model };
}

/** The first strategy from `strategy` on (native, tool, prompted) that this model can take and be sent. */
function usableFrom(strategy: StructuredOutputStrategy, model: ModelDescription): StructuredOutputStrategy {
  return STRUCTURED_OUTPUT_STRATEGIES.slice(STRUCTURED_OUTPUT_STRATEGIES.indexOf(strategy)).find(
    (s) => !(s === "tool" && model.thinking) && whyNotSendable(s, model) === undefined,
  )!;
}

/** Where a native request goes when it cannot be sent or is refused: tool, or prompted with thinking on. */
export function strategyAfterNative(model: ModelDescription): Exclude<StructuredOutputStrategy, "native"> {
  return usableFrom("tool", model) as Exclude<StructuredOutputStrategy, "native">;
}

/**
 * Why this package cannot send `strategy` to this model object, or undefined when it can: `native` needs a
 * ChatBedrockConverse (its `invocationParams` carries `outputConfig`) or a ChatAnthropic (`outputConfig` call
 * option); `tool` needs `bindTools`, and on Bedrock a model that ChatBedrockConverse lets force one tool.
 */
function whyNotSendable(strategy: StructuredOutputStrategy, model: ModelDescription): string | undefined {
  if (strategy === "prompted") return undefined;
  const instance = model.instance;
  if (instance === undefined && model.configurable === undefined) return "no chat model was found behind it";
  if (model.provider === undefined)
    return "its client is not one this package knows (Bedrock, Anthropic, OpenAI, Google)";
  if (strategy === "native") {
    if (model.provider === "anthropic") return undefined;
    if (model.provider !== "bedrock")
      return `native structured output is sent to Bedrock and Anthropic models only (provider: ${model.provider})`;
    if (instance !== undefined && typeof instance.invocationParams !== "function")
      return "the Bedrock model has no invocationParams()";
    return undefined;
  }
  if (instance !== undefined && typeof instance.bindTools !== "function") return "the model has no bindTools()";
  if (model.provider === "bedrock") {
    const supported = instance?.supportsToolChoiceValues;
    const forcesOne = Array.isArray(supported)
      ? supported.includes("tool")
      : model.modelId !== undefined && claudeVersionOf(model.modelId) !== undefined;
    if (!forcesOne)
      return `ChatBedrockConverse does not force a tool choice for ${model.modelId ?? "this model id"} (supportsToolChoiceValues)`;
  }
  return undefined;
}

/** A forced "tool" with extended thinking on: the provider would refuse it. */
export function assertToolAllowed(strategy: StructuredOutputStrategy, model: ModelDescription): void {
  if (strategy === "tool" && model.thinking) {
    throw new TypeError(
      `strategy "tool" cannot be used for ${model.modelId ?? "this model"}: extended thinking is on, and the provider ` +
        'refuses a forced tool call with it. Use "native" or "prompted".',
    );
  }
}
