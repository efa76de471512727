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
import { ToolCallRepairInputError, assertArray, boundary, callersOwn, expectedInput } from "../errors";
import { trailingOpenExchange } from "../messages/exchanges";
import { isAssistant, isToolResult, resultIdOf, toolCallIdsOf } from "../messages/inspect";
import { option, readOptions } from "../options";
import { readMessage } from "../messages/coerce";
import { isDict, quoteValue, safeJson } from "../values";

/** Counts the tokens of a list of messages. Must not decrease when messages are added. */
export type TokenCounter = (messages: BaseMessage[]) => number;

/** How much of the history to keep verbatim. */
export type BoundaryOptions =
  /** Keep (at least) the last `keepLast` non-system messages. */
  | { keepLast: number }
  /** Keep as many recent messages as fit in `maxTokens`, the leading system messages included. */
  | { maxTokens: number; tokenCounter: TokenCounter };

/**
 * Pair every tool result with the assistant message that called it: the latest assistant message before the
 * result that carries its id in any location (`toolCallIdsOf`). Pure, O(n) in messages and calls.
 */
export function pairToolCalls(messages: readonly BaseMessage[]) {
  const callIndexOf = messages.map((): number | undefined => undefined);
  const lastResultIndexOf = messages.map(() => -1);
  const latestCaller = new Map<string, number>();
  messages.forEach((message, i) => {
    if (isAssistant(message)) for (const id of toolCallIdsOf(message)) latestCaller.set(id, i);
    const caller = isToolResult(message) ? latestCaller.get(resultIdOf(message) ?? "") : undefined;
    if (caller === undefined) return;
    callIndexOf[i] = caller;
    lastResultIndexOf[caller] = i;
  });
  return { callIndexOf, lastResultIndexOf };
}

/** Number of leading system messages (kept as they are, never summarized). */
export function leadingSystemCount(messages: readonly BaseMessage[]) {
  let count = 0;
  while (count < messages.length && SystemMessage.isInstance(messages[count])) count++;
  return count;
}

/**
 * Characters {@link approximateTokenCounter} measures at most per call: 8,000,000 characters, about 2,000,000
 * tokens, more than any model's context. Past it the count stops growing, which keeps the cost of one call
 * bounded whatever the content holds (a structure that shares one object many times serializes to far more
 * text than it occupies).
 */
const MEASURED_CHARS = 8_000_000;

/**
 * A rough token count (about 4 characters a token, plus a few per message and per tool call). Good enough for
 * thresholds; pass a real counter when the budget must be exact. Survives any content (cycles, getters that
 * throw, BigInts: see `safeJson`), is linear in the messages, and stops at about 2,000,000 tokens.
 */
export const approximateTokenCounter = boundary("approximateTokenCounter", (messages: BaseMessage[]) => {
  let chars = 0;
  // Internal (the default counter): its callers hand it messages already read.
  for (const message of messages) {
    if (chars >= MEASURED_CHARS) break;
    chars += 16 + contentLength(message.content, MEASURED_CHARS - chars);
    if (isAssistant(message) && chars < MEASURED_CHARS)
      chars += safeJson(message.tool_calls ?? [], MEASURED_CHARS - chars).length;
  }
  return Math.ceil(Math.min(chars, MEASURED_CHARS) / 4);
});

/** Text length of content: strings and text blocks by their length, anything else by its JSON (bounded by `room`). */
function contentLength(content: unknown, room: number) {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return content == null ? 0 : safeJson(content, room).length;
  let length = 0;
  for (let i = 0; i < content.length && length < room; i++) {
    const block = content[i];
    if (typeof block === "string") length += block.length;
    else if (isDict(block) && block.type === "text" && typeof block.text === "string") length += block.text.length + 16;
    else length += safeJson(block, room - length).length;
  }
  return length;
}

/**
 * The smallest cut in `[low, high]` whose kept part fits; `fits` must be monotone (true from some cut on). A
 * binary search, synchronous for a synchronous test, a Promise for an async one.
 */
export function smallestFittingCut<R extends boolean | Promise<boolean>>(
  low: number,
  high: number,
  fits: (cut: number) => R,
): R extends boolean ? number : Promise<number> {
  if (low >= high) return low as never;
  const mid = (low + high) >> 1;
  const next = (ok: boolean) => smallestFittingCut(ok ? low : mid + 1, ok ? mid : high, fits);
  const ok = fits(mid);
  return (ok instanceof Promise ? ok.then(next) : next(ok as boolean)) as never;
}

