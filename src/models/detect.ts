/**
 * What chat model is behind a runnable, answered synchronously and without calling anything: its provider
 * (whose request rules apply), its model id, whether it can continue from an assistant turn, whether extended
 * thinking is on. Used by the structured-output wrappers and by the repair integrations.
 *
 * Wrappers are read through: a RunnableBinding (`bindTools`, `withConfig`, `withRetry`: its `bound`, and the
 * call options it binds), a RunnableSequence (`prompt.pipe(model)`: its steps), a RunnableWithFallbacks (the
 * primary, then every fallback) and langchain's `initChatModel` ConfigurableModel (its cached instance, or, when
 * none is built yet, its config: model id, provider, and the options queued by `bindTools`).
 *
 * A model chosen by a function (createReactAgent's `llm: (state, runtime) => model`) cannot be inspected
 * before it is called: every check here answers for it as for an unknown object (unless an option or the
 * environment decides), and the wrappers check the model the function returns, at call time.
 */
import { boundary } from "../errors";
import { isAssistant } from "../messages/inspect";
import { GEMINI_SIGNATURES_KEY, OPENAI_ITEM_IDS_KEY } from "../messages/responses";
import type { Provider } from "../types";
import { fieldsOf, isDict, lookupOf, nonEmptyString, type Dict } from "../values";

/** The names that are both an `_llmType()` and a provider name (below), each with the provider whose rules apply. */
const SHARED_NAMES = "bedrock:bedrock anthropic:anthropic openai:openai azure_openai:openai google:gemini";

/**
 * Whose request rules a chat model follows, by its `_llmType()`: ChatBedrockConverse and the community BedrockChat
 * (InvokeModel), ChatAnthropic, ChatOpenAI (and its Completions / Responses halves) and AzureChatOpenAI (refined to
 * the Responses API per call), ChatGoogleGenerativeAI and ChatVertexAI / ChatGoogle (google-common).
 */
const LLM_TYPES = lookupOf<Provider>(
  `${SHARED_NAMES} chat_bedrock_converse:bedrock googlegenerativeai:gemini vertexai:gemini chat_google:gemini`,
);

/**
 * Provider names, by the provider whose rules their requests follow: initChatModel's, and the
 * `response_metadata.model_provider` the clients store on each answer (ChatBedrockConverse `bedrock-converse`).
 */
const CONFIGURED_PROVIDERS = lookupOf<Provider>(
  `${SHARED_NAMES} bedrock-converse:bedrock aws:bedrock google-genai:gemini google-vertexai:gemini google-vertexai-web:gemini`,
);

export type Env = Record<string, string | undefined>;

/**
 * One chat model behind a runnable. `instance` is the model object; it is undefined for an initChatModel model
 * whose instance is not built yet, which is then described by its config.
 */
export interface ModelDescription {
  instance?: Dict;
  /** `_llmType()` of the instance. */
  llmType?: string;
  /** `model`, `modelName` or `modelId` of the instance, or `model` of the initChatModel config. */
  modelId?: string;
  /** Whose request rules apply (undefined when the class is not one this package knows). */
  provider?: Provider;
  /** "primary" for the model a request goes to first; "fallback" for the models of `withFallbacks([...])`. */
  role: "primary" | "fallback";
  /** Call options bound around the model (`bindTools`, `withConfig`, initChatModel's queued `bindTools`); outer bindings win. */
  callOptions: Dict;
  /** Extended thinking is on (Anthropic `thinking`, or Bedrock `additionalModelRequestFields.thinking`, type enabled or adaptive). */
  thinking: boolean;
  /** The initChatModel model this description was read from, when `instance` is not built yet. */
  configurable?: Dict;
}

/** `LLM_PROVIDER=aws-bedrock` (or `bedrock`) in the given environment. */
export function envSelectsBedrock(env: Env = process.env) {
  const value = env.LLM_PROVIDER;
  return typeof value === "string" && /^(aws-)?bedrock$/i.test(value.trim());
}

/**
 * Every chat model behind `model`, the primary first, then the fallbacks in order. Empty for what is not a model
 * (a function, a plain object, a lambda). Depth-limited so that a cyclic object cannot hang it.
 */
export const describeModels = boundary("describeModels", (model: unknown) => collect(model, {}, "primary", 0, []));

/**
 * True when the model is a Bedrock chat model: ChatBedrockConverse itself, a binding of it, a sequence whose
 * model is one, a fallback chain with one among its models (a request may reach it), or an initChatModel model
 * whose provider is `bedrock`/`aws` (or whose model id starts with `amazon.`, as initChatModel infers).
 * `LLM_PROVIDER=aws-bedrock` in `env` (default `process.env`) makes it true for any model.
 */
export const isBedrockModel = boundary(
  "isBedrockModel",
  (model: unknown, env?: Env) => envSelectsBedrock(env) || describeModels(model).some((m) => m.provider === "bedrock"),
);

