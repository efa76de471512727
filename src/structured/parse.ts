/**
 * Reading the structured response out of the agent's final answer: lenient JSON extraction, validation,
 * and the one corrective round trip (a request that ends with a user message: never prefill).
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { errorText } from "../errors";
import { safeJson, type Dict } from "../values";
import { correctionMessage, hasJsonSchema, outputFormatOf, type OutputFormat, type Validation } from "./format";
import type { StructuredOutputStrategy } from "./strategy";

/** JSON.parse attempts on bracket spans before the scanner gives up (bounds the work on brace-heavy answers). */
const MAX_SPAN_ATTEMPTS = 64;
/** Fresh bracket scans after a string that never ends (each one linear). */
const MAX_RESCANS = 4;
/** Open brackets the scanner keeps; past it the oldest are forgotten (bounds its memory on '{' x n). */
const MAX_NESTING = 512;
/** Candidate values validated per answer. */
const MAX_CANDIDATES = 64;

/** The answer's text: a string content, or its text blocks joined (thinking / reasoning blocks skipped). */
export function answerText({ content }: BaseMessage): string {
  if (typeof content === "string") return content;
  return content.map((b) => ((b as Dict | null)?.type === "text" && typeof b.text === "string" ? b.text : "")).join("");
}

/** Where a JSON value was found, best first: the whole answer, a ```json fence, another fence, a bracket span in the text. */
export type CandidateSource = "whole" | "json-fence" | "fence" | "span";

const TIERS: readonly CandidateSource[] = ["whole", "json-fence", "fence", "span"];

export interface Candidate {
  value: unknown;
  source: CandidateSource;
}

/**
 * Every distinct JSON value found in the text, by tier (the whole text, then ```json fences, then other fences,
 * then outermost balanced `{...}` / `[...]` spans), left to right within a tier. A value found again in a lower
 * tier (a fenced block is also a bracket span) is listed once. Linear in the text's length.
 */
export function answerCandidates(text: string): Candidate[] {
  const found: Candidate[] = [];
  const seen = new Set<string>();
  const add = (source: CandidateSource, raw: string) => {
    if (found.length >= MAX_CANDIDATES) return;
    const value = parseJson(raw);
    // A key equal for equal values (the source text when the value cannot be serialised, e.g. too deep).
    const key = orElse(() => JSON.stringify(value), raw);
    if (value === NOT_JSON || seen.has(key)) return;
    seen.add(key);
    found.push({ value, source });
  };
  const trimmed = text.replace(/^\uFEFF/, "").trim();
  if (trimmed !== "") add("whole", trimmed);
  // Fences left to right: "```", a label of word characters, blanks, an optional newline, the body, "```". A
  // scan with indexOf (a regex with a lazy body after a greedy label backtracks on an unclosed fence).
  const others: string[] = [];
  const head = /([\w-]*)[ \t\r]*\n?/y;
  for (let open = trimmed.indexOf("```"); open >= 0; open = trimmed.indexOf("```", open)) {
    head.lastIndex = open + 3;
    const label = head.exec(trimmed)![1];
    open = trimmed.indexOf("```", head.lastIndex);
    if (open < 0) break;
    const body = trimmed.slice(head.lastIndex, open).trim();
    if (label.toLowerCase() !== "json") others.push(body);
    else if (body !== "") add("json-fence", body);
    open += 3;
  }
  for (const body of others) if (body !== "") add("fence", body);
  for (const span of balancedSpans(trimmed)) add("span", span.text);
  return found;
}

/**
 * Outermost balanced `{...}` and `[...]` spans that parse as JSON, left to right. Brackets inside strings do
 * not count (quotes only open strings inside a bracket: outside, they are prose). A span that does not parse is
 * skipped and the scan goes on inside it.
 *
 * Linear (n log n in the number of bracket pairs): one pass pairs every bracket with its close; a pass that ends
 * inside a string that never closes (a stray quote swallowed the rest) is redone from just after that quote, at
 * most {@link MAX_RESCANS} times; at most {@link MAX_SPAN_ATTEMPTS} spans are handed to JSON.parse.
 */
