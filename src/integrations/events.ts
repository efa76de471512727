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
import type { Provider, RepairContext, RepairOptions, RepairSurface, ToolCallRepair } from "../types";
import type { BaseMessage } from "@langchain/core/messages";
import type { Repairer } from "../engine";

/** Name of the custom event (and of the run that carries it outside a node); its payload is the repair. */
export const TOOL_CALL_REPAIR_EVENT = "tool_call_repair";

type Run = Pick<CallbackManagerForLLMRun, "handleCustomEvent">;

/** Where repairs were made ({@link reportRepairs}). */
type Where = { surface: RepairSurface; provider?: Provider; config?: RunnableConfig; request?: boolean; run?: Run };

/** The thread of a run: the config given, or the one LangChain carries in async context (a graph's); "" when none. */
export function threadOf(config?: RunnableConfig) {
  const id = ensureConfig(config).configurable?.thread_id;
  return typeof id === "string" || typeof id === "number" ? String(id) : "";
}

export interface RepairReporting {
  /** Called once per repair, in order, with where it was made. Nothing is logged by this package. */
  onRepair?: RepairOptions["onRepair"];
  /**
   * Called when a surface could not repair a history (input it cannot read, or a bug of ours). The surface
   * then lets the history through unchanged rather than fail the user's run. Also sent as the custom event
   * `"tool_call_repair_error"`.
   */
  onError?: (error: unknown) => void;
}

/** `@opentelemetry/api` (an optional peer), loaded on the first report; undefined when it is not installed. */
let openTelemetry: Promise<typeof import("@opentelemetry/api") | undefined> | undefined;

/**
 * Reports repairs made at `site`. Each goes to `options.onRepair` with its {@link RepairContext} (the thread of the
 * config, its checkpoint namespace and the surface), in order, unless it was already reported (below), and is
 * counted on the OpenTelemetry meter `langgraph-tool-repair` (`tool_call_repair.repairs`, by action, problem,
 * provider and surface) when `@opentelemetry/api` is installed; a callback that throws is ignored: it cannot undo
 * or fail the repair it reports. Then each becomes an event on the active span and a custom event (payload: the
 * repair and its context). Inside a run (a node, a middleware hook) the events belong to that run. A checkpointer
 * is handed the graph's callbacks but not its run id, so there the events go under a short run of their own named
 * `tool_call_repair`. Given the run of a model call (`run`), the events belong to it (so to the model in traces and
 * `streamEvents`). With no callbacks at all nothing is dispatched; a failing handler never fails the caller.
 *
 * What a repair was made for: the thread's stored messages (by default), or one model request (`request`:
 * shaping the stored thread does not keep, so made again on every call).
 *
 * Which repairs are the same, for one `onRepair` (or one surface's options without it): the thread, the action and
 * the call id. Not the message index: a model's input can hold a system prompt the stored thread does not, which
 * moves every index by one. A call id reused by a server (`call_0` in every thread) is another thread's repair;
 * within one thread a reused id is renamed by the structural repair, so it is another call.
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
  options: RepairReporting & { provider?: Provider },
  // Where: the surface, the provider the repairs were made for (a surface's own option), the run's config (else LangChain's async context),
  // what they were made for and, for a model call, its run.
  { surface, provider = options.provider ?? "strict", config, request, run }: Where,
) {
  if (!repairs.length) return;
  const { onRepair } = options;
  const ensured = ensureConfig(config);
  // Where: the thread and the checkpoint namespace of its graph (a checkpointer is handed the graph's own; a graph
  // step, and a model called in one, its task's).
  const { checkpoint_ns: ns, __pregel_task_id: task } = scalars(ensured.configurable ?? {});
  const context = scalars({
    surface,
    threadId: threadOf(ensured) || undefined,
    checkpointNs: task === undefined || surface === "checkpointer" ? ns : graphNamespace(ns),
  });
  const setup = SETUP in Object(onRepair);
  const inList = new Map<string, number>();
  const reporter = onRepair ?? options;
  const seen = reported.get(reporter) ?? new Set<string>();
  reported.set(reporter, seen);
  const counted = repairs.filter((repair) => {
    const { action, toolCallId, problem } = repair;
    if (setup && request && action === "synthesized_result" && problem !== "trailing_open_exchange") return false;
    if (request || (setup && toolCallId !== undefined)) {
      const key = `${context.threadId ?? ""}\0${action}\0${toolCallId ?? ""}`;
      const nth = (inList.get(key) ?? 0) + 1;
      inList.set(key, nth);
      if (!firstTime(seen, `${key}\0${nth}`)) return false;
    }
    try {
      onRepair?.(repair, context);
    } catch {
      // A reporting callback must not undo or fail the repair it reports.
    }
    return true;
  });
  const payloads = repairs.map((repair) => ({ ...repair, ...context }));
  try {
    const api = await (openTelemetry ??= import("@opentelemetry/api").catch(() => undefined));
    // Counted as onRepair hears them; on the active span as the custom events go (request shaping on every call).
    const counter = api?.metrics.getMeter("langgraph-tool-repair").createCounter("tool_call_repair.repairs");
    for (const { action, problem } of counted) counter?.add(1, { action, problem, provider, surface });
    for (const payload of payloads) {
      api?.trace.getActiveSpan()?.addEvent(TOOL_CALL_REPAIR_EVENT, scalars({ ...payload, provider }));
      await run?.handleCustomEvent(TOOL_CALL_REPAIR_EVENT, payload);
    }
  } catch {
    // Metrics and tracing are best effort: the repair itself stands.
  }
  if (!run) await dispatchEvents(TOOL_CALL_REPAIR_EVENT, payloads, ensured, true);
}

/**
 * The namespace of the graph a task runs in: a task's `checkpoint_ns` is its graph's namespace, `|`, then
 * `node:taskId` (LangGraph's getParentCheckpointNamespace).
 */
