import type { BaseMessage } from "@langchain/core/messages";
import type * as api from "langgraph-tool-repair";
import type { Same } from "./_types";

// #region docs
type BoundaryOptions = { keepLast: number } | { maxTokens: number; tokenCounter: (m: BaseMessage[]) => number };
declare function findSafeSummarizationBoundary(messages: readonly BaseMessage[], options: BoundaryOptions): number;
// #endregion docs

export const signatureMatches: [
  Same<BoundaryOptions, api.BoundaryOptions>,
  Same<typeof findSafeSummarizationBoundary, typeof api.findSafeSummarizationBoundary>,
] = [true, true];
