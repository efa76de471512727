// The check the summarization snippets use to find the summary in a thread (they import it from here).

// #region docs
import type { BaseMessage } from "@langchain/core/messages";

/** The summary, or the acknowledgement after it, written by this package or by langchain's summarization. */
export const isSummaryMessage = (m: BaseMessage) => m.additional_kwargs?.lc_source === "summarization";
// #endregion docs
