/**
 * `langgraph-tool-repair/langgraph`: the LangGraph surfaces. Needs `@langchain/langgraph` (an optional peer
 * of the package, required by this entry point).
 *
 * @module langgraph-tool-repair/langgraph
 */
export { replaceAllMessages } from "./integrations/state-update";
export {
  toolCallRepairKit,
  type ToolCallRepairKit,
  type ToolCallRepairKitOptions,
  toolCallRepairNode,
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
export {
  repairThread,
  type ThreadGraph,
  type RepairThreadOptions,
  type RepairThreadReport,
  type StoredRepairOptions,
} from "./threads/repair-thread";
export { TOOL_CALL_REPAIR_EVENT, type RepairReporting } from "./integrations/events";
export {
  summarizationNode,
  summarizationHook,
  summarizedMessagesReducer,
  type SummarizationUpdate,
  type SummarizationNodeOptions,
  type SummarizationNodeFunction,
} from "./integrations/summarization";
export {
  composePreModelHooks,
  type PreModelHookFunction,
  type PreModelHookResult,
  type PreModelHookUpdate,
} from "./integrations/compose-hooks";
export {
  summarizeHistory,
  type KeepSize,
  type SummarizationOptions,
  type SummarizationTrigger,
  type SummarizerModel,
} from "./summarize/summarize";
export { withPromptedStructuredOutput, type PromptedStructuredOutputOptions } from "./structured/react-agent";
