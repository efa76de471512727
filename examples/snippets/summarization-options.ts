import type { BaseMessage } from "@langchain/core/messages";
import type { TokenCounter } from "langgraph-tool-repair";
import type * as api from "langgraph-tool-repair/langgraph";
import type { Same } from "./_types";

type SummarizerModel = api.SummarizerModel;
type KeepSize = api.KeepSize;

// #region docs
interface SummarizationOptions {
  model: SummarizerModel; // any chat model (or anything with invoke(messages) → { content })
  trigger: { messages?: number; tokens?: number }; // summarize once ONE of them is passed (>); at least one
  keep?: KeepSize; // what to keep verbatim (default { messages: 20 }); keep it well below the trigger
  tokenCounter?: TokenCounter; // for trigger.tokens and keep.tokens; default about 4 chars/token
  prompt?: (transcript: string) => BaseMessage[]; // default: instructions (system) + transcript (user)
  summaryPrefix?: string; // default "Summary of the conversation so far:"
  acknowledgement?: string; // the assistant turn after the summary, when one is needed
}
// summarizationNode and summarizationHook also take onError?: (error) => void
// #endregion docs

export const signatureMatches: [
  Same<SummarizationOptions, api.SummarizationOptions>,
  Same<keyof SummarizationOptions, keyof api.SummarizationOptions>,
  Same<Exclude<keyof api.SummarizationNodeOptions, keyof SummarizationOptions>, "onError">,
] = [true, true, true];
