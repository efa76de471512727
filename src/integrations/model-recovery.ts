/**
 * `withRejectionRecovery(model, options?)`: the chat model itself recovers from a provider's rejection of the
 * history: the rejected call is force-repaired and sent once more. Usable wherever the model was:
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
 * The fix is not written to any state (a model cannot): each later call of a thread that keeps the history
 * the provider refuses is recovered again. `onRecovery` hands the repaired messages to code that can persist
 * them; or use the node, hook or middleware, which persist.
 */
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import { RunnableBinding, type RunnableConfig } from "@langchain/core/runnables";
import { recoveryFailed, recoveryStep, type RecoveryStep } from "../recovery/retry";
import type { ProviderRejection, RepairOptions, ToolCallRepair } from "../types";
import { reportRepairs, TOOL_CALL_REPAIR_EVENT } from "./events";

export interface RejectionRecoveryOptions extends RepairOptions {
  /**
   * Called after a rejected call was recovered by the retry, with what was sent the second time. A custom
   * model node can persist `messages` (they are the request's messages, repaired).
   */
  onRecovery?: (recovery: { rejection: ProviderRejection; repairs: ToolCallRepair[]; messages: BaseMessage[] }) => void;
}

const RECOVERY = Symbol.for("langgraph-tool-repair.rejectionRecovery");

type Dict = Record<string, unknown>;
type ChatModel = BaseChatModel;
type Generate = BaseChatModel["_generate"];
type StreamChunks = BaseChatModel["_streamResponseChunks"];
type StreamEvents = BaseChatModel["_streamChatModelEvents"];

const isChatModel = (value: unknown): value is ChatModel =>
  typeof value === "object" && value !== null && typeof (value as Dict)._generate === "function" && typeof (value as Dict)._modelType === "function";

/** Whether `model` (or the model a binding wraps) already recovers from rejections. */
export function recoversFromRejections(model: unknown): boolean {
  const target = RunnableBinding.isRunnableBinding(model) ? (model as RunnableBinding<unknown, unknown>).bound : model;
  return typeof target === "object" && target !== null && RECOVERY in target;
}

/**
 * A model that force-repairs and retries once when the provider rejects the history. Accepts a chat model or
 * a binding of one (`model.bindTools(tools)`, `model.withConfig(...)`), and returns the same kind.
 */
export function withRejectionRecovery<M>(model: M, options: RejectionRecoveryOptions = {}): M {
  if (RunnableBinding.isRunnableBinding(model)) {
    const binding = model as unknown as RunnableBinding<unknown, unknown>;
    return new RunnableBinding({
      bound: withRejectionRecovery(binding.bound, options),
      config: binding.config,
      kwargs: binding.kwargs,
      configFactories: binding.configFactories,
    }) as unknown as M;
  }
  if (!isChatModel(model)) {
    throw new TypeError("langgraph-tool-repair: withRejectionRecovery expects a chat model (BaseChatModel) or a binding of one");
  }
  if (RECOVERY in model) return model;
  if (options.onRecovery !== undefined && typeof options.onRecovery !== "function") {
    throw new TypeError("langgraph-tool-repair: withRejectionRecovery option onRecovery must be a function");
  }
  return wrap(model, options) as unknown as M;
}

function wrap(model: ChatModel, options: RejectionRecoveryOptions): ChatModel {
  const wrapper = Object.create(model) as ChatModel;
  const define = (key: PropertyKey, value: unknown) =>
    Object.defineProperty(wrapper, key, { value, enumerable: false, configurable: true, writable: true });
  define(RECOVERY, options);

  const generate = model._generate as Generate;
  define("_generate", async function recoveringGenerate(this: ChatModel, messages: BaseMessage[], callOptions: unknown, runManager?: CallbackManagerForLLMRun) {
    try {
      return await generate.call(this, messages, callOptions as never, runManager);
    } catch (error) {
      const step = recoveryStep(error, messages, options);
      if (step.action === "rethrow") throw step.error;
      let result: Awaited<ReturnType<Generate>>;
      try {
        result = await generate.call(this, step.messages, callOptions as never, runManager);
      } catch (retryError) {
        throw recoveryFailed(error, step, retryError);
      }
      await recovered(step, options, runManager);
      return result;
    }
  });

  // Only where the model streams itself: BaseChatModel tells "no streaming" by these methods' identity.
  const streamChunks = model._streamResponseChunks as StreamChunks;
  if (streamChunks !== BaseChatModel.prototype._streamResponseChunks) {
    define("_streamResponseChunks", function recoveringStream(this: ChatModel, messages: BaseMessage[], callOptions: unknown, runManager?: CallbackManagerForLLMRun) {
      return retryBeforeFirst((sent) => streamChunks.call(this, sent, callOptions as never, runManager), messages, options, runManager);
    });
  }
  const streamEvents = model._streamChatModelEvents as StreamEvents | undefined;
  if (streamEvents !== undefined && streamEvents !== BaseChatModel.prototype._streamChatModelEvents) {
    define("_streamChatModelEvents", function recoveringEvents(this: ChatModel, messages: BaseMessage[], callOptions: unknown, runManager?: CallbackManagerForLLMRun) {
      return retryBeforeFirst((sent) => streamEvents.call(this, sent, callOptions as never, runManager), messages, options, runManager);
    });
  }

  // ChatOpenAI's withConfig returns a new ChatOpenAI (not a binding of this one): wrap what comes back.
  const withConfig = model.withConfig;
  define("withConfig", function recoveringWithConfig(this: ChatModel, config: RunnableConfig) {
    const result = withConfig.call(this, config as never) as unknown;
    return recoversFromRejections(result) ? result : withRejectionRecovery(result, options);
  });
  return wrapper;
}

/** Streams `start(messages)`; a rejection before the first item is recovered once, later errors pass through. */
async function* retryBeforeFirst<T>(
  start: (messages: BaseMessage[]) => AsyncIterable<T>,
  messages: BaseMessage[],
  options: RejectionRecoveryOptions,
  runManager?: CallbackManagerForLLMRun,
): AsyncGenerator<T> {
  let iterator = start(messages)[Symbol.asyncIterator]();
  let first: IteratorResult<T>;
  try {
    first = await iterator.next();
  } catch (error) {
    const step = recoveryStep(error, messages, options);
    if (step.action === "rethrow") throw step.error;
    iterator = start(step.messages)[Symbol.asyncIterator]();
    try {
      first = await iterator.next();
    } catch (retryError) {
      throw recoveryFailed(error, step, retryError);
    }
    await recovered(step, options, runManager);
  }
  try {
    for (let next = first; !next.done; next = await iterator.next()) yield next.value;
  } finally {
    await iterator.return?.();
  }
}

/**
 * Reports the retry's repairs: `onRepair`, then the custom event on the model's own run (so it belongs to it
 * in traces and `streamEvents`), or on the run around it when the model was not given one.
 */
async function recovered(step: Extract<RecoveryStep, { action: "retry" }>, options: RejectionRecoveryOptions, runManager?: CallbackManagerForLLMRun) {
  if (runManager) {
    for (const repair of step.repairs) options.onRepair?.(repair);
    try {
      for (const repair of step.repairs) await runManager.handleCustomEvent(TOOL_CALL_REPAIR_EVENT, repair);
    } catch {
      // Tracing is best effort: the recovered answer stands.
    }
  } else {
    await reportRepairs(step.repairs, options);
  }
  options.onRecovery?.({ rejection: step.rejection, repairs: step.repairs, messages: step.messages });
}
