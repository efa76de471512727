import type { BaseMessage } from "@langchain/core/messages";
import type { TrimMessagesOptions } from "langgraph-tool-repair";
import type * as api from "langgraph-tool-repair";
import type { Same } from "./_types";

// #region docs
declare function trimMessagesSafely(messages: BaseMessage[], options: TrimMessagesOptions): Promise<BaseMessage[]>;
// #endregion docs

export const signatureMatches: Same<typeof trimMessagesSafely, typeof api.trimMessagesSafely> = true;