export function balancedSpans(text: string): { start: number; text: string }[] {
  const closeOf = new Map<number, number>();
  let from = 0;
  for (let scan = 0; scan <= MAX_RESCANS && from < text.length; scan++) {
    const openQuote = pairBrackets(text, from, closeOf);
    if (openQuote < 0) break;
    from = openQuote + 1;
  }
  const spans: { start: number; text: string }[] = [];
  let attempts = 0;
  let resumeAt = 0;
  for (const start of [...closeOf.keys()].sort((a, b) => a - b)) {
    if (attempts >= MAX_SPAN_ATTEMPTS) break;
    if (start < resumeAt) continue; // inside a span already taken
    const end = closeOf.get(start)! + 1;
    attempts++;
    const span = { start, text: text.slice(start, end) };
    if (parseJson(span.text) === NOT_JSON) continue;
    spans.push(span);
    resumeAt = end;
  }
  return spans;
}

/**
 * One pass from `from`: records in `closeOf` the close of every bracket that closes. A wrong closing bracket
 * leaves the brackets open before it unclosed and the pass goes on. Returns the position of the quote whose
 * string was still open at the end of the text, or -1.
 */
function pairBrackets(text: string, from: number, closeOf: Map<number, number>): number {
  let stack: number[] = [];
  let stringStart = -1;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    const opens = ch === "{" || ch === "[";
    if (stack.length === 0) {
      if (opens) stack.push(i);
    } else if (stringStart >= 0) {
      if (ch === "\\") i++;
      else if (ch === '"') stringStart = -1;
    } else if (ch === '"') stringStart = i;
    else if (opens) {
      // Deeper than MAX_NESTING: forget the oldest half (brackets that far out rarely close; amortised O(1)).
      if (stack.length >= MAX_NESTING) stack = stack.slice(MAX_NESTING / 2);
      stack.push(i);
    } else if (ch === "}" || ch === "]") {
      const open = stack.pop()!;
      if (text[open] === (ch === "}" ? "{" : "[")) closeOf.set(open, i);
      else stack.length = 0; // nothing open here can close any more
    }
  }
  return stringStart;
}

const NOT_JSON = Symbol("not JSON");

const orElse = <T>(read: () => T, fallback: T): T => {
  try {
    return read();
  } catch {
    return fallback;
  }
};
const parseJson = (source: string): unknown => orElse(() => JSON.parse(source), NOT_JSON);

/**
 * Which value was taken when the answer held more than one. The rule: the best tier that holds a valid value
 * wins (the whole answer, then ```json fences, then other fences, then bracket spans in the text), and within it
 * the LAST valid value: a model that writes several answers is usually correcting itself ("Draft: {...} Final:
 * {...}"), so its last word is its answer.
 */
export interface AnswerChoice {
  /** Where the chosen value was found. */
  source: CandidateSource;
  /** Distinct valid values in the answer (1: there was no choice to make). */
  validCount: number;
  /** The other valid values (schema output), in the order found. */
  others: unknown[];
}

export type ParsedAnswer<T> = { ok: true; value: T; choice: AnswerChoice } | { ok: false; issues: string[] };

/**
 * The structured response in an answer: the JSON values it holds ({@link answerCandidates}), validated by the
 * format, one chosen by the rule of {@link AnswerChoice} (reported in `choice`). When none validates: the issues of
 * the best guess (the first value found), or "no JSON value" when the text holds none.
 *
 * `format` is a schema in any form `outputFormatOf` takes (zod 3 or 4, Standard JSON Schema, JSON schema) or an
 * OutputFormat; anything else is a TypeError.
 */
export async function parseStructuredAnswer<T = unknown>(
  text: string,
  format: OutputFormat<T> | unknown,
): Promise<ParsedAnswer<T>> {
  const outputFormat =
    hasJsonSchema(format) && typeof (format as Dict).validate === "function"
      ? (format as OutputFormat<T>)
      : outputFormatOf<T>(format, undefined, "format");
  const candidates = answerCandidates(text);
  if (candidates.length === 0) {
    return { ok: false, issues: [text.trim() === "" ? "the reply is empty" : "the reply contains no JSON value"] };
  }
  const valid: { value: T; source: CandidateSource }[] = [];
  let firstFailure: string[] | undefined;
  for (const { value, source } of candidates) {
    // A validator that throws (a value nested deeper than the stack) counts as a failed validation.
    let result: Validation<T>;
    try {
      result = await outputFormat.validate(value);
    } catch (error) {
      result = { ok: false, issues: [`the value could not be validated: ${errorText(error)}`] };
    }
    if (result.ok) valid.push({ value: result.value, source });
    else firstFailure ??= result.issues;
  }
  if (valid.length === 0) return { ok: false, issues: firstFailure ?? ["the reply contains no valid JSON value"] };
  const bestTier = TIERS.find((tier) => valid.some((v) => v.source === tier))!;
  const chosen = valid.map((v) => v.source).lastIndexOf(bestTier);
  const others = valid.filter((_, i) => i !== chosen).map((v) => v.value);
  return { ok: true, value: valid[chosen].value, choice: { source: bestTier, validCount: valid.length, others } };
}

