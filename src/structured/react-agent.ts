/**
 * createReactAgent (`@langchain/langgraph/prebuilt`) with `responseFormat` on a model that cannot take it.
 *
 * createReactAgent answers `responseFormat` with an extra call after the loop that sends the whole history,
 * which ends on the agent's own final answer: Bedrock and Claude 4.6+ reject that as prefill (B7, A8).
 * `withPromptedStructuredOutput(params)` returns params that ask for the format in the prompt instead, and
 * fill `structuredResponse` from the final answer in a `postModelHook` (no extra call unless the answer is
 * invalid; then one corrective call that ends with a user message).
 */
import { AIMessage, BaseMessage, SystemMessage, isBaseMessage } from "@langchain/core/messages";
import type { LanguageModelLike } from "@langchain/core/language_models/base";
import { Runnable, RunnableBinding, RunnableLambda, _coerceToRunnable } from "@langchain/core/runnables";
import {
  extendInteropZodObject,
  getInteropZodObjectShape,
  isInteropZodObject,
  isInteropZodSchema,
  isZodSchemaV4,
  type InteropZodObject,
} from "@langchain/core/utils/types";
import {
  Annotation,
  isCommand,
  messagesStateReducer,
  type AnnotationRoot,
  type LangGraphRunnableConfig,
  type MessagesAnnotation,
} from "@langchain/langgraph";
import type { CreateReactAgentParams } from "@langchain/langgraph/prebuilt";
import { z as z3 } from "zod/v3";
import { z as z4 } from "zod/v4";
import { repairToolCalls } from "../engine";
import { envSelectsBedrock, isBedrockModel, isModelChooser, needsPromptedStructuredOutput, type Env } from "./detect";
import { reactOutputFormat, type OutputFormat } from "./format";
import { formatInstructions, promptWith, systemMessageWith, toMessages, withSystemInstructions } from "./instructions";
import { resolveStructuredAnswer } from "./parse";

export interface PromptedStructuredOutputOptions {
  /**
   * true: always use prompted structured output; false: never (the params come back unchanged). Default:
   * decided from the model (`isBedrockModel` or `cannotPrefill`; a model chosen by a function is checked on
   * the model it returns, at call time).
   */
  prompted?: boolean;
  /** Where to read `LLM_PROVIDER` from (default `process.env`); `aws-bedrock` selects the prompted strategy. */
  env?: Env;
  /** Corrective calls allowed when the final answer does not validate (default 1). */
  maxCorrections?: number;
}

type AnyStateSchema = AnnotationRoot<any> | InteropZodObject;
type AnyParams = CreateReactAgentParams<any, any, any>;
type PromptKey = "prompt" | "stateModifier" | "messageModifier";
type AgentState = { messages: BaseMessage[] } & Record<string, unknown>;
type ModelChooser = (state: AgentState, config: LangGraphRunnableConfig) => LanguageModelLike | Promise<LanguageModelLike>;

/** The prompt field the user set (createReactAgent accepts one of three), or none. */
interface PromptSlot {
  key: PromptKey | undefined;
  value: unknown;
}

/** What the hook needs at call time: the model to ask again, and the prompt to render before the history. */
type Target =
  | { kind: "prompted"; model: Runnable; prompt: PromptSlot }
  | { kind: "native"; model: LanguageModelLike; responseFormat: unknown };

/**
 * createReactAgent params with `responseFormat` swapped for format instructions in the prompt, when the
 * model needs it (Bedrock, or a model that cannot prefill); on any other model the same object comes back.
 *
 * On such a model: `responseFormat` is dropped; the instructions (the format's own `prompt`, then the JSON
 * schema) go into the prompt in the form it was given (string, SystemMessage, function, Runnable, or the
 * deprecated stateModifier / messageModifier); a `postModelHook` (after yours, if any) turns the final answer
 * into `structuredResponse`: lenient JSON extraction, validation, one corrective call if invalid, then
 * {@link PromptedStructuredOutputError}. After a correction the final AIMessage in state is replaced (same id)
 * by the corrected answer. A custom `stateSchema` without `structuredResponse` gets that field added.
 *
 * `llm` as a function: the model it returns is checked on every call. A prompted one gets the instructions
 * in front of its input; for any other one the hook makes the same structured-output call createReactAgent
 * would have made.
 *
 * The params keep their type, so `createReactAgent(withPromptedStructuredOutput(params))` has the
 * `structuredResponse` type that `responseFormat` gives.
 */
