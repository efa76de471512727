/**
 * `summarizationMiddleware`: a drop-in for langchain's own `summarizationMiddleware` in `createAgent`, that cuts
 * only on the safe boundary (`findSafeSummarizationBoundary`): no tool call is ever split from its results, a
 * mixed result run keeps every caller, calls stored anywhere an adapter sends them are read, the leading system
 * messages are kept, and the summary is followed by an assistant turn when the kept part opens with a user turn.
 *
 * Like langchain's, it summarizes in `beforeModel` and persists `system + summary + tail` (as
 * `RemoveMessage(REMOVE_ALL_MESSAGES)` then the list). Persisting is what summarization is for: a summary made
 * only for the request (`wrapModelCall`) leaves the stored thread growing, so the trigger stays passed and
 * every model call pays for a new summary of an ever longer prefix, each one different. `beforeModel` runs
 * before every model call, after tool results too, which is safe here because the boundary keeps an exchange
 * whole; at that point the tools of the last exchange have run, so no resumable call is summarized away.
 * What it writes is structural (a shorter valid history), never a provider's shaping.
 */
import { pickRunnableConfigKeys } from "@langchain/core/runnables";
import { createMiddleware, initChatModel } from "langchain";
import { boundary } from "../errors";
import { kind, option } from "../options";
import {
  type ContextSize,
  type KeepSize,
  readSummarization,
  SUMMARIZER,
  type SummarizationOptions,
  type SummarizerModel,
} from "../summarize/summarize";
import type { RepairReporting } from "./events";
import { fitting, NODE_OPTIONS, summarizedState } from "./summarization";

export type { ContextSize, KeepSize };

/** The options of every summarization surface, with a model that may be a string. */
export interface SummarizationMiddlewareOptions
  extends Omit<SummarizationOptions, "model">,
    Pick<RepairReporting, "onError"> {
  /** The model that writes the summary: a chat model, or a `"provider:model"` string for langchain's `initChatModel`. */
  model: string | SummarizerModel;
}

const OPTIONS = {
  ...NODE_OPTIONS,
  model: kind(
    `${SUMMARIZER.expected}, or a "provider:model" string`,
    (v) => option.name.accepts(v) || SUMMARIZER.accepts(v),
  ),
};

/**
 * Summarizes the history before a model call once `trigger` fires, keeping `keep` verbatim on the safe
 * boundary, and persists `system + summary + tail`. Options are checked here (a `ToolCallRepairInputError`
 * naming the option); at run time nothing fails the user's run: when summarizing fails (the summarizer throws,
 * the state holds something that is not a message), the history goes on unchanged and the error is reported
 * (`onError`, custom event `"tool_call_repair_error"`).
 */
export const summarizationMiddleware = boundary(
  "summarizationMiddleware",
  (options: SummarizationMiddlewareOptions) => {
    const settings = readSummarization<string | SummarizerModel>(options, "summarizationMiddleware", OPTIONS);
    const model = lazyModel(settings.model);
    const fitRequest = fitting(settings, model);
    return createMiddleware({
      // Same name as langchain's middleware, so node names in traces and stream filters stay the same.
      name: "SummarizationMiddleware",
      beforeModel: (state, runtime) => summarizedState(state, settings, model, pickRunnableConfigKeys(runtime)),
      // Oversized tool results a summary cannot shrink are cut in the request only.
      ...(fitRequest && {
        wrapModelCall: async (request, handler) =>
          handler({
            ...request,
            messages: await fitRequest(request.messages, pickRunnableConfigKeys(request.runtime)),
          }),
      }),
    });
  },
);

/** The model, built once on first use from a `"provider:model"` string; a failed build is retried next time. */
function lazyModel(model: string | SummarizerModel) {
  if (typeof model !== "string") return async () => model;
  let built: Promise<SummarizerModel> | undefined;
  return () =>
    (built ??= initChatModel(model).catch((error) => {
      built = undefined;
      throw error;
    }));
}
