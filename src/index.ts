/**
 * langgraph-tool-repair: find and repair broken tool-call histories in LangChain.js / LangGraph.js threads.
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
