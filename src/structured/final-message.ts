/**
 * What the stored final assistant message shows when the answer itself is the JSON (prompted strategy, and
 * createAgent's native strategy), and how a structured response is reported.
 */
import type { AnswerChoice } from "./parse";
import type { StructuredOutputStrategy } from "./strategy";

/**
 * - `"json"` (default): the final message keeps the JSON the model wrote. The tokens streamed in `messages` mode
 *   were that JSON already (a stored replacement cannot unsend them), the next turn shows the model answers in
 *   the format it was told to use (a prompted model keeps following it), and `structuredResponse` carries the
 *   object for programs.
 * - `"text"`: the stored final message shows the parsed object as readable `key: value` lines (same message id,
 *   so it replaces the JSON in state, in `values` / `updates` streams and in checkpoints).
 * - a function: the stored final message's text is what it returns for the parsed object.
 */
export type FinalMessageOption = "json" | "text" | ((value: unknown) => string);

/** One structured response, as reported to `onStructuredResponse`. */
export interface StructuredResponseReport {
  strategy: StructuredOutputStrategy | "own";
  /** The structured response (the schema's output). */
  value: unknown;
  /** Corrective calls made. */
  corrections: number;
  /** Which value was taken when the answer held several valid ones (undefined for createReactAgent's own call). */
  choice?: AnswerChoice;
  /** The model id that answered, where known. */
  modelId?: string;
}

export function assertFinalMessageOption(option: unknown): asserts option is FinalMessageOption | undefined {
  if (option === undefined || option === "json" || option === "text" || typeof option === "function") return;
  throw new TypeError(`Unexpected 'finalMessage' option ${JSON.stringify(option)}: expected "json", "text" or a function.`);
}

/** The final message's text under the option, or undefined when the JSON stays as it is. */
export function finalMessageText(option: FinalMessageOption | undefined, value: unknown): string | undefined {
  if (option === undefined || option === "json") return undefined;
  if (option === "text") return readableText(value);
  const text = option(value);
  if (typeof text !== "string") throw new TypeError(`The 'finalMessage' function must return a string, got ${typeof text}`);
  return text;
}

/**
 * A value as readable lines: `key: value` for object fields, `- item` for list items, nested values indented.
 * Iterative, so a deep value cannot overflow the stack; linear in the value's size.
 */
export function readableText(value: unknown): string {
  const lines: string[] = [];
  const stack: { value: unknown; indent: string; label: string }[] = [{ value, indent: "", label: "" }];
  while (stack.length > 0) {
    const { value: current, indent, label } = stack.pop()!;
    if (isContainer(current)) {
      const entries = Array.isArray(current)
        ? current.map((item) => ["- ", item] as const)
        : Object.entries(current as Record<string, unknown>).map(([key, item]) => [`${key}: `, item] as const);
      if (label !== "") lines.push(`${indent}${label.trimEnd()}${entries.length === 0 ? (Array.isArray(current) ? " (none)" : " (empty)") : ""}`);
      const childIndent = label === "" ? indent : `${indent}  `;
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i][1], indent: childIndent, label: entries[i][0] });
    } else {
      lines.push(`${indent}${label}${scalarText(current)}`);
    }
  }
  return lines.join("\n");
}

const isContainer = (value: unknown): boolean => typeof value === "object" && value !== null;

function scalarText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  return String(value);
}
