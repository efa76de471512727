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
  RepairContext,
  RepairSurface,
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
export { forceRepairToolCalls, type RejectionDiagnosis } from "./recovery/force-repair";
export { withRequestRepair, type RequestRepairOptions } from "./integrations/model-wrapper";

export {
  findSafeSummarizationBoundary,
  type BoundaryOptions,
  type TokenCounter,
} from "./summarize/boundary";
export { messagesToTranscript } from "./summarize/summarize";
export { trimMessagesSafely, type TrimMessagesOptions } from "./summarize/trim";

/** `ModelDescription`, and the types `ModelFacts` and `StrategyOptions` refer to. */
export type { ModelDescription, ClaudeVersion, Env } from "./models/detect";
export type { OutputFormat, JsonSchema, Validation } from "./structured/format";
export {
  PromptedStructuredOutputError,
  type StructuredAttempt,
  type StructuredResponseReport,
} from "./structured/parse";
export {
  structuredOutputStrategies,
  type StructuredOutputStrategy,
  type StrategyRule,
  type ModelFacts,
  type StrategyChoice,
  type StrategyOptions,
  type StructuredOutputFallback,
} from "./structured/strategy";
export { bedrockOutputConfig, withBedrockOutputConfig } from "./structured/constrained";
