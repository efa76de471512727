/**
 * Where to cut a history for summarization without splitting a tool call from its results.
 *
 * A cut at index `cut` splits `messages` into three parts:
 * - the leading system messages `messages[0..systemCount)`: always kept, never summarized;
 * - the summarized prefix `messages[systemCount..cut)`;
 * - the kept tail `messages[cut..]`.
 * After summarization the history is `system + summary + tail`.
 */
import { SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { trailingOpenExchange } from "../messages/exchanges";
import { isAssistant, isToolResult, resultIdOf, toolCallIdsOf } from "../messages/inspect";
import { safeJson } from "../values";

/** Counts the tokens of a list of messages. Must not decrease when messages are added. */
export type TokenCounter = (messages: BaseMessage[]) => number;

/** How much of the history to keep verbatim. */
export type BoundaryOptions =
  /** Keep (at least) the last `keepLast` non-system messages. */
  | { keepLast: number }
  /** Keep as many recent messages as fit in `maxTokens`, the leading system messages included. */
  | { maxTokens: number; tokenCounter: TokenCounter };

/** How the messages of a history answer each other, by index. */
export interface ToolCallPairing {
  /** For a tool result at index i: the index of the assistant message that made its call (undefined: none before it). */
  callIndexOf: (number | undefined)[];
  /** For an assistant message at index i: the index of its last answered result (-1: none). */
  lastResultIndexOf: number[];
}

/**
 * Pair every tool result with the assistant message that called it: the latest assistant message before the
 * result that carries its id in any location (`toolCallIdsOf`). Pure, O(n) in messages and calls.
 */
export function pairToolCalls(messages: readonly BaseMessage[]): ToolCallPairing {
  const n = messages.length;
  const callIndexOf: (number | undefined)[] = new Array(n).fill(undefined);
  const lastResultIndexOf: number[] = new Array(n).fill(-1);
  const latestCaller = new Map<string, number>();
  messages.forEach((message, i) => {
    if (isAssistant(message)) {
      for (const id of toolCallIdsOf(message)) latestCaller.set(id, i);
    } else if (isToolResult(message)) {
      const id = resultIdOf(message);
      const caller = id === undefined ? undefined : latestCaller.get(id);
      if (caller === undefined || id === undefined) return;
      callIndexOf[i] = caller;
      lastResultIndexOf[caller] = i;
    }
  });
  return { callIndexOf, lastResultIndexOf };
}

/** Number of leading system messages (kept as they are, never summarized). */
export function leadingSystemCount(messages: readonly BaseMessage[]): number {
  let count = 0;
  while (count < messages.length && SystemMessage.isInstance(messages[count])) count++;
  return count;
}

/**
 * A rough token count (about 4 characters a token, plus a few per message and per tool call). Good enough for
 * thresholds; pass a real counter when the budget must be exact.
 */
export function approximateTokenCounter(messages: BaseMessage[]): number {
  let chars = 0;
  for (const message of messages) {
    chars += 16 + contentLength(message.content);
    if (isAssistant(message)) chars += safeJson(message.tool_calls ?? [], Number.MAX_SAFE_INTEGER).length;
  }
  return Math.ceil(chars / 4);
}

function contentLength(content: unknown): number {
  if (typeof content === "string") return content.length;
  return content === undefined || content === null ? 0 : safeJson(content, Number.MAX_SAFE_INTEGER).length;
}

/** The cut before any pairing fix: by message count, or the smallest cut whose kept part fits the budget. */
function budgetCut(messages: readonly BaseMessage[], systemCount: number, options: BoundaryOptions): number {
  const n = messages.length;
  if ("keepLast" in options) return Math.max(systemCount, n - Math.floor(options.keepLast));
  const system = messages.slice(0, systemCount);
  const fits = (cut: number) => options.tokenCounter([...system, ...messages.slice(cut)]) <= options.maxTokens;
  // Binary search for the smallest cut that fits; the counter is monotone in the number of messages.
  let low = systemCount;
  let high = n;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (fits(mid)) high = mid;
    else low = mid + 1;
  }
  return low;
}

/**
 * Move a cut back until no kept tool result answers a call of a summarized assistant message. Walks the kept
 * part from the end; as the cut moves back, the newly kept messages are walked too (their results may point
 * further back), so one pass reaches the fixed point.
 */
