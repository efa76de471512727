/**
 * `toolCallRepairNode`: a StateGraph node placed right before the model node. A broken history is replaced
 * in state (persisted by the checkpointer); a clean one costs one read-only walk and returns no update.
 */
import { AIMessage, type BaseMessage, RemoveMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { v4 as uuid } from "@langchain/core/utils/uuid";
import { REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { isCleanHistory } from "../engine/clean";
import { profileFor, type ProviderProfile } from "../engine/profiles";
import { repairToolCalls } from "../engine/repair";
import { rebuildAssistant, rebuildToolResult } from "../messages/build";
import type { RepairOptions, ToolCallRepair } from "../types";
import { reportRepairs } from "./events";

export interface ToolCallRepairNodeOptions<K extends string = "messages"> extends RepairOptions {
  /** The state key holding the messages. Default `"messages"`. Its channel must use the messages reducer. */
  messagesKey?: K;
}

/** The node's update: the messages key, or nothing. */
export type ToolCallRepairNodeUpdate<K extends string = "messages"> = { [P in K]?: BaseMessage[] };

export type ToolCallRepairNodeFunction<K extends string = "messages"> = (
  state: { [P in K]?: BaseMessage[] },
  config?: RunnableConfig,
) => ToolCallRepairNodeUpdate<K> | Promise<ToolCallRepairNodeUpdate<K>>;

/** One shared, frozen "no update": the clean path allocates nothing of its own. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export const NO_UPDATE: {} = Object.freeze({});

/**
 * A repair bound to fixed options: the provider profile is resolved once, `onRepair` is left to
 * `reportRepairs` (so each repair reaches it exactly once), and the clean check runs without building anything.
 */
export interface BoundRepair {
  /** True when the history needs no repair under these options. */
  isClean(messages: readonly unknown[]): boolean;
  /** The repaired list and what was done (the same array and no repairs when clean). */
  repair(messages: BaseMessage[]): { messages: BaseMessage[]; repairs: ToolCallRepair[] };
}

export function bindRepair(options: RepairOptions): BoundRepair {
  const { onRepair: _reportedSeparately, ...engineOptions } = options;
  const profile: ProviderProfile = profileFor(engineOptions.provider);
  const trailingAllowed = (engineOptions.trailing ?? "answer") === "keep";
  return {
    isClean: (messages) => isCleanHistory(messages, profile, trailingAllowed),
    repair: (messages) => repairToolCalls(messages, engineOptions),
  };
}

/** A copy of `message` with a new id, every other constructor field carried over. */
function withNewId(message: BaseMessage, id: string): BaseMessage {
  if (AIMessage.isInstance(message)) return rebuildAssistant(message, { id });
  if (ToolMessage.isInstance(message)) return rebuildToolResult(message, { id });
  const Message = message.constructor as new (fields: Record<string, unknown>) => BaseMessage;
  return new Message({ ...message.lc_kwargs, content: message.content, id });
}

/**
 * The list with every message carrying a unique id. The messages reducer gives an id-less message a fresh
 * uuid by mutating it, and merges later updates by id: a missing or repeated id would let a later update
 * replace the wrong message. Messages that already have a unique id are kept as they are.
 */
export function withUniqueIds(messages: readonly BaseMessage[]): BaseMessage[] {
  const seen = new Set<string>();
  return messages.map((message) => {
    const id = message.id;
    if (typeof id === "string" && id !== "" && !seen.has(id)) {
      seen.add(id);
      return message;
    }
    const fresh = uuid();
    seen.add(fresh);
    return withNewId(message, fresh);
  });
}

/**
 * The update that replaces the whole list in state: `RemoveMessage` of all, then the repaired messages.
 * Works with `messagesStateReducer` (MessagesAnnotation, MessagesZodState, createReactAgent, createAgent).
 */
export function replaceAllMessages(repaired: readonly BaseMessage[]): BaseMessage[] {
  return [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...withUniqueIds(repaired)];
}

/**
 * A node that repairs the tool-call history in state before the model sees it.
 *
 * Defaults: `trailing: "answer"` (the node runs before a model call, where a history ending on unanswered
 * calls is always rejected; do not place it between the model node and the tools node), `provider: "strict"`.
 * Every repair reaches `onRepair` and is dispatched as the custom event `"tool_call_repair"`.
 */
export function toolCallRepairNode<K extends string = "messages">(
  options: ToolCallRepairNodeOptions<K> = {},
): ToolCallRepairNodeFunction<K> {
  const { messagesKey = "messages" as K, ...repairOptions } = options;
  const bound = bindRepair(repairOptions);
  const noUpdate = NO_UPDATE as ToolCallRepairNodeUpdate<K>;

  const persistRepair = async (messages: BaseMessage[], config?: RunnableConfig): Promise<ToolCallRepairNodeUpdate<K>> => {
    const { messages: repaired, repairs } = bound.repair(messages);
    if (repairs.length === 0) return noUpdate;
    await reportRepairs(repairs, repairOptions, config);
    return { [messagesKey]: replaceAllMessages(repaired) } as ToolCallRepairNodeUpdate<K>;
  };

  // Not async: the clean path returns the shared constant without allocating a promise.
  return function toolCallRepair(state, config) {
    const messages = state[messagesKey];
    if (messages === undefined || bound.isClean(messages)) return noUpdate;
    return persistRepair(messages, config);
  };
}
