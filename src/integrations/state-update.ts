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
import { ToolCallRepairInputError, assertArray, errorText, boundary } from "../errors";
import { quoteValue } from "../values";
import { rebuildAssistant, rebuildMessage, rebuildToolResult } from "../messages/build";

/** One shared, frozen "no update": the clean path allocates nothing of its own. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
// biome-ignore lint/complexity/noBannedTypes: `{}` is the no-update a node returns, assignable to every update type
export const NO_UPDATE: {} = Object.freeze({});

/** A copy of `m` with a new id, every other constructor field carried over. */
const withNewId = (m: BaseMessage, id = uuid()) =>
  AIMessage.isInstance(m)
    ? rebuildAssistant(m, { id })
    : ToolMessage.isInstance(m)
      ? rebuildToolResult(m, { id })
      : rebuildMessage(m, { id });

/**
 * The list with every message carrying a unique id. The messages reducer gives an id-less message a fresh
 * uuid by mutating it, and merges later updates by id: a missing or repeated id would let a later update
 * replace the wrong message (and after `REMOVE_ALL_MESSAGES` it keeps both copies of a repeated id).
 * Messages that already have a unique id are kept as they are.
 */
export function withUniqueIds(messages: readonly BaseMessage[]): BaseMessage[] {
  const fn = "replaceAllMessages";
  assertArray(messages, fn);
  const seen = new Set<string>();
  return eachItem(messages, fn, "messages", "a LangChain message", (m) => {
    if (!BaseMessage.isInstance(m)) return undefined;
    const out = typeof m.id === "string" && m.id !== "" && !seen.has(m.id) ? m : withNewId(m);
    seen.add(out.id as string);
    return out;
  });
}

/**
 * `visit` on each entry of `list`, in order: a hole or an entry `visit` refuses (undefined) is an input error
 * naming the function, `argument[index]` and what is accepted.
 */
function eachItem<T>(
  list: readonly unknown[],
  fn: string,
  argument: string,
  expected: string,
  visit: (value: unknown) => T | undefined,
): T[] {
  const out: T[] = [];
  for (let i = 0; i < list.length; i++) {
    const item = i in list ? visit(list[i]) : undefined;
    if (item === undefined)
      throw new ToolCallRepairInputError(
        `${fn}: ${argument}[${i}] is ${i in list ? quoteValue(list[i]) : "a hole in a sparse array"}, not ${expected}`,
        { argument, index: i },
      );
    out.push(item);
  }
  return out;
}

/**
 * The update that replaces the whole list in state: `RemoveMessage` of all, then the messages (with unique
 * ids). Works with `messagesStateReducer` (MessagesAnnotation, MessagesZodState, createReactAgent, createAgent).
 */
export const replaceAllMessages = boundary("replaceAllMessages", (messages: readonly BaseMessage[]): BaseMessage[] => [
  new RemoveMessage({ id: REMOVE_ALL_MESSAGES }),
  ...withUniqueIds(messages),
]);

/**
 * A message as the reducer takes it, with an id (the reducer would set it on the caller's object): message-likes
 * (`{ role, content }`, strings, `[role, content]`) coerced as LangChain coerces them; undefined for anything else
 * (an input error naming the argument and the index instead of LangChain's "Unable to coerce message from array").
 */
function messageAt(value: unknown): BaseMessage | undefined {
  let m: BaseMessage;
  try {
    m = BaseMessage.isInstance(value) ? value : coerceMessageLikeToMessage(value as never);
  } catch {
    return undefined;
  }
  return typeof m.id === "string" && m.id !== "" ? m : withNewId(m);
}

/**
 * What the messages reducer (`messagesStateReducer`) makes of `update` applied to `current`: `RemoveMessage`,
 * `REMOVE_ALL_MESSAGES` and replacement by id, as LangGraph will apply it. Neither list is touched: messages
 * without an id are given one on a copy.
 */
export const applyMessagesUpdate = boundary(
  "applyMessagesUpdate",
  (current: readonly BaseMessage[], update: BaseMessage | readonly BaseMessage[]): BaseMessage[] => {
    const fn = "applyMessagesUpdate";
    const accepted = "a message or message-like value";
    assertArray(current, fn, "current");
    const left = eachItem(current, fn, "current", accepted, messageAt);
    const added = eachItem(Array.isArray(update) ? update : [update], fn, "update", accepted, messageAt);
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
