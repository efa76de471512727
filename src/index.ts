/**
 * langgraph-tool-repair: find and repair broken tool-call histories in LangChain.js / LangGraph.js threads.
 * This entry point needs only `@langchain/core`. The LangGraph surfaces are in `langgraph-tool-repair/langgraph`,
 * the `createAgent` middleware in `langgraph-tool-repair/langchain`.
 *
 * @module langgraph-tool-repair
 */
export {
  createRepairer,
  repairToolCalls,
  findToolCallProblems,
  isCleanHistory,
  profileFor,
  type Repairer,
  type ResolvedOptions,
  type ProviderProfile,
  type SyntheticText,
} from "./engine";
export {
  toolCallIdsOf,
  readToolCallRefs,
  repairMarkerOf,
  isSyntheticResult,
  isSyntheticMessage,
  REPAIR_MARKER_KEY,
  type CallBlockFormat,
  type RepairMarker,
  type ToolCallLocation,
  type ToolCallRef,
} from "./messages/inspect";
export { trailingOpenExchange, resumableExchange, type OpenExchange } from "./messages/exchanges";
export { coerceMessage } from "./messages/coerce";
export type { Dict } from "./values";
export { ToolCallRepairInputError } from "./errors";
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
  type GeminiValidationOptions,
  type OpenAIResponsesValidationOptions,
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
export { withRequestRepair, repairsRequests, type RequestRepairOptions } from "./integrations/model-wrapper";

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
  providerOfModel,
  describeModels,
  thinkingEnabled,
  modelIdOf,
  claudeVersionOf,
  isModelChooser,
  envSelectsBedrock,
  type BedrockDetectOptions,
  type ClaudeVersion,
  type ModelDescription,
  type Env,
} from "./models/detect";
export { formatInstructions, correctionMessage } from "./structured/instructions";
export {
  outputFormatOf,
  isOutputFormat,
  type OutputFormat,
  type JsonSchema,
  type Validation,
} from "./structured/format";
export {
  parseStructuredAnswer,
  answerCandidates,
  PromptedStructuredOutputError,
  type ParsedAnswer,
  type AnswerChoice,
  type Candidate,
  type CandidateSource,
  type StructuredAttempt,
} from "./structured/parse";
export {
  STRUCTURED_OUTPUT_TABLE,
  structuredOutputStrategies,
  type StructuredOutputStrategy,
  type StrategyRule,
  type ModelFacts,
  type StrategyChoice,
  type StrategyOptions,
} from "./structured/strategy";
export { readableText, type FinalMessageOption, type StructuredResponseReport } from "./structured/final-message";
export { bedrockOutputConfig, withBedrockOutputConfig, strictJsonSchema } from "./structured/constrained";
export { STRUCTURED_OUTPUT_FALLBACK_EVENT, type StructuredOutputFallback } from "./structured/fallback";
