/**
 * The finished results of a discarded step, put into the RUN's messages, so the model sees them in the very turn
 * the new input arrives (the checkpointer wrapper puts them back into storage, but the run loaded its state
 * before that).
 *
 * A node (the repair node, createReactAgent's hook, createAgent's `beforeAgent`) receives the run's checkpointer
 * in `config.configurable.__pregel_checkpointer`, the wrapper's or LangGraph Platform's own. When the messages
 * leave calls unanswered, the results that finished before the run stopped are still pending writes of the
 * checkpoint the calls were scheduled at (nothing deletes them): read there, they replace what would have been
 * placeholders. Safe for a resume: a resume runs pending tasks before any of these nodes, so a call still open
 * there was abandoned; and only a REAL result stored for that very call is ever put in.
 *
 * The same read tells a call a person was asked to approve (a human-in-the-loop interrupt pending there, naming
 * the call) from one whose tool may have started: the first gets a placeholder that says the user cancelled it.
 */
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import type { Repairer, SyntheticText } from "../engine";
import { syntheticToolResult } from "../messages/build";
import { unansweredCallIds } from "../messages/exchanges";
import { isAssistant, isNoResult } from "../messages/inspect";
import { safeJson, type Dict } from "../values";
import { discardedResults } from "../threads/salvage";
import type { RepairSurface } from "../types";
import { evictOldest, graphNamespace, orFallback, reportRepairs, unlessClean, type RepairReporting } from "./events";
import { putBackResults } from "../threads/repair-thread";
import { replaceAllMessages } from "./state-update";

/** The config a graph step is handed (its checkpointer and thread). */
type StepConfig = Pick<RunnableConfig, "configurable"> | undefined;

/** How the checkpointer wrapper hands out the saver it wraps (reads here must not go through its bookkeeping). */
export const WRAPPED_SAVER = Symbol.for("langgraph-tool-repair.wrappedSaver");

/**
 * What walks back found per call, per saver: its real result, or none, with whether a person was asked to approve
 * it. Final once a walk went past the call's origin, since nothing writes to an old checkpoint again: without it,
 * a surface whose open calls stay open in state (the hook without `persist`, no wrapper) walked back from each
 * model call to the aborted step, a read more per step of the thread since then. Keyed by thread, namespace,
 * the message that made the call and the call (a deleted thread's reused id is another message). Bounded.
 */
const walkedBySaver = new WeakMap<object, Map<string, { result?: ToolMessage; askedToApprove?: boolean }>>();

/** The open calls of `messages`, each with the message that made it. */
function* openCalls(messages: readonly BaseMessage[], open: ReadonlySet<string>) {
  for (const m of messages)
    if (isAssistant(m)) for (const call of m.tool_calls ?? []) if (open.has(call.id!)) yield { m, call, id: call.id! };
}

const callKey = (name: unknown, args: unknown) => `${String(name)}\0${safeJson(args, Infinity)}`;

/**
 * Adds to `asked` the calls that pending interrupts (LangGraph's `__interrupt__` channel) of `tuple` ask a person
 * to approve, as name and arguments: langchain's human-in-the-loop middleware (`{ actionRequests: [{ name, args }] }`).
 * Any other interrupt (a tool asking a question) says nothing.
 */
export function approvalRequests(tuple: CheckpointTuple | undefined, asked = new Set<string>()) {
  for (const [, channel, value] of tuple?.pendingWrites ?? [])
    if (channel === "__interrupt__")
      for (const interrupt of [value].flat() as ({ value?: { actionRequests?: unknown } } | undefined)[]) {
        const requests = interrupt?.value?.actionRequests;
        if (Array.isArray(requests)) for (const request of requests) asked.add(callKey(request?.name, request?.args));
      }
  return asked;
}

/**
 * Adds to `found`, for the `open` calls it has no result for, placeholders that say what the surface knows: the
 * user cancelled the call (a person was asked to approve it, `asked`), or its run stopped (a sibling call of the
 * same message has its real result in `found`: the step ran, and ended before this result was recorded).
 */
export function addKnownPlaceholders(
  messages: readonly BaseMessage[],
  open: ReadonlySet<string>,
  found: Map<string, ToolMessage>,
  asked: ReadonlySet<string>,
  text: SyntheticText,
) {
  const calls = [...openCalls(messages, open)];
  const ran = new Set(calls.filter(({ id }) => found.has(id) && !isNoResult(found.get(id))).map(({ m }) => m));
  const reason = "orphan_call";
  for (const { m, call, id } of calls) {
    const toolRun = asked.has(callKey(call.name, call.args)) ? "cancelled" : ran.has(m) ? "interrupted" : undefined;
    if (!toolRun || found.has(id)) continue;
    const body = text({ id, name: call.name, reason, toolRun });
    found.set(id, syntheticToolResult({ toolCallId: id, toolName: call.name, reason, text: body, toolRun }));
  }
}