export function withPromptedStructuredOutput<
  A extends AnyStateSchema = typeof MessagesAnnotation,
  S extends Record<string, any> = Record<string, any>,
  C extends AnyStateSchema = AnnotationRoot<any>,
>(params: CreateReactAgentParams<A, S, C>, options: PromptedStructuredOutputOptions = {}): CreateReactAgentParams<A, S, C> {
  if (params.responseFormat == null) return params;
  const mode = promptedMode(params.llm, options);
  if (mode === "unchanged") return params;

  const format = reactOutputFormat<S>(params.responseFormat);
  const instructions = formatInstructions(format);
  const slot = promptSlotOf(params as AnyParams);
  const { responseFormat, ...rest } = params;

  if (mode === "static") {
    const promptedSlot = { key: slot.key ?? "prompt", value: slotWithInstructions(slot, instructions) };
    const correctionModel = correctionModelFor(params as AnyParams);
    const hook = structuredResponseHook(format, options, async (state, config) => ({
      kind: "prompted",
      model: await correctionModel(state, config),
      prompt: promptedSlot,
    }));
    return {
      ...rest,
      [promptedSlot.key]: promptedSlot.value,
      stateSchema: withStructuredResponseField(params.stateSchema),
      postModelHook: afterUserHook(params.postModelHook, hook),
    } as CreateReactAgentParams<A, S, C>;
  }

  // The model is picked by a function: decide on the model it returns, at call time.
  const chooser = params.llm as unknown as ModelChooser;
  const needsPrompt = (model: unknown) => needsPromptedStructuredOutput(model, { env: options.env });
  const instructed = (model: LanguageModelLike): Runnable =>
    RunnableLambda.from((input: unknown) => withSystemInstructions(input, instructions)).pipe(model);
  const llm: ModelChooser = async (state, config) => {
    const model = await chooser(state, config);
    return needsPrompt(model) ? (instructed(model) as LanguageModelLike) : model;
  };
  const hook = structuredResponseHook(format, options, async (state, config) => {
    const model = await chooser(state, config);
    return needsPrompt(model)
      ? { kind: "prompted", model: instructed(model), prompt: slot }
      : { kind: "native", model, responseFormat };
  });
  return {
    ...rest,
    llm,
    stateSchema: withStructuredResponseField(params.stateSchema),
    postModelHook: afterUserHook(params.postModelHook, hook),
  } as unknown as CreateReactAgentParams<A, S, C>;
}

/** "static": prompted, decided now; "per-call": the model comes from a function; "unchanged": not needed. */
function promptedMode(llm: unknown, options: PromptedStructuredOutputOptions): "static" | "per-call" | "unchanged" {
  if (options.prompted !== undefined) return options.prompted ? "static" : "unchanged";
  if (envSelectsBedrock(options.env)) return "static";
  if (isModelChooser(llm)) return "per-call";
  return needsPromptedStructuredOutput(llm, { env: options.env }) ? "static" : "unchanged";
}

function promptSlotOf(params: AnyParams): PromptSlot {
  for (const key of ["prompt", "stateModifier", "messageModifier"] as const) {
    if (params[key] != null) return { key, value: params[key] };
  }
  return { key: undefined, value: undefined };
}

/** The prompt with the instructions added, in the form it was given. */
function slotWithInstructions(slot: PromptSlot, instructions: string): unknown {
  const prompt = slot.value;
  if (prompt == null) return instructions;
  if (typeof prompt === "string") return promptWith(prompt, instructions);
  if (isSystemMessage(prompt)) return systemMessageWith(prompt, instructions);
  if (typeof prompt === "function") {
    const fn = prompt as (...args: unknown[]) => unknown;
    return async (...args: unknown[]) => withSystemInstructions(await fn(...args), instructions);
  }
  if (Runnable.isRunnable(prompt)) {
    return prompt.pipe(RunnableLambda.from((output: unknown) => withSystemInstructions(output, instructions)));
  }
  throw new TypeError(`Unexpected type for '${slot.key}': ${typeof prompt}`);
}

/**
 * The model input createReactAgent builds from the prompt and the state (its `_getPrompt` rules; a
 * messageModifier works on the messages, the other two on the state).
 */
