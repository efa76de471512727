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
import { defaultSyntheticText, syntheticToolResult } from "../messages/build";
import { unansweredCallIds } from "../messages/exchanges";
import { isAssistant, isDict } from "../messages/inspect";
import { safeJson } from "../values";
import { discardedResults } from "../threads/salvage";
import type { ToolCallRepair } from "../types";
import { orFallback, type RepairReporting } from "./events";
import { putBackResults } from "../threads/repair-thread";

/** LangGraph's `CONFIG_KEY_CHECKPOINTER` and `CONFIG_KEY_CHECKPOINT_MAP` (constants of @langchain/langgraph). */
const CHECKPOINTER_KEY = "__pregel_checkpointer";
const CHECKPOINT_MAP_KEY = "checkpoint_map";

/** LangGraph's `INTERRUPT` channel: a pending write there is a question put to a person. */
const INTERRUPT_CHANNEL = "__interrupt__";

/** How the checkpointer wrapper hands out the saver it wraps (reads here must not go through its bookkeeping). */
export const WRAPPED_SAVER = Symbol.for("langgraph-tool-repair.wrappedSaver");

type Salvaged = { messages: BaseMessage[]; repairs: ToolCallRepair[] };

/**
 * The namespace of the graph a task runs in: a task's `checkpoint_ns` is its graph's namespace, `|`, then
 * `node:taskId` (LangGraph's getParentCheckpointNamespace).
 */
function graphNamespace(taskNamespace: string): string {
  const parts = taskNamespace.split("|");
  while (parts.length > 1 && /^\d+$/.test(parts[parts.length - 1])) parts.pop();
  return parts.slice(0, -1).join("|");
}

function saverIn(configurable: Record<string, unknown>): BaseCheckpointSaver | undefined {
  const saver = configurable[CHECKPOINTER_KEY] as
    | (BaseCheckpointSaver & { [WRAPPED_SAVER]?: BaseCheckpointSaver })
    | undefined;
  if (!saver || typeof saver.getTuple !== "function") return undefined;
  return saver[WRAPPED_SAVER] ?? saver;
}

/** The checkpoint this step runs from if it is stored (with durability "exit" it never is), else the thread's latest. */
async function stepCheckpoint(
  saver: BaseCheckpointSaver,
  configurable: Record<string, unknown>,
  namespace: string,
): Promise<CheckpointTuple | undefined> {
  const { thread_id } = configurable;
  const map = configurable[CHECKPOINT_MAP_KEY];
  const id = isDict(map) ? map[namespace] : undefined;
  const at = (checkpoint_id?: string) =>
    saver.getTuple({ configurable: { thread_id, checkpoint_ns: namespace, checkpoint_id } });
  return (typeof id === "string" ? await at(id) : undefined) ?? (await at());
}

/**
 * What walks back found per call, per saver: its real result, or none, with whether a person was asked to approve
 * it. Final once a walk went past the call's origin, since nothing writes to an old checkpoint again: without it,
 * a surface whose open calls stay open in state (the hook without `persist`, no wrapper) walked back from each
 * model call to the aborted step, a read more per step of the thread since then. Keyed by thread, namespace,
 * the message that made the call and the call (a deleted thread's reused id is another message). Bounded.
 */
interface WalkedCall {
  result?: ToolMessage;
  askedToApprove: boolean;
}
const walkedBySaver = new WeakMap<object, Map<string, WalkedCall>>();
const MAX_WALKED_CALLS = 10_000;

function remember(walked: Map<string, WalkedCall>, key: string, call: WalkedCall): void {
  if (walked.size >= MAX_WALKED_CALLS) walked.delete(walked.keys().next().value as string);
  walked.set(key, call);
}

/** The open calls of `messages`, each with the message that made it. */
function* openCalls(messages: readonly BaseMessage[], open: ReadonlySet<string>) {
  for (const m of messages)
    if (isAssistant(m))
      for (const call of m.tool_calls ?? [])
        if (call.id !== undefined && open.has(call.id)) yield { m, call, id: call.id };
}

const callKey = (name: unknown, args: unknown) => `${String(name)}\u0000${safeJson(args, Number.MAX_SAFE_INTEGER)}`;

/**
 * The calls that pending interrupts of `tuple` ask a person to approve, as name and arguments: langchain's
 * human-in-the-loop middleware (`{ actionRequests: [{ name, args }] }`) and LangGraph's `HumanInterrupt` list
 * (`[{ action_request: { action, args } }]`). Any other interrupt (a tool asking a question) says nothing.
 */
function noteApprovalRequests(tuple: CheckpointTuple, into: Set<string>): void {
  for (const [, channel, value] of tuple.pendingWrites ?? []) {
    if (channel !== INTERRUPT_CHANNEL) continue;
    for (const interrupt of Array.isArray(value) ? value : [value]) {
      const asked = isDict(interrupt) ? interrupt.value : undefined;
      if (isDict(asked) && Array.isArray(asked.actionRequests)) {
        for (const request of asked.actionRequests) if (isDict(request)) into.add(callKey(request.name, request.args));
      } else if (Array.isArray(asked)) {
        for (const item of asked) {
          const request = isDict(item) ? item.action_request : undefined;
          if (isDict(request)) into.add(callKey(request.action, request.args));
        }
      }
    }
  }
}