/**
 * The index at which to cut `messages` for summarization: `messages[systemCount..cut)` are summarized,
 * `messages[cut..]` are kept verbatim, and the leading system messages `messages[0..systemCount)` are kept
 * and never summarized (`systemCount`: how many system messages open the list). The result is always in
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
export const findSafeSummarizationBoundary = boundary(
  "findSafeSummarizationBoundary",
  (messages: readonly BaseMessage[], options: BoundaryOptions) => {
    const fn = "findSafeSummarizationBoundary";
    const list = readMessageList(messages, fn);
    const { keepLast, maxTokens, tokenCounter } = readOptions<{
      keepLast?: number;
      maxTokens?: number;
      tokenCounter?: TokenCounter;
    }>(options, fn, BOUNDARY);
    const tokens = [maxTokens, tokenCounter].filter((value) => value !== undefined).length;
    if (keepLast !== undefined ? tokens : tokens < 2) throw expectedInput(fn, "options", BOUNDARY_SHAPE, options);
    if (keepLast !== undefined) return safeCutFrom(list, list.length - Math.floor(keepLast));
    const count = callersOwn(tokenCounter!);
    const system = list.slice(0, leadingSystemCount(list));
    // Each probe copies the kept part: O(n) a probe, O(log n) probes.
    const fits = (cut: number) => checkedCount(count([...system, ...list.slice(cut)])) <= maxTokens!;
    return safeCutFrom(list, smallestFittingCut(system.length, list.length, fits));
  },
);

const BOUNDARY_SHAPE = "{ keepLast: n >= 0 } or { maxTokens: n >= 0, tokenCounter: (messages) => number }";
const BOUNDARY = { keepLast: option.count, maxTokens: option.count, tokenCounter: option.fn };

/**
 * Steps 2 to 4 of {@link findSafeSummarizationBoundary} from a budget's cut: keep the trailing open exchange,
 * summarize callerless results at the cut, then move back before every call a kept result answers (each newly
 * kept message is walked too, so one pass from the end reaches the fixed point). Linear.
 */
export function safeCutFrom(messages: readonly BaseMessage[], budgetCut: number) {
  const { callIndexOf } = pairToolCalls(messages);
  let cut = Math.min(messages.length, Math.max(leadingSystemCount(messages), budgetCut));
  // The exchange the history ends on, when its calls are not all answered (the provider's view): kept whole.
  const open = trailingOpenExchange(messages);
  if (open && cut > open.index) cut = open.index;
  // A result whose call is nowhere cannot be paired by moving back: summarized rather than kept first.
  while (cut < messages.length && isToolResult(messages[cut]) && callIndexOf[cut] === undefined) cut++;
  for (let i = messages.length - 1; i >= cut; i--) cut = Math.min(cut, callIndexOf[i] ?? cut);
  return cut;
}

// --- reading the arguments: a hole or a non-message names its index; a counter must return a count ------------

/**
 * Every entry of `messages` as a LangChain message: real messages as they are (the same objects), message-likes
 * (`{ role, content }`, stored or serialized messages, strings) coerced the way the engine reads them. Same
 * length and positions as the input, so indexes found on the result are indexes into the input.
 */
export function readMessageList(messages: unknown, fn: string) {
  assertArray(messages, fn);
  // A hole reads as undefined: refused naming its index.
  return Array.from(messages, readMessage);
}

/** The count a user's counter (`options.tokenCounter`) returned, refused unless it is a number >= 0. */
function checkedCount(count: unknown) {
  if (typeof count === "number" && count >= 0) return count; // NaN fails `>= 0`
  // A refused Promise may still reject: handled here, so that it never surfaces as an unhandled rejection.
  if (count instanceof Promise) count.catch(() => undefined);
  const got = count instanceof Promise ? "a Promise (this function needs a synchronous counter)" : quoteValue(count);
  throw new ToolCallRepairInputError(`options.tokenCounter returned ${got}; expected a number >= 0`, {
    argument: "options.tokenCounter",
  });
}

/**
 * A user's token counter (that may return a Promise), wrapped: what it throws passes every boundary as it is,
 * what it returns must be a count.
 */
export function asyncCounter(counter: (messages: BaseMessage[]) => unknown) {
  const own = callersOwn(async (messages: BaseMessage[]) => await counter(messages));
  return async (messages: BaseMessage[]) => checkedCount(await own(messages));
}
