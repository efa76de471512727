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
import type { RunnableConfig } from "@langchain/core/runnables";
import { ToolCallRepairInputError, boundary, causeChain, errorText } from "../errors";
import { dispatchInRun } from "../integrations/events";
import {
  claudeAtLeast,
  claudeVersionOf,
  describeModels,
  envSelectsBedrock,
  type ClaudeVersion,
  type Env,
  type ModelDescription,
} from "../models/detect";
import { option, readOptions, type OptionTable } from "../options";
import { safeJson } from "../values";
import type { OutputFormat } from "./format";
import { subsetSchemaOf } from "./schema-subset";

/** How a structured response is asked for: the provider's native format, a forced tool call, or instructions. */
export type StructuredOutputStrategy = "native" | "tool" | "prompted";

const STRATEGIES = ["native", "tool", "prompted"] as const;

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
  /** With extended thinking on, `tool` becomes `prompted`. */
  strategy: StructuredOutputStrategy;
  /**
   * Where the facts come from, and how sure they are (H: documented by the provider; M: reported or inferred).
   * A native row of either kind is protected by the fallback: a native request refused for the model falls back
   * once to the next strategy, which is then remembered for that model.
   */
  source: string;
  matches(model: ModelFacts): boolean;
}

const any = () => true;
const claude =
  (test: (c: ClaudeVersion) => boolean = any) =>
  (m: ModelFacts) =>
    !!m.claude && test(m.claude);
/** One model by its family and version ("opus 4.6"). */
const is = (model: string) => (c: ClaudeVersion) => `${c.family} ${c.major}.${c.minor}` === model;
const THINKING = "A forced tool_choice is refused with thinking on (H)";

/** One row: the models, "client strategy", source (with thinking: `tool` becomes `prompted`). */
const row = (models: string, spec: string, source: string, matches: StrategyRule["matches"]) => {
  const [provider, strategy] = spec.split(" ") as [StrategyRule["provider"], StructuredOutputStrategy];
  return { models, provider, strategy, source, matches };
};

/** First matching row wins. */
export const STRUCTURED_OUTPUT_TABLE: readonly StrategyRule[] = [
  row(
    "Claude Haiku 4.5, Sonnet 4.5, Opus 4.5, Opus 4.6",
    "bedrock native",
    "AWS Bedrock user guide, 'Get validated JSON results from models': these four Claude models (H)",
    claude((c) => (c.major === 4 && c.minor === 5) || is("opus 4.6")(c)),
  ),
  row(
    "Claude Sonnet 4.6",
    "bedrock native",
    "Anthropic, 'Structured outputs': on Amazon Bedrock for Sonnet 4.6 (H)",
    claude(is("sonnet 4.6")),
  ),
  row(
    "Claude Opus 4.7",
    "bedrock tool",
    "Reported: Converse answers `output_config.format: Extra inputs are not permitted` (M)",
    claude(is("opus 4.7")),
  ),
  row(
    "later Claude models (Claude 4.8 and later, Claude 5, ...)",
    "bedrock native",
    "Inferred from Anthropic's list (M); a refusal falls back",
    claude((c) => claudeAtLeast(c, 4, 6)),
  ),
  row(
    "Claude 3.x to 4.1",
    "bedrock tool",
    `Not in AWS's list; @langchain/aws forces a tool for claude-3/4 ids. ${THINKING}`,
    claude(),
  ),
  row(
    "Llama (meta.*)",
    "bedrock prompted",
    "Not in AWS's list; ChatBedrockConverse throws on tool_choice for it (H)",
    (m) => /llama/i.test(m.modelId ?? ""),
  ),
  row(
    "every other Bedrock model (Nova, Mistral, ..., inference profile ARNs, unknown ids)",
    "bedrock prompted",
    "ChatBedrockConverse forces a tool only for Claude; AWS names no ids of other models (M)",
    any,
  ),
  row(
    "Claude 4.5 and later (ChatAnthropic)",
    "anthropic native",
    "Anthropic structured outputs (`output_config.format`, Claude 4.5 and later, H)",
    claude((c) => claudeAtLeast(c, 4, 5)),
  ),
  row(
    "earlier Claude models (ChatAnthropic)",
    "anthropic tool",
    `Anthropic tool_choice {type: "tool"} (H). ${THINKING}`,
    any,
  ),
  row(
    "any other model the wrappers act on",
    "other prompted",
    "No constrained mechanism this package can send there",
    any,
  ),
];