export function moveCutBeforeCalls(pairing: ToolCallPairing, cut: number, length: number): number {
  for (let i = length - 1; i >= cut; i--) {
    const caller = pairing.callIndexOf[i];
    if (caller !== undefined && caller < cut) cut = caller;
  }
  return cut;
}

/**
 * The index at which to cut `messages` for summarization: `messages[systemCount..cut)` are summarized,
 * `messages[cut..]` are kept verbatim, and the leading system messages `messages[0..systemCount)` are kept
 * and never summarized (`systemCount` = {@link leadingSystemCount}). The result is always in
 * `[systemCount, messages.length]`; `cut === systemCount` means there is nothing to summarize.
 *
 * Semantics:
 * 1. Start from the budget: `{ keepLast }` keeps the last `keepLast` non-system messages; `{ maxTokens,
 *    tokenCounter }` keeps the longest tail for which `tokenCounter(system + tail) <= maxTokens` (nothing
 *    when even the system messages do not fit).
 * 2. Move the cut back to include the assistant message of every kept tool result. Call ids are read from
 *    every location (`tool_calls`, `invalid_tool_calls`, raw OpenAI / Bedrock kwargs, `tool_use` content
 *    blocks, Responses output items). This handles parallel calls (a cut inside their result run), mixed
 *    result runs (one run answering several assistant messages: each caller is included), and results far
 *    from their calls. It repeats for the messages this brings into the kept part, so the summarized prefix
 *    never ends on calls whose results are kept.
 * 3. When the history ends on an assistant message with unanswered calls (tools that may still run on a
 *    resume), that message is always kept.
 * 4. A tool result whose call is nowhere in the history, found right at the cut, is summarized rather than
 *    left as the first kept message (no move back can pair it).
 *
 * The pairing fix wins over the budget: the kept part may hold more than `keepLast` messages or more than
 * `maxTokens` tokens by the rest of an exchange. The function only guarantees that the cut adds no problem;
 * problems the history already has (a result with no call anywhere, a call never answered) are left for
 * `repairToolCalls`.
 */
export function findSafeSummarizationBoundary(messages: readonly BaseMessage[], options: BoundaryOptions): number {
  assertBoundaryOptions(options);
  const systemCount = leadingSystemCount(messages);
  const pairing = pairToolCalls(messages);
  let cut = budgetCut(messages, systemCount, options);
  cut = keepTrailingOpenExchange(messages, cut);
  cut = skipCallerlessResults(messages, pairing, cut);
  return moveCutBeforeCalls(pairing, cut, messages.length);
}

function assertBoundaryOptions(options: BoundaryOptions): void {
  const valid =
    "keepLast" in options
      ? Number.isFinite(options.keepLast) && options.keepLast >= 0
      : Number.isFinite(options.maxTokens) && options.maxTokens >= 0 && typeof options.tokenCounter === "function";
  if (!valid)
    throw new TypeError(
      "langgraph-tool-repair: findSafeSummarizationBoundary expects { keepLast: n >= 0 } or { maxTokens: n >= 0, tokenCounter }",
    );
}

/** A result whose call is nowhere cannot be paired by moving back: summarize it rather than keep it first. */
function skipCallerlessResults(messages: readonly BaseMessage[], pairing: ToolCallPairing, cut: number): number {
  while (cut < messages.length && isToolResult(messages[cut]) && pairing.callIndexOf[cut] === undefined) cut++;
  return cut;
}

/** The exchange the history ends on, when its calls are not all answered (the provider's view): kept whole. */
function keepTrailingOpenExchange(messages: readonly BaseMessage[], cut: number): number {
  const open = trailingOpenExchange(messages);
  return open !== undefined && cut > open.index ? open.index : cut;
}

/** The three parts of a history cut at `cut` (see {@link findSafeSummarizationBoundary}). */
export interface SummarizationSplit<M> {
  system: M[];
  summarized: M[];
  kept: M[];
}

export function splitAtBoundary<M extends BaseMessage>(messages: readonly M[], cut: number): SummarizationSplit<M> {
  const systemCount = leadingSystemCount(messages);
  const at = Math.max(systemCount, cut);
  return { system: messages.slice(0, systemCount), summarized: messages.slice(systemCount, at), kept: messages.slice(at) };
}
