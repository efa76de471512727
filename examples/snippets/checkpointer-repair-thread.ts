import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { RepairOptions, ToolCallProblem, ToolCallRepair } from "langgraph-tool-repair";
import type * as api from "langgraph-tool-repair/langgraph";
import type { Same } from "./_types";

// #region docs
declare function repairThread(
  graph: ThreadGraph, // a compiled graph with a checkpointer: getState and updateState
  config: RunnableConfig, // { configurable: { thread_id } }
  options?: RepairThreadOptions,
): Promise<RepairThreadReport>;

interface RepairThreadOptions extends RepairOptions { // provider, trailing, orphanCalls, onRepair (called only when writing), ...
  dryRun?: boolean; // default true: report only
  messagesKey?: string; // default "messages"
  asNode?: string; // default "tools" (see below)
}

interface RepairThreadReport {
  problems: ToolCallProblem[];
  repairs: ToolCallRepair[];
  messages: BaseMessage[]; // the healed list
  applied: boolean; // whether the fix was written
  config?: RunnableConfig; // of the checkpoint the fix wrote
}
// #endregion docs

type ThreadGraph = api.ThreadGraph;
export const signatureMatches: [
  Same<RepairThreadOptions, api.RepairThreadOptions>,
  Same<RepairThreadReport, api.RepairThreadReport>,
  Same<typeof repairThread, typeof api.repairThread>,
] = [true, true, true];
