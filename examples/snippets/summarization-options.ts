import type { BaseMessage } from "@langchain/core/messages";
import type * as api from "langgraph-tool-repair/langgraph";
import type * as langchainApi from "langgraph-tool-repair/langchain";
import type { Same } from "./_types";

type SummarizerModel = api.SummarizerModel;
type KeepSize = api.KeepSize;
type ContextSize = langchainApi.ContextSize;

// #region docs
interface SummarizationOptions {
  model: SummarizerModel; // any chat model (or anything with invoke(messages) → { content })
  trigger: ContextSize | ContextSize[]; // { messages?, tokens?, fraction? }: fires when it reaches ALL it sets (>=); a list: ANY
  keep?: KeepSize; // exactly one of { messages }, { tokens }, { fraction } (default { messages: 20 }), well below the trigger
  tokenCounter?: (messages: BaseMessage[]) => number | Promise<number>; // default about 4 chars/token
  summaryPrompt?: string; // with {messages} where the transcript goes; default: instructions (system) + transcript (user)
  summaryPrefix?: string; // default "Summary of the conversation so far:"
  trimTokensToSummarize?: number; // at most this many tokens of the summarized part reach the summarizer; default: all
  acknowledgement?: string; // the assistant turn after the summary, when one is needed
}
// summarizationNode and summarizationHook also take onError?: (error) => void; summarizationMiddleware takes onError
// and a "provider:model" string as model.
// #endregion docs

export const signatureMatches: [
  Same<SummarizationOptions, api.SummarizationOptions>,
  Same<keyof SummarizationOptions, keyof api.SummarizationOptions>,
  Same<Exclude<keyof api.SummarizationNodeOptions, keyof SummarizationOptions>, "onError">,
  Same<Exclude<keyof langchainApi.SummarizationMiddlewareOptions, keyof SummarizationOptions>, "onError">,
  Same<Omit<langchainApi.SummarizationMiddlewareOptions, "model" | "onError">, Omit<SummarizationOptions, "model">>,
] = [true, true, true, true, true];
