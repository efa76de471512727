/**
 * `langgraph-tool-repair/langgraph`: the LangGraph surfaces. Needs `@langchain/langgraph` (an optional peer
 * of the package, required by this entry point).
 */
export {
  toolCallRepairNode,
  NO_UPDATE,
  withUniqueIds,
  type ToolCallRepairNodeOptions,
  type ToolCallRepairNodeUpdate,
  type ToolCallRepairNodeFunction,
} from "./integrations/node";
export {
  toolCallRepairHook,
  type ToolCallRepairHookOptions,
  type ToolCallRepairHookUpdate,
  type ToolCallRepairHookFunction,
} from "./integrations/hook";
export { withToolCallRepair, type CheckpointerRepairOptions } from "./integrations/checkpointer";
export { repairThread, type ThreadGraph, type RepairThreadOptions, type RepairThreadReport } from "./integrations/repair-thread";
export { TOOL_CALL_REPAIR_EVENT, type RepairReporting } from "./integrations/events";
export {
  summarizationNode,
  summarizationHook,
  summarizeHistory,
  buildSummaryMessages,
  isSummaryMessage,
  defaultSummaryPrompt,
  thresholdPassed,
  SUMMARY_SOURCE,
  DEFAULT_ACKNOWLEDGEMENT,
  DEFAULT_SUMMARY_INSTRUCTIONS,
  DEFAULT_SUMMARY_PREFIX,
  type SummarizationOptions,
  type SummarizationTrigger,
  type SummarizationUpdate,
  type SummarizerModel,
} from "./summarize/node";
export { withPromptedStructuredOutput, type PromptedStructuredOutputOptions } from "./structured/react-agent";
