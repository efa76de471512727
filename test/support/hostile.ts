/**
 * Values that break code which trusts its input, for the argument checks of the public functions: an object
 * whose every read throws, revoked proxies, arrays with a throwing index, and `errorOf` to look at what was thrown.
 */
import { expect } from "vitest";
import { ToolCallRepairInputError } from "../../src/errors";

/** What `fn` threw (it must throw), to compare with `toMatchObject`. */
export function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("did not throw");
}

/** What the promise `fn` returns rejects with (or what `fn` throws). */
export async function rejectionOf(fn: () => unknown): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("did not reject");
}

/** An object every read of which throws: get, has, key listing, prototype. */
export function throwingObject(): object {
  const boom = () => {
    throw new Error("GETTER");
  };
  return new Proxy({}, { get: boom, has: boom, ownKeys: boom, getPrototypeOf: boom, getOwnPropertyDescriptor: boom });
}

export function revokedObject(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

export function revokedArray<T = unknown>(): T[] {
  const { proxy, revoke } = Proxy.revocable([] as T[], {});
  revoke();
  return proxy;
}

/** A copy of `list` whose entry `index` throws when read. */
export function throwingAt<T>(list: readonly T[], index: number): T[] {
  const copy = [...list];
  Object.defineProperty(copy, index, {
    get: () => {
      throw new Error("IDX");
    },
    enumerable: true,
    configurable: true,
  });
  return copy;
}

/** The error is this package's input error, naming `argument` (and `message` when given, as a substring). */
export function inputError(argument: string, message?: string): Record<string, unknown> {
  return {
    name: "ToolCallRepairInputError",
    argument,
    ...(message === undefined ? {} : { message: expect.stringContaining(message) }),
  };
}

export { ToolCallRepairInputError };

/**
 * What a public function's boundary throws for input it cannot read (a throwing getter, a revoked proxy): an
 * input error naming the function, with the original as `cause` (`cause` here: that error's message).
 */
export function boundaryError(fn: string, cause?: string): Record<string, unknown> {
  return {
    name: "ToolCallRepairInputError",
    argument: "arguments",
    message: expect.stringContaining(`${fn}: arguments could not be read${cause === undefined ? "" : ` (${cause})`}`),
    cause: expect.anything(),
  };
}
