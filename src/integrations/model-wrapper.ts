/**
 * `withRequestRepair(model, options?)`: the chat model itself sends valid requests. Each request is repaired for
 * the model's provider before it goes out (request level: structural repairs plus the provider's shaping,
 * never stored), and a request the provider still rejects for its history is force-repaired and sent once
 * more. Usable wherever the model was:
 * `createReactAgent({ llm })` (which binds its tools to it), a custom model node, `invoke`, `stream`,
 * `streamEvents`, `bindTools`, `withConfig` and `withStructuredOutput`.
 *
 * The wrapper is an object whose prototype is the model: every field and method is the model's, so
 * `instanceof`, `_llmType()`, tracing, `bindTools` and `withStructuredOutput` behave as before, and run
 * through the wrapper. Only the three places where a request is made are wrapped (`_generate`,
 * `_streamResponseChunks`, `_streamChatModelEvents`), plus `withConfig` for models that return a new
 * instance from it (ChatOpenAI).
 *
 * Streaming: a rejection arrives before the first chunk, so the retry happens then and the recovered answer
 * streams. An error after the first chunk has been yielded is passed on as it is (the chunks already reached
 * the caller; a retry would repeat them).
 *
 * Tools: a request the model is sure to send without tools (ChatBedrockConverse called without `bindTools`, as a
 * summarizer or a final-answer node is) is repaired with `toolsInRequest: false`, so a thread that used tools is
 * sent with its calls and results as text instead of being refused (Bedrock B3).
 *
 * The fix is not written to any state (a model cannot): each later call of a thread that keeps the history
 * the provider refuses is recovered again. `onRecovery` tells code that can write state that a recovery
 * happened (it stores `forceRepairToolCalls(messages, rejection, { level: "structural" })`, never the request's
 * shaped messages); or use the node, hook or middleware, which persist structural repairs.
 */
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import { RunnableBinding, type RunnableConfig } from "@langchain/core/runnables";
import { recoveryFailed, recoveryStep, type RecoveryStep, type RecoveryStepOptions } from "../recovery/retry";
import type { ProviderRejection, RepairOptions, ToolCallRepair } from "../types";
import { deliverRepairs, orFallback, reportRepairs, TOOL_CALL_REPAIR_EVENT, type RepairReporting } from "./events";
import type { Repairer } from "../engine";
import { callOptionsCarryNoTools, toolsComeFromCallOptions } from "../models/request-target";
import { RequestRepairers } from "./request-repairers";
import { SURFACE_OPTIONS } from "./surface-options";
import { option, readOptions } from "../options";
import { expectedInput, boundary } from "../errors";
import type { Dict } from "../values";

export interface RequestRepairOptions extends Omit<RepairOptions, "level">, RepairReporting {
  /**
   * Repair every request before it is sent, for the model's provider (or `provider`). Default true. Turn it
   * off where a hook or middleware already repairs requests and only the recovery is wanted.
   */
  repairRequests?: boolean;
  /** Force-repair and retry once a request the provider rejects for its history. Default true. */
  recoverRejections?: boolean;
  /**
   * Called after a rejected call was recovered by the retry, with what was sent the second time (`messages`:
   * the request, shaped for its provider). To persist the fix, store the structural repair of the state's
   * messages (`forceRepairToolCalls(messages, rejection, { level: "structural" })`), not these.
   */
  onRecovery?: (recovery: { rejection: ProviderRejection; repairs: ToolCallRepair[]; messages: BaseMessage[] }) => void;
}

const WRAPPED = Symbol.for("langgraph-tool-repair.requestRepair");

type ChatModel = BaseChatModel;
type Generate = BaseChatModel["_generate"];
/** `_streamResponseChunks` and `_streamChatModelEvents`: what they yield differs, how they are wrapped does not. */
type Streaming = (
  this: ChatModel,
  input: BaseMessage[],
  options: never,
  runManager?: CallbackManagerForLLMRun,
) => AsyncGenerator<unknown>;

const isChatModel = (value: unknown): value is ChatModel =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as Dict)._generate === "function" &&
  typeof (value as Dict)._modelType === "function";

const isWrapped = (model: unknown): boolean =>
  (typeof model === "object" || typeof model === "function") && model !== null && WRAPPED in model;

