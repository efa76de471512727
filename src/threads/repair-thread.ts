/**
 * Repairing a STORED thread (checkpoint values, graph state), as opposed to a request about to be sent. The one
 * place that decides how a stored thread is judged and what a fix of it changes: the checkpointer wrapper,
 * `repairThread` (one thread through a compiled graph), `repairThreads` and the command all go through it.
 *
 * - Only structural repairs (the engine's `"structural"` level): calls without results, results without calls or
 *   in the wrong place, duplicate or missing ids, calls outside `tool_calls`. A stored thread keeps every message
 *   as it was written; how a request is shaped for one provider (merging user turns, placeholder turns, id
 *   pattern rewrites) stays a request-time concern, or it would bind the thread to one provider.
 * - The exchange a resume may still run is left alone.
 * - Real tool results that LangGraph threw away (pending writes of a discarded step) are put back instead of
 *   placeholders.
 */
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { createRepairer } from "../engine";
import { assertArray, assertMethods, atMessage, boundary, expectedInput } from "../errors";
import { reportRepairs, type RepairReporting } from "../integrations/events";
import { STORED_SURFACE_OPTIONS } from "../integrations/surface-options";
import { kind, option, readOptions } from "../options";
import { isMessage } from "../messages/coerce";
import { resumableExchange, trailingOpenExchange } from "../messages/exchanges";
import {
  isAssistant,
  isMarkedSyntheticResult,
  isNoResult,
  isToolResult,
  repairMarkerOf,
  resultIdOf,
  toolCallIdsOf,
} from "../messages/inspect";
import type { Provider, RepairLevel, RepairOptions, ToolCallProblem, ToolCallRepair } from "../types";
import { quoteValue, type Dict } from "../values";

// --- judging a stored thread ------------------------------------------------------------------------------------

/** What a checkpoint saver must have for the wrapper and the thread library (the methods they call). */
export const SAVER_METHODS = ["getTuple", "list", "put"] as const;
/**
 * What a scan (and `repairThread`, for a thread without messages) says of a stored thread:
 * - `clean`: nothing to repair.
 * - `broken`: structural problems (a call without its result, a result without its call or out of place,
 *   duplicate or missing ids, calls outside `tool_calls`); `repairThreads` stores a fix.
 * - `reshape`: structurally sound, but the provider needs the request shaped (e.g. Bedrock's alternating
 *   turns). That is done per request (toolCallRepairMiddleware / toolCallRepairNode) and never stored.
 * - `open`: ends on tool calls that may still be running: a resume runs them. Left alone.
 * - `no_messages`: the latest checkpoint has no message list under `messagesKey`.
 * - `unreadable`: the saver could not read the thread (a corrupt blob, an unknown serializer).
 */
export type ThreadStatus = "clean" | "broken" | "reshape" | "open" | "no_messages" | "unreadable";

/**
 * The problems of a stored thread for `provider` at `level`: `"structural"` (default), what a stored repair fixes;
 * `"request"`, request shaping included. One walk when clean (most threads), then every problem. An open last
 * exchange is one only with `openIsProblem` (a fix that closes it).
 */
export function storedProblems(
  messages: readonly BaseMessage[],
  provider: Provider = "strict",
  level: RepairLevel = "structural",
  openIsProblem = false,
) {
  // Made per call, so no walk state is shared through the module: about a microsecond, reading a thread a millisecond.
  const repairer = createRepairer({ provider, level, trailing: openIsProblem ? "answer" : "keep" });
  return repairer.isClean(messages) ? [] : repairer.find(messages);
}

/**
 * True when the history ends on an assistant message whose calls are not all answered and nothing but its own
 * results follows (the provider's view of an open exchange): the tools may still be pending, and a resume runs
 * them. Such an exchange is left open. One that a user message follows was abandoned by a new input and is closed.
 */
export function awaitsResume(messages: readonly BaseMessage[]) {
  return trailingOpenExchange(messages) !== undefined;
}

// --- putting real results back ----------------------------------------------------------------------------------

/**
 * Puts real results back: a placeholder of the same call (the package's or another library's) is replaced in
 * place; a call with no result gets
 * it right after its assistant message's block of results. Calls that already have a real result are left alone.
 * Each is reported as a `salvaged_result` repair (a marked placeholder that a surface made knowing more, as
 * `synthesized_result`). The same array when none is put back.
 */
