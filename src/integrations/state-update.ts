/**
 * Turning a repaired message list into a LangGraph state update. Every surface that writes messages (the
 * node, the hook, the middleware, `repairThread`, summarization) goes through here, so each writes the same way.
 */
import { BaseMessage, RemoveMessage, coerceMessageLikeToMessage } from "@langchain/core/messages";
import { v4 as uuid } from "@langchain/core/utils/uuid";
import { REMOVE_ALL_MESSAGES, messagesStateReducer } from "@langchain/langgraph";
import { ToolCallRepairInputError, assertArray, boundary } from "../errors";
import { quoteValue } from "../values";
import { rebuildMessage } from "../messages/build";

/** One shared, frozen "no update": the clean path allocates nothing of its own. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
// biome-ignore lint/complexity/noBannedTypes: `{}` is the no-update a node returns, assignable to every update type
export const NO_UPDATE: {} = Object.freeze({});

/** A copy of `m` with a new id, every other constructor field carried over. */
const withNewId = (m: BaseMessage) => rebuildMessage(m, { id: uuid() });

const hasId = (m: BaseMessage): m is BaseMessage & { id: string } => typeof m.id === "string" && m.id !== "";

/**
 * The list with every message carrying a unique id. The messages reducer gives an id-less message a fresh
 * uuid by mutating it, and merges later updates by id: a missing or repeated id would let a later update
 * replace the wrong message (and after `REMOVE_ALL_MESSAGES` it keeps both copies of a repeated id).
 * Messages that already have a unique id are kept as they are.
 */
export function withUniqueIds(messages: readonly BaseMessage[]) {
  assertArray(messages, "replaceAllMessages");
  const seen = new Set<string>();
  return Array.from(messages, (m, index) => {
    if (!BaseMessage.isInstance(m))
      throw new ToolCallRepairInputError(
        `replaceAllMessages: messages[${index}] is ${quoteValue(m)}, not a LangChain message`,
        { argument: "messages", index },
      );
    const out = hasId(m) && !seen.has(m.id) ? m : withNewId(m);
    seen.add(out.id!);
    return out;
  });
}

/**
 * The update that replaces the whole list in state: `RemoveMessage` of all, then the messages (with unique
 * ids). Works with `messagesStateReducer` (MessagesAnnotation, MessagesZodState, createReactAgent, createAgent).
 */
export const replaceAllMessages = boundary("replaceAllMessages", (messages: readonly BaseMessage[]) => [
  new RemoveMessage({ id: REMOVE_ALL_MESSAGES }),
  ...withUniqueIds(messages),
]);

/** A message as the reducer takes it (message-likes coerced as LangChain coerces them), with an id on a copy. */
function withId(value: BaseMessage) {
  const m = coerceMessageLikeToMessage(value);
  return hasId(m) ? m : withNewId(m);
}

/**
 * What the messages reducer (`messagesStateReducer`) makes of `update` applied to `current`: `RemoveMessage`,
 * `REMOVE_ALL_MESSAGES` and replacement by id, as LangGraph will apply it. Neither list is touched: messages
 * without an id are given one on a copy.
 */
export const applyMessagesUpdate = (current: readonly BaseMessage[], update: BaseMessage | readonly BaseMessage[]) =>
  messagesStateReducer(current.map(withId), [update].flat().map(withId));
