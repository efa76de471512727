import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { ToolCallProblem, ToolCallRepair } from "langgraph-tool-repair";
import type { RepairReporting, StoredRepairOptions } from "langgraph-tool-repair/langgraph";
import type * as api from "langgraph-tool-repair/langgraph";
import type { Same } from "./_types";

// #region docs
declare function repairThread(
  graph: ThreadGraph, // a compiled graph with a checkpointer: getState and updateState
  config: RunnableConfig, // { configurable: { thread_id } }: without a string thread_id, an input error
  options?: RepairThreadOptions,
): Promise<RepairThreadReport>;

// StoredRepairOptions: provider, orphanCalls, orphanResults, invalidCalls, systemMessages, syntheticResultText
// RepairReporting: onRepair (called only when the fix is written), onError
interface RepairThreadOptions extends StoredRepairOptions, RepairReporting {
  dryRun?: boolean; // default true: report only
  closeOpen?: boolean; // default true: close the exchange the thread ends on; false keeps it for a resume
  messagesKey?: string; // default "messages"
  asNode?: string; // default: the graph's ToolNode (see below)
}

interface RepairThreadReport {
  problems: ToolCallProblem[]; // structural; an open last exchange counts unless closeOpen: false
  repairs: ToolCallRepair[];
  messages: BaseMessage[]; // the repaired list
  applied: boolean; // whether the fix was written
  config?: RunnableConfig; // of the checkpoint the fix wrote
  status?: "no_messages"; // no message list under messagesKey (an unknown thread, another key): nothing judged
}
// #endregion docs

type ThreadGraph = api.ThreadGraph;
export const signatureMatches: [
  Same<RepairThreadOptions, api.RepairThreadOptions>,
  Same<keyof RepairThreadOptions, keyof api.RepairThreadOptions>,
  Same<RepairThreadReport, api.RepairThreadReport>,
  Same<keyof RepairThreadReport, keyof api.RepairThreadReport>,
  Same<typeof repairThread, typeof api.repairThread>,
] = [true, true, true, true, true];
