/**
 * Turning a repaired message list into a LangGraph state update. Every surface that writes messages (the
 * node, the hook, the middleware, `repairThread`, summarization) goes through here, so each writes the same way.
 */
import { AIMessage, BaseMessage, RemoveMessage, ToolMessage, coerceMessageLikeToMessage } from "@langchain/core/messages";
import { v4 as uuid } from "@langchain/core/utils/uuid";
import { REMOVE_ALL_MESSAGES, messagesStateReducer } from "@langchain/langgraph";
import { ToolCallRepairInputError, errorText } from "../errors";
import { rebuildAssistant, rebuildMessage, rebuildToolResult } from "../messages/build";
import { describeValue } from "../values";

/** One shared, frozen "no update": the clean path allocates nothing of its own. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export const NO_UPDATE: {} = Object.freeze({});

/** A copy of `message` with a new id, every other constructor field carried over. */
function withNewId(message: BaseMessage, id: string): BaseMessage {
  if (AIMessage.isInstance(message)) return rebuildAssistant(message, { id });
  if (ToolMessage.isInstance(message)) return rebuildToolResult(message, { id });
  return rebuildMessage(message, { id });
}

/**
 * The list with every message carrying a unique id. The messages reducer gives an id-less message a fresh
 * uuid by mutating it, and merges later updates by id: a missing or repeated id would let a later update
 * replace the wrong message (and after `REMOVE_ALL_MESSAGES` it keeps both copies of a repeated id).
 * Messages that already have a unique id are kept as they are.
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
 * The update that replaces the whole list in state: `RemoveMessage` of all, then the messages (with unique
 * ids). Works with `messagesStateReducer` (MessagesAnnotation, MessagesZodState, createReactAgent, createAgent).
 */
export function replaceAllMessages(messages: readonly BaseMessage[]): BaseMessage[] {
  return [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...withUniqueIds(messages)];
}

/** The message itself when it has an id, else a copy with a fresh one (the reducer would set it on the caller's object). */
function withId(message: BaseMessage): BaseMessage {
  return typeof message.id === "string" && message.id !== "" ? message : withNewId(message, uuid());
}

/**
 * What the messages reducer (`messagesStateReducer`) makes of `update` applied to `current`: `RemoveMessage`,
 * `REMOVE_ALL_MESSAGES` and replacement by id, as LangGraph will apply it. Neither list is touched: messages
 * without an id are given one on a copy.
 */
export function applyMessagesUpdate(current: readonly BaseMessage[], update: BaseMessage | readonly BaseMessage[]): BaseMessage[] {
  if (!Array.isArray(current))
    throw new ToolCallRepairInputError(`applyMessagesUpdate expects the current messages as an array, got ${describeValue(current)}`, { argument: "current" });
  const right: readonly unknown[] = Array.isArray(update) ? update : [update];
  const left = current.map((m, i) => messageAt(m, "current", i));
  const added = right.map((m, i) => messageAt(m, "update", i));
  try {
    return messagesStateReducer(left, added);
  } catch (error) {
    // The reducer's own refusals (a RemoveMessage of an id that is not in the list).
    throw new ToolCallRepairInputError(`applyMessagesUpdate: the update cannot be applied (${errorText(error)})`, { argument: "update", cause: error });
  }
}

/**
 * A message of `argument` as the reducer takes it, with an id: message-likes (`{ role, content }`, strings,
 * `[role, content]`) coerced as LangChain coerces them; anything else an input error naming the argument
 * instead of LangChain's "Unable to coerce message from array".
 */
function messageAt(value: unknown, argument: "current" | "update", index: number): BaseMessage {
  if (BaseMessage.isInstance(value)) return withId(value);
  let message: BaseMessage;
  try {
    message = coerceMessageLikeToMessage(value as never);
  } catch (error) {
    throw new ToolCallRepairInputError(`applyMessagesUpdate: ${argument}[${index}] is ${describeValue(value)}, not a message or message-like value`, { argument, index, cause: error });
  }
  return withId(message);
}