/** Whether `model` (or the model a binding wraps) is already wrapped by {@link withRequestRepair}. */
export const repairsRequests = boundary("repairsRequests", function repairsRequests(model: unknown): boolean {
  return isWrapped(RunnableBinding.isRunnableBinding(model) ? model.bound : model);
});

/** The wrapper's options (the kit takes them too). */
export const REQUEST_REPAIR_OPTIONS = {
  ...SURFACE_OPTIONS,
  repairRequests: option.flag,
  recoverRejections: option.flag,
  onRecovery: option.fn,
};

/**
 * A model whose every request is repaired for its provider, and which force-repairs and retries once when the
 * provider still rejects the history. Accepts a chat model or a binding of one (`model.bindTools(tools)`,
 * `model.withConfig(...)`), and returns the same kind.
 */
export const withRequestRepair = boundary("withRequestRepair", function withRequestRepair<
  M,
>(model: M, options: RequestRepairOptions = {}): M {
  const given = readOptions<RequestRepairOptions>(options, "withRequestRepair", REQUEST_REPAIR_OPTIONS);
  if (RunnableBinding.isRunnableBinding(model)) {
    const { bound, config, kwargs, configFactories } = model as RunnableBinding<unknown, unknown>;
    const rebound = { bound: withRequestRepair(bound, given), config, kwargs, configFactories };
    return new RunnableBinding(rebound as never) as unknown as M;
  }
  if (!isChatModel(model))
    throw expectedInput("withRequestRepair", "model", "a chat model (BaseChatModel) or a binding of one", model);
  return isWrapped(model) ? model : (wrap(model, given) as unknown as M);
});

function wrap(model: ChatModel, options: RequestRepairOptions): ChatModel {
  const wrapper = Object.create(model) as ChatModel;
  const define = (key: PropertyKey, value: unknown) =>
    Object.defineProperty(wrapper, key, { value, enumerable: false, configurable: true, writable: true });
  define(WRAPPED, options);
  const { repairRequests = true, recoverRejections = true, onRecovery: _onRecovery, ...repairOptions } = options;
  // The model's own provider (ChatBedrockConverse means Bedrock, ...) unless the options name one; one repairer
  // for requests with tools and one for requests the model is sure to send without (Bedrock B3).
  const repairers = new RequestRepairers(repairOptions);
  const withTools = repairers.for(model);
  // An explicit `toolsInRequest` decides; otherwise a model that reads its tools from the call options alone tells.
  const detectsTools = options.toolsInRequest === undefined && toolsComeFromCallOptions(model);
  const withoutTools = detectsTools ? repairers.for(model, { toolsInRequest: false }) : withTools;

  /** The repairer for this call: a request sure to carry no tools has its tool blocks sent as text. */
  const repairerFor = (callOptions: unknown): Repairer =>
    detectsTools && callOptionsCarryNoTools(callOptions) ? withoutTools : withTools;

  /** Options of the retry: shaped for the same target as the request (provider, system messages, tools). */
  const recoveryFor = (callOptions: unknown): RecoveryStepOptions => {
    const target = repairerFor(callOptions);
    return {
      ...repairOptions,
      provider: target.options.provider,
      systemMessages: target.options.systemMessages,
      toolsInRequest: target.options.toolsInRequest,
    };
  };

  /** The request as it is sent: repaired for the provider (a failure to repair sends it as it is, reported). */
  const prepare = async (
    messages: BaseMessage[],
    callOptions: unknown,
    runManager?: CallbackManagerForLLMRun,
  ): Promise<BaseMessage[]> => {
    if (!repairRequests) return messages;
    return orFallback(
      async () => {
        const repairer = repairerFor(callOptions);
        if (repairer.isClean(messages)) return messages;
        const { messages: repaired, repairs } = repairer.repair(messages);
        await announce(repairs, options, runManager);
        return repaired;
      },
      messages,
      options,
    );
  };

  const recoveryIf = (callOptions: unknown) => (recoverRejections ? recoveryFor(callOptions) : undefined);
  const generate = model._generate as Generate;
  define(
    "_generate",
    async function repairingGenerate(
      this: ChatModel,
      input: BaseMessage[],
      callOptions: unknown,
      runManager?: CallbackManagerForLLMRun,
    ) {
      return sendRecovering(
        (sent) => generate.call(this, sent, callOptions as never, runManager),
        await prepare(input, callOptions, runManager),
        recoveryIf(callOptions),
        options,
        runManager,
      );
    },
  );

  // Only where the model streams itself: BaseChatModel tells "no streaming" by these methods' identity.
  for (const key of ["_streamResponseChunks", "_streamChatModelEvents"] as const) {
    const stream = model[key] as Streaming | undefined;
    if (stream === undefined || stream === (BaseChatModel.prototype[key] as unknown)) continue;
    define(
      key,
      function repairingStream(
        this: ChatModel,
        input: BaseMessage[],
        callOptions: unknown,
        runManager?: CallbackManagerForLLMRun,
      ) {
        return retryBeforeFirst(
          (sent) => stream.call(this, sent, callOptions as never, runManager),
          prepare(input, callOptions, runManager),
          recoveryIf(callOptions),
          options,
          runManager,
        );
      },
    );
  }

  // ChatOpenAI's withConfig returns a new ChatOpenAI (not a binding of this one): wrap what comes back.
  const withConfig = model.withConfig;
  define("withConfig", function recoveringWithConfig(this: ChatModel, config: RunnableConfig) {
    const result = withConfig.call(this, config as never) as unknown;
    return repairsRequests(result) ? result : withRequestRepair(result, options);
  });
  return wrapper;
}

