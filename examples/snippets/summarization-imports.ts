import { check } from "./_support";

// #region docs
import { findSafeSummarizationBoundary, messagesToTranscript, trimMessagesSafely } from "langgraph-tool-repair";
import { summarizationNode, summarizationHook } from "langgraph-tool-repair/langgraph";
// #endregion docs

check(
  [findSafeSummarizationBoundary, messagesToTranscript, trimMessagesSafely, summarizationNode, summarizationHook].every((f) => typeof f === "function"),
  "the summarization API",
);
