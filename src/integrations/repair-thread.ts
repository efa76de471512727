/**
 * `repairThread(graph, config)`: heals one stored thread through the graph's own API, so it works with any
 * checkpointer. `getState` already folds in the pending writes of tasks that finished before a run stopped,
 * so their real results are kept; the fix is written with `updateState` as the tools node, which closes the
 * open exchange and hands the turn back to the model. Dry run by default.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { findToolCallProblems } from "../engine/problems";
import { repairToolCalls } from "../engine/repair";
import type { RepairOptions, ToolCallProblem, ToolCallRepair } from "../types";
import { reportRepairs, type RepairReporting } from "./events";
import { healStoredMessages, openLastExchange } from "./heal";
import { replaceAllMessages } from "./node";

/** What `repairThread` needs of a graph: a compiled `StateGraph`, `createReactAgent` or `createAgent` all fit. */
export interface ThreadGraph {
  getState(config: RunnableConfig): Promise<{ values: unknown }>;
  updateState(config: RunnableConfig, values: Record<string, unknown>, asNode?: string): Promise<RunnableConfig>;
}

export interface RepairThreadOptions extends Omit<RepairOptions, "onRepair">, RepairReporting {
  /** State key holding the messages. Default `"messages"`. */
  messagesKey?: string;
  /** Only report what would be repaired. Default true: pass `false` to write the fix. */
  dryRun?: boolean;
  /**
   * Node the fix is written as. Default `"tools"` when the thread no longer ends on open calls (the model
   * runs next); otherwise LangGraph picks the node that wrote last, leaving the pending tools to run.
   */
  asNode?: string;
}

export interface RepairThreadReport {
  /** What is wrong with the stored thread (an open last exchange counts unless `trailing: "keep"`). */
  problems: ToolCallProblem[];
  /** What was (or, in a dry run, would be) repaired. */
  repairs: ToolCallRepair[];
  /** The healed list; the stored list itself when nothing is wrong. */
  messages: BaseMessage[];
  /** Whether the fix was written. */
  applied: boolean;
  /** Config of the checkpoint written by the fix. */
  config?: RunnableConfig;
}

export async function repairThread(
  graph: ThreadGraph,
  config: RunnableConfig,
  options: RepairThreadOptions = {},
): Promise<RepairThreadReport> {
  const { messagesKey = "messages", dryRun = true, asNode, onRepair, ...repairOptions } = options;
  const state = await graph.getState(config);
  const values = (state?.values ?? {}) as Record<string, unknown>;
  const stored = values[messagesKey];
  if (!Array.isArray(stored)) return { problems: [], repairs: [], messages: [], applied: false };
  const messages = stored as BaseMessage[];

  const keepOpen = repairOptions.trailing === "keep";
  const problems = findToolCallProblems(messages, { provider: repairOptions.provider, trailingIsProblem: !keepOpen });
  // Closing: the engine as is (pending results are already in the list). Keeping: the storage rule.
  const healed = keepOpen ? healStoredMessages(messages, repairOptions) : repairToolCalls(messages, repairOptions);
  const report: RepairThreadReport = { problems, repairs: healed.repairs, messages: healed.messages, applied: false };
  if (dryRun || healed.repairs.length === 0) return report;

  const writer = asNode ?? (openLastExchange(healed.messages).index >= 0 ? undefined : "tools");
  const written = await graph.updateState(
    config,
    { [messagesKey]: replaceAllMessages(healed.messages) },
    writer,
  );
  await reportRepairs(healed.repairs, { onRepair }, config);
  return { ...report, applied: true, config: written };
}