async function renderPrompt(slot: PromptSlot, state: AgentState, config: LangGraphRunnableConfig): Promise<BaseMessage[]> {
  const prompt = slot.value;
  if (prompt == null) return state.messages;
  if (typeof prompt === "string") return [new SystemMessage(prompt), ...state.messages];
  if (isSystemMessage(prompt)) return [prompt, ...state.messages];
  const input = slot.key === "messageModifier" ? state.messages : state;
  if (typeof prompt === "function") return toMessages(await (prompt as (...a: unknown[]) => unknown)(input, config));
  if (Runnable.isRunnable(prompt)) return toMessages(await prompt.invoke(input, config));
  throw new TypeError(`Unexpected type for '${slot.key}': ${typeof prompt}`);
}

const isSystemMessage = (value: unknown): value is SystemMessage =>
  isBaseMessage(value) && SystemMessage.isInstance(value);

/**
 * The model for a corrective call: the agent's model with the agent's tools bound (a history with tool
 * blocks needs `toolConfig` on Bedrock, B3), bound once like createReactAgent does.
 */
function correctionModelFor(params: AnyParams): (state: AgentState, config: LangGraphRunnableConfig) => Promise<Runnable> {
  if (isModelChooser(params.llm)) {
    const chooser = params.llm as unknown as ModelChooser;
    return async (state, config) => _coerceToRunnable(await chooser(state, config));
  }
  let bound: Runnable | undefined;
  return async () => (bound ??= withAgentTools(params.llm as LanguageModelLike, params.tools));
}

function withAgentTools(llm: LanguageModelLike, tools: AnyParams["tools"]): Runnable {
  const toolList = (Array.isArray(tools) ? tools : tools.tools) as unknown[];
  if (toolList.length === 0 || hasBoundTools(llm)) return llm as Runnable;
  const bindable = llm as unknown as { bindTools?: (t: unknown[]) => Runnable };
  if (typeof bindable.bindTools === "function") return bindable.bindTools(toolList);
  if (RunnableBinding.isRunnableBinding(llm)) {
    const inner = llm.bound as unknown as { bindTools?: (t: unknown[]) => Runnable };
    if (typeof inner.bindTools === "function") {
      const rebound = inner.bindTools(toolList);
      if (!RunnableBinding.isRunnableBinding(rebound)) return new RunnableBinding({ bound: rebound, config: llm.config, kwargs: llm.kwargs });
      return new RunnableBinding({
        bound: rebound.bound,
        config: { ...llm.config, ...rebound.config },
        kwargs: { ...llm.kwargs, ...rebound.kwargs },
      });
    }
  }
  return llm as Runnable;
}

function hasBoundTools(llm: unknown): boolean {
  if (!RunnableBinding.isRunnableBinding(llm)) return false;
  const kwargs = llm.kwargs as Record<string, unknown> | undefined;
  const config = llm.config as Record<string, unknown> | undefined;
  return Array.isArray(kwargs?.tools) || Array.isArray(config?.tools);
}

/** A final answer: an assistant message without tool calls (anything else keeps the loop going). */
function isFinalAnswer(message: BaseMessage | undefined): message is AIMessage {
  return message !== undefined && AIMessage.isInstance(message) && !(message.tool_calls?.length ?? 0);
}

function structuredResponseHook<S>(
  format: OutputFormat<S>,
  options: PromptedStructuredOutputOptions,
  targetFor: (state: AgentState, config: LangGraphRunnableConfig) => Promise<Target>,
) {
  return async (state: AgentState, config: LangGraphRunnableConfig): Promise<Record<string, unknown>> => {
    const messages = state.messages;
    const last = messages[messages.length - 1];
    if (!isFinalAnswer(last)) return {};
    const target = await targetFor(state, config);
    if (target.kind === "native") {
      return { structuredResponse: await nativeStructuredResponse(target.model, target.responseFormat, messages, config) };
    }
    const history = messages.slice(0, -1);
    const resolved = await resolveStructuredAnswer(last, format, {
      maxCorrections: options.maxCorrections,
      askAgain: async (followUp) => {
        const input = await renderPrompt(target.prompt, { ...state, messages: [...history, ...followUp] }, config);
        // The agent's own calls may have seen a history repaired by a preModelHook (llmInputMessages, which
        // this hook cannot read): repair the corrective request the same way, or the provider rejects it.
        const provider = isBedrockModel(target.model, { env: options.env }) ? "bedrock" : "strict";
        return (await target.model.invoke(repairToolCalls(input, { provider }).messages, config)) as BaseMessage;
      },
    });
    if (resolved.corrections === 0) return { structuredResponse: resolved.value };
    return { structuredResponse: resolved.value, messages: [correctedAnswer(last, resolved.answer)] };
  };
}

/**
 * The corrected answer in place of the original (same id, so the messages reducer replaces it): text only,
 * so a stray tool call in the correction cannot send the graph back to the tools.
 */