export function graphNamespace(taskNamespace: unknown) {
  const parts = (typeof taskNamespace === "string" ? taskNamespace : "").split("|");
  while (parts.length > 1 && /^\d+$/.test(parts.at(-1)!)) parts.pop();
  return parts.slice(0, -1).join("|");
}

/** `record`'s defined fields that are not objects (what a span attribute holds). */
const scalars = <T extends object>(record: T) =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined && typeof v !== "object")) as {
    [K in keyof T]: Exclude<T[K], object>;
  };

/** Keeps a map or set from growing without bound: the oldest entry goes first. The collection, for its `set`/`add`. */
export function evictOldest<C extends Map<string, unknown> | Set<string>>(collection: C, max = 1000) {
  if (collection.size >= max) collection.delete(collection.keys().next().value!);
  return collection;
}

/** Whether `key` is new to `seen` (bounded), which now holds it. */
export const firstTime = (seen: Set<string>, key: string) => !seen.has(key) && !!evictOldest(seen).add(key);

/** Marks a setup's `onRepair` ({@link reportedOnce}): its pieces share one memory of what was reported. */
const SETUP = Symbol("langgraph-tool-repair.setupReporter");

/** What each `onRepair` was handed, per thread: keys of {@link reportRepairs}, the oldest 1,000 dropped first. */
const reported = new WeakMap<object, Set<string>>();

/**
 * `onRepair` for several surfaces that work on the same threads (a setup's middleware, model, hook or node and
 * checkpointer): they share one memory, so the same repair of the same call in the same thread (the request's
 * placeholder, then the stored one) reaches the caller once.
 */
export const reportedOnce = <T extends RepairReporting>(options: T) => ({
  ...options,
  onRepair: Object.assign((repair: ToolCallRepair, context: RepairContext) => options.onRepair?.(repair, context), {
    [SETUP]: true,
  }),
});

/**
 * Runs a surface's engine call (`work`, last so that its body reads as the call's); when it throws, reports the
 * error (`onError`, then the custom event) and returns `fallback`, so the safety net never becomes the thing that
 * fails.
 */
export async function orFallback<T>(
  fallback: T,
  options: RepairReporting,
  config: RunnableConfig | undefined,
  work: () => T | Promise<T>,
) {
  try {
    return await work();
  } catch (error) {
    try {
      options.onError?.(error);
    } catch {
      // the report of a failure must not fail either
    }
    // The custom event sent when a surface could not repair (it then passes the history on unchanged).
    await dispatchInRun("tool_call_repair_error", { message: errorText(error) }, config);
    return fallback;
  }
}

/**
 * One request's `messages` repaired by `repairer`, the repairs reported as request shaping (to the model call's
 * `run` when given); the same array when clean, or when repairing fails (reported: the request goes as it is).
 */
export const repairedRequest = (
  repairer: Repairer,
  messages: BaseMessage[],
  reporting: RepairReporting,
  surface: RepairSurface,
  run?: Run,
) =>
  orFallback(messages, reporting, undefined, async () => {
    if (repairer.isClean(messages)) return messages;
    const { messages: repaired, repairs } = repairer.repair(messages);
    await reportRepairs(repairs, reporting, { surface, provider: repairer.options.provider, request: true, run });
    return repairs.length ? repaired : messages;
  });

/** A custom event for the run the code is in (the config given, or LangChain's async context); best effort, never throws. */
export const dispatchInRun = (name: string, payload: unknown, config?: RunnableConfig) =>
  dispatchEvents(name, [payload], config);

/**
 * Custom events for the run the code is in, one per payload; outside a run none, or (`ownRun`, for repairs) under a
 * short run of their own named `name`: a checkpointer is handed the graph's callbacks but not its run id. With no
 * callbacks at all nothing is dispatched; a failing handler never fails the caller.
 */
async function dispatchEvents(name: string, payloads: readonly unknown[], config?: RunnableConfig, ownRun = false) {
  try {
    const ensured = ensureConfig(config);
    const manager = await getCallbackManagerForConfig(ensured);
    if (!manager?.handlers.length) return;
    const inRun = manager.getParentRunId();
    if (!inRun && !ownRun) return;
    const chain = inRun
      ? undefined
      : await manager.handleChainStart(
          { lc: 1, type: "not_implemented", id: ["langgraph_tool_repair", name] },
          { repairs: payloads },
          undefined,
          undefined,
          undefined,
          undefined,
          name,
        );
    for (const payload of payloads)
      await dispatchCustomEvent(name, payload, chain ? { ...ensured, callbacks: chain.getChild() } : ensured);
    await chain?.handleChainEnd({ repairs: payloads.length });
  } catch {
    // best effort
  }
}

/**
 * The graph surfaces' front: `step`'s own answer, synchronously when it has one (the clean path: no promise),
 * or `fallback` when anything fails (reading the state and the clean check included), reported.
 */
export function unlessClean<T>(
  fallback: T,
  options: RepairReporting,
  config: RunnableConfig | undefined,
  step: () => T | Promise<T>,
) {
  let out: T | Promise<T>;
  try {
    out = step();
  } catch (error) {
    out = Promise.reject(error);
  }
  return out instanceof Promise ? orFallback(fallback, options, config, () => out) : out;
}