export interface StructuredAttempt {
  /** The answer's text as the model gave it. */
  raw: string;
  /** Why it was not accepted. */
  issues: string[];
}

/** The final answer could not be turned into the response format, even after the corrective call(s). */
export class PromptedStructuredOutputError extends Error {
  /** The last answer's text. */
  declare readonly raw: string;
  /** Why the last answer was not accepted (validation issues, or "no JSON value"). */
  declare readonly issues: string[];
  /** Every answer tried, first (the agent's own) to last (the last correction). */
  declare readonly attempts: StructuredAttempt[];

  constructor(attempts: StructuredAttempt[]) {
    const { raw, issues } = attempts.at(-1) ?? { raw: "", issues: [] };
    const tries = attempts.length === 1 ? "" : ` after ${attempts.length - 1} corrective call(s)`;
    super(
      `The model's final answer does not match the response format${tries}: ${issues.join("; ")}. ` +
        `Raw answer: ${raw.length <= 500 ? raw : `${raw.slice(0, 500)}...`}`,
    );
    this.name = "PromptedStructuredOutputError";
    Object.assign(this, { raw, issues, attempts });
  }

  /** True for this error, also from another copy of the package (a value that refuses to be read is not it). */
  static isInstance(error: unknown): error is PromptedStructuredOutputError {
    const e = error as PromptedStructuredOutputError;
    return orElse(
      () => e instanceof Error && e.name === "PromptedStructuredOutputError" && Array.isArray(e.attempts),
      false,
    );
  }

  /** This error, or the first one in the `cause` chain (langchain wraps middleware errors in MiddlewareError). */
  static find(error: unknown): PromptedStructuredOutputError | undefined {
    for (let depth = 0; error != null && depth < 10; depth++) {
      if (PromptedStructuredOutputError.isInstance(error)) return error;
      // a cause that cannot be read ends the chain
      error = orElse(() => (error as Error).cause, undefined);
    }
    return undefined;
  }
}

export interface Resolved<T> {
  value: T;
  /** The answer the value came from. */
  answer: BaseMessage;
  /** Corrective calls made (0 when the first answer was valid). */
  corrections: number;
  /** Which value was taken when the answer held several valid ones (see {@link AnswerChoice}). */
  choice: AnswerChoice;
}

/**
 * The structured response from a final answer, with up to `maxCorrections` corrective calls (default 1).
 * `askAgain` makes one corrective call. `followUp` is what comes after the history that produced the first answer:
 * [answer, correction] (then [answer, correction, answer2, correction2], ...); it ends with a user message.
 */
export async function resolveStructuredAnswer<T>(
  answer: BaseMessage,
  format: OutputFormat<T>,
  {
    maxCorrections = 1,
    askAgain,
  }: { maxCorrections?: number; askAgain(followUp: BaseMessage[]): Promise<BaseMessage> },
): Promise<Resolved<T>> {
  const attempts: StructuredAttempt[] = [];
  const followUp: BaseMessage[] = [];
  let current = answer;
  for (let corrections = 0; ; corrections++) {
    const raw = answerText(current);
    const result = await parseStructuredAnswer<T>(raw, format);
    if (result.ok) return { value: result.value, answer: current, corrections, choice: result.choice };
    attempts.push({ raw, issues: result.issues });
    if (corrections >= maxCorrections) throw new PromptedStructuredOutputError(attempts);
    followUp.push(textOnlyAnswer(raw), correctionMessage(result.issues, format));
    current = await askAgain([...followUp]);
  }
}

/**
 * The answer as it goes back to the model: text only (a corrected answer that called a tool would leave an
 * unanswered call, B1/O1), never blank (B8/B9, A9).
 */
export function textOnlyAnswer(raw: string, id?: string): AIMessage {
  return new AIMessage({ content: raw.trim() === "" ? "(empty reply)" : raw, id });
}

/**
 * What the stored final assistant message shows when the answer itself is the JSON (prompted strategy, and
 * createAgent's native strategy), and how a structured response is reported.
 */
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
  const { value: structuredResponse, answer, corrections, choice } = resolved;
  options.onStructuredResponse?.({ strategy, value: structuredResponse, corrections, choice, modelId });
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
