/**
 * Reading the arguments of the summarization and trimming functions: a list that is not an array, a hole,
 * `null` or a number where a message belongs, a token counter that returns something other than a count, each
 * a {@link ToolCallRepairInputError} naming the argument (and the message index). Options are read with the
 * one option reader (`src/options.ts`); whatever else escapes (a getter that throws) is caught by the public
 * function's {@link boundary}.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { ToolCallRepairInputError, assertArray, callersOwn, describeInput } from "../errors";
import { readMessage } from "../messages/coerce";

/**
 * Every entry of `messages` as a LangChain message: real messages as they are (the same objects), message-likes
 * (`{ role, content }`, stored or serialized messages, strings) coerced the way the engine reads them. Same
 * length and positions as the input, so indexes found on the result are indexes into the input.
 */
export function readMessageList(messages: unknown, fn: string): BaseMessage[] {
  assertArray(messages, fn);
  return Array.from(messages, (message, i) => {
    if (!(i in messages)) throw ToolCallRepairInputError.atMessage(i, "is a hole in a sparse array, not a message");
    return readMessage(message, i);
  });
}

/** The count a user's counter returned, refused unless it is a number >= 0. */
function checkedCount(count: unknown, path: string): number {
  if (typeof count === "number" && count >= 0) return count; // NaN fails `>= 0`
  const thenable = typeof (count as { then?: unknown } | undefined)?.then === "function";
  // A refused Promise may still reject: handled here, so that it never surfaces as an unhandled rejection.
  if (thenable) Promise.resolve(count).catch(() => undefined);
  const hint = thenable ? " (a Promise: this function needs a synchronous counter)" : "";
  throw new ToolCallRepairInputError(`${path} returned ${describeInput(count)}${hint}; expected a number >= 0`, {
    argument: path,
  });
}

/**
 * A user's synchronous token counter, wrapped: what it throws is its own (it passes every boundary as it is),
 * what it returns must be a count.
 */
export function syncCounter(counter: (messages: BaseMessage[]) => unknown, path: string) {
  const own = callersOwn(counter);
  return (messages: BaseMessage[]) => checkedCount(own(messages), path);
}

/** {@link syncCounter} for counters that may return a Promise. */
export function asyncCounter(counter: (messages: BaseMessage[]) => unknown, path: string) {
  const own = callersOwn(async (messages: BaseMessage[]) => await counter(messages));
  return async (messages: BaseMessage[]) => checkedCount(await own(messages), path);
}