/**
 * True when the model cannot continue from an assistant turn (a request must end with a user message): Claude
 * 4.6 and later on any provider (`claude-sonnet-4-6`, `us.anthropic.claude-opus-4-6-v1:0`, `claude-opus-5`,
 * `anthropic/claude-sonnet-4.6`), and Llama on Bedrock (`meta.llama3-...`, or any Llama id on a Bedrock model).
 * Takes a model (read through wrappers; a fallback chain counts when any of its models cannot) or a model id.
 */
export const cannotPrefill = boundary("cannotPrefill", (modelOrId: unknown) =>
  typeof modelOrId === "string"
    ? idCannotPrefill(modelOrId, false)
    : describeModels(modelOrId).some((m) => idCannotPrefill(m.modelId ?? "", m.provider === "bedrock")),
);

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
export function claudeVersionOf(modelId = "") {
  const id = modelId.toLowerCase();
  const groups = (
    /claude-(?<family>opus|sonnet|haiku)-(?<major>\d+)(?:[-.](?<minor>\d{1,2})(?!\d))?/.exec(id) ??
    /claude-(?<major>\d+)(?:[-.](?<minor>\d{1,2})(?!\d))?-(?<family>opus|sonnet|haiku)/.exec(id)
  )?.groups;
  return groups && { family: groups.family, major: +groups.major, minor: +(groups.minor ?? 0) };
}

/** The Claude version is `major.minor` or later. */
export const claudeAtLeast = (claude: ClaudeVersion, major: number, minor: number) =>
  claude.major > major || (claude.major === major && claude.minor >= minor);

function idCannotPrefill(modelId: string, onBedrock: boolean) {
  const claude = claudeVersionOf(modelId);
  if (claude) return claudeAtLeast(claude, 4, 6);
  // Bedrock model ids name the vendor first (`meta.llama3-...`, `us.meta.llama4-...`).
  return /(^|[./:])meta\.llama/i.test(modelId) || (onBedrock && /llama/i.test(modelId));
}

/**
 * `provider` refined by what the model says: OpenAI on the Responses API (`responses()`), and Claude served by
 * Google (Vertex AI) follows Anthropic's rules.
 */
function refined(provider: Provider | undefined, modelId: string | undefined, responses: () => boolean) {
  if (provider === "openai" && responses()) return "openai-responses";
  return provider === "gemini" && claudeVersionOf(modelId) ? "anthropic" : provider;
}

// --- walking the wrappers -----------------------------------------------------------------------------------

/** How deep wrappers are followed (a cyclic object cannot hang the walk). */
const MAX_DEPTH = 12;

function collect(model: unknown, bound: Dict, role: ModelDescription["role"], depth: number, out: ModelDescription[]) {
  if (!isDict(model) || depth++ > MAX_DEPTH) return out;
  // langchain's ConfigurableModel (initChatModel): initChatModel builds the default model at init and caches it;
  // `bindTools` and `withConfig` return a new configurable model with an empty cache and the operation queued. A
  // cached instance is read when present; otherwise the model is described from its config (model id, provider
  // given or inferred the way initChatModel infers it, and the options of a queued `bindTools`).
  if ("_queuedMethodOperations" in model && isDict(model._defaultConfig)) {
    const before = out.length;
    const cache = model._modelInstanceCache;
    if (cache instanceof Map) for (const cached of cache.values()) collect(cached, bound, role, depth, out);
    if (out.length > before) return out;
    const config = model._defaultConfig;
    const bindArgs = (model._queuedMethodOperations as Dict).bindTools;
    const callOptions = { ...fieldsOf(Array.isArray(bindArgs) ? bindArgs[1] : undefined), ...bound };
    const provider = CONFIGURED_PROVIDERS.get(config.modelProvider ?? inferredProvider(instanceModelId(config)));
    add(config, callOptions, provider, { configurable: model });
  } else if (isDict(model.bound))
    // The outer binding's options win: they are merged over the inner ones at call time.
    collect(model.bound, { ...(model.config as Dict), ...(model.kwargs as Dict), ...bound }, role, depth, out);
  else if (Array.isArray(model.steps)) for (const step of model.steps) collect(step, bound, role, depth, out);
  else if (isDict(model.runnable) && Array.isArray(model.fallbacks))
    for (const [i, m] of [model.runnable, ...model.fallbacks].entries())
      collect(m, bound, i ? "fallback" : role, depth, out);
  else if (typeof model._llmType === "function") {
    // ChatOpenAI's withConfig / bindTools return a new ChatOpenAI whose call options are its `defaultOptions`.
    const callOptions = isDict(model.defaultOptions) ? { ...model.defaultOptions, ...bound } : bound;
    const llmType = model._llmType() as string;
    add(model, callOptions, LLM_TYPES.get(llmType), { instance: model, llmType });
  }
  return out;

  /** Adds the model `source` describes (its instance, or an initChatModel config), whose rules are `given`'s. */
  function add(source: Dict, callOptions: Dict, given: Provider | undefined, own: Partial<ModelDescription>) {
    const modelId = instanceModelId(source);
    const provider = refined(given, modelId, () => usesResponsesApi(source, callOptions));
    out.push({ ...own, modelId, provider, role, callOptions, thinking: thinkingIn(source, callOptions) });
  }
}

