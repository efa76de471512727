/**
 * `repairThread(graph, config)`: heals one stored thread through the graph's own API, so it works with any
 * checkpointer. `getState` already folds in the pending writes of tasks that finished before a run stopped,
 * so their real results are kept; the fix (structural repairs only) is written with `updateState` as the
 * graph's tools node, which closes the open exchange and hands the turn back to the model. Dry run by default.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { findToolCallProblems } from "../engine";
import { expectedInput, readingInput } from "../errors";
import { resumableExchange } from "../messages/exchanges";
import type { ToolCallProblem, ToolCallRepair } from "../types";
import { reportRepairs, type RepairReporting } from "./events";
import { createStoredHealer, type StoredRepairOptions } from "./heal";
import { replaceAllMessages } from "./state-update";
import { checkSurfaceOptions } from "./surface-options";

/** What `repairThread` needs of a graph: a compiled `StateGraph`, `createReactAgent` or `createAgent` all fit. */
export interface ThreadGraph {
  getState(config: RunnableConfig): Promise<{ values: unknown }>;
  updateState(config: RunnableConfig, values: Record<string, unknown>, asNode?: string): Promise<RunnableConfig>;
}

export interface RepairThreadOptions extends StoredRepairOptions, RepairReporting {
  /** State key holding the messages. Default `"messages"`. */
  messagesKey?: string;
  /** Only report what would be repaired. Default true: pass `false` to write the fix. */
  dryRun?: boolean;
  /**
   * Close the exchange the thread ends on (default true: the thread gets a new message next, which abandons
   * those calls). `false` keeps it for a resume that runs the tools (`invoke(null)`).
   */
  closeOpen?: boolean;
  /**
   * Node the fix is written as, when it closes the thread's calls (so the model runs next). Default: the graph's
   * tool node (a `ToolNode`, found in the compiled graph); required when the graph has none or several.
   */
  asNode?: string;
}

export interface RepairThreadReport {
  /** What is wrong with the stored thread (an open last exchange counts unless `closeOpen: false`). */
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

/** The graph's nodes (a compiled StateGraph, or the graph inside a createAgent agent). */
function nodesOf(graph: object): Record<string, { bound?: unknown }> {
  const g = graph as { nodes?: unknown; graph?: { nodes?: unknown } };
  const nodes = g.nodes ?? g.graph?.nodes;
  return typeof nodes === "object" && nodes !== null ? (nodes as Record<string, { bound?: unknown }>) : {};
}

const GRAPH = "a compiled graph (StateGraph.compile(), createReactAgent, createAgent)";

/** The one node that runs tools (LangGraph's and langchain's ToolNode), or undefined when there is none or several. */
export function toolNodeName(graph: unknown): string | undefined {
  if (typeof graph !== "object" || graph === null) throw expectedInput("toolNodeName", "graph", GRAPH, graph);
  return readingInput(() => toolNodeOf(graph), "toolNodeName", "graph");
}

function toolNodeOf(graph: object): string | undefined {
  const names = Object.entries(nodesOf(graph))
    .filter(
      ([, node]) => (node?.bound as { constructor?: { name?: unknown } } | undefined)?.constructor?.name === "ToolNode",
    )
    .map(([name]) => name);
  return names.length === 1 ? names[0] : undefined;
}

/** Options of one kind each, checked before the graph is asked anything (the surfaces' one option check). */
function checkedOptions(options: unknown): RepairThreadOptions {
  const kinds = { booleans: ["dryRun", "closeOpen"], strings: ["messagesKey", "asNode"] };
  return readingInput(
    () => checkSurfaceOptions<RepairThreadOptions>("repairThread", options, kinds),
    "repairThread",
    "options",
  );
}

/** `graph` has the two methods `repairThread` calls, read once (a getter that throws is an input error). */
function threadGraphOf(graph: unknown): ThreadGraph {
  const fn = "repairThread";
  if (typeof graph !== "object" || graph === null) throw expectedInput(fn, "graph", GRAPH, graph);
  const methods = readingInput(
    () => ({ getState: (graph as ThreadGraph).getState, updateState: (graph as ThreadGraph).updateState }),
    fn,
    "graph",
  );
  for (const [name, method] of Object.entries(methods))
    if (typeof method !== "function") throw expectedInput(fn, `graph.${name}`, `a function (${GRAPH} has it)`, method);
  return graph as ThreadGraph;
}

export async function repairThread(
  graph: ThreadGraph,
  config: RunnableConfig,
  options: RepairThreadOptions = {},
): Promise<RepairThreadReport> {
  const fn = "repairThread";
  threadGraphOf(graph);
  if (typeof config !== "object" || config === null)
    throw expectedInput(fn, "config", "a RunnableConfig ({ configurable: { thread_id } })", config);
  const {
    messagesKey = "messages",
    dryRun = true,
    closeOpen = true,
    asNode,
    onRepair,
    onError,
    ...repairOptions
  } = checkedOptions(options);
  const state = await graph.getState(config);
  const stored = readingInput(
    () => {
      const values = (state?.values ?? {}) as Record<string, unknown>;
      return typeof values === "object" && values !== null ? values[messagesKey] : undefined;
    },
    fn,
    "the graph's state",
  );
  if (!Array.isArray(stored)) return { problems: [], repairs: [], messages: [], applied: false };
  const messages = stored as BaseMessage[];

  const problems = findToolCallProblems(messages, {
    provider: repairOptions.provider,
    level: "structural",
    trailingIsProblem: closeOpen,
  });
  const healed = createStoredHealer(repairOptions).heal(messages, { closeOpen });
  const report: RepairThreadReport = { problems, repairs: healed.repairs, messages: healed.messages, applied: false };
  if (dryRun || healed.repairs.length === 0) return report;

  // Closing the calls hands the turn back to the model: written as the tool node. An open exchange left for a
  // resume is written as whichever node LangGraph picks (the last writer), so the tools still run.
  let writer = asNode;
  if (writer === undefined && resumableExchange(healed.messages) === undefined) {
    writer = toolNodeName(graph);
    if (writer === undefined)
      throw new TypeError(
        "langgraph-tool-repair: repairThread: this graph has no single ToolNode to write the fix as; " +
          "pass `asNode` (the node that runs your tools)",
      );
  }
  const written = await graph.updateState(config, { [messagesKey]: replaceAllMessages(healed.messages) }, writer);
  await reportRepairs(healed.repairs, { onRepair, onError }, config);
  return { ...report, applied: true, config: written };
}
