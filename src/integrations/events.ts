/**
 * How every integration surface reports what it repaired: the caller's `onRepair`, then one LangChain custom
 * event per repair, so repairs show in `streamEvents` (`on_custom_event`) and in LangSmith traces.
 *
 * Surfaces call the engine WITHOUT `onRepair` and hand the repairs here, so each repair is reported once.
 */
import { dispatchCustomEvent } from "@langchain/core/callbacks/dispatch";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { ensureConfig, getCallbackManagerForConfig, type RunnableConfig } from "@langchain/core/runnables";
import { errorText } from "../errors";
import type { ToolCallRepair } from "../types";
import type { BaseMessage } from "@langchain/core/messages";
import type { Repairer } from "../engine";

/** Name of the custom event (and of the run that carries it outside a node); its payload is the repair. */
export const TOOL_CALL_REPAIR_EVENT = "tool_call_repair";

/** Name of the custom event sent when a surface could not repair (it then passes the history on unchanged). */
const TOOL_CALL_REPAIR_ERROR_EVENT = "tool_call_repair_error";

type Run = Pick<CallbackManagerForLLMRun, "handleCustomEvent">;

/** The thread of a run: the config given, or the one LangChain carries in async context (a graph's); "" when none. */
export function threadOf(config?: RunnableConfig): string {
  const id: unknown = ensureConfig(config).configurable?.thread_id;
  return typeof id === "string" || typeof id === "number" ? String(id) : "";
}

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
 * Hands each repair to `options.onRepair`, in order, unless it was already handed, with the thread of `config`
 * (or of the run LangChain carries in async context); a callback that throws is ignored: it cannot undo or fail
 * the repair it reports. Then dispatches each as a custom event. Inside a run (a node, a middleware hook) the
 * events belong to that run. A checkpointer is handed the graph's callbacks but not its run id, so there the
 * events go under a short run of their own named `tool_call_repair`. Given the run of a model call (`run`), the
 * events belong to it (so to the model in traces and `streamEvents`). With no callbacks at all nothing is
 * dispatched; a failing handler never fails the caller.
 *
 * What a repair was made for (`scope`): the thread's stored messages (`stored`), or one model request (`request`:
 * shaping the stored thread does not keep, so made again on every call).
 *
 * Which repairs are the same, for one `onRepair`: the thread, the action and the call id. Not the message index:
 * a model's input can hold a system prompt the stored thread does not, which moves every index by one. A call id
 * reused by a server (`call_0` in every thread) is another thread's repair; within one thread a reused id is
 * renamed by the structural repair, so it is another call.
 * - Request shaping (`request`) is made again on every model call of a thread the store keeps provider-neutral
 *   (Bedrock's placeholder turn, a merge): reported once per thread and kind (and call).
 * - A stored repair is always reported; in a setup, once across its pieces.
 * - A setup's request placeholder for an abandoned call (`synthesized_result` in a request) is left to the piece
 *   that stores the thread, which reports what the call finally got: its real result (`salvaged_result`) or the
 *   placeholder. A placeholder for the exchange the history ends on is the request's alone (the stored thread
 *   keeps it open for the tools or a resume): reported as request shaping is, and a placeholder stored later for
 *   the same call is the same repair.
 * - Within the list, the second repair of a kind and call (a call and its result both written as text) is
 *   another repair.
 */
