/**
 * A surface's own options (the engine checks its own when the surface builds its repairer), declared with the
 * shared option kinds (`src/options.ts`): callbacks are functions, switches are booleans, names are non-empty
 * strings. Checked when the surface is built, so a typo fails at start-up with the option named, not silently
 * at the first model call. The factory destructures the snapshot returned (the caller's object is never read
 * again, nor changed).
 */
import { option, readOptions, REPORTING, type OptionTable } from "../options";

export interface SurfaceOptionKinds {
  functions?: readonly string[];
  booleans?: readonly string[];
  strings?: readonly string[];
}

/**
 * Validates a surface's options and returns a snapshot of them (own enumerable keys, read once): undefined and
 * null are `{}`; anything else that is not an object is an input error naming `options`.
 */
export function checkSurfaceOptions<T extends object = Record<string, unknown>>(
  surface: string,
  options: unknown,
  kinds: SurfaceOptionKinds = {},
): Partial<T> {
  const table: Record<string, OptionTable[string]> = { ...REPORTING };
  for (const key of kinds.functions ?? []) table[key] = option.fn;
  for (const key of kinds.booleans ?? []) table[key] = option.flag;
  for (const key of kinds.strings ?? []) table[key] = option.name;
  return readOptions<Partial<T>>(options, surface, table, true);
}
