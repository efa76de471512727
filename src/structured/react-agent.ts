/**
 * createReactAgent (`@langchain/langgraph/prebuilt`) with `responseFormat` on a model that cannot take it.
 *
 * createReactAgent answers `responseFormat` with an extra call after the loop that sends the whole history,
 * which ends on the agent's own final answer: Bedrock and Claude 4.6+ reject that as prefill (B7, A8).
 * `withPromptedStructuredOutput(params)` returns params without that call, and a `postModelHook` that fills
 * `structuredResponse` at the final answer, with the strategy of the model (see strategy.ts):
 * - `native` / `tool`: the loop is left alone (no instructions in the prompt); at the final answer, one
 *   constrained call: the history, the answer, and a closing user turn, with Bedrock `outputConfig` /
 *   Anthropic `output_config` or one forced tool call. Never a request that ends on an assistant message.
 * - `prompted`: the format instructions go into the prompt and the final answer is the JSON (no extra call
 *   unless it is invalid: then one corrective call that ends with a user message).
 */
import { AIMessage, type BaseMessage, SystemMessage, isBaseMessage } from "@langchain/core/messages";
import type { LanguageModelLike } from "@langchain/core/language_models/base";
import {
  Runnable,
  RunnableBinding,
  RunnableLambda,
  RunnableWithFallbacks,
  _coerceToRunnable,
} from "@langchain/core/runnables";
import {
  extendInteropZodObject,
  getInteropZodObjectShape,
  isInteropZodObject,
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
import { boundary, expectedInput } from "../errors";
import { reportRepairs } from "../integrations/events";
import type { ToolCallRepair } from "../types";
import { isDict } from "../values";
import {
  cannotPrefill,
  describeModels,
  envSelectsBedrock,
  isBedrockModel,
  isModelChooser,
  needsPromptedStructuredOutput,
  withInstance,
  type Env,
  type ModelDescription,
} from "../models/detect";
import { prepareStructuredCall, structuredCallInput } from "./constrained";
import { nativeFallbacks, type NativeFallbacks, type StructuredOutputFallback } from "./fallback";
import {
  finalMessageText,
  reportResponse,
  storedAnswer,
  type FinalMessageOption,
  type StructuredResponseReport,
} from "./final-message";
import { isSchemaOptions, reactOutputFormat, type OutputFormat } from "./format";
import { formatInstructions, promptWith, systemMessageWith, toMessages, withSystemInstructions } from "./instructions";
import { structuredOptions } from "./options";
import { answerText, parseStructuredAnswer, resolveStructuredAnswer, type Resolved } from "./parse";
import { strategyChoiceFor, type StructuredOutputStrategy } from "./strategy";

export interface PromptedStructuredOutputOptions {
  /**
   * Force one strategy on the model(s) the wrapper acts on: "native", "tool" or "prompted" (default: the
   * strategy table, per model; a fallback chain gets one per model). With `strategy` set, the wrapper acts on
   * every model, not only those that need it. "tool" with extended thinking on throws (the provider refuses it).
   */
  strategy?: StructuredOutputStrategy;
  /**
   * true: same as `strategy: "prompted"`; false: never act (the params come back unchanged). Default: act when
   * the model needs it (`isBedrockModel` or `cannotPrefill`; a model chosen by a function is checked on the model
   * it returns, at call time).
   */
  prompted?: boolean;
  /** Where to read `LLM_PROVIDER` from (default `process.env`); `aws-bedrock` makes the wrapper act on any model. */
  env?: Env;
  /** Corrective calls allowed when an answer does not validate (default 1). */
  maxCorrections?: number;
  /**
   * Under the prompted strategy the final answer is the JSON: keep it ("json", the default) or show the parsed
   * object as readable text (see {@link FinalMessageOption}). Under native and tool the final answer is the
   * model's own reply, left as it is.
   */
  finalMessage?: FinalMessageOption;
  /** Called with every structured response (strategy, corrections, which value was taken when several were valid). */
  onStructuredResponse?: (report: StructuredResponseReport) => void;
  /**
   * Called once per repair of a request this wrapper sends itself (a corrective or constrained call, repaired
   * like the agent's own calls). Each repair is also sent as the custom event `"tool_call_repair"`.
   */
  onRepair?: (repair: ToolCallRepair) => void;
  /**
   * Called once per setup for each native request that was not sent (a schema outside the subset constrained
   * decoding takes) or was refused for the model or the schema (then remembered for that model: later calls go
   * straight to the next strategy). Also sent as the custom event `"structured_output_fallback"`.
   */
  onFallback?: (fallback: StructuredOutputFallback) => void;
}

/**
 * A createReactAgent state schema: an Annotation root or a zod object.
 *
 * @inline
 */
// biome-ignore lint/suspicious/noExplicitAny: createReactAgent's own generics take any state
type AnyStateSchema = AnnotationRoot<any> | InteropZodObject;
// biome-ignore lint/suspicious/noExplicitAny: createReactAgent's own generics take any state
type AnyParams = CreateReactAgentParams<any, any, any>;
type AgentState = { messages: BaseMessage[] } & Record<string, unknown>;
type ModelChooser = (
  state: AgentState,
  config: LangGraphRunnableConfig,
) => LanguageModelLike | Promise<LanguageModelLike>;
type Update = Record<string, unknown>;
type Hook = (state: AgentState, config: LangGraphRunnableConfig) => Promise<Update>;

/** The prompt field the user set (createReactAgent accepts one of three), or none. */
interface PromptSlot {
  key: "prompt" | "stateModifier" | "messageModifier" | undefined;
  value: unknown;
}

/**
 * How one model of the run gives the structured response: a strategy of the table, or "own" (a model the
 * wrapper does not act on: createReactAgent's own structured-output call, which that model accepts).
 */
type Branch = { strategy: StructuredOutputStrategy | "own"; model: ModelDescription };

/** Everything the hooks need that does not change between calls. */
interface HookContext {
  format: OutputFormat;
  options: PromptedStructuredOutputOptions;
  tools: readonly unknown[];
  responseFormat: unknown;
  /** This setup's memory of native requests that fell back. */
  withFallback: NativeFallbacks;
}

/**
 * createReactAgent params whose structured response never needs a prefill request: on a model that needs it
 * (Bedrock, or a model that cannot prefill), or on any model when `strategy` / `prompted: true` is given,
 * `responseFormat` is dropped and a `postModelHook` (after yours, if any) fills `structuredResponse` at the
 * final answer with the model's strategy (see the module comment). On any other model the same object comes back.
 *
 * Prompted: the instructions (the format's own `prompt`, then the JSON schema) go into the prompt in the form it
 * was given (string, SystemMessage, function, Runnable, or the deprecated stateModifier / messageModifier);
 * lenient JSON extraction, validation, one corrective call if invalid, then
 * {@link "langgraph-tool-repair"!PromptedStructuredOutputError | PromptedStructuredOutputError}.
 * After a correction (or with `finalMessage: "text"`) the final AIMessage in state is replaced (same id).
 *
 * Native / tool: one constrained call after the final answer (the format's own `prompt` as a system message,
 * the history, the answer, a closing user turn), validated by the same code, corrected the same way.
 *
 * A custom `stateSchema` without `structuredResponse` gets that field added. `llm` as a function: the model it
 * returns is checked on every call; a fallback chain (`withFallbacks`) gets a strategy per model.
 *
 * The params keep their type, so `createReactAgent(withPromptedStructuredOutput(params))` has the
 * `structuredResponse` type that `responseFormat` gives.
 */
export const withPromptedStructuredOutput = boundary(
  "withPromptedStructuredOutput",
  function withPromptedStructuredOutput<
    A extends AnyStateSchema = typeof MessagesAnnotation,
    // biome-ignore lint/suspicious/noExplicitAny: createReactAgent's own defaults
    S extends Record<string, any> = Record<string, any>,
    // biome-ignore lint/suspicious/noExplicitAny: createReactAgent's own defaults
    C extends AnyStateSchema = AnnotationRoot<any>,
  >(
    params: CreateReactAgentParams<A, S, C>,
    options: PromptedStructuredOutputOptions = {},
  ): CreateReactAgentParams<A, S, C> {
    const fn = "withPromptedStructuredOutput";
    if (typeof params !== "object" || params === null)
      throw expectedInput(fn, "params", "createReactAgent's params ({ llm, tools, responseFormat, ... })", params);
    options = structuredOptions<PromptedStructuredOutputOptions>(options, fn, [
      "strategy",
      "finalMessage",
      "prompted",
      "env",
      "maxCorrections",
      "onStructuredResponse",
      "onRepair",
      "onFallback",
    ]);
    // Every field read once, up front (a getter that throws is refused now, not in a run).
    const { responseFormat, ...rest } = params;
    if (responseFormat == null || options.prompted === false) return params;
    const perCall = isModelChooser(rest.llm);
    const acts =
      perCall ||
      options.prompted === true ||
      options.strategy !== undefined ||
      envSelectsBedrock(options.env) ||
      needsPromptedStructuredOutput(rest.llm, { env: options.env });
    if (!acts) return params;

    const tools = (Array.isArray(rest.tools) ? rest.tools : rest.tools.tools) as unknown[];
    const context: HookContext = {
      format: reactOutputFormat(responseFormat),
      options,
      tools,
      responseFormat,
      withFallback: nativeFallbacks(options.onFallback),
    };
    const instructions = formatInstructions(context.format);
    const slot = promptSlotOf(rest as AnyParams);
    const wrapped = { ...rest, stateSchema: withStructuredResponseField(rest.stateSchema) };
    const withHook = (hook: Hook, more: Record<string, unknown> = {}) =>
      ({ ...wrapped, ...more, postModelHook: afterUserHook(rest.postModelHook, hook) }) as typeof params;

    if (!perCall) {
      // One model (createReactAgent takes no fallback chain as `llm`).
      const branch = branchOf(describeModels(rest.llm)[0], options);
      if (branch.strategy !== "prompted") return withHook(atFinalAnswer(constrainedUpdate(context, [branch])));
      const prompt = { key: slot.key ?? "prompt", value: slotWithInstructions(slot, instructions) };
      // The agent's model with the agent's tools bound (a history with tool blocks needs `toolConfig` on Bedrock,
      // B3), bound once like createReactAgent does.
      let model: Runnable | undefined;
      const hook = atFinalAnswer((state, config, last) =>
        promptedUpdate(context, { model: (model ??= withAgentTools(rest.llm, tools)), prompt }, state, config, last),
      );
      return withHook(hook, { [prompt.key]: prompt.value });
    }

    // The model is picked by a function: decide on the model it returns, at call time.
    const chooser = rest.llm as unknown as ModelChooser;
    const llm: ModelChooser = async (state, config) => {
      const model = await chooser(state, config);
      return withPromptedBranches(model, branchesFor(model, options), instructions) as LanguageModelLike;
    };
    const hook = atFinalAnswer(async (state, config, last) => {
      const model = await chooser(state, config);
      const branches = branchesFor(model, options);
      if (branches.length === 1 && branches[0].strategy === "prompted") {
        const target = { model: instructedModel(model, instructions), prompt: slot };
        return promptedUpdate(context, target, state, config, last);
      }
      return constrainedUpdate(context, branches)(state, config, last);
    });
    return withHook(hook, { llm });
  },
);

/** The strategy for one model the wrapper acts on (prompted when forced, or when no chat model is found). */
function branchOf(model: ModelDescription | undefined, options: PromptedStructuredOutputOptions): Branch {
  if (model === undefined || options.prompted === true)
    return { strategy: "prompted", model: model ?? { role: "primary", callOptions: {}, thinking: false } };
  return { strategy: strategyChoiceFor(model, { strategy: options.strategy, env: options.env }).strategy, model };
}

/**
 * A strategy per model behind what the function returned (the primary, then each fallback): the table's (or
 * the forced one) for a model the wrapper acts on, "own" for the others: those createReactAgent's own call
 * works on (not Bedrock, LLM_PROVIDER=aws-bedrock unset, and able to prefill).
 */
function branchesFor(model: unknown, options: PromptedStructuredOutputOptions): Branch[] {
  const described = describeModels(model);
  if (described.length === 0) return [branchOf(undefined, options)];
  const forced = options.prompted === true || options.strategy !== undefined || envSelectsBedrock(options.env);
  return described.map((description) =>
    forced ||
    description.provider === "bedrock" ||
    (description.modelId !== undefined && cannotPrefill(description.modelId))
      ? branchOf(description, options)
      : { strategy: "own", model: description },
  );
}

/** The format instructions in front of the input of the models that are prompted (each branch of a fallback chain on its own). */
function withPromptedBranches(model: LanguageModelLike, branches: Branch[], instructions: string): unknown {
  if (!branches.some((b) => b.strategy === "prompted")) return model;
  if (branches.length > 1 && model instanceof RunnableWithFallbacks && model.fallbacks.length === branches.length - 1) {
    const wrap = (runnable: Runnable, branch: Branch) =>
      branch.strategy === "prompted" ? instructedModel(runnable, instructions) : runnable;
    return new RunnableWithFallbacks({
      runnable: wrap(model.runnable, branches[0]),
      fallbacks: model.fallbacks.map((f, i) => wrap(f, branches[i + 1])),
    });
  }
  return instructedModel(model, instructions);
}

const instructedModel = (model: LanguageModelLike | Runnable, instructions: string): Runnable =>
  RunnableLambda.from((input: unknown) => withSystemInstructions(input, instructions)).pipe(model as Runnable);

function promptSlotOf(params: AnyParams): PromptSlot {
  const key = (["prompt", "stateModifier", "messageModifier"] as const).find((k) => params[k] != null);
  return { key, value: key === undefined ? undefined : params[key] };
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
async function renderPrompt(
  slot: PromptSlot,
  state: AgentState,
  config: LangGraphRunnableConfig,
): Promise<BaseMessage[]> {
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

/** The agent's model with its tools bound, unless it has tools bound already. */
function withAgentTools(llm: AnyParams["llm"], tools: unknown[]): Runnable {
  const binding = RunnableBinding.isRunnableBinding(llm) ? llm : undefined;
  const hasBoundTools =
    Array.isArray((binding?.kwargs as Update | undefined)?.tools) ||
    Array.isArray((binding?.config as Update | undefined)?.tools);
  if (tools.length === 0 || hasBoundTools) return llm as Runnable;
  const bindable = llm as unknown as { bindTools?: (t: unknown[]) => Runnable };
  if (typeof bindable.bindTools === "function") return bindable.bindTools(tools);
  const inner = binding?.bound as unknown as { bindTools?: (t: unknown[]) => Runnable } | undefined;
  if (binding === undefined || typeof inner?.bindTools !== "function") return llm as Runnable;
  const rebound = inner.bindTools(tools);
  if (!RunnableBinding.isRunnableBinding(rebound))
    return new RunnableBinding({ bound: rebound, config: binding.config, kwargs: binding.kwargs });
  return new RunnableBinding({
    bound: rebound.bound,
    config: { ...binding.config, ...rebound.config },
    kwargs: { ...binding.kwargs, ...rebound.kwargs },
  });
}

/** `update` at a final answer: an assistant message without tool calls (anything else keeps the loop going). */
function atFinalAnswer(
  update: (state: AgentState, config: LangGraphRunnableConfig, last: AIMessage) => Promise<Update>,
): Hook {
  return async (state, config) => {
    const last = state.messages.at(-1);
    return last !== undefined && AIMessage.isInstance(last) && !last.tool_calls?.length
      ? update(state, config, last)
      : {};
  };
}

/** Prompted: the final answer is the JSON; parsed, validated, corrected by a call that ends with a user message. */
async function promptedUpdate(
  { format, options }: HookContext,
  target: { model: Runnable; prompt: PromptSlot },
  state: AgentState,
  config: LangGraphRunnableConfig,
  last: AIMessage,
): Promise<Update> {
  const history = state.messages.slice(0, -1);
  const resolved = await resolveStructuredAnswer(last, format, {
    maxCorrections: options.maxCorrections,
    askAgain: async (followUp) => {
      const input = await renderPrompt(target.prompt, { ...state, messages: [...history, ...followUp] }, config);
      // The agent's own calls may have seen a history repaired by a preModelHook (llmInputMessages, which
      // this hook cannot read): repair the corrective request the same way, or the provider rejects it.
      const bedrock = isBedrockModel(target.model, { env: options.env });
      return (await target.model.invoke(await repairedRequest(input, bedrock, options, config), config)) as BaseMessage;
    },
  });
  return structuredUpdate(options, last, resolved);
}

/** The state update of a prompted answer: the corrected answer (or its readable text) replaces the original. */
function structuredUpdate(
  options: PromptedStructuredOutputOptions,
  last: AIMessage,
  resolved: Resolved<unknown>,
): Update {
  reportResponse(options.onStructuredResponse, "prompted", resolved, undefined);
  const shown = finalMessageText(options.finalMessage, resolved.value);
  if (resolved.corrections === 0 && shown === undefined) return { structuredResponse: resolved.value };
  const text = shown ?? answerText(resolved.answer);
  return { structuredResponse: resolved.value, messages: [storedAnswer(resolved.answer, text, last)] };
}

/**
 * Native / tool (and models of a fallback chain): at the final answer, one constrained call per model in order
 * until one answers (a fallback chain's semantics). A prompted branch's own final answer is used when it holds a
 * valid value (no call).
 */
function constrainedUpdate(context: HookContext, branches: Branch[]) {
  return async (state: AgentState, config: LangGraphRunnableConfig, last: AIMessage): Promise<Update> => {
    if (branches.some((b) => b.strategy === "prompted")) {
      const parsed = await parseStructuredAnswer(answerText(last), context.format);
      if (parsed.ok) return structuredUpdate(context.options, last, { ...parsed, answer: last, corrections: 0 });
    }
    let lastError: unknown;
    for (const branch of branches) {
      try {
        return { structuredResponse: await branchResponse(context, branch, state.messages, config) };
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  };
}

/**
 * The structured response from one model: createReactAgent's own call ("own"), or a constrained call after the
 * answer (the history, the answer, a closing user turn), validated and corrected. A native call falls back to the
 * next strategy (see fallback.ts).
 */
async function branchResponse(
  context: HookContext,
  { strategy, model }: Branch,
  messages: BaseMessage[],
  config: LangGraphRunnableConfig,
): Promise<unknown> {
  const { format, options } = context;
  if (strategy === "own") {
    const value = await ownStructuredResponse(model, context.responseFormat, messages, config);
    options.onStructuredResponse?.({ strategy: "own", value, corrections: 0, modelId: model.modelId });
    return value;
  }
  const constrained = async (strategy: StructuredOutputStrategy) => {
    const prepared = await prepareStructuredCall({ strategy, model, format, tools: context.tools }, config);
    const input = structuredCallInput(messages.slice(0, -1), messages.at(-1)!, prepared.closingTurn, format);
    // The history may hold what a repairing preModelHook only fixed in llmInputMessages: repair this request too.
    const bedrock = model.provider === "bedrock" || envSelectsBedrock(options.env);
    const ask = async (followUp: BaseMessage[]) =>
      prepared.call(await repairedRequest([...input, ...followUp], bedrock, options, config), config);
    const resolved = await resolveStructuredAnswer(await ask([]), format, {
      maxCorrections: options.maxCorrections,
      askAgain: ask,
    });
    reportResponse(options.onStructuredResponse, strategy, resolved, model.modelId);
    return resolved.value;
  };
  return strategy === "native"
    ? context.withFallback(model, format.jsonSchema, constrained, config)
    : constrained(strategy);
}

/** A request this wrapper sends itself, repaired for Bedrock or a strict provider; every repair reported like a surface's. */
async function repairedRequest(
  messages: BaseMessage[],
  bedrock: boolean,
  options: PromptedStructuredOutputOptions,
  config: LangGraphRunnableConfig,
): Promise<BaseMessage[]> {
  const repaired = repairToolCalls(messages, { provider: bedrock ? "bedrock" : "strict" });
  await reportRepairs(repaired.repairs, { onRepair: options.onRepair }, config);
  return repaired.messages;
}

/** What createReactAgent's generate_structured_response node does, for a model the wrapper does not act on. */
async function ownStructuredResponse(
  model: ModelDescription,
  responseFormat: unknown,
  messages: BaseMessage[],
  config: LangGraphRunnableConfig,
): Promise<unknown> {
  const chatModel = (await withInstance(model, config)).instance as
    | { withStructuredOutput?(schema: unknown, options?: unknown): Runnable }
    | undefined;
  if (typeof chatModel?.withStructuredOutput !== "function")
    throw new Error("Expected `llm` to return a chat model with .withStructuredOutput()");
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

/** Runs the user's post-model hook first, then ours on the state as the user's update left it. */
function afterUserHook(userHook: AnyParams["postModelHook"], hook: Hook) {
  if (userHook == null) return hook as AnyParams["postModelHook"];
  const user = _coerceToRunnable(userHook as Parameters<typeof _coerceToRunnable>[0]);
  return (async (state: AgentState, config: LangGraphRunnableConfig) => {
    const update = (await user.invoke(state, config)) as unknown;
    // A Command routes the graph itself; leave it alone.
    if (update == null || typeof update !== "object" || isCommand(update)) return update;
    const userUpdate = update as Update;
    const messages = userUpdate.messages as BaseMessage[] | undefined;
    const next = {
      ...state,
      ...userUpdate,
      messages: messages === undefined ? state.messages : messagesStateReducer(state.messages, messages),
    };
    const own = await hook(next, config);
    if (own.messages === undefined) return { ...userUpdate, ...own };
    return { ...userUpdate, ...own, messages: [...asArray(messages), ...asArray(own.messages)] };
  }) as AnyParams["postModelHook"];
}

const asArray = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/**
 * A custom state schema without `structuredResponse` would silently drop the hook's update: add the field
 * (an Annotation channel, or `any()` of the schema's own zod major version).
 */
function withStructuredResponseField<A>(stateSchema: A): A {
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
// biome-ignore lint/suspicious/noExplicitAny: any annotation
const isAnnotationRoot = (value: unknown): value is AnnotationRoot<any> =>
  isDict(value) && value.lc_graph_name === "AnnotationRoot" && isDict(value.spec);