export async function reportRepairs(
  repairs: readonly ToolCallRepair[],
  options: RepairReporting = {},
  config?: RunnableConfig,
  scope: "stored" | "request" = "stored",
  run?: Run,
): Promise<void> {
  if (repairs.length === 0) return;
  const { onRepair } = options;
  const ensured = ensureConfig(config);
  if (onRepair) {
    const setup = SETUP in onRepair;
    const request = scope === "request";
    const thread = threadOf(ensured);
    const inList = new Map<string, number>();
    let seen = reported.get(onRepair);
    if (!seen) reported.set(onRepair, (seen = new Set()));
    for (const repair of repairs) {
      const { action, toolCallId } = repair;
      if (setup && request && action === "synthesized_result" && repair.problem !== "trailing_open_exchange") continue;
      if (request || (setup && toolCallId !== undefined)) {
        const key = `${thread}\u0000${action}\u0000${toolCallId ?? ""}`;
        const nth = (inList.get(key) ?? 0) + 1;
        inList.set(key, nth);
        if (!firstTime(seen, `${key}\u0000${nth}`)) continue;
      }
      try {
        onRepair(repair);
      } catch {
        // A reporting callback must not undo or fail the repair it reports.
      }
    }
  }
  try {
    if (run) {
      for (const repair of repairs) await run.handleCustomEvent(TOOL_CALL_REPAIR_EVENT, repair);
      return;
    }
    const manager = await getCallbackManagerForConfig(ensured);
    if (!manager?.handlers.length) return;
    const chain =
      manager.getParentRunId() === undefined
        ? await manager.handleChainStart(
            { lc: 1, type: "not_implemented", id: ["langgraph_tool_repair", TOOL_CALL_REPAIR_EVENT] },
            { repairs },
            undefined,
            undefined,
            undefined,
            undefined,
            TOOL_CALL_REPAIR_EVENT,
          )
        : undefined;
    const inRun = chain ? { ...ensured, callbacks: chain.getChild() } : ensured;
    for (const repair of repairs) await dispatchCustomEvent(TOOL_CALL_REPAIR_EVENT, repair, inRun);
    await chain?.handleChainEnd({ repairs: repairs.length });
  } catch {
    // Tracing is best effort: the repair itself stands.
  }
}

/** Keeps a map or set from growing without bound: the oldest entry goes first. */
export function evictOldest(collection: Map<string, unknown> | Set<string>, max = 1000): void {
  if (collection.size >= max) collection.delete(collection.keys().next().value as string);
}

/** Whether `key` is new to `seen` (bounded), which now holds it. */
export function firstTime(seen: Set<string>, key: string): boolean {
  if (seen.has(key)) return false;
  evictOldest(seen);
  seen.add(key);
  return true;
}

/** Marks a setup's `onRepair` ({@link reportedOnce}): its pieces share one memory of what was reported. */
const SETUP = Symbol("langgraph-tool-repair.setupReporter");

/** What each `onRepair` was handed, per thread: keys of {@link reportRepairs}, the oldest 1,000 dropped first. */
const reported = new WeakMap<object, Set<string>>();

/**
 * `onRepair` for several surfaces that work on the same threads (a setup's middleware, model, hook or node and
 * checkpointer): they share one memory, so the same repair of the same call in the same thread (the request's
 * placeholder, then the stored one) reaches the caller once.
 */
export const reportedOnce = (onRepair?: (repair: ToolCallRepair) => void) =>
  onRepair && Object.assign((repair: ToolCallRepair) => onRepair(repair), { [SETUP]: true });

/**
 * Runs a surface's engine call; when it throws, reports the error (`onError`, then the custom event) and
 * returns `fallback`, so the safety net never becomes the thing that fails.
 */
export async function orFallback<T>(
  work: () => T | Promise<T>,
  fallback: T,
  options: RepairReporting,
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

/**
 * One request's `messages` repaired by `repairer`, the repairs reported as request shaping (to the model call's
 * `run` when given); the same array when clean, or when repairing fails (reported: the request goes as it is).
 */
export const repairedRequest = (repairer: Repairer, messages: BaseMessage[], reporting: RepairReporting, run?: Run) =>
  orFallback(
    async () => {
      if (repairer.isClean(messages)) return messages;
      const { messages: repaired, repairs } = repairer.repair(messages);
      await reportRepairs(repairs, reporting, undefined, "request", run);
      return repairs.length > 0 ? repaired : messages;
    },
    messages,
    reporting,
  );

/** A custom event for the run the code is in (the config given, or LangChain's async context); best effort, never throws. */
export async function dispatchInRun(name: string, payload: unknown, config?: RunnableConfig): Promise<void> {
  try {
    const manager = await getCallbackManagerForConfig(ensureConfig(config));
    if (manager?.handlers.length && manager.getParentRunId() !== undefined)
      await dispatchCustomEvent(name, payload, config);
  } catch {
    // best effort
  }
}

/**
 * The graph surfaces' front: `step`'s own answer, synchronously when it has one (the clean path: no promise),
 * or `fallback` when anything fails (reading the state and the clean check included), reported.
 */
export function unlessClean<T>(
  step: () => T | Promise<T>,
  fallback: T,
  options: RepairReporting,
  config?: RunnableConfig,
): T | Promise<T> {
  let out: T | Promise<T>;
  try {
    out = step();
  } catch (error) {
    out = Promise.reject(error);
  }
  return out instanceof Promise ? orFallback(() => out, fallback, options, config) : out;
}
