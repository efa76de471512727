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
  type Repairer,
  type ResolvedOptions,
  type SyntheticText,
} from "./engine";
export {
  isSyntheticResult,
  repairMarkerOf,
  type RepairMarker,
  type ToolCallLocation,
  type ToolCallRef,
} from "./messages/inspect";
export type { Dict } from "./values";
export { ToolCallRepairInputError } from "./errors";
export type {
  Provider,
  RepairLevel,
  ToolCallProblemKind,
  ToolCallProblem,
  ToolCallRepairAction,
  ToolRunState,
  ToolCallRepair,
  OrphanCallStrategy,
  TrailingStrategy,
  OrphanResultStrategy,
  InvalidCallStrategy,
  SystemMessageStrategy,
  RepairOptions,
  FindOptions,
  RepairResult,
  RejectingProvider,
  RejectionKind,
  ProviderRejection,
} from "./types";

export { parseToolPairingError, type ParseToolPairingErrorOptions } from "./recovery/parse-error";
export { forceRepairToolCalls, type ForceRepairOptions } from "./recovery/force-repair";
export type { RejectionDiagnosis } from "./recovery/retry";
export { withRequestRepair, type RequestRepairOptions } from "./integrations/model-wrapper";

export {
  findSafeSummarizationBoundary,
  type BoundaryOptions,
  type TokenCounter,
} from "./summarize/boundary";
export { messagesToTranscript } from "./summarize/summarize";
export { trimMessagesSafely, type TrimMessagesOptions } from "./summarize/trim";

export type { ModelDescription } from "./models/detect";
export type { OutputFormat, JsonSchema, Validation } from "./structured/format";
export { PromptedStructuredOutputError, type StructuredAttempt } from "./structured/parse";
export {
  structuredOutputStrategies,
  type StructuredOutputStrategy,
  type StrategyRule,
  type ModelFacts,
  type StrategyChoice,
  type StrategyOptions,
} from "./structured/strategy";
/** The types `ModelFacts` and `StrategyOptions` refer to. */
export type { ClaudeVersion, Env } from "./models/detect";
export type { StructuredResponseReport } from "./structured/parse";
export { bedrockOutputConfig, withBedrockOutputConfig } from "./structured/constrained";
export type { StructuredOutputFallback } from "./structured/strategy";
