/**
 * What the stored final assistant message shows when the answer itself is the JSON (prompted strategy, and
 * createAgent's native strategy), and how a structured response is reported.
 */
import { AIMessage } from "@langchain/core/messages";
import { answerText, type AnswerChoice, type Resolved } from "./parse";
import type { StructuredOutputStrategy } from "./strategy";
import { safeJson, type Dict } from "../values";

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

/** The final message's text under the option, or undefined when the JSON stays as it is. */
export function finalMessageText(option: FinalMessageOption | undefined, value: unknown): string | undefined {
  if (option === undefined || option === "json") return undefined;
  if (option === "text") return readableText(value);
  const text = option(value);
  if (typeof text !== "string")
    throw new TypeError(`The 'finalMessage' function must return a string, got ${typeof text}`);
  return text;
}

/** One structured response to `onStructuredResponse`. */
export function reportResponse(
  options: { onStructuredResponse?: (report: StructuredResponseReport) => void },
  strategy: StructuredOutputStrategy,
  { value, corrections, choice }: Resolved<unknown>,
  modelId?: string,
): void {
  options.onStructuredResponse?.({ strategy, value, corrections, choice, modelId });
}

/**
 * The state update of an answer read as JSON, reported: the structured response, and the stored final answer
 * when it changes (a correction, or `finalMessage` text): `text` as its content, the answer's metadata, under the
 * id and name of the message it replaces (the messages reducer replaces by id; an id is given to a message that
 * has none, in both places, as createAgent sets `name`). Text only, so a stray tool call in a correction cannot
 * send the graph back to the tools.
 */
export function structuredUpdate(
  options: { onStructuredResponse?: (report: StructuredResponseReport) => void; finalMessage?: FinalMessageOption },
  strategy: StructuredOutputStrategy,
  resolved: Resolved<unknown>,
  modelId: string | undefined,
  replaced: AIMessage,
): Record<string, unknown> {
  const { value: structuredResponse, answer } = resolved;
  reportResponse(options, strategy, resolved, modelId);
  const shown = finalMessageText(options.finalMessage, structuredResponse);
  if (shown === undefined && answer === replaced) return { structuredResponse };
  if (!replaced.id) replaced.id = (replaced.lc_kwargs as Dict).id = `run-${globalThis.crypto.randomUUID()}`;
  const { id, name } = replaced;
  const { response_metadata, usage_metadata } = answer as AIMessage;
  const content = shown ?? answerText(answer);
  return { structuredResponse, messages: [new AIMessage({ content, id, name, response_metadata, usage_metadata })] };
}

/** Deepest nesting written as lines; a value nested deeper is summarized as short JSON on its line. */
export const READABLE_MAX_DEPTH = 32;
/** Longest readable text; past it the rest is cut, under a last line that says so. */
export const READABLE_MAX_LENGTH = 100_000;
/** How many times one object or list met again (shared across the value) is written out; after that it is named. */
export const READABLE_MAX_EXPANSIONS = 2;
/** Longest JSON summary of a value past {@link READABLE_MAX_DEPTH}. */
const SUMMARY_LENGTH = 200;

/** Every entry writes a line of at least 3 characters: entries past this many could never be shown. */
const MAX_ENTRIES = Math.ceil(READABLE_MAX_LENGTH / 3) + 1;

/**
 * A value as readable lines: `key: value` for object fields, `- item` for list items, nested values indented.
 * Total and linear in the value it shows, whatever the value: a value that contains itself is written
 * `[circular]` where it recurs, nesting past 32 levels (`READABLE_MAX_DEPTH`, which bounds the recursion) is
 * summarized as short JSON, an object or list shared across the value is written out at most
 * twice (`READABLE_MAX_EXPANSIONS`; then `[repeated, shown above]`), the text stops at
 * 100,000 characters (`READABLE_MAX_LENGTH`), and what cannot be read is written `[unreadable]`.
 */
export function readableText(value: unknown): string {
  const lines: string[] = [];
  let room = READABLE_MAX_LENGTH;
  // Lines up to a total length; the line that crosses it is cut, a last line says so, and writing stops.
  const add = (line: string) => {
    if (room < 0) return;
    if (line.length + 1 <= room) lines.push(line);
    else lines.push(`${line.slice(0, Math.max(0, room))}…`, `[cut at ${READABLE_MAX_LENGTH} characters]`);
    room -= line.length + 1;
  };
  const path = new Set<object>(); // the containers being written, root to current: a cycle comes back to one
  const expansions = new Map<object, number>();
  // The root writes its entries at level 0; a labelled container writes its own line, its entries one deeper.
  const write = (current: unknown, level: number, label: string) => {
    const head = "  ".repeat(level) + label;
    if (typeof current !== "object" || current === null)
      return add(head + (current === undefined ? "" : String(current)));
    const inner = label === "" ? level : level + 1;
    const seen = expansions.get(current) ?? 0;
    let entries: (readonly [string, unknown])[] | undefined;
    let instead = path.has(current)
      ? "[circular]"
      : inner > READABLE_MAX_DEPTH
        ? safeJson(current, SUMMARY_LENGTH)
        : seen >= READABLE_MAX_EXPANSIONS
          ? "[repeated, shown above]"
          : "[unreadable]";
    if (instead === "[unreadable]") {
      expansions.set(current, seen + 1);
      // At most MAX_ENTRIES of them (a sparse array of length 1e9 is not walked); a throwing getter or a revoked
      // proxy cannot be read.
      try {
        entries = Array.isArray(current)
          ? Array.from({ length: Math.min(current.length, MAX_ENTRIES) }, (_, i) => ["- ", current[i]] as const)
          : Object.keys(current)
              .slice(0, MAX_ENTRIES)
              .map((key) => [`${key}: `, (current as Dict)[key]] as const);
      } catch {}
    }
    if (entries === undefined) return add(head + instead);
    instead = entries.length > 0 ? "" : Array.isArray(current) ? " (none)" : " (empty)";
    if (label !== "") add(head.trimEnd() + instead);
    path.add(current);
    for (const [key, item] of entries) if (room >= 0) write(item, inner, key);
    path.delete(current);
  };
  write(value, 0, "");
  return lines.join("\n");
}
