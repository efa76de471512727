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
import type { ProviderRejection, RepairOptions, ToolCallRepair } from "../types";
import { retryOnce } from "../recovery/force-repair";
import { repairedRequest, reportRepairs, type RepairReporting } from "./events";
import { callOptionsCarryNoTools, toolsComeFromCallOptions } from "../models/request-target";
import { SURFACE_OPTIONS, repairersOf } from "./surface-options";
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
type Run = CallbackManagerForLLMRun | undefined;

/** Whether `model` (or the model a binding wraps) is already wrapped by {@link withRequestRepair}. */
export const repairsRequests = (model: unknown) =>
  WRAPPED in Object(RunnableBinding.isRunnableBinding(model) ? model.bound : model);

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
export const withRequestRepair = boundary("withRequestRepair", <M>(model: M, options: RequestRepairOptions = {}): M => {
  const given = readOptions<RequestRepairOptions>(options, "withRequestRepair", REQUEST_REPAIR_OPTIONS);
  if (model != null && RunnableBinding.isRunnableBinding(model)) {
    const { bound, config, kwargs, configFactories } = model;
    return new RunnableBinding({ bound: withRequestRepair(bound, given), config, kwargs, configFactories }) as M;
  }
  const m = model as Dict | null;
  if (typeof m?._generate !== "function" || typeof m._modelType !== "function")
    throw expectedInput("withRequestRepair", "model", "a chat model (BaseChatModel) or a binding of one", model);
  return WRAPPED in m ? model : (wrap(model as ChatModel, given) as M);
});

function wrap(model: ChatModel, options: RequestRepairOptions) {
  const wrapper = Object.create(model) as ChatModel;
  // Not enumerable (defineProperty's default), as the methods of the model's class.
  const define = (key: PropertyKey, value: unknown) =>
    Object.defineProperty(wrapper, key, { value, configurable: true, writable: true });
  define(WRAPPED, options);
  const { repairRequests = true, recoverRejections = true, onRecovery: _onRecovery, ...repairOptions } = options;
  // The model's own provider (ChatBedrockConverse means Bedrock, ...) unless the options name one; one repairer
  // for requests with tools and one for requests the model is sure to send without (Bedrock B3).
  const repairers = repairersOf(repairOptions);
  // An explicit `toolsInRequest` decides; otherwise a model that reads its tools from the call options alone tells.
  const detectsTools = options.toolsInRequest === undefined && toolsComeFromCallOptions(model);

  /**
   * `send(request)`, the request repaired for the provider (a failure to repair sends it as it is, reported); a
   * rejection of the history is recovered once (unless `recoverRejections` is off), with the retry shaped for the
   * same target: force-repaired, sent again, reported, handed to `onRecovery`. A second failure rethrows the
   * first error, the diagnosis attached.
   */
  const sendRepaired = async <T>(
    send: (messages: BaseMessage[]) => Promise<T>,
    input: BaseMessage[],
    callOptions: unknown,
    run: Run,
  ) => {
    // A request sure to carry no tools has its tool blocks sent as text; what a rejection of the thread taught first
    // (the repairers read the thread).
    const repairer = repairers.for(model, detectsTools && callOptionsCarryNoTools(callOptions));
    const messages = repairRequests ? await repairedRequest(repairer, input, options, "model", run) : input;
    try {
      return await send(messages);
    } catch (error) {
      if (!recoverRejections) throw error;
      const { answer, ...step } = await retryOnce(error, messages, repairers.recovery(repairer), send);
      repairers.learn(step.rejection, repairer);
      await reportRepairs(step.repairs, options, {
        surface: "recovery",
        provider: repairer.options.provider,
        request: true,
        run,
      });
      try {
        options.onRecovery?.(step);
      } catch {
        // A reporting callback cannot fail the answer.
      }
      return answer;
    }
  };

  const generate = model._generate;
  define(
    "_generate",
    function repairingGenerate(this: ChatModel, input: BaseMessage[], callOptions: unknown, run: Run) {
      return sendRepaired((sent) => generate.call(this, sent, callOptions as never, run), input, callOptions, run);
    },
  );

  // Only where the model streams itself: BaseChatModel tells "no streaming" by these methods' identity. A rejection
  // before the first item is recovered once (the retry's answer streams); later errors pass through (the chunks
  // already reached the caller).
  for (const key of ["_streamResponseChunks", "_streamChatModelEvents"] as const) {
    const stream = model[key] as ((...args: unknown[]) => AsyncIterable<unknown>) | undefined;
    if (!stream || stream === BaseChatModel.prototype[key]) continue;
    define(key, async function* repairingStream(this: ChatModel, input: BaseMessage[], callOptions: unknown, run: Run) {
      let iterator: AsyncIterator<unknown> | undefined;
      const begin = (sent: BaseMessage[]) => {
        iterator = stream.call(this, sent, callOptions, run)[Symbol.asyncIterator]();
        return iterator.next();
      };
      try {
        for (let next = await sendRepaired(begin, input, callOptions, run); !next.done; next = await iterator!.next())
          yield next.value;
      } finally {
        await iterator?.return?.();
      }
    });
  }

  // ChatOpenAI's withConfig returns a new ChatOpenAI (not a binding of this one): wrap what comes back.
  const withConfig = model.withConfig;
  define("withConfig", function recoveringWithConfig(this: ChatModel, config: RunnableConfig) {
    const result = withConfig.call(this, config);
    return repairsRequests(result) ? result : withRequestRepair(result, options);
  });
  return wrapper;
}
