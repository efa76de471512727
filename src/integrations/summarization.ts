/**
 * Summarization surfaces for LangGraph: a node for a `StateGraph` and a `preModelHook` for `createReactAgent`,
 * thin adapters over {@link summarizeHistory} (the safe boundary: no tool call split from its results).
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { summarizeHistory, type SummarizationOptions } from "../summarize/summarize";
import { replaceAllMessages } from "./state-update";

/** What a messages-state node returns: the rewritten list, or no update. */
export type SummarizationUpdate = { messages: BaseMessage[] } | Record<string, never>;

/**
 * A node for a `StateGraph` with a `messages` channel (`MessagesAnnotation` or its own). Over the threshold it
 * returns `{ messages: [RemoveMessage(REMOVE_ALL_MESSAGES), ...system, summary, ...tail] }`, which the
 * messages reducer applies as a full replacement; under it, `{}` (no update). Put it before the model node.
 */
export function summarizationNode(options: SummarizationOptions) {
  return async (state: { messages: BaseMessage[] }, config?: RunnableConfig): Promise<SummarizationUpdate> => {
    const next = await summarizeHistory(state.messages, options, config);
    if (next === undefined) return {};
    return { messages: replaceAllMessages(next) };
  };
}

/**
 * A `preModelHook` for `createReactAgent`. It returns `messages` (a persisted rewrite), never
 * `llmInputMessages`:
 * - `llmInputMessages` is a stored channel and sticky: once written, a later hook call that returns `{}`
 *   (under the threshold) leaves the stale list in place, and the model keeps getting an old history without
 *   the newest messages.
 * - Summarizing only the model input would leave `messages` growing, so the threshold stays passed and every
 *   turn pays for a new summary of the same prefix.
 * Rewriting `messages` summarizes once, and the agent node then reads the rewritten list.
 */
export function summarizationHook(options: SummarizationOptions) {
  return summarizationNode(options);
}
