/**
 * Which models need prompted structured output instead of `responseFormat`.
 *
 * Two questions, answered synchronously and without calling anything:
 * - `isBedrockModel`: is the chat model behind this runnable ChatBedrockConverse (whatever wraps it)?
 *   Bedrock rejects createReactAgent's structured-response call (it ends on the agent's own answer: prefill,
 *   B7) and langchain's tool strategy throws locally on Bedrock models without `tool_choice`.
 * - `cannotPrefill`: does the model refuse a request that ends on an assistant turn, on any provider
 *   (Claude 4.6 and later, A8/B7; Llama on Bedrock)?
 *
 * A model chosen by a function (createReactAgent's `llm: (state, runtime) => model`) cannot be inspected
 * before it is called: these checks return false for it (unless an option or the environment decides), and
 * `withPromptedStructuredOutput` checks the model the function returns, at call time.
 */
import { Runnable } from "@langchain/core/runnables";

/** `_llmType()` of the Bedrock chat models: ChatBedrockConverse, and the community BedrockChat (InvokeModel). */
const BEDROCK_LLM_TYPES = new Set(["chat_bedrock_converse", "bedrock"]);

/** initChatModel provider names that build a ChatBedrockConverse. */
const BEDROCK_PROVIDERS = new Set(["bedrock", "aws"]);

/** LLM_PROVIDER values that select Bedrock (case-insensitive). */
const BEDROCK_ENV_VALUES = new Set(["aws-bedrock", "bedrock"]);

export type Env = Record<string, string | undefined>;

export interface BedrockDetectOptions {
  /** Decides outright: true or false wins over the environment and over inspecting the model. */
  bedrock?: boolean;
  /** Where to read `LLM_PROVIDER` from. Default `process.env`. */
  env?: Env;
}

type Dict = Record<string, unknown>;

const isObject = (value: unknown): value is Dict => typeof value === "object" && value !== null;

/** A plain function that picks a model at call time (not a Runnable, which is an object). */
export function isModelChooser(model: unknown): model is (...args: never[]) => unknown {
  return typeof model === "function" && !Runnable.isRunnable(model);
}

/** `LLM_PROVIDER=aws-bedrock` (or `bedrock`) in the given environment. */
export function envSelectsBedrock(env: Env = process.env): boolean {
  const value = env.LLM_PROVIDER?.trim().toLowerCase();
  return value !== undefined && BEDROCK_ENV_VALUES.has(value);
}

/**
 * True when the model is a Bedrock chat model: ChatBedrockConverse itself, a binding of it (`bindTools`,
 * `withConfig`, `withRetry`), a sequence or fallback chain whose model is one, or an initChatModel
 * configurable model whose provider is `bedrock`/`aws` (or whose model id starts with `amazon.`).
 * `options.bedrock` decides outright; `LLM_PROVIDER=aws-bedrock` makes it true for any model.
 * A function that picks the model returns false here: see the module comment.
 */
export function isBedrockModel(model: unknown, options: BedrockDetectOptions = {}): boolean {
  if (options.bedrock !== undefined) return options.bedrock;
  if (envSelectsBedrock(options.env)) return true;
  return chatModelsIn(model).some(isBedrockLeaf);
}

/**
 * True when the model cannot continue from an assistant turn (a request must end with a user message):
 * Claude 4.6 and later on any provider (`claude-sonnet-4-6`, `us.anthropic.claude-opus-4-6-v1:0`,
 * `claude-opus-5`, `anthropic/claude-sonnet-4.6`), and Llama on Bedrock (`meta.llama3-...`, or any Llama id on
 * a Bedrock model). Takes a model (unwrapped like {@link isBedrockModel}) or a model id.
 */
export function cannotPrefill(modelOrId: unknown): boolean {
  if (typeof modelOrId === "string") return idCannotPrefill(modelOrId, false);
  return chatModelsIn(modelOrId).some((leaf) => {
    const id = modelIdOf(leaf);
    return id !== undefined && idCannotPrefill(id, isBedrockLeaf(leaf));
  });
}

/**
 * The prompted strategy is needed: a Bedrock model ({@link isBedrockModel}, options and environment
 * included) or one that cannot prefill ({@link cannotPrefill}).
 */
export function needsPromptedStructuredOutput(model: unknown, options: BedrockDetectOptions = {}): boolean {
  return isBedrockModel(model, options) || cannotPrefill(model);
}

/** The model id of the first chat model behind `model` (`model`, `modelName` or `modelId` field). */
export function modelIdOf(model: unknown): string | undefined {
  for (const leaf of chatModelsIn(model)) {
    for (const key of ["model", "modelName", "modelId"]) {
      const value = leaf[key];
      if (typeof value === "string" && value !== "") return value;
    }
  }
  return undefined;
}

