/**
 * Reading the structured response out of the agent's final answer: lenient JSON extraction, validation,
 * and the one corrective round trip (a request that ends with a user message: never prefill).
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { causeChain, errorText } from "../errors";
import type { Dict } from "../values";
import { correctionMessage, type OutputFormat, type Validation } from "./format";
import type { StructuredOutputStrategy } from "./strategy";

/** JSON.parse attempts on bracket spans before the scanner gives up (bounds the work on brace-heavy answers). */
const MAX_SPAN_ATTEMPTS = 64;
/** Fresh bracket scans after a string that never ends (each one linear). */
const MAX_RESCANS = 4;
/** Open brackets the scanner keeps; past it the oldest are forgotten (bounds its memory on '{' x n). */
const MAX_NESTING = 512;

/** The answer's text: a string content, or its text blocks joined (thinking / reasoning blocks skipped). */
export const answerText = ({ content }: BaseMessage) =>
  typeof content === "string"
    ? content
    : content.map((b) => ((b as Dict | null)?.type === "text" && typeof b.text === "string" ? b.text : "")).join("");

/**
 * The JSON values in the text: the whole text when it is one, else the outermost balanced `{...}` / `[...]`
 * spans left to right (a fenced block is such a span). Linear in the text's length.
 */
export function answerCandidates(text: string) {
  text = text.trim(); // a leading BOM is white space to trim() too
  const whole = parseJson(text);
  return whole === NOT_JSON ? balancedSpans(text).map((span) => span.value) : [whole];
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
export function balancedSpans(text: string) {
  const closeOf = new Map<number, number>();
  let from = 0;
  for (let scan = 0; scan <= MAX_RESCANS && from < text.length; scan++) {
    const openQuote = pairBrackets(text, from, closeOf);
    if (openQuote < 0) break;
    from = openQuote + 1;
  }
  const spans = [];
  let attempts = 0;
  let resumeAt = 0;
  for (const [start, close] of [...closeOf].sort(([a], [b]) => a - b)) {
    if (start < resumeAt) continue; // inside a span already taken
    if (++attempts > MAX_SPAN_ATTEMPTS) break;
    const span = text.slice(start, close + 1);
    const value = parseJson(span);
    if (value === NOT_JSON) continue;
    spans.push({ text: span, value });
    resumeAt = close + 1;
  }
  return spans;
}

/**
 * One pass from `from`: records in `closeOf` the close of every bracket that closes. A wrong closing bracket
 * leaves the brackets open before it unclosed and the pass goes on. Returns the position of the quote whose
 * string was still open at the end of the text, or -1.
 */
function pairBrackets(text: string, from: number, closeOf: Map<number, number>) {
  let stack: number[] = [];
  let stringStart = -1;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    const opens = ch === "{" || ch === "[";
    if (!stack.length) {
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

const parseJson = (source: string): unknown => {
  try {
    return JSON.parse(source);
  } catch {
    return NOT_JSON;
  }
};

/**
 * The structured response in an answer: the JSON values it holds ({@link answerCandidates}), validated by the
 * format, and the LAST valid one taken: a model that writes several answers is usually correcting itself
 * ("Draft: {...} Final: {...}"), so its last word is its answer. When none validates: the issues of the best
 * guess (the first value found), or "no JSON value" when the text holds none.
 */
export async function parseStructuredAnswer<T>(text: string, format: OutputFormat<T>): Promise<Validation<T>> {
  const results: Validation<T>[] = [];
  // A validator that throws (a value nested deeper than the stack) counts as a failed validation.
  for (const value of answerCandidates(text))
    results.push(
      await format
        .validate(value)
        .catch((error) => ({ ok: false, issues: [`the value could not be validated: ${errorText(error)}`] })),
    );
  return (
    results.filter((result) => result.ok).at(-1) ??
    results[0] ?? { ok: false, issues: [text.trim() ? "the reply contains no JSON value" : "the reply is empty"] }
  );
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

  /** True for this error, also from another copy of the package. */
  static isInstance(error: unknown): error is PromptedStructuredOutputError {
    try {
      return (
        error instanceof Error &&
        error.name === "PromptedStructuredOutputError" &&
        Array.isArray(Object(error).attempts)
      );
    } catch {
      return false;
    }
  }

  /** This error, or the first one in the `cause` chain (langchain wraps middleware errors in MiddlewareError). */
  static find(error: unknown) {
    for (const cause of causeChain(error, 10)) if (PromptedStructuredOutputError.isInstance(cause)) return cause;
  }
}

/**
 * The structured response from a final answer, with one corrective call when it is invalid. `askAgain` makes it:
 * `followUp` is what comes after the history that produced the first answer, [answer, correction], and ends with
 * a user message.
 */
export async function resolveStructuredAnswer<T>(
  answer: BaseMessage,
  format: OutputFormat<T>,
  askAgain: (followUp: BaseMessage[]) => BaseMessage | Promise<BaseMessage>,
) {
  const attempts = [];
  for (let current = answer; ; ) {
    const raw = answerText(current);
    const result = await parseStructuredAnswer(raw, format);
    if (result.ok) return { value: result.value, answer: current, corrections: attempts.length };
    attempts.push({ raw, issues: result.issues });
    if (attempts.length > 1) throw new PromptedStructuredOutputError(attempts);
    current = await askAgain([textOnlyAnswer(raw), correctionMessage(result.issues, format)]);
  }
}

/**
 * The answer as it goes back to the model: text only (a corrected answer that called a tool would leave an
 * unanswered call, B1/O1), never blank (B8/B9, A9).
 */
export const textOnlyAnswer = (raw: string, id?: string) =>
  new AIMessage({ content: raw.trim() ? raw : "(empty reply)", id });

/** One structured response, as reported to `onStructuredResponse`. */
export interface StructuredResponseReport {
  strategy: StructuredOutputStrategy | "own";
  /** The structured response (the schema's output). */
  value: unknown;
  /** Corrective calls made. */
  corrections: number;
  /** The model id that answered, where known. */
  modelId?: string;
}

/**
 * The state update of an answer read as JSON, reported: the structured response, and the stored final answer
 * when a correction changed it: its text as content, the answer's metadata, under the
 * id and name of the message it replaces (the messages reducer replaces by id; an id is given to a message that
 * has none, in both places, as createAgent sets `name`). Text only, so a stray tool call in a correction cannot
 * send the graph back to the tools. `replaced` defaults to the answer itself: nothing is replaced.
 */
export function structuredUpdate(
  options: { onStructuredResponse?(report: StructuredResponseReport): void },
  strategy: StructuredResponseReport["strategy"],
  // The value, the answer it came from, and the corrective calls made (0 when the first answer was valid).
  resolved: { value: unknown; answer: BaseMessage; corrections: number },
  modelId?: string,
  replaced = resolved.answer as AIMessage,
) {
  const { value: structuredResponse, answer, corrections } = resolved;
  options.onStructuredResponse?.({ strategy, value: structuredResponse, corrections, modelId });
  if (answer === replaced) return { structuredResponse };
  if (!replaced.id) replaced.id = (replaced.lc_kwargs as Dict).id = `run-${globalThis.crypto.randomUUID()}`;
  return { structuredResponse, messages: [asText(answer as AIMessage, undefined, replaced)] };
}

/** The answer as text only (`content`, by default its text) with its metadata, under `id` and `name` (its own by default). */
export const asText = (answer: AIMessage, content = answerText(answer), { id, name }: BaseMessage = answer) =>
  new AIMessage({
    content,
    id,
    name,
    response_metadata: answer.response_metadata,
    usage_metadata: answer.usage_metadata,
  });
