/**
 * The options of the structured-output wrappers (`withPromptedStructuredOutput`, the createAgent middleware,
 * `structuredOutputStrategies`), declared once as a table of the shared option kinds (`src/options.ts`) and
 * checked when the wrapper is built. The wrappers then use the copy, not the caller's object.
 */
import { option, readOptions, type OptionKind } from "../options";

/** Every option a structured-output wrapper may take; each wrapper lists the ones it reads. */
const KINDS = {
  strategy: option.oneOf(["native", "tool", "prompted"], '"native", "tool" or "prompted"'),
  finalMessage: option.or(option.oneOf(["json", "text"]), option.fn, '"json", "text" or a function'),
  prompted: option.flag,
  env: option.object("an object of environment variables"),
  maxCorrections: option.integer,
  onStructuredResponse: option.fn,
  onRepair: option.fn,
  onFallback: option.fn,
  name: option.name,
} as const satisfies Record<string, OptionKind>;

type Key = keyof typeof KINDS;

/** A checked copy of `options` holding the keys listed (space-separated) that are set (`undefined`/`null` are `{}`). */
export const structuredOptions = <T extends object>(options: unknown, fn: string, keys: string): T =>
  readOptions<T>(options, fn, Object.fromEntries(keys.split(" ").map((key) => [key, KINDS[key as Key]])));
