/**
 * `toolCallRepairHook`: a `preModelHook` for createReactAgent (@langchain/langgraph/prebuilt).
 *
 * Request-only by default: the model gets a repaired list through `llmInputMessages`, state keeps what
 * happened. `llmInputMessages` is a stored channel that keeps its last value: the agent node uses it
 * whenever it is non-empty, so a hook that returned it once and `{}` later would feed the model a stale
 * list (an older turn, without the new question). This hook therefore writes it on every call, the current
 * messages themselves when they are clean.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { RepairOptions } from "../types";
import { reportRepairs } from "./events";
import { bindRepair, replaceAllMessages, withUniqueIds } from "./node";

export interface ToolCallRepairHookOptions extends RepairOptions {
  /**
   * Rewrite `messages` in state (persisted) instead of handing the model a repaired copy. Default false.
   * With `persist: true` the hook writes an empty `llmInputMessages`, so a list stored by earlier
   * request-only calls in the thread is never used.
   */
  persist?: boolean;
}

export interface ToolCallRepairHookUpdate {
  messages?: BaseMessage[];
  llmInputMessages?: BaseMessage[];
}

export type ToolCallRepairHookFunction = (
  state: { messages?: BaseMessage[] },
  config?: RunnableConfig,
) => ToolCallRepairHookUpdate | Promise<ToolCallRepairHookUpdate>;

/** Persist mode's clean-path update, shared and frozen (the reducer only reads it). */
const CLEAR_LLM_INPUT: ToolCallRepairHookUpdate = Object.freeze({ llmInputMessages: Object.freeze([]) as unknown as BaseMessage[] });

/**
 * A preModelHook that repairs the tool-call history before each model call of createReactAgent.
 * Defaults: request-only, `trailing: "answer"` (the hook runs right before the model), `provider: "strict"`.
 * Every repair reaches `onRepair` and is dispatched as the custom event `"tool_call_repair"`.
 */
export function toolCallRepairHook(options: ToolCallRepairHookOptions = {}): ToolCallRepairHookFunction {
  const { persist = false, ...repairOptions } = options;
  const bound = bindRepair(repairOptions);

  // In persist mode the model must read `messages`. The hook's input state does not include
  // `llmInputMessages`, so a list left by earlier request-only calls cannot be seen: empty it every time.
  const persisted = (messages?: BaseMessage[]): ToolCallRepairHookUpdate =>
    messages ? { messages, llmInputMessages: [] } : CLEAR_LLM_INPUT;

  const repairAndReport = async (messages: BaseMessage[], config?: RunnableConfig): Promise<ToolCallRepairHookUpdate> => {
    const { messages: repaired, repairs } = bound.repair(messages);
    if (repairs.length > 0) await reportRepairs(repairs, repairOptions, config);
    if (persist) return persisted(repairs.length > 0 ? replaceAllMessages(repaired) : undefined);
    // The channel's reducer merges by id too: a repeated id would drop a message from the request.
    return { llmInputMessages: repairs.length > 0 ? withUniqueIds(repaired) : repaired };
  };

  return function toolCallRepairPreModelHook(state, config) {
    const messages = state.messages ?? [];
    if (bound.isClean(messages)) return persist ? CLEAR_LLM_INPUT : { llmInputMessages: messages };
    return repairAndReport(messages, config);
  };
}