export interface ClaudeVersion {
  family: string;
  major: number;
  minor: number;
}

/**
 * Reads the Claude family and version out of a model id, in both naming schemes: `claude-opus-4-6`,
 * `claude-sonnet-4-20250514` (4.0: an 8-digit date is not a minor version), `claude-3-7-sonnet`. Provider
 * prefixes and suffixes (`us.anthropic.`, `-v1:0`, `@20260101`, ARNs) are ignored. Undefined when the id
 * names no Claude model.
 */
export function claudeVersionOf(modelId: string): ClaudeVersion | undefined {
  const id = modelId.toLowerCase();
  const familyFirst = /claude-(opus|sonnet|haiku)-(\d+)(?:[-.](\d{1,2})(?!\d))?/.exec(id);
  if (familyFirst) return { family: familyFirst[1], major: Number(familyFirst[2]), minor: Number(familyFirst[3] ?? 0) };
  const versionFirst = /claude-(\d+)(?:[-.](\d{1,2})(?!\d))?-(opus|sonnet|haiku|instant)/.exec(id);
  if (versionFirst) return { family: versionFirst[3], major: Number(versionFirst[1]), minor: Number(versionFirst[2] ?? 0) };
  return undefined;
}

function idCannotPrefill(modelId: string, onBedrock: boolean): boolean {
  const claude = claudeVersionOf(modelId);
  if (claude) return claude.major > 4 || (claude.major === 4 && claude.minor >= 6);
  const id = modelId.toLowerCase();
  // Bedrock model ids name the vendor first (`meta.llama3-...`, `us.meta.llama4-...`).
  return /(^|[./:])meta\.llama/.test(id) || (onBedrock && id.includes("llama"));
}

function isBedrockLeaf(leaf: Dict): boolean {
  if (typeof leaf._llmType === "function") {
    const type = (leaf._llmType as () => unknown).call(leaf);
    if (typeof type === "string" && BEDROCK_LLM_TYPES.has(type)) return true;
  }
  return leaf[CONFIGURED_PROVIDER] !== undefined && BEDROCK_PROVIDERS.has(String(leaf[CONFIGURED_PROVIDER]));
}

/** Marks the stand-in built from an initChatModel default config (see {@link configurableModelLeaves}). */
const CONFIGURED_PROVIDER = "~configuredProvider";

/**
 * The chat models behind a runnable, outermost first. Unwraps RunnableBinding (`bound`), RunnableSequence
 * (`steps`), RunnableWithFallbacks (`runnable`, the primary only) and initChatModel's ConfigurableModel.
 * Depth-limited so that a cyclic object cannot hang it.
 */
export function chatModelsIn(model: unknown, depth = 0): Dict[] {
  if (!isObject(model) || depth > 12) return [];
  if (isConfigurableModel(model)) return configurableModelLeaves(model, depth);
  if (isObject(model.bound)) return chatModelsIn(model.bound, depth + 1);
  if (Array.isArray(model.steps)) return model.steps.flatMap((step: unknown) => chatModelsIn(step, depth + 1));
  if (isObject(model.runnable) && Array.isArray(model.fallbacks)) return chatModelsIn(model.runnable, depth + 1);
  return looksLikeChatModel(model) ? [model] : [];
}

function looksLikeChatModel(value: Dict): boolean {
  return typeof value._llmType === "function";
}

/** langchain's ConfigurableModel (initChatModel): the model is built lazily from `_defaultConfig`. */
function isConfigurableModel(value: Dict): boolean {
  return "_queuedMethodOperations" in value && isObject(value._defaultConfig);
}

/**
 * initChatModel builds the default model once at init and caches it; the cache is read when present.
 * The default config is read as well (provider given, or inferred the way initChatModel infers it), so that
 * a configurable model whose instance is not cached yet is still recognised.
 */
function configurableModelLeaves(model: Dict, depth: number): Dict[] {
  const cache = model._modelInstanceCache;
  const cached = cache instanceof Map ? [...cache.values()].flatMap((m) => chatModelsIn(m, depth + 1)) : [];
  const config = model._defaultConfig as Dict;
  const modelId = typeof config.model === "string" ? config.model : undefined;
  const provider =
    typeof config.modelProvider === "string"
      ? config.modelProvider
      : modelId?.startsWith("amazon.")
        ? "bedrock"
        : undefined;
  const standIn: Dict = { model: modelId, [CONFIGURED_PROVIDER]: provider };
  return [...cached, standIn];
}
