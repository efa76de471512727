import { quoteValue, type Dict } from "./values";

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

  constructor(message: string, { argument, index, cause }: { argument: string; index?: number; cause?: unknown }) {
    super(`langgraph-tool-repair: ${message}`, cause === undefined ? undefined : { cause });
    this.name = "ToolCallRepairInputError";
    this.argument = argument;
    // An own property either way (class fields are defined, ES2022): undefined when no message is at fault.
    this.index = index;
  }

  /** True for this error, also when it comes from another copy of the package (any value in: never throws). */
  static isInstance(error: unknown): error is ToolCallRepairInputError {
    try {
      return (
        error instanceof Error &&
        error.name === "ToolCallRepairInputError" &&
        typeof Object(error).argument === "string"
      );
    } catch {
      return false; // a proxy that refuses to be read is not this error
    }
  }
}

/** The error for a message that cannot be read as one: `messages[index] <detail>`. */
export const atMessage = (index: number, detail: string, cause?: unknown) =>
  new ToolCallRepairInputError(`messages[${index}] ${detail}`, { argument: "messages", index, cause });

/** The text of an unknown thrown value, for wrapping it. */
export const errorText = (error: unknown) =>
  error instanceof Error ? error.message : typeof error === "string" ? error : typeof error;

/** `error`, then the errors of its `cause` chain, `max` at most (a `cause` getter that throws ends the chain). */
export function* causeChain(error: unknown, max: number) {
  for (let depth = 0; error != null && depth < max; depth++) {
    yield error;
    try {
      error = (error as Error).cause;
    } catch {
      return;
    }
  }
}

/**
 * The one boundary of a public entry: `body` runs as it is, and anything that escapes it (or rejects the promise
 * it returns) other than a {@link ToolCallRepairInputError} becomes one that names `fn`, with the original as
 * `cause`. The code behind a boundary reads its input plainly: a getter that throws or a revoked proxy is caught
 * here, once, not where it is read. Realistic bad input (a plain object, a hole, a missing id) is refused by the
 * reader that knows what is accepted, with an error that says so. What a caller's own callback throws (a model,
 * a token counter: see {@link callersOwn}) passes as it is.
 */
export function boundary<F extends (...args: never[]) => unknown>(fn: string, body: F): F {
  const entry = function (this: unknown, ...args: Parameters<F>) {
    depth++;
    try {
      const result = body.apply(this, args);
      return result instanceof Promise ? result.catch((error) => Promise.reject(inputErrorOf(fn, error))) : result;
    } catch (error) {
      // Called from inside another entry (the package's own use of a public helper): the outer one names it.
      throw depth > 1 ? error : inputErrorOf(fn, error);
    } finally {
      depth--;
    }
  };
  Object.defineProperty(entry, "name", { value: body.name || fn });
  return entry as unknown as F;
}

/** How many boundaries the current synchronous call runs inside. */
let depth = 0;

const thrownByCaller = new WeakSet<object>();

/**
 * A caller's callback (a model, a token counter), called behind a boundary: what it throws is the caller's own
 * error, and every boundary passes it through as it is, not as an input error.
 */
export function callersOwn<A extends unknown[], R>(callback: (...args: A) => R) {
  const mark = (error: unknown): never => {
    if (Object(error) === error) thrownByCaller.add(error as object); // an object or a function: what a WeakSet holds
    throw error;
  };
  return (...args: A) => {
    const outer = depth;
    depth = 0; // a public function the callback calls is an entry of its own
    try {
      const result = callback(...args);
      return (result instanceof Promise ? result.catch(mark) : result) as R;
    } catch (error) {
      return mark(error);
    } finally {
      depth = outer;
    }
  };
}

/** What {@link boundary} throws for `error`: an input error or a caller's own error as it is, else an input error wrapping it. */
const inputErrorOf = (fn: string, error: unknown) =>
  ToolCallRepairInputError.isInstance(error) || thrownByCaller.has(error as object)
    ? error
    : new ToolCallRepairInputError(`${fn}: arguments could not be read (${errorText(error)})`, {
        argument: "arguments",
        cause: error,
      });

/**
 * The error for an argument or option of the wrong kind: `fn: argument is <what it is>; expected <accepted>`
 * (`lacking`: what the value is without, ` without a list method`).
 */
export const expectedInput = (fn: string, argument: string, expected: string, value: unknown, lacking = "") =>
  new ToolCallRepairInputError(`${fn}: ${argument} is ${quoteValue(value)}${lacking}; expected ${expected}`, {
    argument,
  });

/** `Array.isArray`, undefined for a revoked proxy (so that it is refused naming the argument, not as unreadable). */
function isArray(value: unknown) {
  try {
    return Array.isArray(value);
  } catch {}
}

/** `value` is an array, or a {@link ToolCallRepairInputError} naming the function, the argument and what it got. */
export function assertArray(value: unknown, what: string): asserts value is readonly unknown[] {
  if (!isArray(value)) throw expectedInput(what, "messages", "an array of messages", value);
}

/** An options argument as a record: undefined and null are `{}`; anything else not a plain object is refused. */
export function optionsInput(value: unknown, what: string, argument = "options") {
  if (value != null && (typeof value !== "object" || isArray(value) !== false))
    throw expectedInput(what, argument, "an object", value);
  return (value ?? {}) as Dict;
}

/** `value` is an object whose `methods` are all functions (a saver, a model, a store), else an error saying `expected`. */
export function assertMethods(
  value: unknown,
  what: string,
  argument: string,
  expected: string,
  methods: readonly string[],
) {
  // An object or a function (not a primitive) is asked for its methods.
  const missing = Object(value) === value ? methods.find((key) => typeof (value as Dict)[key] !== "function") : "";
  if (missing !== undefined)
    throw expectedInput(what, argument, expected, value, missing && ` without a ${missing} method`);
}
