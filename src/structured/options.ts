/**
 * The options of the structured-output wrappers (`withPromptedStructuredOutput`, the createAgent middleware,
 * `structuredOutputStrategies`), read once and checked when the wrapper is built: each option of its own kind,
 * a clear error naming the option and what it accepts otherwise, and a getter that throws is an input error
 * naming the option, never the raw error. The wrappers then use the copy, not the caller's object.
 */
import { expectedInput, optionsInput, ownInput } from "../errors";

/** Every option a structured-output wrapper may take; each wrapper lists the ones it reads. */
const KINDS = {
  strategy: (value: unknown) => value === "native" || value === "tool" || value === "prompted",
  finalMessage: (value: unknown) => value === "json" || value === "text" || typeof value === "function",
  prompted: (value: unknown) => typeof value === "boolean",
  env: (value: unknown) => typeof value === "object" && value !== null,
  maxCorrections: (value: unknown) => typeof value === "number" && Number.isSafeInteger(value) && value >= 0,
  onStructuredResponse: (value: unknown) => typeof value === "function",
  onRepair: (value: unknown) => typeof value === "function",
  onFallback: (value: unknown) => typeof value === "function",
  name: (value: unknown) => typeof value === "string" && value !== "",
} as const;

const EXPECTED: Record<keyof typeof KINDS, string> = {
  strategy: '"native", "tool" or "prompted"',
  finalMessage: '"json", "text" or a function',
  prompted: "a boolean",
  env: "an object of environment variables",
  maxCorrections: "a non-negative integer",
  onStructuredResponse: "a function",
  onRepair: "a function",
  onFallback: "a function",
  name: "a non-empty string",
};

export type StructuredOptionKey = keyof typeof KINDS;

/**
 * A checked copy of `options` holding the listed keys that are set. `undefined`/`null` options are `{}`;
 * anything but an object is refused.
 */
export function structuredOptions<T extends object>(
  options: unknown,
  fn: string,
  keys: readonly StructuredOptionKey[],
): T {
  const record = optionsInput(options, fn);
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const value = ownInput(record, key, fn);
    if (value === undefined) continue;
    if (!KINDS[key](value)) throw expectedInput(fn, `options.${key}`, EXPECTED[key], value);
    out[key] = value;
  }
  return out as T;
}
