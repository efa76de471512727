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
import { AIMessage, type BaseMessage, SystemMessage } from "@langchain/core/messages";
import { Runnable, RunnableLambda, RunnableWithFallbacks, _coerceToRunnable } from "@langchain/core/runnables";
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
import { ToolCallRepairInputError, boundary, expectedInput } from "../errors";
import { reportRepairs } from "../integrations/events";
import type { RepairOptions } from "../types";
import { isDict, type Dict } from "../values";
import {
  cannotPrefill,
  describeModels,
  envSelectsBedrock,
  isBedrockModel,
  withInstance,
  type Env,
  type ModelDescription,
} from "../models/detect";
import { constrainedModel, structuredCall } from "./constrained";
import {
  formatInstructions,
  isSchemaOptions,
  promptWith,
  reactOutputFormat,
  systemMessageWith,
  toMessages,
  withSystemInstructions,
} from "./format";
import {
  answerText,
  parseStructuredAnswer,
  resolveStructuredAnswer,
  structuredUpdate,
  type StructuredResponseReport,
} from "./parse";
import {
  nativeFallbacks,
  strategyChoiceFor,
  structuredOptions,
  type StructuredOutputFallback,
  type StructuredOutputStrategy,
} from "./strategy";

export interface PromptedStructuredOutputOptions {
  /**
   * Force one strategy on the model(s) the wrapper acts on: "native", "tool" or "prompted" (default: the
   * strategy table, per model; a fallback chain gets one per model). With `strategy` set, the wrapper acts on
   * every model, not only those that need it (`isBedrockModel` or `cannotPrefill`; a model chosen by a function is
   * checked on the model it returns, at call time). "tool" with extended thinking on throws (the provider refuses
   * it).
   */
  strategy?: StructuredOutputStrategy;
  /** Where to read `LLM_PROVIDER` from (default `process.env`); `aws-bedrock` makes the wrapper act on any model. */
  env?: Env;
  /** Called with every structured response (strategy, value, corrections, model id). */
  onStructuredResponse?: (report: StructuredResponseReport) => void;
  /**
   * Called once per repair of a request this wrapper sends itself (a corrective or constrained call, repaired
   * like the agent's own calls). Each repair is also sent as the custom event `"tool_call_repair"`.
   */
  onRepair?: RepairOptions["onRepair"];
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
type State = { messages: BaseMessage[] } & Dict;
type Config = LangGraphRunnableConfig;
type Hook = (state: State, config: Config) => Promise<Dict>;

/**
 * How one model of the run gives the structured response: a strategy of the table, or "own" (a model the
 * wrapper does not act on: createReactAgent's own structured-output call, which that model accepts).
 */
type Branch = { strategy: StructuredOutputStrategy | "own"; model: ModelDescription };

/**
 * createReactAgent params whose structured response never needs a prefill request: on a model that needs it
 * (Bedrock, or a model that cannot prefill), or on any model when `strategy` is given,
 * `responseFormat` is dropped and a `postModelHook` (after yours, if any) fills `structuredResponse` at the
 * final answer with the model's strategy (see the module comment). On any other model the same object comes back.
 *
 * Prompted: the instructions (the format's own `prompt`, then the JSON schema) go into the prompt in the form it
 * was given (string, SystemMessage, function or Runnable);
 * lenient JSON extraction, validation, one corrective call if invalid, then
 * {@link "langgraph-tool-repair"!PromptedStructuredOutputError | PromptedStructuredOutputError}.
 * After a correction the final AIMessage in state is replaced (same id).
 *
 * Native / tool: one constrained call after the final answer (the format's own `prompt` as a system message,
 * the history, the answer, a closing user turn), validated by the same code, corrected the same way.
 * Models of a fallback chain are tried in order until one answers; a prompted branch's own final answer is used
 * when it holds a valid value; a native call falls back to the next strategy (see strategy.ts).
 *
 * A custom `stateSchema` without `structuredResponse` gets that field added. `llm` as a function: the model it
 * returns is checked on every call; a fallback chain (`withFallbacks`) gets a strategy per model.
 *
 * The params keep their type, so `createReactAgent(withPromptedStructuredOutput(params))` has the
 * `structuredResponse` type that `responseFormat` gives.
 */
export const withPromptedStructuredOutput = boundary(
  "withPromptedStructuredOutput",
  <
    A extends AnyStateSchema = typeof MessagesAnnotation,
    // biome-ignore lint/suspicious/noExplicitAny: createReactAgent's own defaults
    S extends Record<string, any> = Record<string, any>,
    // biome-ignore lint/suspicious/noExplicitAny: createReactAgent's own defaults
    C extends AnyStateSchema = AnnotationRoot<any>,
  >(
    params: CreateReactAgentParams<A, S, C>,
    options: PromptedStructuredOutputOptions = {},
  ) => {
    const fn = "withPromptedStructuredOutput";
    const o: typeof options = structuredOptions(options, fn, "strategy env onStructuredResponse onRepair onFallback");
    if (!isDict(params)) throw expectedInput(fn, "params", "createReactAgent's params (an object)", params);
    const { responseFormat, ...rest } = params;
    const { llm, prompt } = rest;
    if (responseFormat == null) return params;
    type Chooser = (state: State, config: Config) => unknown;
    const chooser = typeof llm === "function" ? (llm as unknown as Chooser) : undefined; // a model picked at call time
    // createReactAgent's own `responseFormat` call would fail (Bedrock) or prefill: not without one of these.
    if (!chooser && !o.strategy && !isBedrockModel(llm, o.env) && !cannotPrefill(llm)) return params;
    // Deprecated upstream: the requests this wrapper sends itself read `prompt` only.
    for (const key of ["stateModifier", "messageModifier"])
      if ((rest as Dict)[key] != null)
        throw new ToolCallRepairInputError(`${fn}: params.${key} is deprecated by createReactAgent; pass prompt`, {
          argument: `params.${key}`,
        });

    const tools = Array.isArray(rest.tools) ? rest.tools : rest.tools.tools;
    const format = reactOutputFormat(responseFormat);
    const withFallback = nativeFallbacks(o.onFallback);
    const ownFormat = isSchemaOptions(responseFormat) ? responseFormat : { schema: responseFormat };
    const instructions = formatInstructions(format);
    const add = (input: unknown) => withSystemInstructions(input, instructions);
    // The prompt with the instructions added, in the form it was given. Made for every prompt: createReactAgent
    // checks its prompt only when it builds the agent from params this wrapper replaces.
    const instructedPrompt = (() => {
      if (prompt == null || typeof prompt === "string") return promptWith(prompt, instructions);
      if (SystemMessage.isInstance(prompt)) return systemMessageWith(prompt, instructions);
      if (Runnable.isRunnable(prompt)) return prompt.pipe(RunnableLambda.from(add));
      if (typeof prompt === "function") return async (state: State, config: Config) => add(await prompt(state, config));
      throw expectedInput(fn, "params.prompt", "a string, a SystemMessage, a function or a Runnable", prompt);
    })();
    const instructed = (model: unknown) => RunnableLambda.from(add).pipe(model as Runnable);
    // One model (createReactAgent takes no fallback chain as `llm`): decided now.
    const fixed = chooser ? undefined : branchesFor(llm, o);
    const prompted = (branches: Branch[]) => branches.length === 1 && branches[0].strategy === "prompted";
    // A request this wrapper sends itself may hold what a repairing preModelHook only fixed in llmInputMessages:
    // repaired for Bedrock or a strict provider, every repair reported like a surface's.
    const repairer = (bedrock: boolean, config: Config) => async (messages: BaseMessage[]) => {
      const provider = bedrock ? "bedrock" : "strict";
      const { repairs, messages: out } = repairToolCalls(messages, { provider });
      await reportRepairs(repairs, o, { surface: "structured", provider, config });
      return out;
    };

    // The agent's model with the agent's tools bound (a history with tool blocks needs `toolConfig` on Bedrock,
    // B3; its own call options kept), bound once like createReactAgent does.
    let agentModel: unknown;
    const hook: Hook = async (state, config) => {
      const { messages } = state;
      const last = messages.at(-1);
      // Only at a final answer: an assistant message without tool calls (anything else keeps the loop going).
      if (!AIMessage.isInstance(last) || last.tool_calls?.length) return {};
      const model = chooser ? await chooser(state, config) : llm;
      const branches = fixed ?? branchesFor(model, o);
      if (prompted(branches)) {
        const agent = fixed?.[0].model;
        const target =
          agent?.instance || agent?.configurable
            ? (agentModel ??= await constrainedModel("prompted", agent, format, tools))
            : model;
        // Prompted: the final answer is the JSON; parsed, validated, corrected by a call that ends with a user message.
        const resolved = await resolveStructuredAnswer(last, format, async (followUp) => {
          // The model input createReactAgent builds from the prompt and the state (its `_getPrompt` rules).
          const history = [...messages.slice(0, -1), ...followUp];
          const system = typeof prompt === "string" ? new SystemMessage(prompt) : prompt;
          const request =
            prompt == null
              ? history
              : SystemMessage.isInstance(system)
                ? [system, ...history]
                : toMessages(await _coerceToRunnable(prompt as never).invoke({ ...state, messages: history }, config));
          // The instructions added last, as the prompted agent's own requests have them.
          const repaired = await repairer(isBedrockModel(target, o.env), config)(request);
          return (target as Runnable).invoke(add(repaired), config);
        });
        return structuredUpdate(o, "prompted", resolved, undefined, last);
      }
      // Native / tool (and models of a fallback chain): one constrained call per model in order until one answers.
      if (branches.some((b) => b.strategy === "prompted")) {
        const parsed = await parseStructuredAnswer(answerText(last), format);
        if (parsed.ok) return structuredUpdate(o, "prompted", { ...parsed, answer: last, corrections: 0 });
      }
      const respond = (model: ModelDescription) => async (strategy: Branch["strategy"]) => {
        if (strategy !== "own") {
          const repair = repairer(model.provider === "bedrock" || envSelectsBedrock(o.env), config);
          const ask = await structuredCall(strategy, model, format, tools, messages, repair, config);
          const resolved = await resolveStructuredAnswer(await ask([]), format, ask);
          return structuredUpdate(o, strategy, resolved, model.modelId);
        }
        // What createReactAgent's generate_structured_response node does, for a model the wrapper does not act on.
        const { instance } = await withInstance(model, config);
        if (typeof instance?.withStructuredOutput !== "function")
          throw new Error("Expected `llm` to return a chat model with .withStructuredOutput()");
        const { prompt: p, schema, ...more } = ownFormat;
        const value = await instance
          .withStructuredOutput(schema, more)
          .invoke([...(typeof p === "string" ? [new SystemMessage(p)] : []), ...messages], config);
        if (value == null)
          throw new Error("The structured-output call returned nothing for the `responseFormat` schema.");
        return structuredUpdate(o, strategy, { value, answer: last, corrections: 0 }, model.modelId);
      };
      // Each model after the one before it failed; the last one's error when every one fails.
      return branches.reduce(
        (answer, { strategy, model }) =>
          answer.catch(() => withFallback(strategy, model, format, respond(model), config)),
        Promise.reject() as Promise<Dict>,
      );
    };
    /** The model `llm` picks, with the instructions in front of the input of those that are prompted (each of a chain on its own). */
    const instructedChoice: Chooser = async (state, config) => {
      const model = await chooser!(state, config);
      const branches = branchesFor(model, o);
      if (!branches.some((b) => b.strategy === "prompted")) return model;
      if (!(model instanceof RunnableWithFallbacks) || model.fallbacks.length !== branches.length - 1)
        return instructed(model);
      const [runnable, ...fallbacks] = [model.runnable, ...model.fallbacks].map((r, i) =>
        branches[i].strategy === "prompted" ? instructed(r) : r,
      );
      return new RunnableWithFallbacks({ runnable, fallbacks });
    };
    return {
      ...rest,
      ...(chooser ? { llm: instructedChoice } : prompted(fixed!) ? { prompt: instructedPrompt } : {}),
      stateSchema: withStructuredResponseField(rest.stateSchema),
      postModelHook: afterUserHook(rest.postModelHook, hook),
    } as typeof params;
  },
);

/**
 * A strategy per model behind `model` (the primary, then each fallback): the table's (or the forced one) for a
 * model the wrapper acts on, "own" for the others: those createReactAgent's own call works on (not Bedrock,
 * LLM_PROVIDER=aws-bedrock unset, and able to prefill). Prompted when no chat model is found.
 */
function branchesFor(model: unknown, options: PromptedStructuredOutputOptions): Branch[] {
  const described = describeModels(model);
  if (!described.length)
    return [{ strategy: "prompted", model: { role: "primary", callOptions: {}, thinking: false } }];
  const forced = options.strategy || envSelectsBedrock(options.env);
  return described.map((m) => ({
    model: m,
    strategy:
      forced || m.provider === "bedrock" || cannotPrefill(m.modelId) ? strategyChoiceFor(m, options).strategy : "own",
  }));
}

/** Runs the user's post-model hook first, then ours on the state as the user's update left it. */
function afterUserHook(userHook: unknown, hook: Hook) {
  if (userHook == null) return hook;
  const user = _coerceToRunnable(userHook as never);
  return async (state: State, config: Config) => {
    const update = (await user.invoke(state, config)) as Dict | null;
    // A Command routes the graph itself; leave it alone.
    if (!isDict(update) || isCommand(update)) return update;
    const messages = update.messages as BaseMessage[] | undefined;
    const own = await hook(
      { ...state, ...update, messages: messages ? messagesStateReducer(state.messages, messages) : state.messages },
      config,
    );
    return {
      ...update,
      ...own,
      ...(own.messages !== undefined && { messages: [messages ?? [], own.messages].flat() }),
    };
  };
}
/**
 * A custom state schema without `structuredResponse` would silently drop the hook's update: add the field
 * (an Annotation channel, or `any()` of the schema's own zod major version).
 */
function withStructuredResponseField<A>(stateSchema: A) {
  if (stateSchema == null) return stateSchema;
  if (isInteropZodObject(stateSchema)) {
    if ("structuredResponse" in getInteropZodObjectShape(stateSchema)) return stateSchema;
    const field = (isZodSchemaV4(stateSchema) ? z4 : z3).any();
    return extendInteropZodObject(stateSchema, { structuredResponse: field } as never) as A;
  }
  // An AnnotationRoot by its marker (the class is exported as a type only).
  const { lc_graph_name, spec } = stateSchema as Dict;
  if (lc_graph_name !== "AnnotationRoot" || !isDict(spec) || "structuredResponse" in spec) return stateSchema;
  return Annotation.Root({ ...spec, structuredResponse: Annotation } as never) as A;
}