/**
 * The options of the structured-output wrappers (`withPromptedStructuredOutput`, the createAgent middleware,
 * `structuredOutputStrategies`), declared once as a table of the shared option kinds (`src/options.ts`) and
 * checked when the wrapper is built. The wrappers then use the copy, not the caller's object.
 */
/** Every option a structured-output wrapper may take; each wrapper lists the ones it reads. */
const KINDS: OptionTable = {
  strategy: option.oneOf(STRATEGIES, '"native", "tool" or "prompted"'),
  env: option.object("an object of environment variables"),
  onStructuredResponse: option.fn,
  onRepair: option.fn,
  onFallback: option.fn,
  name: option.name,
};

/** A checked copy of `options` holding the keys listed (space-separated) that are set (`undefined`/`null` are `{}`). */
export const structuredOptions = <T extends object>(options: unknown, fn: string, keys: string) =>
  readOptions<T>(options, fn, Object.fromEntries(keys.split(" ").map((key) => [key, KINDS[key]])));

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
  (model: unknown, options: StrategyOptions = {}): StrategyChoice[] => {
    options = structuredOptions(options, "structuredOutputStrategies", "strategy env");
    return describeModels(model).map((m) => strategyChoiceFor(m, options));
  },
);

export function strategyChoiceFor(model: ModelDescription, options: StrategyOptions) {
  const { strategy } = options;
  if (strategy) {
    const unavailable = whyNotSendable(strategy, model);
    if (unavailable)
      throw new ToolCallRepairInputError(
        `strategy "${strategy}" cannot be used for ${model.modelId ?? "this model"}: ${unavailable}.`,
        { argument: "options.strategy" },
      );
    return { strategy, model };
  }
  // LLM_PROVIDER=aws-bedrock: a model this package does not recognise is read as a Bedrock one.
  const provider = model.provider ?? (envSelectsBedrock(options.env) ? "bedrock" : undefined);
  // The facts a row reads (ModelFacts), not the client object.
  const facts = { provider, modelId: model.modelId, claude: claudeVersionOf(model.modelId) };
  const table = provider === "bedrock" || provider === "anthropic" ? provider : "other";
  const rule = STRUCTURED_OUTPUT_TABLE.find((row) => row.provider === table && row.matches(facts))!;
  // The table names what the model supports; the client object must be able to send it too.
  return { strategy: usableFrom(rule.strategy, model), rule, model };
}

/** The first strategy from `strategy` on (native, tool, prompted) that this model can take and be sent. */
const usableFrom = (strategy: StructuredOutputStrategy, model: ModelDescription) =>
  STRATEGIES.slice(STRATEGIES.indexOf(strategy)).find((s) => !whyNotSendable(s, model))!;

/**
 * Why this package cannot send `strategy` to this model object, or undefined when it can: `native` needs a
 * ChatBedrockConverse (its `invocationParams` carries `outputConfig`) or a ChatAnthropic (`outputConfig` call
 * option); `tool` needs extended thinking off (the provider refuses a forced tool with it), and on
 * Bedrock a model that ChatBedrockConverse lets force one tool.
 */
function whyNotSendable(strategy: StructuredOutputStrategy, model: ModelDescription) {
  const { instance, provider, modelId, thinking } = model;
  if (strategy === "prompted") return;
  if (strategy === "tool" && thinking)
    return 'extended thinking is on, and the provider refuses a forced tool call with it. Use "native" or "prompted"';
  if (!provider) return "its client is not one this package knows (Bedrock, Anthropic, OpenAI, Google)";
  if (strategy === "native")
    return provider !== "bedrock" && provider !== "anthropic"
      ? `native structured output is sent to Bedrock and Anthropic models only (provider: ${provider})`
      : provider === "bedrock" && instance && typeof instance.invocationParams !== "function"
        ? "the Bedrock model has no invocationParams()"
        : undefined;
  const supported = instance?.supportsToolChoiceValues;
  if (provider === "bedrock" && !(Array.isArray(supported) ? supported.includes("tool") : claudeVersionOf(modelId)))
    return `ChatBedrockConverse does not force a tool choice for ${modelId ?? "this model id"} (supportsToolChoiceValues)`;
}

/**
 * Native structured output that never fails a run for a limitation the package can route around. Before a
 * native request: a schema outside the subset (schema-subset.ts) goes to the next strategy. After one: a
 * refusal for the model or the schema (Bedrock's `ValidationException` texts below) falls back once to the next
 * strategy for that call, and is remembered for the lifetime of the setup (one wrapper or middleware object:
 * nothing global), so later calls go straight to that strategy: a refusal of the model for that model, a refusal
 * of the schema for that model and schema (a middleware object may serve agents with other schemas). Each fallback is reported once per
 * setup: `onFallback`, then the custom event `"structured_output_fallback"`.
 */
