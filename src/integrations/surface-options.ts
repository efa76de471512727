/**
 * A surface's own options (the engine checks its own when the surface builds its repairer): callbacks are
 * functions, switches are booleans, names are non-empty strings. Checked when the surface is built, so a typo
 * fails at start-up with the option named, not silently at the first model call.
 *
 * The one way every surface factory reads its options: under the input guard (a getter that throws, a proxy
 * that refuses to be read, is a {@link ToolCallRepairInputError} naming the surface and `options`, with the
 * original as `cause`), once, into a snapshot the factory destructures (the caller's object is never read
 * again, nor changed).
 */
import { expectedInput, optionsInput, ownInput, readingInput } from "../errors";

export interface SurfaceOptionKinds {
  functions?: readonly string[];
  booleans?: readonly string[];
  strings?: readonly string[];
}

const REPORTING = ["onRepair", "onError"] as const;

/**
 * Validates a surface's options and returns a snapshot of them (own enumerable keys, read once under the input
 * guard): undefined and null are `{}`; anything else that is not an object is an input error naming `options`.
 */
export function checkSurfaceOptions<T extends object = Record<string, unknown>>(
  surface: string,
  options: unknown,
  kinds: SurfaceOptionKinds = {},
): Partial<T> {
  const record = optionsInput(options, surface);
  // Key by key, so a getter that throws is named (`options.closeOpen could not be read`).
  const keys = readingInput(() => Object.keys(record), surface, "options");
  const given: Record<string, unknown> = {};
  for (const key of keys) given[key] = ownInput(record, key, surface);
  const check = (keys: readonly string[], ok: (value: unknown) => boolean, expected: string) => {
    for (const key of keys) {
      const value = Object.hasOwn(given, key) ? given[key] : undefined;
      if (value !== undefined && !ok(value)) throw expectedInput(surface, `options.${key}`, expected, value);
    }
  };
  check([...REPORTING, ...(kinds.functions ?? [])], (v) => typeof v === "function", "a function");
  check(kinds.booleans ?? [], (v) => typeof v === "boolean", "a boolean");
  check(kinds.strings ?? [], (v) => typeof v === "string" && v !== "", "a non-empty string");
  return given as Partial<T>;
}