/**
 * What a surface stores: the run's salvage ({@link withRunSalvage}), then `repairer`'s structural repair, as the
 * update that replaces the list in state; every repair reported (salvaged first) in `reportIn`. Undefined (and
 * nothing reported) when nothing changed.
 */
export async function persistedRepair(
  messages: BaseMessage[],
  config: StepConfig,
  messagesKey: string,
  reporting: RepairReporting,
  repairer: Repairer,
  surface: RepairSurface,
  reportIn?: RunnableConfig,
) {
  const salvaged = await withRunSalvage(messages, config, messagesKey, reporting, repairer);
  const structural = repairer.repair(salvaged.messages);
  const repairs = [...salvaged.repairs, ...structural.repairs];
  if (!repairs.length) return;
  await reportRepairs(repairs, reporting, { surface, config: reportIn });
  return replaceAllMessages(structural.messages);
}

/**
 * A graph step (a node, `beforeAgent`) storing the structural repair of `state[key]` ({@link persistedRepair}):
 * `{ [key]: list }`, or `none` when the state holds no list, nothing changed or anything failed (reported in
 * `reportIn`); synchronously when the list is clean (no promise).
 */
export const persistingStep =
  <U>(repairer: Repairer, key: string, reporting: RepairReporting, surface: RepairSurface, none: U) =>
  (state: unknown, config: StepConfig, reportIn?: RunnableConfig) =>
    unlessClean(none, reporting, reportIn, () => {
      const messages = (state as Dict | undefined)?.[key];
      if (!Array.isArray(messages) || repairer.isClean(messages)) return none;
      // Finished results the run discarded go in first: the model sees them, not placeholders, in this very turn.
      return persistedRepair(messages, config, key, reporting, repairer, surface, reportIn).then((stored) =>
        stored ? ({ [key]: stored } as U) : none,
      );
    });

/**
 * `messages` with the real results of their unanswered calls put back from the run's checkpointer, each reported
 * as `salvaged_result` (and placeholders for calls a person never approved); the same array (and no read) when no
 * call is open or the run has no checkpointer. A read that fails is reported through `onError` and salvages
 * nothing: never fail the run.
 */
export async function withRunSalvage(
  messages: BaseMessage[],
  config: StepConfig,
  messagesKey: string,
  reporting: RepairReporting,
  { options }: Repairer,
) {
  const unchanged = { messages, repairs: [] };
  const { thread_id, checkpoint_ns, checkpoint_map, __pregel_checkpointer: given } = config?.configurable ?? {};
  // LangGraph's CONFIG_KEY_CHECKPOINTER: the run's saver (the wrapper hands out the one it wraps).
  const saver: BaseCheckpointSaver | undefined = given?.[WRAPPED_SAVER] ?? given;
  if (!saver || thread_id === undefined) return unchanged;
  return orFallback(unchanged, reporting, config, async () => {
    const open = unansweredCallIds(messages);
    if (!open.size) return unchanged;
    const namespace = graphNamespace(checkpoint_ns);
    const calls = new Map(
      Array.from(openCalls(messages, open), ({ m, call, id }) => [
        id,
        { key: `${String(thread_id)}\0${namespace}\0${m.id}\0${id}`, asked: callKey(call.name, call.args) },
      ]),
    );
    let walked = walkedBySaver.get(saver);
    if (!walked) walkedBySaver.set(saver, (walked = new Map()));
    const found = new Map<string, ToolMessage>();
    const asked = new Set<string>();
    const toWalk = new Set<string>();
    for (const id of open) {
      const call = calls.get(id);
      const known = call && walked.get(call.key);
      if (!known) toWalk.add(id);
      else if (known.result) found.set(id, known.result);
      else if (known.askedToApprove) asked.add(call.asked);
    }
    if (toWalk.size) {
      // The checkpoint this step runs from if it is stored (with durability "exit" it never is), else the
      // thread's latest (LangGraph's CONFIG_KEY_CHECKPOINT_MAP names it).
      const id = checkpoint_map?.[namespace];
      const at = (checkpoint_id?: string) =>
        saver.getTuple({ configurable: { thread_id, checkpoint_ns: namespace, checkpoint_id } });
      const tuple = (typeof id === "string" ? await at(id) : undefined) ?? (await at());
      const passed = new Set<string>();
      const results = await discardedResults(
        saver,
        tuple,
        messagesKey,
        toWalk,
        (visited) => approvalRequests(visited, asked),
        (id) => passed.add(id),
      );
      for (const id of toWalk) {
        const call = calls.get(id);
        const result = results.get(id);
        if (result) found.set(id, result);
        if (!call || !(result || passed.has(id))) continue;
        evictOldest(walked, 10_000).set(call.key, { result, askedToApprove: !result && asked.has(call.asked) });
      }
    }
    addKnownPlaceholders(messages, open, found, asked, options.syntheticResultText);
    return found.size ? putBackResults(messages, found) : unchanged;
  });
}