function correctedAnswer(original: AIMessage, corrected: BaseMessage): AIMessage {
  const fields = corrected as AIMessage;
  return new AIMessage({
    content: typeof corrected.content === "string" ? corrected.content : corrected.text,
    id: original.id,
    name: original.name,
    response_metadata: fields.response_metadata,
    usage_metadata: fields.usage_metadata,
  });
}

/** What createReactAgent's generate_structured_response node does (for a function-chosen model that can prefill). */
async function nativeStructuredResponse(
  model: LanguageModelLike,
  responseFormat: unknown,
  messages: BaseMessage[],
  config: LangGraphRunnableConfig,
): Promise<unknown> {
  const chatModel = chatModelOf(model);
  const input = [...messages];
  let structured: Runnable;
  if (isSchemaOptions(responseFormat)) {
    const { prompt, schema, ...rest } = responseFormat;
    structured = chatModel.withStructuredOutput(schema, rest);
    if (typeof prompt === "string") input.unshift(new SystemMessage({ content: prompt }));
  } else {
    structured = chatModel.withStructuredOutput(responseFormat);
  }
  const response = await structured.invoke(input, config);
  if (response == null) throw new Error("The structured-output call returned nothing for the `responseFormat` schema.");
  return response;
}

function isSchemaOptions(value: unknown): value is { schema: unknown; prompt?: unknown } & Record<string, unknown> {
  return typeof value === "object" && value !== null && "schema" in value && !isInteropZodSchema(value);
}

function chatModelOf(model: LanguageModelLike): { withStructuredOutput(schema: unknown, options?: unknown): Runnable } {
  let current: unknown = model;
  while (RunnableBinding.isRunnableBinding(current)) current = current.bound;
  const candidate = current as { withStructuredOutput?: unknown };
  if (typeof candidate.withStructuredOutput !== "function") {
    throw new Error("Expected `llm` to return a chat model with .withStructuredOutput()");
  }
  return candidate as { withStructuredOutput(schema: unknown, options?: unknown): Runnable };
}

/** Runs the user's post-model hook first, then ours on the state as the user's update left it. */
function afterUserHook(userHook: AnyParams["postModelHook"], hook: ReturnType<typeof structuredResponseHook>) {
  if (userHook == null) return hook as AnyParams["postModelHook"];
  const user = _coerceToRunnable(userHook as Parameters<typeof _coerceToRunnable>[0]);
  return (async (state: AgentState, config: LangGraphRunnableConfig) => {
    const update = (await user.invoke(state, config)) as unknown;
    // A Command routes the graph itself; leave it alone.
    if (update == null || typeof update !== "object" || isCommand(update)) return update;
    const userUpdate = update as Record<string, unknown>;
    const next: AgentState =
      userUpdate.messages === undefined
        ? ({ ...state, ...userUpdate } as AgentState)
        : ({ ...state, ...userUpdate, messages: messagesStateReducer(state.messages, userUpdate.messages as BaseMessage[]) } as AgentState);
    const own = await hook(next, config);
    if (own.messages === undefined) return { ...userUpdate, ...own };
    return { ...userUpdate, ...own, messages: [...asArray(userUpdate.messages), ...asArray(own.messages)] };
  }) as AnyParams["postModelHook"];
}

const asArray = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/**
 * A custom state schema without `structuredResponse` would silently drop the hook's update: add the field
 * (an Annotation channel, or `any()` of the schema's own zod major version).
 */
export function withStructuredResponseField<A>(stateSchema: A): A {
  if (stateSchema == null) return stateSchema;
  if (isInteropZodObject(stateSchema)) {
    if ("structuredResponse" in getInteropZodObjectShape(stateSchema)) return stateSchema;
    const field = isZodSchemaV4(stateSchema) ? z4.any() : z3.any();
    return extendInteropZodObject(stateSchema, { structuredResponse: field } as never) as A;
  }
  if (isAnnotationRoot(stateSchema)) {
    if ("structuredResponse" in stateSchema.spec) return stateSchema;
    return Annotation.Root({ ...stateSchema.spec, structuredResponse: Annotation }) as A;
  }
  return stateSchema;
}

/** AnnotationRoot by its marker (the class is exported as a type only). */
function isAnnotationRoot(value: unknown): value is AnnotationRoot<any> {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { lc_graph_name?: unknown }).lc_graph_name === "AnnotationRoot" &&
    typeof (value as { spec?: unknown }).spec === "object"
  );
}
