/**
 * Turning a repaired message list into a LangGraph state update. Every surface that writes messages (the
 * node, the hook, the middleware, `repairThread`, summarization) goes through here, so each writes the same way.
 */
import { AIMessage, type BaseMessage, RemoveMessage, ToolMessage } from "@langchain/core/messages";
import { v4 as uuid } from "@langchain/core/utils/uuid";
import { REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { rebuildAssistant, rebuildMessage, rebuildToolResult } from "../messages/build";

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
