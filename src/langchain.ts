/**
 * `langgraph-tool-repair/langchain`: middleware for langchain's `createAgent`. Needs `langchain` (an optional
 * peer of the package, required by this entry point).
 *
 * @module langgraph-tool-repair/langchain
 */
export {
  toolCallRepair,
  type ToolCallRepairOptions,
  type ToolCallRepairSetup,
  toolCallRepairMiddleware,
  type ToolCallRepairMiddlewareOptions,
} from "./integrations/middleware";
export {
  promptedStructuredOutputMiddleware,
  type PromptedStructuredOutputMiddlewareOptions,
} from "./structured/middleware";
export {
  summarizationMiddleware,
  type SummarizationMiddlewareOptions,
  type ContextSize,
  type KeepSize,
} from "./integrations/summarization-middleware";
export { TOOL_CALL_REPAIR_EVENT, type RepairReporting } from "./integrations/events";
