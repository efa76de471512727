/**
 * `langgraph-tool-repair/langchain`: middleware for langchain's `createAgent`. Needs `langchain` (an optional
 * peer of the package, required by this entry point).
 *
 * @module langgraph-tool-repair/langchain
 */
export { toolCallRepair, type ToolCallRepairOptions, type ToolCallRepairSetup } from "./integrations/setup-langchain";
export {
  toolCallRepairMiddleware,
  TOOL_CALL_REPAIR_MIDDLEWARE_NAME,
  type ToolCallRepairMiddlewareOptions,
} from "./integrations/middleware";
export {
  promptedStructuredOutputMiddleware,
  type PromptedStructuredOutputMiddlewareOptions,
} from "./structured/middleware";
export {
  summarizationMiddleware,
  SUMMARIZATION_MIDDLEWARE_NAME,
  type SummarizationMiddlewareOptions,
  type ContextSize,
  type KeepSize,
} from "./integrations/summarization-middleware";
