/**
 * Reading the structured response out of the agent's final answer: lenient JSON extraction, validation,
 * and the one corrective round trip (a request that ends with a user message: never prefill).
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { OutputFormat, Validation } from "./format";
import { correctionMessage } from "./instructions";

/** Spans tried by the brace scanner before it gives up (bounds the work on long, brace-heavy answers). */
const MAX_SPAN_ATTEMPTS = 64;

/** The answer's text: a string content, or its text blocks joined (thinking / reasoning blocks skipped). */
export function answerText(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content
    .map((block) => {
      const b = block as { type?: unknown; text?: unknown };
      return b.type === "text" && typeof b.text === "string" ? b.text : "";
    })
    .join("");
}

/**
 * Every JSON value found in the text, best guess first: the whole text, then fenced blocks (```json ones
 * first), then balanced `{...}` / `[...]` spans from left to right (outermost ones).
 */
export function jsonCandidates(text: string): unknown[] {
  const found: unknown[] = [];
  const tryParse = (source: string): boolean => {
    try {
      found.push(JSON.parse(source));
      return true;
    } catch {
      return false;
    }
  };
  const trimmed = text.replace(/^\uFEFF/, "").trim();
  if (trimmed !== "") tryParse(trimmed);
  for (const block of fencedBlocks(trimmed)) tryParse(block);
  for (const span of balancedSpans(trimmed)) tryParse(span.text);
  return found;
}

/** Contents of Markdown code fences; those labelled json come first. */
export function fencedBlocks(text: string): string[] {
  const json: string[] = [];
  const other: string[] = [];
  for (const match of text.matchAll(/```([\w-]*)[^\S\n]*\n?([\s\S]*?)```/g)) {
    const body = match[2].trim();
    if (body === "") continue;
    (match[1].toLowerCase() === "json" ? json : other).push(body);
  }
  return [...json, ...other];
}

/**
 * Outermost balanced `{...}` and `[...]` spans that parse as JSON, left to right. Strings (with escapes) are
 * skipped while matching, so a brace inside a string does not count. A span that does not parse is skipped
 * and the scan goes on inside it.
 */
export function balancedSpans(text: string): { start: number; text: string }[] {
  const spans: { start: number; text: string }[] = [];
  let attempts = 0;
  let i = 0;
  while (i < text.length && attempts < MAX_SPAN_ATTEMPTS) {
    const ch = text[i];
    if (ch !== "{" && ch !== "[") {
      i++;
      continue;
    }
    const end = matchingClose(text, i);
    if (end < 0) {
      i++;
      continue;
    }
    attempts++;
    const candidate = text.slice(i, end + 1);
    if (parses(candidate)) {
      spans.push({ start: i, text: candidate });
      i = end + 1;
    } else {
      i++;
    }
  }
  return spans;
}

function parses(source: string): boolean {
  try {
    JSON.parse(source);
    return true;
  } catch {
    return false;
  }
}

/** Index of the bracket closing the one at `start`, or -1. */
function matchingClose(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{") stack.push("}");
    else if (ch === "[") stack.push("]");
    else if (ch === "}" || ch === "]") {
      if (stack.pop() !== ch) return -1;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

/**
 * The first JSON value in the text that the format accepts. When none does: the issues of the best guess
 * (the first value found), or "no JSON value" when the text holds none.
 */
export async function parseStructuredAnswer<T>(text: string, format: OutputFormat<T>): Promise<Validation<T>> {
  const candidates = jsonCandidates(text);
  if (candidates.length === 0) {
    return { ok: false, issues: [text.trim() === "" ? "the reply is empty" : "the reply contains no JSON value"] };
  }
  let firstFailure: Validation<T> | undefined;
  for (const candidate of candidates) {
    const result = await format.validate(candidate);
    if (result.ok) return result;
    firstFailure ??= result;
  }
  return firstFailure as Validation<T>;
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
  readonly raw: string;
  /** Why the last answer was not accepted (validation issues, or "no JSON value"). */
  readonly issues: string[];
  /** Every answer tried, first (the agent's own) to last (the last correction). */
  readonly attempts: StructuredAttempt[];

  constructor(attempts: StructuredAttempt[]) {
    const last = attempts[attempts.length - 1] ?? { raw: "", issues: [] };
    const tries = attempts.length === 1 ? "" : ` after ${attempts.length - 1} corrective call(s)`;
    super(
      `The model's final answer does not match the response format${tries}: ${last.issues.join("; ")}. ` +
        `Raw answer: ${truncate(last.raw, 500)}`,
    );
    this.name = "PromptedStructuredOutputError";
    this.raw = last.raw;
    this.issues = last.issues;
    this.attempts = attempts;
  }

  /** True for this error, also from another copy of the package. */
  static isInstance(error: unknown): error is PromptedStructuredOutputError {
    return (
      error instanceof Error &&
      error.name === "PromptedStructuredOutputError" &&
      Array.isArray((error as Partial<PromptedStructuredOutputError>).attempts)
    );
  }

  /** This error, or the first one in the `cause` chain (langchain wraps middleware errors in MiddlewareError). */
  static find(error: unknown): PromptedStructuredOutputError | undefined {
    let current: unknown = error;
    for (let depth = 0; current !== undefined && current !== null && depth < 10; depth++) {
      if (PromptedStructuredOutputError.isInstance(current)) return current;
      current = (current as { cause?: unknown }).cause;
    }
    return undefined;
  }
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}

export interface ResolveOptions {
  /** Corrective calls allowed (default 1). */
  maxCorrections?: number;
  /**
   * Makes one corrective call. `followUp` is what comes after the history that produced the first answer:
   * [answer, correction] (then [answer, correction, answer2, correction2], ...); it ends with a user message.
   */
  askAgain(followUp: BaseMessage[]): Promise<BaseMessage>;
}

export interface Resolved<T> {
  value: T;
  /** The answer the value came from. */
  answer: BaseMessage;
  /** Corrective calls made (0 when the first answer was valid). */
  corrections: number;
}

/** The structured response from a final answer, with up to `maxCorrections` corrective calls. */
export async function resolveStructuredAnswer<T>(
  answer: BaseMessage,
  format: OutputFormat<T>,
  options: ResolveOptions,
): Promise<Resolved<T>> {
  const maxCorrections = options.maxCorrections ?? 1;
  const attempts: StructuredAttempt[] = [];
  const followUp: BaseMessage[] = [];
  let current = answer;
  for (let corrections = 0; ; corrections++) {
    const raw = answerText(current);
    const result = await parseStructuredAnswer(raw, format);
    if (result.ok) return { value: result.value, answer: current, corrections };
    attempts.push({ raw, issues: result.issues });
    if (corrections >= maxCorrections) throw new PromptedStructuredOutputError(attempts);
    followUp.push(textOnlyAnswer(raw), correctionMessage(result.issues, format));
    current = await options.askAgain([...followUp]);
  }
}

/**
 * The answer as it goes back to the model: text only (a corrected answer that called a tool would leave an
 * unanswered call, B1/O1), never blank (B8/B9, A9).
 */
function textOnlyAnswer(raw: string): AIMessage {
  return new AIMessage(raw.trim() === "" ? "(empty reply)" : raw);
}
