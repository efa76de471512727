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

import { expectedInput, optionsInput, ownInput } from "../errors";
import { isDict, type Dict } from "../values";

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
    const value = ownInput(record, key, fn);
    if (value === undefined) continue;
    if (!ok(value)) throw expectedInput(fn, `options.${key}`, expected, value);
    out[key] = value;
  }
  return out;
}
