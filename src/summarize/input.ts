/**
 * Reading the arguments of the summarization and trimming functions. This is the one place that turns bad
 * input into a {@link ToolCallRepairInputError} naming the argument (and the message index): a list that is not
 * an array, a hole, `null` or a number where a message belongs, a message whose getters throw, bad options,
 * a token counter that throws or returns something other than a count. Nothing else in `src/summarize`
 * checks its input.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { ToolCallRepairInputError, errorText, describeInput } from "../errors";
import { coerceMessage } from "../messages/coerce";
import { resultIdOf, toolCallIdsOf } from "../messages/inspect";
import type { Dict } from "../values";

/**
 * Every entry of `messages` as a LangChain message: real messages as they are (the same objects), message-likes
 * (`{ role, content }`, stored or serialized messages, strings) coerced the way the engine reads them. Same
 * length and positions as the input, so indexes found on the result are indexes into the input.
 */
export function readMessageList(messages: unknown, fn: string): BaseMessage[] {
  if (!isArray(messages, "messages"))
    throw new ToolCallRepairInputError(`${fn} expects an array of messages, got ${describeInput(messages)}`, {
      argument: "messages",
    });
  const out: BaseMessage[] = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    if (!(i in messages)) throw ToolCallRepairInputError.atMessage(i, "is a hole in a sparse array, not a message");
    try {
      out[i] = coerceMessage(messages[i], i);
    } catch (error) {
      if (ToolCallRepairInputError.isInstance(error)) throw error;
      throw ToolCallRepairInputError.atMessage(i, `could not be read (${errorText(error)})`, error);
    }
  }
  return out;
}

/** Errors a user's callback threw, kept apart so that {@link guarded} does not blame the messages for them. */
class CallbackError extends Error {}

/**
 * Runs `work` over messages already read with {@link readMessageList}. Anything unexpected thrown while reading
 * a message (a getter that throws, a revoked proxy) becomes a {@link ToolCallRepairInputError} naming the first
 * message that cannot be read; input errors pass through as they are.
 */
export function guarded<T>(fn: string, messages: readonly BaseMessage[], work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw asInputError(fn, messages, error);
  }
}

/** {@link guarded} for async work. */
export async function guardedAsync<T>(
  fn: string,
  messages: readonly BaseMessage[],
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asInputError(fn, messages, error);
  }
}

function asInputError(fn: string, messages: readonly BaseMessage[], error: unknown): unknown {
  // An input error that names its message (or an argument) stands; one from reading a single message (the
  // package's own readers, `argument: "message"`) gets the index of that message here.
  if (ToolCallRepairInputError.isInstance(error) && (error.index !== undefined || error.argument !== "message"))
    return error;
  if (error instanceof CallbackError) return error.cause;
  const index = firstUnreadable(messages);
  const original = ToolCallRepairInputError.isInstance(error) && error.cause !== undefined ? error.cause : error;
  const detail = `could not be read (${errorText(original)})`;
  return index >= 0
    ? ToolCallRepairInputError.atMessage(index, detail, original)
    : new ToolCallRepairInputError(`${fn}: the messages ${detail}`, { argument: "messages", cause: original });
}

/** Index of the first message whose fields throw when read (only on the error path: one more walk). */
function firstUnreadable(messages: readonly BaseMessage[]): number {
  for (let i = 0; i < messages.length; i++) {
    try {
      const m = messages[i] as unknown as Dict;
      void m.content;
      void m.additional_kwargs;
      toolCallIdsOf(m);
      resultIdOf(m as never);
      (messages[i] as BaseMessage).getType();
    } catch {
      return i;
    }
  }
  return -1;
}

/** `Array.isArray`, which throws on a revoked proxy: then an input error naming the argument. */
function isArray(value: unknown, path: string): value is unknown[] {
  try {
    return Array.isArray(value);
  } catch (error) {
    throw new ToolCallRepairInputError(`${path} could not be read (${errorText(error)})`, {
      argument: path,
      cause: error,
    });
  }
}

/** An options object (`path` names it): a plain object; undefined and null are refused with the accepted shape. */
export function optionsObject(options: unknown, fn: string, expected: string, path = "options"): Dict {
  if (typeof options !== "object" || options === null || isArray(options, path))
    throw new ToolCallRepairInputError(`${fn}: ${path} is ${describeInput(options)}; expected ${expected}`, {
      argument: path,
    });
  return options as Dict;
}

