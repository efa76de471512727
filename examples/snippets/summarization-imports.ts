import { check } from "./_support";

// #region docs
import { findSafeSummarizationBoundary, messagesToTranscript, trimMessagesSafely } from "langgraph-tool-repair";
import {
  composePreModelHooks,
  summarizationNode,
  summarizationHook,
  summarizeHistory,
} from "langgraph-tool-repair/langgraph";
import { summarizationMiddleware } from "langgraph-tool-repair/langchain";
// #endregion docs

check(
  [
    findSafeSummarizationBoundary,
    messagesToTranscript,
    trimMessagesSafely,
    composePreModelHooks,
    summarizationNode,
    summarizationHook,
    summarizeHistory,
    summarizationMiddleware,
  ].every((f) => typeof f === "function"),
  "the summarization API",
);
