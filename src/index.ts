/**
 * langgraph-tool-repair: find and repair broken tool-call histories in LangChain.js / LangGraph.js threads.
 * This entry point needs only `@langchain/core`. The LangGraph surfaces are in `langgraph-tool-repair/langgraph`,
 * the `createAgent` middleware in `langgraph-tool-repair/langchain`.
 */
export { findToolCallProblems } from "./engine/problems";
export { repairToolCalls } from "./engine/repair";
export { isCleanHistory } from "./engine/clean";
export { profileFor, type ProviderProfile } from "./engine/profiles";
export {
  toolCallIdsOf,
  readToolCallRefs,
  repairMarkerOf,
  isSyntheticResult,
  REPAIR_MARKER_KEY,
  type RepairMarker,
  type ToolCallLocation,
  type ToolCallRef,
} from "./messages/inspect";
export { ToolCallRepairInputError, coerceMessage } from "./messages/coerce";
export { defaultSyntheticText } from "./messages/build";
export * from "./types";

export {
  validateOpenAIChatMessages,
  validateOpenAIResponsesInput,
  validateAnthropicMessages,
  validateBedrockConverse,
  validateGeminiContents,
  type PayloadViolation,
  type AnthropicValidationOptions,
  type BedrockValidationOptions,
} from "./validate";

export {
  payloadPositions,
  messageIndexAt,
  WIRE_FORMATS,
  type WireFormat,
  type PayloadPositions,
} from "./validate";
export { parseToolPairingError, type ParseToolPairingErrorOptions } from "./recovery/parse-error";
export { forceRepairToolCalls, type ForceRepairOptions } from "./recovery/force-repair";
export { rejectionDiagnosisOf, REJECTION_DIAGNOSIS_KEY, type RejectionDiagnosis } from "./recovery/retry";
export { withRejectionRecovery, recoversFromRejections, type RejectionRecoveryOptions } from "./integrations/model-recovery";

export {
  findSafeSummarizationBoundary,
  splitAtBoundary,
  approximateTokenCounter,
  type BoundaryOptions,
  type SummarizationSplit,
  type TokenCounter,
} from "./summarize/boundary";
export { messagesToTranscript } from "./summarize/transcript";
export { trimMessagesSafely, type TrimMessagesOptions } from "./summarize/trim";

export {
  isBedrockModel,
  cannotPrefill,
  needsPromptedStructuredOutput,
  type BedrockDetectOptions,
} from "./structured/detect";
export { formatInstructions } from "./structured/instructions";
export { parseStructuredAnswer, PromptedStructuredOutputError } from "./structured/parse";
