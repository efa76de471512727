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
    return new ToolCallRepairInputError(`messages[${index}] ${detail}`, { argument: "messages", index, cause });
  }

  /** True for this error, also when it comes from another copy of the package. */
  static isInstance(error: unknown): error is ToolCallRepairInputError {
    return error instanceof Error && error.name === "ToolCallRepairInputError" && typeof (error as { argument?: unknown }).argument === "string";
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
    throw new ToolCallRepairInputError(`${what}: ${argument} could not be read (${errorText(error)})`, { argument, cause: error });
  }
}

/** `value` is an array, or a {@link ToolCallRepairInputError} naming the function. */
export function assertArray(value: unknown, what: string, argument = "messages"): asserts value is readonly unknown[] {
  let array = false;
  try {
    array = Array.isArray(value);
  } catch {
    // a revoked proxy: not an array we can read
  }
  if (!array) throw new ToolCallRepairInputError(`${what} expects an array of messages as ${argument}, got ${value === null ? "null" : typeof value}`, { argument });
}