export function putBackResults(messages: BaseMessage[], salvage: ReadonlyMap<string, ToolMessage>) {
  const answered = new Set<string>();
  const syntheticAt = new Map<unknown, number>();
  const idOf = (m: BaseMessage) => (isToolResult(m) ? resultIdOf(m) : undefined);
  messages.forEach((m, i) => {
    const id = idOf(m);
    if (id !== undefined && salvage.has(id)) isNoResult(m) ? syntheticAt.set(id, i) : answered.add(id);
  });
  const out: BaseMessage[] = [];
  const repairs: ToolCallRepair[] = [];
  // index: where the call's message (or the replaced placeholder) is in the input, for the report.
  const putBack = (toolCallId: string, index: number) => {
    const result = salvage.get(toolCallId)!;
    out.push(result);
    answered.add(toolCallId);
    // A placeholder a surface made knowing more than the engine (a call the user never approved).
    const toolRun = isMarkedSyntheticResult(result) && repairMarkerOf(result)?.toolRun;
    repairs.push({
      problem: "orphan_call",
      action: toolRun ? "synthesized_result" : "salvaged_result",
      index,
      toolCallId,
      ...(result.name && { toolName: result.name }),
      ...(toolRun && { toolRun }),
      detail: toolRun
        ? `synthetic error result (${toolRun.replace("_", " ")}) added for ${toolCallId}`
        : `real result of call ${toolCallId} put back from the pending writes of a discarded step`,
    });
  };
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const id = idOf(m);
    if (syntheticAt.get(id) === i && !answered.has(id!)) {
      putBack(id!, i);
      continue;
    }
    out.push(m);
    if (!isAssistant(m)) continue;
    const missing = toolCallIdsOf(m).filter((c) => salvage.has(c) && !answered.has(c) && !syntheticAt.has(c));
    const at = i;
    if (missing.length) while (i + 1 < messages.length && isToolResult(messages[i + 1])) out.push(messages[++i]);
    for (const c of missing) putBack(c, at);
  }
  return { messages: repairs.length ? out : messages, salvaged: repairs.map((r) => r.toolCallId!), repairs };
}

// --- the stored repair ------------------------------------------------------------------------------------------

/** Engine options a storage layer passes through (it decides `level` and `trailing` itself and reports repairs itself). */
export type StoredRepairOptions = Omit<RepairOptions, "trailing" | "onRepair" | "level" | "toolsInRequest">;

/** What one stored repair knows about the thread beyond its messages. */
export interface StoredRepairContext {
  /**
   * Close the exchange the history ends on (a new input abandoned it). Otherwise the last exchange is kept as it
   * is whenever a resume may still run it.
   */
  closeOpen?: boolean;
  /**
   * Calls known to be abandoned: the last exchange is not protected when its unanswered calls are all in this set
   * (a run that discarded them keeps writing its stale in-memory list).
   */
  abandoned?: ReadonlySet<string>;
  /** Real results to put back for calls that have none (or only a synthetic one). */
  salvage?: ReadonlyMap<string, ToolMessage>;
}

export interface StoredRepair {
  /** The input array itself when nothing changed. */
  messages: BaseMessage[];
  repairs: ToolCallRepair[];
  /** Calls whose real result was put back from `salvage`. */
  salvaged: string[];
}

/** Repairs stored histories under one set of options (the engine resolved once). */

/**
 * A repairer for stored histories. Clean histories cost one walk and return the very input array; a list holding
 * anything but LangChain messages is returned as it is (some other reducer's values). The last exchange is
 * protected unless `closeOpen` (or all its open calls are `abandoned`): when the repair of the whole list would
 * touch it, only the part before it is repaired.
 */
export function createStoredRepairer(options: StoredRepairOptions = {}) {
  // Structural repairs only; an orphan call further back is closed the user's way.
  const keeping = createRepairer({ ...options, level: "structural", trailing: "keep" });
  const closing = createRepairer({ ...options, level: "structural", trailing: options.orphanCalls ?? "answer" });
  return {
    /** The engine's options the repairs run with, resolved. */
    options: keeping.options,
    repair(messages: BaseMessage[], { closeOpen = false, abandoned, salvage }: StoredRepairContext = {}) {
      const engine = closeOpen ? closing : keeping;
      // Stored values that are not LangChain messages belong to some other reducer: never coerce them.
      if ((!salvage?.size && engine.isClean(messages)) || !messages.every(isMessage))
        return { messages, repairs: [], salvaged: [] };
      const put = putBackResults(messages, salvage ?? new Map());
      const working = put.messages;
      const last = closeOpen ? undefined : resumableExchange(working);
      let fixed = engine.repair(working);
      const tail = last ? working.slice(last.index) : [];
      // The last exchange may still be resumed: when the whole repair touches it, repair only what comes before it
      // (where that exchange is an orphan).
      if (
        last &&
        !last.unanswered.every((id) => abandoned?.has(id)) &&
        !tail.every((m, k) => fixed.messages.at(k - tail.length) === m)
      ) {
        const head = closing.repair(working.slice(0, last.index));
        fixed = { messages: head.repairs.length ? [...head.messages, ...tail] : working, repairs: head.repairs };
      }
      return { messages: fixed.messages, repairs: [...put.repairs, ...fixed.repairs], salvaged: put.salvaged };
    },
  };
}

export interface RepairStoredMessagesOptions {
  /** Real results of calls that have none (pending writes of a discarded step), put back instead of placeholders. */
  salvage?: ReadonlyMap<string, ToolMessage>;
}

/**
 * Repairs a stored thread's messages the way every offline fix does (`repairThreads`, the command): structurally,
 * keeping an exchange that awaits a resume, closing one that a new input abandoned, with the real results from
 * `salvage` where the tools had finished. Pure: the input is never changed, and comes back itself when clean.
 */