/** Placeholders saying the user cancelled them, for the `open` calls that pending interrupts of `tuple` asked to approve. */
export function approvalPlaceholders(
  messages: readonly BaseMessage[],
  open: ReadonlySet<string>,
  tuple: CheckpointTuple | undefined,
  text: SyntheticText,
): Map<string, ToolMessage> {
  const asked = new Set<string>();
  if (tuple) noteApprovalRequests(tuple, asked);
  return cancelledCalls(messages, open, asked, text);
}

/** Placeholders saying the user cancelled them, for the `open` calls a person was asked to approve. */
function cancelledCalls(
  messages: readonly BaseMessage[],
  open: ReadonlySet<string>,
  asked: ReadonlySet<string>,
  text: SyntheticText,
) {
  const placeholders = new Map<string, ToolMessage>();
  const toolRun = "cancelled";
  for (const { call, id } of asked.size > 0 ? openCalls(messages, open) : []) {
    if (!asked.has(callKey(call.name, call.args))) continue;
    const body = text({ id, name: call.name, reason: "orphan_call", toolRun });
    placeholders.set(
      id,
      syntheticToolResult({ toolCallId: id, toolName: call.name, reason: "orphan_call", text: body, toolRun }),
    );
  }
  return placeholders;
}

/**
 * What a surface stores: the run's salvage ({@link withRunSalvage}), then `repairer`'s structural repair; every
 * repair, salvaged first.
 */
export async function salvagedAndRepaired(
  messages: BaseMessage[],
  config: Pick<RunnableConfig, "configurable"> | undefined,
  messagesKey: string,
  reporting: RepairReporting,
  repairer: Repairer,
): Promise<Salvaged> {
  const salvaged = await withRunSalvage(messages, config, messagesKey, reporting, repairer.options.syntheticResultText);
  const structural = repairer.repair(salvaged.messages);
  return { messages: structural.messages, repairs: [...salvaged.repairs, ...structural.repairs] };
}

/**
 * `messages` with the real results of their unanswered calls put back from the run's checkpointer, each reported
 * as `salvaged_result` (and placeholders for calls a person never approved); the same array (and no read) when no
 * call is open or the run has no checkpointer. A read that fails is reported through `onError` and salvages nothing: never fail the run.
 */
export function withRunSalvage(
  messages: BaseMessage[],
  config: Pick<RunnableConfig, "configurable"> | undefined,
  messagesKey: string,
  reporting: RepairReporting,
  text: SyntheticText = defaultSyntheticText,
): Promise<Salvaged> {
  const unchanged: Salvaged = { messages, repairs: [] };
  const configurable = config?.configurable;
  const saver = isDict(configurable) ? saverIn(configurable) : undefined;
  if (!saver || configurable?.thread_id === undefined) return Promise.resolve(unchanged);
  return orFallback(
    async () => {
      const open = unansweredCallIds(messages);
      if (open.size === 0) return unchanged;
      const namespace = graphNamespace(
        typeof configurable.checkpoint_ns === "string" ? configurable.checkpoint_ns : "",
      );
      const scope = `${String(configurable.thread_id)}\u0000${namespace}`;
      const calls = new Map<string, { key: string; asked: string }>();
      for (const { m, call, id } of openCalls(messages, open))
        calls.set(id, { key: `${scope}\u0000${String(m.id)}\u0000${id}`, asked: callKey(call.name, call.args) });
      let walked = walkedBySaver.get(saver);
      if (!walked) walkedBySaver.set(saver, (walked = new Map()));
      const found = new Map<string, ToolMessage>();
      const asked = new Set<string>();
      const toWalk = new Set<string>();
      for (const id of open) {
        const known = walked.get(calls.get(id)?.key ?? "");
        if (!known) toWalk.add(id);
        else if (known.result) found.set(id, known.result);
        else if (known.askedToApprove) asked.add(calls.get(id)!.asked);
      }
      if (toWalk.size > 0) {
        const tuple = await stepCheckpoint(saver, configurable, namespace);
        const noteAsked = (visited: CheckpointTuple) => noteApprovalRequests(visited, asked);
        const passed = new Set<string>();
        const results = tuple
          ? await discardedResults(saver, tuple, messagesKey, toWalk, noteAsked, (id) => passed.add(id))
          : undefined;
        for (const [id, result] of results ?? []) found.set(id, result);
        for (const id of toWalk) {
          const call = calls.get(id);
          if (!call) continue;
          const result = results?.get(id);
          if (result) remember(walked, call.key, { result, askedToApprove: false });
          else if (passed.has(id)) remember(walked, call.key, { askedToApprove: asked.has(call.asked) });
        }
      }
      const left = new Set([...open].filter((id) => !found.has(id)));
      for (const [id, placeholder] of cancelledCalls(messages, left, asked, text)) found.set(id, placeholder);
      return found.size === 0 ? unchanged : putBackResults(messages, found);
    },
    unchanged,
    reporting,
    config as RunnableConfig,
  );
}