/** `model`, `modelName` or `modelId` of the instance, the first that is a non-empty string. */
const instanceModelId = (instance: Dict) =>
  [instance.model, instance.modelName, instance.modelId].find(nonEmptyString) as string | undefined;

/**
 * ChatOpenAI decides per call (`_useResponsesApi(options)`: the `useResponsesApi` field, built-in or custom
 * tools, Responses-only call options, and models it always sends there); ask it with the bound call options.
 * The Responses class itself always does (ChatOpenAIResponses, AzureChatOpenAIResponses). An initChatModel config
 * (a plain object) and a client that cannot tell: its `useResponsesApi` field, or a model @langchain/openai 1.5
 * sends to the Responses API by itself (`_modelPrefersResponsesAPI`).
 */
function usesResponsesApi(instance: Dict, callOptions: Dict) {
  const className = (instance.constructor as { lc_name?: () => unknown } | undefined)?.lc_name?.();
  if (/^(Azure)?ChatOpenAIResponses$/.test(String(className))) return true;
  const decided = typeof instance._useResponsesApi === "function" ? instance._useResponsesApi(callOptions) : undefined;
  if (typeof decided === "boolean") return decided;
  return instance.useResponsesApi === true || /codex|gpt-5\.\d+-pro/.test(instanceModelId(instance) ?? "");
}

/** Anthropic `thinking`, or Bedrock `additionalModelRequestFields.thinking` (instance first, as ChatBedrockConverse reads it). */
function thinkingIn(source: Dict, callOptions: Dict) {
  const fields = [source.additionalModelRequestFields, callOptions.additionalModelRequestFields].find(isDict);
  return [callOptions.thinking ?? source.thinking, fields?.thinking].some(
    (value) => isDict(value) && (value.type === "enabled" || value.type === "adaptive"),
  );
}

// --- initChatModel ------------------------------------------------------------------------------------------

/** initChatModel's model id prefixes, made once (read for every answer a thread's provider is looked up in). */
const INIT_PREFIXES = [...lookupOf("claude:anthropic gemini:google-vertexai amazon.:bedrock")];

/** initChatModel's `_inferModelProvider` for the providers this package knows. */
function inferredProvider(modelId = "") {
  if (/^(gpt-[345]|o[134])/.test(modelId)) return "openai";
  return INIT_PREFIXES.find(([prefix]) => modelId.startsWith(prefix as string))?.[1];
}

/**
 * The description with its instance: an initChatModel model not built yet is built the way langchain builds it
 * (`_getModelInstance`, with the call's config), and read again.
 */
export async function withInstance(description: ModelDescription, config?: unknown) {
  const build = description.configurable?._getModelInstance;
  if (typeof build !== "function") return description; // built already (a description has an instance or a config)
  const [resolved] = describeModels(await build.call(description.configurable, config));
  return resolved
    ? { ...resolved, role: description.role, callOptions: { ...resolved.callOptions, ...description.callOptions } }
    : description;
}

// --- stored answers -----------------------------------------------------------------------------------------

/**
 * The provider that wrote an assistant message, from what the LangChain clients store on their answers: the
 * `response_metadata.model_provider` (`openai`, `anthropic`, `bedrock-converse`, `google-genai`,
 * `google-vertexai`), the Responses API's `output` (ChatOpenAI with `useResponsesApi`), the thought-signature map
 * ChatGoogleGenerativeAI keeps in `additional_kwargs` (its `invoke` stores no `model_provider`), else the model id
 * (`model_name`, `model`) read the way initChatModel infers a provider. Undefined when none of these tells
 * (a message written by hand, another client).
 */
export function providerOfAnswer(message: unknown) {
  const meta = fieldsOf(fieldsOf(message).response_metadata);
  const extra = fieldsOf(fieldsOf(message).additional_kwargs);
  const modelId = [meta.model_name, meta.model, meta.modelId].find((id) => typeof id === "string");
  return refined(
    CONFIGURED_PROVIDERS.get(meta.model_provider) ??
      (GEMINI_SIGNATURES_KEY in extra ? "gemini" : CONFIGURED_PROVIDERS.get(inferredProvider(modelId))),
    modelId,
    () => meta.object === "response" || Array.isArray(meta.output) || OPENAI_ITEM_IDS_KEY in extra,
  );
}

/**
 * The provider a stored thread was last talking to: that of its latest assistant message that tells
 * ({@link providerOfAnswer}). A thread that switched providers is judged for the one it uses now.
 */
export function providerOfThread(messages: readonly unknown[]) {
  for (let i = messages.length; i-- > 0; ) {
    const provider = isAssistant(messages[i]) && providerOfAnswer(messages[i]);
    if (provider) return provider;
  }
}