export const repairStoredMessages = boundary(
  "repairStoredMessages",
  (messages: BaseMessage[], options: RepairStoredMessagesOptions = {}): StoredRepair => {
    const fn = "repairStoredMessages";
    // A list of LangChain messages as the saver revives them: anything else (a hole, `null`, a plain object) is an
    // input error naming its index, never a list silently returned unchanged.
    assertArray(messages, fn);
    for (const [i, m] of messages.entries())
      if (!isMessage(m))
        throw atMessage(i, i in messages ? `is ${quoteValue(m)}, not a LangChain message` : "is a hole, not a message");
    const { salvage } = readOptions<RepairStoredMessagesOptions>(options, fn, {
      salvage: kind("a Map of call ids to their ToolMessages", (v) => v instanceof Map),
    });
    return createStoredRepairer().repair(messages, { closeOpen: !awaitsResume(messages), salvage });
  },
);

// --- one thread through a compiled graph ------------------------------------------------------------------------

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
  /** The repaired list; the stored list itself when nothing is wrong. */
  messages: BaseMessage[];
  /** Whether the fix was written. */
  applied: boolean;
  /** Config of the checkpoint written by the fix. */
  config?: RunnableConfig;
  /**
   * `"no_messages"` (as `scanThreads` says it) when the thread's state has no message list under `messagesKey`:
   * an unknown thread, nothing stored yet, or another key. Absent when there was a list to judge.
   */
  status?: "no_messages";
}

/**
 * The arguments of {@link repairThread}, checked before the graph is asked anything; the options as a snapshot.
 * A boundary of its own: what cannot be read at all (a throwing getter) is an input error naming `repairThread`.
 */
const repairThreadInput = boundary("repairThread", (graph: unknown, config: unknown, options: unknown) => {
  const fn = "repairThread";
  assertMethods(graph, fn, "graph", "a compiled graph (StateGraph.compile(), createReactAgent, createAgent)", [
    "getState",
    "updateState",
  ]);
  // Without a thread id the graph reads no thread, and an empty report would read as "clean".
  const threadId = (config as RunnableConfig | null)?.configurable?.thread_id;
  if (typeof threadId !== "string")
    throw expectedInput(fn, "config.configurable.thread_id", "a string (the id of the thread to repair)", threadId);
  return readOptions<RepairThreadOptions>(options, fn, {
    ...STORED_SURFACE_OPTIONS,
    dryRun: option.flag,
    closeOpen: option.flag,
    messagesKey: option.name,
    asNode: option.name,
  });
});

/**
 * Repairs one stored thread through the graph's own API, so it works with any checkpointer. `getState` already
 * folds in the pending writes of tasks that finished before a run stopped, so their real results are kept; the
 * fix (structural repairs only) is written with `updateState` as the graph's tools node, which closes the open
 * exchange and hands the turn back to the model. Dry run by default.
 */
export async function repairThread(
  graph: ThreadGraph,
  config: RunnableConfig,
  options: RepairThreadOptions = {},
): Promise<RepairThreadReport> {
  const input = repairThreadInput(graph, config, options);
  const { messagesKey = "messages", dryRun = true, closeOpen = true, asNode, onRepair, onError, ...rest } = input;
  // Built before the thread is read: a misspelt option is refused even when nothing is stored yet.
  const repairer = createStoredRepairer(rest);
  const stored = ((await graph.getState(config))?.values as Dict | undefined)?.[messagesKey];
  if (!Array.isArray(stored)) return { problems: [], repairs: [], messages: [], applied: false, status: "no_messages" };
  const { repairs, messages } = repairer.repair(stored, { closeOpen });
  const report = {
    problems: storedProblems(stored, rest.provider, "structural", closeOpen),
    repairs,
    messages,
    applied: false,
  };
  if (dryRun || !repairs.length) return report;
  // Closing the calls hands the turn back to the model: written as the tool node, the graph's one ToolNode (in a
  // compiled StateGraph, or in the graph inside a createAgent agent). An open exchange left for a resume is written
  // as whichever node LangGraph picks (the last writer), so the tools still run.
  let node = asNode;
  if (!node && !resumableExchange(messages)) {
    const g = graph as { nodes?: object; graph?: { nodes?: object } };
    const tools = Object.entries(g.nodes ?? g.graph?.nodes ?? {}).filter(
      ([, n]) => n?.bound?.constructor?.name === "ToolNode",
    );
    if (tools.length !== 1)
      throw new TypeError(
        "langgraph-tool-repair: repairThread: this graph has no single ToolNode to write the fix as; " +
          "pass `asNode` (the node that runs your tools)",
      );
    node = tools[0][0];
  }
  // Loaded here, not at the top: the state update needs @langchain/langgraph, which a job that only holds a saver
  // (the /threads entry, the CLI) does not load.
  const { replaceAllMessages } = await import("../integrations/state-update");
  const written = await graph.updateState(config, { [messagesKey]: replaceAllMessages(messages) }, node);
  await reportRepairs(repairs, input, { surface: "thread", provider: repairer.options.provider, config });
  return { ...report, applied: true, config: written };
}
