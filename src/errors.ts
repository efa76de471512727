import { quoteValue } from "./values";

/**
 * The one error this package throws on bad input: what was wrong, where (the argument, and the message index
 * when one message is at fault), and what is accepted. Anything unexpected from deep inside is wrapped into
 * it (with the original as `cause`), so callers can tell "my input" from "a bug" by class.
 */
export class ToolCallRepairInputError extends TypeError {
  /** Index in the messages array of the message at fault, when one is. */
  readonly index?: number;
  /** The argument or option at fault (`"messages"`, `"options.provider"`, ...). */
  readonly argument: string;

  constructor(message: string, details: { argument?: string; index?: number; cause?: unknown } = {}) {
    super(`langgraph-tool-repair: ${message}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "ToolCallRepairInputError";
    this.argument = details.argument ?? (details.index === undefined ? "options" : "messages");
    if (details.index !== undefined) this.index = details.index;
  }

  /** The message at `index` cannot be read as a message. */
  static atMessage(index: number, detail: string, cause?: unknown): ToolCallRepairInputError {
    if (!Number.isSafeInteger(index) || index < 0)
      throw expectedInput(
        "ToolCallRepairInputError.atMessage",
        "index",
        "a message's index (a non-negative integer)",
        index,
      );
    if (typeof detail !== "string")
      throw expectedInput("ToolCallRepairInputError.atMessage", "detail", "a string", detail);
    return new ToolCallRepairInputError(`messages[${index}] ${detail}`, { argument: "messages", index, cause });
  }

  /** True for this error, also when it comes from another copy of the package (any value in: never throws). */
  static isInstance(error: unknown): error is ToolCallRepairInputError {
    try {
      return (
        error instanceof Error &&
        error.name === "ToolCallRepairInputError" &&
        typeof (error as { argument?: unknown }).argument === "string"
      );
    } catch {
      return false; // a proxy that refuses to be read is not this error
    }
  }
}

/** The text of an unknown thrown value, for wrapping it (never throws itself). */
export function errorText(error: unknown): string {
  try {
    if (error instanceof Error) return error.message;
    return typeof error === "string" ? error : typeof error;
  } catch {
    return "an unreadable error";
  }
}

/**
 * Runs `fn` on caller input; anything thrown while reading it (a throwing getter, a revoked proxy) becomes a
 * {@link ToolCallRepairInputError} that names the function and the argument, with the original as `cause`.
 */
export function readingInput<T>(fn: () => T, what: string, argument = "messages"): T {
  try {
    return fn();
  } catch (error) {
    if (ToolCallRepairInputError.isInstance(error)) throw error;
    throw new ToolCallRepairInputError(`${what}: ${argument} could not be read (${errorText(error)})`, {
      argument,
      cause: error,
    });
  }
}

/**
 * A short rendering of a caller's value for an error message (strings quoted and cut, other values described,
 * never their content), never throwing: a revoked proxy or an object whose keys cannot be listed is
 * "an unreadable object".
 */
export function describeInput(value: unknown): string {
  try {
    return quoteValue(value);
  } catch {
    return "an unreadable object";
  }
}

/** The error for an argument or option of the wrong kind: `fn: argument is <what it is>; expected <accepted>`. */
export function expectedInput(
  fn: string,
  argument: string,
  expected: string,
  value: unknown,
): ToolCallRepairInputError {
  return new ToolCallRepairInputError(`${fn}: ${argument} is ${describeInput(value)}; expected ${expected}`, {
    argument,
  });
}

/** Whether `value` is an array; a revoked proxy is not one (`Array.isArray` throws on it). */
export function isArrayInput(value: unknown): value is readonly unknown[] {
  try {
    return Array.isArray(value);
  } catch {
    return false;
  }
}

/** `value` is an array, or a {@link ToolCallRepairInputError} naming the function, the argument and what it got. */
export function assertArray(
  value: unknown,
  what: string,
  argument = "messages",
  items = "messages",
): asserts value is readonly unknown[] {
  if (!isArrayInput(value)) throw expectedInput(what, argument, `an array of ${items}`, value);
}

/** `value` is a string, or a {@link ToolCallRepairInputError} naming the function and the argument. */
export function assertString(value: unknown, what: string, argument: string): asserts value is string {
  if (typeof value !== "string") throw expectedInput(what, argument, "a string", value);
}

/**
 * An options argument as a record: undefined and null are `{}`; anything else that is not a plain object (an
 * array, a string, a revoked proxy) is a {@link ToolCallRepairInputError} naming `argument`.
 */
export function optionsInput(value: unknown, what: string, argument = "options"): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  let array = true; // a revoked proxy: Array.isArray throws, and nothing can be read from it
  try {
    array = Array.isArray(value);
  } catch {
    // refused below
  }
  if (typeof value !== "object" || array) throw expectedInput(what, argument, "an object", value);
  return value as Record<string, unknown>;
}

/**
 * The own value of `key` in `record`, read under the input guard: a throwing getter becomes a
 * {@link ToolCallRepairInputError} naming `argument.key`. An inherited value never answers for an option.
 */
export function ownInput(record: Record<string, unknown>, key: string, what: string, argument = "options"): unknown {
  return readingInput(() => (Object.hasOwn(record, key) ? record[key] : undefined), what, `${argument}.${key}`);
}

/**
 * `value` is an object whose `methods` are all functions (a saver, a model, a store), read under the input
 * guard: anything else, a getter that throws or a revoked proxy, is a {@link ToolCallRepairInputError} naming
 * the function and the argument, with what is accepted (`expected`).
 */
export function assertMethods(
  value: unknown,
  what: string,
  argument: string,
  expected: string,
  methods: readonly string[],
): void {
  if ((typeof value !== "object" && typeof value !== "function") || value === null)
    throw expectedInput(what, argument, expected, value);
  const missing = readingInput(
    () => methods.find((key) => typeof (value as Record<string, unknown>)[key] !== "function"),
    what,
    argument,
  );
  if (missing !== undefined)
    throw new ToolCallRepairInputError(
      `${what}: ${argument} is ${describeInput(value)} without a ${missing} method; expected ${expected}`,
      { argument },
    );
}
