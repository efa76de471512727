/**
 * Turning a repaired message list into a LangGraph state update. Every surface that writes messages (the
 * node, the hook, the middleware, `repairThread`, summarization) goes through here, so each writes the same way.
 */
import {
  AIMessage,
  BaseMessage,
  RemoveMessage,
  ToolMessage,
  coerceMessageLikeToMessage,
} from "@langchain/core/messages";
import { v4 as uuid } from "@langchain/core/utils/uuid";
import { REMOVE_ALL_MESSAGES, messagesStateReducer } from "@langchain/langgraph";
import { ToolCallRepairInputError, assertArray, describeInput, errorText, readingInput, boundary } from "../errors";
import { rebuildAssistant, rebuildMessage, rebuildToolResult } from "../messages/build";

/** One shared, frozen "no update": the clean path allocates nothing of its own. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
// biome-ignore lint/complexity/noBannedTypes: `{}` is the no-update a node returns, assignable to every update type
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
export const withUniqueIds = boundary(
  "withUniqueIds",
  function withUniqueIds(messages: readonly BaseMessage[]): BaseMessage[] {
    return uniqueIds(messages, "withUniqueIds");
  },
);

function uniqueIds(messages: readonly BaseMessage[], fn: string): BaseMessage[] {
  assertArray(messages, fn);
  const seen = new Set<string>();
  return eachItem(messages, fn, "messages", (message) => {
    if (!BaseMessage.isInstance(message)) throw notAMessage(message);
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

/** An entry {@link eachItem} refuses: what it is (the argument and the index are added there). */
class Refused {
  constructor(
    readonly detail: string,
    readonly cause?: unknown,
  ) {}
}

const notAMessage = (value: unknown) => new Refused(`is ${describeInput(value)}, not a LangChain message`);

/**
 * `visit` on each entry of `list`, in order, under the input guard: a hole, a getter that throws or an entry
 * `visit` refuses is an input error naming the function and `argument[index]`.
 */
function eachItem<T>(list: readonly unknown[], fn: string, argument: string, visit: (value: unknown) => T): T[] {
  const length = readingInput(() => list.length, fn, argument);
  const out: T[] = new Array(length);
  for (let i = 0; i < length; i++) {
    try {
      if (!(i in list)) throw new Refused("is a hole in a sparse array, not a message");
      out[i] = visit(list[i]);
    } catch (error) {
      const refused = error instanceof Refused ? error : new Refused(`could not be read (${errorText(error)})`, error);
      throw new ToolCallRepairInputError(`${fn}: ${argument}[${i}] ${refused.detail}`, {
        argument,
        index: i,
        cause: refused.cause,
      });
    }
  }
  return out;
}

/**
 * The update that replaces the whole list in state: `RemoveMessage` of all, then the messages (with unique
 * ids). Works with `messagesStateReducer` (MessagesAnnotation, MessagesZodState, createReactAgent, createAgent).
 */
export const replaceAllMessages = boundary(
  "replaceAllMessages",
  function replaceAllMessages(messages: readonly BaseMessage[]): BaseMessage[] {
    return [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...uniqueIds(messages, "replaceAllMessages")];
  },
);

/** The message itself when it has an id, else a copy with a fresh one (the reducer would set it on the caller's object). */
function withId(message: BaseMessage): BaseMessage {
  return typeof message.id === "string" && message.id !== "" ? message : withNewId(message, uuid());
}

/**
 * What the messages reducer (`messagesStateReducer`) makes of `update` applied to `current`: `RemoveMessage`,
 * `REMOVE_ALL_MESSAGES` and replacement by id, as LangGraph will apply it. Neither list is touched: messages
 * without an id are given one on a copy.
 */
export const applyMessagesUpdate = boundary(
  "applyMessagesUpdate",
  function applyMessagesUpdate(
    current: readonly BaseMessage[],
    update: BaseMessage | readonly BaseMessage[],
  ): BaseMessage[] {
    const fn = "applyMessagesUpdate";
    assertArray(current, fn, "current");
    const right = readingInput(() => (Array.isArray(update) ? (update as readonly unknown[]) : [update]), fn, "update");
    const left = eachItem(current, fn, "current", messageAt);
    const added = eachItem(right, fn, "update", messageAt);
    try {
      return messagesStateReducer(left, added);
    } catch (error) {
      // The reducer's own refusals (a RemoveMessage of an id that is not in the list).
      throw new ToolCallRepairInputError(`${fn}: the update cannot be applied (${errorText(error)})`, {
        argument: "update",
        cause: error,
      });
    }
  },
);

/**
 * A message as the reducer takes it, with an id: message-likes (`{ role, content }`, strings, `[role, content]`)
 * coerced as LangChain coerces them; anything else refused (an input error naming the argument and the index
 * instead of LangChain's "Unable to coerce message from array").
 */
function messageAt(value: unknown): BaseMessage {
  if (BaseMessage.isInstance(value)) return withId(value);
  let message: BaseMessage;
  try {
    message = coerceMessageLikeToMessage(value as never);
  } catch (error) {
    throw new Refused(`is ${describeInput(value)}, not a message or message-like value`, error);
  }
  return withId(message);
}