/** Runs `read` on an option; anything unexpected it throws (a getter, a revoked proxy) is an input error naming `path`. */
export function readingOption<T>(path: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (ToolCallRepairInputError.isInstance(error)) throw error;
    throw new ToolCallRepairInputError(`${path} could not be read (${errorText(error)})`, {
      argument: path,
      cause: error,
    });
  }
}

/** An own option's value (a prototype's keys are not options); a getter that throws is an input error naming it. */
export function ownOption(options: Dict, key: string, path = `options.${key}`): unknown {
  try {
    return Object.hasOwn(options, key) ? options[key] : undefined;
  } catch (error) {
    throw new ToolCallRepairInputError(`${path} could not be read (${errorText(error)})`, {
      argument: path,
      cause: error,
    });
  }
}

/** An own option that must be a number >= 0 (finite unless `infinite`), or undefined when absent. */
export function countOption(options: Dict, key: string, path = `options.${key}`): number | undefined {
  const value = ownOption(options, key, path);
  if (value === undefined) return undefined;
  if (typeof value !== "number" || Number.isNaN(value) || value < 0 || !Number.isFinite(value))
    throw new ToolCallRepairInputError(`${path} is ${describeInput(value)}; expected a finite number >= 0`, {
      argument: path,
    });
  return value;
}

/** An own option that must be a function, or undefined when absent. */
export function functionOption<T>(options: Dict, key: string, path = `options.${key}`): T | undefined {
  const value = ownOption(options, key, path);
  if (value === undefined) return undefined;
  if (typeof value !== "function")
    throw new ToolCallRepairInputError(`${path} is ${describeInput(value)}; expected a function`, { argument: path });
  return value as T;
}

/** An own option that must be a string, or undefined when absent. */
export function stringOption(options: Dict, key: string, path = `options.${key}`): string | undefined {
  const value = ownOption(options, key, path);
  if (value === undefined) return undefined;
  if (typeof value !== "string")
    throw new ToolCallRepairInputError(`${path} is ${describeInput(value)}; expected a string`, { argument: path });
  return value;
}

/** An own option that must be a boolean, or undefined when absent. */
export function booleanOption(options: Dict, key: string, path = `options.${key}`): boolean | undefined {
  const value = ownOption(options, key, path);
  if (value === undefined) return undefined;
  if (typeof value !== "boolean")
    throw new ToolCallRepairInputError(`${path} is ${describeInput(value)}; expected a boolean`, { argument: path });
  return value;
}

/** An own option that must be one of `allowed`, or undefined when absent. */
export function choiceOption<T extends string>(
  options: Dict,
  key: string,
  allowed: readonly T[],
  path = `options.${key}`,
): T | undefined {
  const value = ownOption(options, key, path);
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value))
    throw new ToolCallRepairInputError(
      `${path} is ${describeInput(value)}; expected one of ${allowed.map((a) => `"${a}"`).join(", ")}`,
      { argument: path },
    );
  return value as T;
}

/** The count a user's counter returned, refused unless it is a number >= 0. */
function checkedCount(count: unknown, path: string): number {
  if (typeof count === "number" && count >= 0) return count; // NaN fails `>= 0`
  const thenable = isThenable(count);
  // A refused Promise may still reject: handled here, so that it never surfaces as an unhandled rejection.
  if (thenable) Promise.resolve(count).catch(() => undefined);
  const hint = thenable ? " (a Promise: this function needs a synchronous counter)" : "";
  throw new ToolCallRepairInputError(`${path} returned ${describeInput(count)}${hint}; expected a number >= 0`, {
    argument: path,
  });
}

function isThenable(value: unknown): boolean {
  try {
    return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
  } catch {
    return false;
  }
}

/**
 * A user's synchronous token counter, wrapped: what it throws propagates unchanged (it is the caller's own
 * error, not the messages'), what it returns must be a count.
 */
export function syncCounter(
  counter: (messages: BaseMessage[]) => unknown,
  path: string,
): (messages: BaseMessage[]) => number {
  return (messages) => {
    let count: unknown;
    try {
      count = counter(messages);
    } catch (error) {
      throw new CallbackError(errorText(error), { cause: error });
    }
    return checkedCount(count, path);
  };
}

/** {@link syncCounter} for counters that may return a Promise. */
export function asyncCounter(
  counter: (messages: BaseMessage[]) => unknown,
  path: string,
): (messages: BaseMessage[]) => Promise<number> {
  return async (messages) => {
    let count: unknown;
    try {
      count = await counter(messages);
    } catch (error) {
      throw new CallbackError(errorText(error), { cause: error });
    }
    return checkedCount(count, path);
  };
}
