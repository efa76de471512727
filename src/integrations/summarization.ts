/**
 * Summarization surfaces for LangGraph: a node for a `StateGraph` and a `preModelHook` for `createReactAgent`,
 * thin adapters over {@link summarizeRead} (the safe boundary: no tool call split from its results), with the
 * options every summarization surface takes. Options are validated when the surface is built; at run time a
 * failure (the summarizer throws, the state holds something that is not a message) never fails the user's
 * run: the surface returns no update and reports the error (`onError`, custom event `"tool_call_repair_error"`).
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { Messages } from "@langchain/langgraph";
import type { RunnableConfig } from "@langchain/core/runnables";
import { boundary } from "../errors";
import { option } from "../options";
import { readMessageList } from "../summarize/boundary";
import {
  fittedRequest,
  isSummaryMessage,
  readSummarization,
  SUMMARIZATION,
  type Summarization,
  type SummarizationOptions,
  type SummarizerModel,
  summarizeRead,
} from "../summarize/summarize";
import { markHook } from "./compose-hooks";
import { orFallback, type RepairReporting } from "./events";
import { applyMessagesUpdate, NO_UPDATE, replaceAllMessages } from "./state-update";

/** What a messages-state node returns: the rewritten list, or no update. */
export type SummarizationUpdate = { messages: BaseMessage[] } | Record<string, never>;

export interface SummarizationNodeOptions extends SummarizationOptions, Pick<RepairReporting, "onError"> {}

export type SummarizationNodeFunction = (
  state: { messages?: BaseMessage[] },
  config?: RunnableConfig,
) => Promise<SummarizationUpdate>;

/** The options of every surface here (the middleware's too, with its own `model`). */
export const NODE_OPTIONS = { ...SUMMARIZATION, onError: option.fn };

/**
 * A node for a `StateGraph` with a `messages` channel (`MessagesAnnotation` or its own). Once the trigger fires
 * it returns `{ messages: [RemoveMessage(REMOVE_ALL_MESSAGES), ...system, summary, ...tail] }`, which the
 * messages reducer applies as a full replacement; otherwise `{}` (no update). Put it before the model node.
 */
export const summarizationNode = boundary("summarizationNode", (options: SummarizationNodeOptions) =>
  summarizationStep(readSummarization(options, "summarizationNode", NODE_OPTIONS)),
);

/**
 * A `preModelHook` for `createReactAgent`. It returns `messages` (a persisted rewrite), never
 * `llmInputMessages`:
 * - `llmInputMessages` is a stored channel and sticky: once written, a later hook call that returns `{}`
 *   (under the threshold) leaves the stale list in place, and the model keeps getting an old history without
 *   the newest messages.
 * - Summarizing only the model input would leave `messages` growing, so the threshold stays passed and every
 *   turn pays for a new summary of the same prefix.
 * Rewriting `messages` summarizes once, and the agent node then reads the rewritten list. To run it with
 * `toolCallRepairHook` in the agent's one `preModelHook`, see `composePreModelHooks`.
 */
export const summarizationHook = boundary("summarizationHook", (options: SummarizationNodeOptions) => {
  const settings = readSummarization(options, "summarizationHook", NODE_OPTIONS);
  // In `composePreModelHooks`, the request is fitted after the last hook (oversized results cut, request only).
  return markHook(
    "messages",
    summarizationStep(settings),
    fitting(settings, async () => settings.model),
  );
});

const summarizationStep =
  (settings: Summarization): SummarizationNodeFunction =>
  async (state, config) =>
    (await summarizedState(state, settings, async () => settings.model, config)) ?? NO_UPDATE;

/**
 * The messages reducer of a parent graph whose node is an agent graph that summarizes (createSupervisor's and
 * createSwarm's `stateSchema`). Such a node returns its whole list, not the `RemoveMessage` its hook applied, so
 * `messagesStateReducer` would keep what was summarized and append the summary after the newest messages. An
 * update that brings a summary the state lacks replaces what that graph was given: the update's list, then the
 * state's messages after the last one it holds (written meanwhile). Any other update is `messagesStateReducer`'s.
 */
export const summarizedMessagesReducer = boundary(
  "summarizedMessagesReducer",
  (current: BaseMessage[], update: Messages) => {
    const given = [update].flat() as BaseMessage[];
    const ids = new Set(given.map((m) => m.id));
    const held = new Set(current.map((m) => m.id));
    if (given.some((m) => m.getType?.() === "remove") || !given.some((m) => isSummaryMessage(m) && !held.has(m.id)))
      return applyMessagesUpdate(current, given);
    let last = current.length;
    while (last-- > 0 && !ids.has(current[last].id));
    return applyMessagesUpdate([], [...given, ...current.slice(last + 1)]);
  },
);

/**
 * How a surface fits the request: {@link fittedRequest}, the request unchanged when it fails (reported); none
 * when no trigger counts tokens (shortening results changes no message count).
 */
export function fitting(settings: Summarization<unknown>, model: () => Promise<SummarizerModel>) {
  if (settings.trigger.some((size) => size.tokens ?? size.fraction))
    return (list: BaseMessage[], config?: RunnableConfig) =>
      orFallback(list, settings, config, async () => fittedRequest(list, { ...settings, model: await model() }));
}

/**
 * A surface's step: the update that stores the summarized history, or undefined when there is nothing to do or
 * summarizing failed (reported: `onError`, then the custom event).
 */
export const summarizedState = (
  state: { messages?: unknown } | undefined,
  settings: Summarization<unknown>,
  model: () => Promise<SummarizerModel>,
  config?: RunnableConfig,
) =>
  orFallback(undefined, settings, config, async () => {
    const list = readMessageList(state?.messages ?? [], settings.fn);
    const next = await summarizeRead(list, { ...settings, model: await model() }, config);
    return next && { messages: replaceAllMessages(next) };
  });
