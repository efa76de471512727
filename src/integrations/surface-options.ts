/**
 * A surface's own options (the engine checks its own when the surface builds its repairer): callbacks are
 * functions, switches are booleans, names are non-empty strings. Checked when the surface is built, so a typo
 * fails at start-up with the option named, not silently at the first model call.
 */
import { ToolCallRepairInputError } from "../errors";
import { quoteValue } from "../values";

export interface SurfaceOptionKinds {
  functions?: readonly string[];
  booleans?: readonly string[];
  strings?: readonly string[];
}

const REPORTING = ["onRepair", "onError"] as const;

export function checkSurfaceOptions(surface: string, options: unknown, kinds: SurfaceOptionKinds = {}): void {
  if (options === undefined || options === null) return;
  if (typeof options !== "object" || Array.isArray(options))
    throw new ToolCallRepairInputError(`${surface}: options is ${quoteValue(options)}; expected an object`, { argument: "options" });
  const given = options as Record<string, unknown>;
  const check = (keys: readonly string[], ok: (value: unknown) => boolean, expected: string) => {
    for (const key of keys) {
      const value = Object.prototype.hasOwnProperty.call(given, key) ? given[key] : undefined;
      if (value !== undefined && !ok(value))
        throw new ToolCallRepairInputError(`${surface}: options.${key} is ${quoteValue(value)}; expected ${expected}`, { argument: `options.${key}` });
    }
  };
  check([...REPORTING, ...(kinds.functions ?? [])], (v) => typeof v === "function", "a function");
  check(kinds.booleans ?? [], (v) => typeof v === "boolean", "a boolean");
  check(kinds.strings ?? [], (v) => typeof v === "string" && v !== "", "a non-empty string");
}