/** Name of the custom event sent for each fallback (its payload is the {@link StructuredOutputFallback}). */
export const STRUCTURED_OUTPUT_FALLBACK_EVENT = "structured_output_fallback";

/** A native structured-output request that was not sent, or was refused, and the strategy used instead. */
export interface StructuredOutputFallback {
  /** The model, where known. */
  modelId?: string;
  from: "native";
  to: Exclude<StructuredOutputStrategy, "native">;
  /**
   * "schema": the schema is outside the subset constrained decoding takes (decided before sending, remembered for
   * this model and schema); "refused": the provider refused the native request (remembered for this model, or this
   * model and schema when the schema was refused, for the setup's lifetime).
   */
  cause: "schema" | "refused";
  /** What the subset cannot express, or the provider's error text. */
  reason: string;
}

/**
 * The fixed parts of the refusals of a native request for the model or the schema (PROVIDER_RULES, "Structured
 * output"): `output_config.format: Extra inputs are not permitted` (a model without it), `For 'object' type,
 * 'additionalProperties' must be explicitly set to false`, `For 'integer' type, properties maximum, minimum are
 * not supported`, and their kin for other types, keywords and schemas; a schema over the compilation limits
 * (`Schemas contains too many parameters with union types ...`, `The compiled grammar is too large ...`,
 * `Schema is too complex ...`).
 */
const MODEL_REFUSALS = [
  /output_?config\b.*extra inputs are not permitted/i,
  /(?:doesn't|does not) support the outputConfig field/i,
];
const NATIVE_REFUSALS = [
  ...MODEL_REFUSALS,
  /for '[a-z| ']+' type, /i,
  /\bschemas? (?:are|is) not supported/i,
  /output_?config\.format\.schema\b/i,
  /\bschemas? contains? too many parameters/i,
  /\bcompiled grammar is too large/i,
  /\bschema is too complex/i,
];

/** The refusal text when `error` (or an error in its `cause` chain) is a native request refused for the model or the schema. */
export function nativeRefusalOf(error: unknown) {
  for (const cause of causeChain(error, 5)) {
    const text = errorText(cause);
    if (NATIVE_REFUSALS.some((pattern) => pattern.test(text))) return text;
  }
}

/**
 * The memory of one setup (create it in the wrapper's factory, never at module level). It runs `run` with
 * `strategy` when that is not native; with native for this model and schema, or with the strategy native falls
 * back to: at once for a schema outside the subset or a refusal remembered, once more after a refusal now (then
 * remembered for the model, or the model and schema).
 */
export function nativeFallbacks(onFallback?: (fallback: StructuredOutputFallback) => void) {
  const refused = new Map<string, StructuredOutputFallback["to"]>();
  return async <T, S extends string>(
    strategy: S,
    model: ModelDescription,
    { jsonSchema }: OutputFormat,
    run: (strategy: S) => Promise<T>,
    config?: RunnableConfig,
  ) => {
    if (strategy !== "native") return run(strategy);
    const { modelId } = model;
    const modelKey = `${model.provider}\0${modelId}\0${model.thinking}`;
    const schemaKey = `${modelKey}\0${safeJson(jsonSchema)}`;
    const remembered = refused.get(modelKey) ?? refused.get(schemaKey);
    if (remembered) return run(remembered as S);
    const fallBack = async (cause: StructuredOutputFallback["cause"], reason: string, key: string) => {
      // Tool, or prompted when thinking is on or the model cannot be forced to call one.
      const to = usableFrom("tool", model) as StructuredOutputFallback["to"];
      const fallback = { ...(modelId && { modelId }), from: "native" as const, to, cause, reason };
      // Reported once: two calls refused at once both fall back, the first one reports.
      if (!refused.has(key)) {
        refused.set(key, to);
        try {
          onFallback?.(fallback);
        } catch {
          // a reporting callback must not fail the call it reports
        }
        await dispatchInRun(STRUCTURED_OUTPUT_FALLBACK_EVENT, fallback, config);
      }
      return run(to as S);
    };
    const subset = subsetSchemaOf(jsonSchema);
    if (!subset.ok) return fallBack("schema", subset.reason, schemaKey);
    try {
      return await run(strategy);
    } catch (error) {
      const reason = nativeRefusalOf(error);
      if (!reason) throw error;
      // A model without native is refused whatever the schema: remembered for the model, else for the schema.
      return fallBack("refused", reason, MODEL_REFUSALS.some((p) => p.test(reason)) ? modelKey : schemaKey);
    }
  };
}
