/**
 * How every integration surface reports what it repaired: the caller's `onRepair`, then one LangChain custom
 * event per repair, so repairs show in `streamEvents` (`on_custom_event`) and in LangSmith traces.
 *
 * Surfaces call the engine WITHOUT `onRepair` and hand the repairs here, so each repair is reported once.
 */
import { dispatchCustomEvent } from "@langchain/core/callbacks/dispatch";
import { ensureConfig, getCallbackManagerForConfig, type RunnableConfig } from "@langchain/core/runnables";
import { errorText } from "../errors";
import type { ToolCallRepair } from "../types";

/** Name of the custom event (and of the run that carries it outside a node); its payload is the repair. */
export const TOOL_CALL_REPAIR_EVENT = "tool_call_repair";

/** Name of the custom event sent when a surface could not repair (it then passes the history on unchanged). */
export const TOOL_CALL_REPAIR_ERROR_EVENT = "tool_call_repair_error";

export interface RepairReporting {
  /** Called once per repair, in order. Nothing is logged by this package. */
  onRepair?: (repair: ToolCallRepair) => void;
  /**
   * Called when a surface could not repair a history (input it cannot read, or a bug of ours). The surface
   * then lets the history through unchanged rather than fail the user's run. Also sent as the custom event
   * `"tool_call_repair_error"`.
   */
  onError?: (error: unknown) => void;
}

/**
 * Calls `options.onRepair` for each repair, then dispatches each as a custom event. Inside a run (a node, a
 * middleware hook) the events belong to that run. A checkpointer is handed the graph's callbacks but not its
 * run id, so there the events go under a short run of their own named `tool_call_repair`. With no callbacks
 * at all nothing is dispatched; a failing handler never fails the caller.
 */
export async function reportRepairs(
  repairs: readonly ToolCallRepair[],
  options: RepairReporting = {},
  config?: RunnableConfig,
): Promise<void> {
  if (repairs.length === 0) return;
  if (options.onRepair)
    for (const repair of repairs) {
      try {
        deliverRepair(options.onRepair, repair, config);
      } catch {
        // A reporting callback must not undo or fail the repair it reports.
      }
    }
  try {
    await dispatchRepairs(repairs, ensureConfig(config));
  } catch {
    // Tracing is best effort: the repair itself stands.
  }
}

const THREAD_SCOPED = Symbol("langgraph-tool-repair.reportedOnce");

/** A setup's `onRepair` (see {@link reportedOnce}): also callable with the thread a repair belongs to. */
type ThreadScopedReporter = ((repair: ToolCallRepair) => void) & {
  [THREAD_SCOPED]: (repair: ToolCallRepair, thread: string) => void;
};

/** The thread of the run (the config given, or the one LangChain carries in async context); "" when none. */
function threadOf(config?: RunnableConfig): string {
  try {
    const id: unknown = ensureConfig(config).configurable?.thread_id;
    return typeof id === "string" || typeof id === "number" ? String(id) : "";
  } catch {
    return "";
  }
}

/**
 * `onRepair` for several surfaces that work on the same threads (a setup's middleware and checkpointer): the
 * same repair of the same call in the same thread (the request's placeholder, then the stored one) reaches the
 * caller once. What makes it the same: the thread, the action and the call id, so a server that reuses ids like
 * `call_0` has each thread's repair reported (within one thread, a reused id is renamed by the engine's
 * structural repair, so it is another call). Not the message index: a model's input can hold a system prompt
 * the stored thread does not, which moves every index by one. The memory of what was reported is bounded (the
 * oldest 1,000 go first).
 */
export function reportedOnce(
  onRepair: ((repair: ToolCallRepair) => void) | undefined,
): ((repair: ToolCallRepair) => void) | undefined {
  if (!onRepair) return undefined;
  const seen = new Set<string>();
  const report = (repair: ToolCallRepair, thread: string) => {
    if (repair.toolCallId !== undefined) {
      const key = `${thread}\u0000${repair.action}\u0000${repair.toolCallId}`;
      if (seen.has(key)) return;
      if (seen.size >= 1000) seen.delete(seen.values().next().value as string);
      seen.add(key);
    }
    onRepair(repair);
  };
  return Object.assign((repair: ToolCallRepair) => report(repair, threadOf()), {
    [THREAD_SCOPED]: report,
  }) satisfies ThreadScopedReporter;
}

/** Hands one repair to `onRepair`, with the thread it belongs to when `onRepair` is a setup's ({@link reportedOnce}). */
export function deliverRepair(
  onRepair: (repair: ToolCallRepair) => void,
  repair: ToolCallRepair,
  config?: RunnableConfig,
): void {
  const scoped = (onRepair as Partial<ThreadScopedReporter>)[THREAD_SCOPED];
  if (scoped) scoped(repair, threadOf(config));
  else onRepair(repair);
}

/**
 * Runs a surface's engine call; when it throws, reports the error (`onError`, then the custom event) and
 * returns `fallback`, so the safety net never becomes the thing that fails.
 */
export async function orFallback<T>(
  work: () => T | Promise<T>,
  fallback: T,
  options: RepairReporting = {},
  config?: RunnableConfig,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    try {
      options.onError?.(error);
    } catch {
      // the report of a failure must not fail either
    }
    await dispatchInRun(TOOL_CALL_REPAIR_ERROR_EVENT, { message: errorText(error) }, config);
    return fallback;
  }
}

/** A custom event for the run the code is in (the config given, or LangChain's async context); best effort, never throws. */
export async function dispatchInRun(name: string, payload: unknown, config?: RunnableConfig): Promise<void> {
  try {
    const manager = await getCallbackManagerForConfig(ensureConfig(config));
    if (manager && manager.handlers.length > 0 && manager.getParentRunId() !== undefined)
      await dispatchCustomEvent(name, payload, config);
  } catch {
    // best effort
  }
}

/**
 * The graph surfaces' front: `fallback` itself, synchronously, when the history is clean (no promise on the hot
 * path); otherwise the repair, or `fallback` when anything fails (the clean check included).
 */
export function unlessClean<T>(
  isClean: () => boolean,
  repair: () => Promise<T>,
  fallback: T,
  options: RepairReporting,
  config?: RunnableConfig,
): T | Promise<T> {
  let clean: boolean;
  try {
    clean = isClean();
  } catch (error) {
    return orFallback(() => Promise.reject(error), fallback, options, config);
  }
  return clean ? fallback : orFallback(repair, fallback, options, config);
}

async function dispatchRepairs(repairs: readonly ToolCallRepair[], config: RunnableConfig): Promise<void> {
  const manager = await getCallbackManagerForConfig(config);
  if (!manager || manager.handlers.length === 0) return;
  if (manager.getParentRunId() !== undefined) {
    for (const repair of repairs) await dispatchCustomEvent(TOOL_CALL_REPAIR_EVENT, repair, config);
    return;
  }
  const run = await manager.handleChainStart(
    { lc: 1, type: "not_implemented", id: ["langgraph_tool_repair", TOOL_CALL_REPAIR_EVENT] },
    { repairs },
    undefined,
    undefined,
    undefined,
    undefined,
    TOOL_CALL_REPAIR_EVENT,
  );
  const inRun: RunnableConfig = { ...config, callbacks: run.getChild() };
  for (const repair of repairs) await dispatchCustomEvent(TOOL_CALL_REPAIR_EVENT, repair, inRun);
  await run.handleChainEnd({ repairs: repairs.length });
}
