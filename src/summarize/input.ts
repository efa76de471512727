/**
 * Reading the arguments of the summarization and trimming functions: a list that is not an array, a hole,
 * `null` or a number where a message belongs, bad options, a token counter that returns something other than
 * a count, each a {@link ToolCallRepairInputError} naming the argument (and the message index). Whatever else
 * escapes (a getter that throws) is caught by the public function's {@link boundary}.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { ToolCallRepairInputError, callersOwn, describeInput } from "../errors";
import { readMessage } from "../messages/coerce";
import { option, type OptionKind } from "../options";
import type { Dict } from "../values";

/**
 * Every entry of `messages` as a LangChain message: real messages as they are (the same objects), message-likes
 * (`{ role, content }`, stored or serialized messages, strings) coerced the way the engine reads them. Same
 * length and positions as the input, so indexes found on the result are indexes into the input.
 */
export function readMessageList(messages: unknown, fn: string): BaseMessage[] {
  if (!Array.isArray(messages))
    throw new ToolCallRepairInputError(`${fn} expects an array of messages, got ${describeInput(messages)}`, {
      argument: "messages",
    });
  const out: BaseMessage[] = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    if (!(i in messages)) throw ToolCallRepairInputError.atMessage(i, "is a hole in a sparse array, not a message");
    out[i] = readMessage(messages[i], i);
  }
  return out;
}

/** An options object (`path` names it): a plain object; undefined and null are refused with the accepted shape. */
export function optionsObject(options: unknown, fn: string, expected: string, path = "options"): Dict {
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw new ToolCallRepairInputError(`${fn}: ${path} is ${describeInput(options)}; expected ${expected}`, {
      argument: path,
    });
  return options as Dict;
}

/** An own option's value (a prototype's keys are not options). */
export function ownOption(options: Dict, key: string, _path?: string): unknown {
  return Object.hasOwn(options, key) ? options[key] : undefined;
}

/** An own option of `kind` (the shared option kinds, `src/options.ts`), or undefined when absent. */
function kindOption<T>(options: Dict, key: string, kind: OptionKind, path: string): T | undefined {
  const value = ownOption(options, key);
  if (value === undefined) return undefined;
  if (!kind.accepts(value))
    throw new ToolCallRepairInputError(`${path} is ${describeInput(value)}; expected ${kind.expected}`, {
      argument: path,
    });
  return value as T;
}

/** An own option that must be a number >= 0 (finite), or undefined when absent. */
export const countOption = (options: Dict, key: string, path = `options.${key}`): number | undefined =>
  kindOption(options, key, option.count, path);

/** An own option that must be a function, or undefined when absent. */
export const functionOption = <T>(options: Dict, key: string, path = `options.${key}`): T | undefined =>
  kindOption(options, key, option.fn, path);

/** An own option that must be a string, or undefined when absent. */
export const stringOption = (options: Dict, key: string, path = `options.${key}`): string | undefined =>
  kindOption(options, key, option.string, path);

/** An own option that must be a boolean, or undefined when absent. */
export const booleanOption = (options: Dict, key: string, path = `options.${key}`): boolean | undefined =>
  kindOption(options, key, option.flag, path);

/** An own option that must be one of `allowed`, or undefined when absent. */
export const choiceOption = <T extends string>(
  options: Dict,
  key: string,
  allowed: readonly T[],
  path = `options.${key}`,
): T | undefined =>
  kindOption(options, key, option.oneOf(allowed, `one of ${allowed.map((a) => `"${a}"`).join(", ")}`), path);

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
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

/**
 * A user's synchronous token counter, wrapped: what it throws is its own (it passes every boundary as it is),
 * what it returns must be a count.
 */
export function syncCounter(
  counter: (messages: BaseMessage[]) => unknown,
  path: string,
): (messages: BaseMessage[]) => number {
  const own = callersOwn(counter);
  return (messages) => checkedCount(own(messages), path);
}

/** {@link syncCounter} for counters that may return a Promise. */
export function asyncCounter(
  counter: (messages: BaseMessage[]) => unknown,
  path: string,
): (messages: BaseMessage[]) => Promise<number> {
  const own = callersOwn(async (messages: BaseMessage[]) => await counter(messages));
  return async (messages) => checkedCount(await own(messages), path);
}