/**
 * `send(messages)`; a rejection of the history is recovered once (without `recovery`, not at all): force-repaired,
 * sent again, reported. A second failure rethrows the first error, the diagnosis attached.
 */
async function sendRecovering<T>(
  send: (messages: BaseMessage[]) => Promise<T>,
  messages: BaseMessage[],
  recovery: RecoveryStepOptions | undefined,
  reporting: RequestRepairOptions,
  runManager?: CallbackManagerForLLMRun,
): Promise<T> {
  try {
    return await send(messages);
  } catch (error) {
    if (!recovery) throw error;
    const step = recoveryStep(error, messages, recovery);
    if (step.action === "rethrow") throw step.error;
    let result: T;
    try {
      result = await send(step.messages);
    } catch (retryError) {
      throw recoveryFailed(error, step, retryError);
    }
    await recovered(step, reporting, runManager);
    return result;
  }
}

/** Streams `start(messages)`; a rejection before the first item is recovered once, later errors pass through. */
async function* retryBeforeFirst<T>(
  start: (messages: BaseMessage[]) => AsyncIterable<T>,
  prepared: Promise<BaseMessage[]>,
  recovery: RecoveryStepOptions | undefined,
  reporting: RequestRepairOptions,
  runManager?: CallbackManagerForLLMRun,
): AsyncGenerator<T> {
  let iterator: AsyncIterator<T> | undefined;
  const begin = (sent: BaseMessage[]) => {
    iterator = start(sent)[Symbol.asyncIterator]();
    return iterator.next();
  };
  const first = await sendRecovering(begin, await prepared, recovery, reporting, runManager);
  try {
    for (let next = first; !next.done; next = await iterator!.next()) yield next.value;
  } finally {
    await iterator?.return?.();
  }
}

/**
 * Reports repairs: `onRepair`, then the custom event on the model's own run (so it belongs to it in traces
 * and `streamEvents`), or on the run around it when the model was not given one.
 */
async function announce(
  repairs: readonly ToolCallRepair[],
  options: RequestRepairOptions,
  runManager?: CallbackManagerForLLMRun,
) {
  if (repairs.length === 0) return;
  if (!runManager) return reportRepairs(repairs, options, undefined, "request");
  if (options.onRepair) deliverRepairs(options.onRepair, repairs, undefined, "request");
  try {
    for (const repair of repairs) await runManager.handleCustomEvent(TOOL_CALL_REPAIR_EVENT, repair);
  } catch {
    // Tracing is best effort: the answer stands.
  }
}

/** Reports the retry's repairs, then hands the recovery to `onRecovery`. */
async function recovered(
  step: Extract<RecoveryStep, { action: "retry" }>,
  options: RequestRepairOptions,
  runManager?: CallbackManagerForLLMRun,
) {
  await announce(step.repairs, options, runManager);
  try {
    options.onRecovery?.({ rejection: step.rejection, repairs: step.repairs, messages: step.messages });
  } catch {
    // as above
  }
}
