/**
 * Shared pieces of the payload validators (one file per wire format in this folder). The validators check
 * the tool-call rules of PROVIDER_RULES.md and answer with the provider's own error text, so a test can lint
 * the payload its adapter would send (or did send) without a network call.
 *
 * Inputs are typed `unknown` on purpose: captured payloads are plain JSON and may be malformed; anything
 * that is not the expected shape is skipped rather than thrown on.
 */

export interface PayloadViolation {
  /** Rule id from PROVIDER_RULES.md, e.g. "B1". */
  rule: string;
  /** The provider's own error text, with ids and indexes filled in. */
  message: string;
  /** Where in the payload, e.g. "messages[2]" or "messages.2.content". */
  path?: string;
  /** The payload entry concerned (`messages[N]`, `messages.N`, `input[N]`, `contents[N]`): N. */
  payloadIndex?: number;
  /** The ids the message names, in its order (tool call ids; for R5 the Responses item id). */
  toolCallIds?: string[];
}

import { expectedInput, optionsInput, ToolCallRepairInputError } from "../../../src/errors";
import { isDict, type Dict } from "../../../src/values";

export { isDict, type Dict };
export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const asString = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
export const isBlank = (text: string): boolean => text.trim() === "";

/** The id / function name pattern shared by OpenAI, Anthropic and Bedrock. */
export const NAME_PATTERN = /^[a-zA-Z0-9_-]+$/;

export function missingFrom(expected: string[], present: Set<string>): string[] {
  return expected.filter((id) => !present.has(id));
}

/**
 * A validator's options, checked and copied: each listed key undefined or accepted by its check, an error naming
 * the option and what it accepts otherwise (a getter that throws included). The payload itself stays lenient.
 */
export function validationOptions(
  options: unknown,
  fn: string,
  checks: Record<string, readonly [(value: unknown) => boolean, string]>,
): Dict {
  const record = optionsInput(options, fn);
  const out: Dict = {};
  for (const [key, [ok, expected]] of Object.entries(checks)) {
    const value = readingInput(() => (Object.hasOwn(record, key) ? record[key] : undefined), fn, `options.${key}`);
    if (value === undefined) continue;
    if (!ok(value)) throw expectedInput(fn, `options.${key}`, expected, value);
    out[key] = value;
  }
  return out;
}

/** Runs `read`; what it throws becomes a ToolCallRepairInputError naming `fn` and `argument` (a getter that throws). */
export function readingInput<T>(read: () => T, fn: string, argument = "messages"): T {
  try {
    return read();
  } catch (error) {
    if (ToolCallRepairInputError.isInstance(error)) throw error;
    const text = error instanceof Error ? error.message : typeof error === "string" ? error : typeof error;
    throw new ToolCallRepairInputError(`${fn}: ${argument} could not be read (${text})`, { argument, cause: error });
  }
}

/** The A10 text (Bedrock B11 wraps it): `path` names the opening turn's first block. */
export function thinkingFirstText(path: string, found: string): string {
  return (
    `${path}.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${found}\`. When \`thinking\` is enabled, a final ` +
    "`assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). " +
    "We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`."
  );
}

/**
 * The open tool loop of a request, as turns: the index of the turn that opens it (the first assistant turn after the
 * last user turn without tool results), when the request ends on tool results; undefined when no loop is open.
 * A user turn that holds tool results continues the loop, whatever text the API merged into it.
 */
export function openLoopOpener<T>(
  turns: readonly T[],
  roleOf: (t: T) => string,
  holdsResults: (t: T) => boolean,
): number | undefined {
  const last = turns[turns.length - 1];
  if (last === undefined || roleOf(last) !== "user" || !holdsResults(last)) return undefined;
  let start = turns.length - 1;
  while (start >= 0 && !(roleOf(turns[start]) === "user" && !holdsResults(turns[start]))) start--;
  for (let t = start + 1; t < turns.length; t++) if (roleOf(turns[t]) === "assistant") return t;
  return undefined;
}
