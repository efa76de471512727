export {
  approximateTokenCounter,
  findSafeSummarizationBoundary,
  leadingSystemCount,
  moveCutBeforeCalls,
  pairToolCalls,
  splitAtBoundary,
  type BoundaryOptions,
  type SummarizationSplit,
  type TokenCounter,
  type ToolCallPairing,
} from "./boundary";
export { callsOf, contentText, messagesToTranscript, type TranscriptCall } from "./transcript";
export { safeWindow, trimMessagesSafely, type KeptWindow, type TrimMessagesOptions } from "./trim";
export {
  buildSummaryMessages,
  DEFAULT_ACKNOWLEDGEMENT,
  DEFAULT_SUMMARY_INSTRUCTIONS,
  DEFAULT_SUMMARY_PREFIX,
  defaultSummaryPrompt,
  isSummaryMessage,
  summarizationHook,
  summarizationNode,
  summarizeHistory,
  SUMMARY_SOURCE,
  thresholdPassed,
  type SummarizationOptions,
  type SummarizationTrigger,
  type SummarizationUpdate,
  type SummarizerModel,
} from "./node";
