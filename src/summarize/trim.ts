/**
 * core's `trimMessages` with a valid result. `trimMessages` counts tokens and message types only: it can
 * keep a tool result whose call was trimmed away (a history that starts with a ToolMessage, rejected by
 * OpenAI O2, Anthropic A2, Bedrock B2), or, with `strategy: "first"` or `endOn`, end on calls whose results
 * were cut (O1, A1, B1).
 *
 * The fix never exceeds the budget: where `trimMessages` split an exchange, the split exchange is dropped
 * (the kept window shrinks), unlike summarization, which keeps more.
 *
 * Cost: core's `trimMessages` drops one message per count (a history of n messages trimmed to a few costs n
 * counts of up to n messages: quadratic). Here the number of messages that fit is found first by binary
 * search (O(log n) counts), and core trims only that window plus the one message it may shorten
 * (`allowPartial`). The counter must not decrease as messages are added (as core's result already assumes).
 */
import { trimMessages, type BaseMessage } from "@langchain/core/messages";
import { ToolCallRepairInputError, boundary, expectedInput } from "../errors";
import { rebuildMessage } from "../messages/build";
import { isToolResult } from "../messages/inspect";
import { kind, option, readOptions } from "../options";
import { fieldsOf } from "../values";
import { asyncCounter, pairToolCalls, readMessageList, smallestFittingCut } from "./boundary";

export type TrimMessagesOptions = Parameters<typeof trimMessages>[1];

/**
 * Like `trimMessages(messages, options)`, then made valid:
 * - no kept tool result whose call was trimmed, and no leading tool result: the window start moves forward
 *   past them (and past the rest of their exchange);
 * - no kept assistant message whose results were trimmed: the window end moves back before it;
 * - `startOn` / `endOn` hold again after those moves.
 *
 * Messages are those `trimMessages` returned (it copies them; with `allowPartial` the first or last one may
 * be shortened, never the caller's own message). Problems the input already had (a call answered nowhere) are
 * not the trim's doing and are left for `repairToolCalls`. A history ending on open calls keeps them
 * (`strategy: "last"` without `endOn`).
 *
 * Bad arguments get a {@link ToolCallRepairInputError} naming them; what the token counter or text splitter
 * throws propagates unchanged. O(n log n) counted messages for a counter linear in its input.
 */
export const trimMessagesSafely = boundary(
  "trimMessagesSafely",
  async (messages: BaseMessage[], options: TrimMessagesOptions) => {
    const fn = "trimMessagesSafely";
    const list = readMessageList(messages, fn);
    const read = readOptions<TrimMessagesOptions>(options, fn, TRIM);
    for (const key of ["maxTokens", "tokenCounter"] as const)
      if (read[key] === undefined)
        throw expectedInput(fn, `options.${key}`, `${TRIM[key].expected} (required)`, undefined);
    // The counter wrapped (and used by core too). A model's getNumTokens counts one content at a time: summed over
    // the messages, as core does.
    const counter = read.tokenCounter;
    const tokenCounter = asyncCounter(
      typeof counter === "function"
        ? counter
        : async (messages) =>
            (await Promise.all(messages.map((m) => counter.getNumTokens(m.content)))).reduce((a, b) => a + b, 0),
    );
    return (read.strategy === "first" ? trimFirstSafely : trimLastSafely)(list, { ...read, tokenCounter });
  },
);

/** The options, validated: the counter wrapped (and used by core too). */
type Trim = TrimMessagesOptions & { tokenCounter: ReturnType<typeof asyncCounter> };

const MESSAGE_TYPES = "human ai generic developer system function tool remove".split(" ");

const TYPES = kind(`message types (${MESSAGE_TYPES.join(", ")})`, (types) =>
  [types].flat().every((t) => MESSAGE_TYPES.includes(t as string)),
);
const either = (expected: string, method: string) =>
  kind(expected, (v) => typeof v === "function" || typeof fieldsOf(v)[method] === "function");
const TRIM = {
  maxTokens: option.count,
  tokenCounter: either("a function or a model with getNumTokens", "getNumTokens"),
  strategy: option.oneOf(["first", "last"]),
  includeSystem: option.flag,
  allowPartial: option.flag,
  startOn: TYPES,
  endOn: TYPES,
  textSplitter: either("a function or a text splitter", "splitText"),
};

async function trimFirstSafely(messages: BaseMessage[], trim: Trim) {
  // The longest prefix that fits; core then trims it plus the next message (the one allowPartial may shorten).
  const n = messages.length;
  const fits = async (cut: number) => (await trim.tokenCounter(messages.slice(0, n - cut))) <= trim.maxTokens;
  const fitting = n - (await smallestFittingCut(0, n, fits));
  const input = messages.slice(0, fitting + 1);
  // core shortens the message after the prefix in place: hand it a copy, never the caller's own.
  if (trim.allowPartial && fitting < n) input[fitting] = rebuildMessage(messages[fitting], {});
  const trimmed = await trimMessages(input, trim);
  // "first" keeps a prefix: trimmed[j] stands for messages[j].
  const { start, end } = safeWindow(messages, { start: 0, end: trimmed.length }, trim);
  return trimmed.slice(start, end);
}

async function trimLastSafely(messages: BaseMessage[], trim: Trim) {
  // endOn is applied here, before trimming (as trimMessages does), so that the result maps back by position.
  let end = messages.length;
  while (end && !isOfType(messages[end - 1], trim.endOn)) end--;
  const head = trim.includeSystem && end && messages[0].getType() === "system" ? 1 : 0;
  const system = messages.slice(0, head);
  // The earliest start whose tail fits (counted as core counts it: system first, then the tail newest first).
  const fits = async (cut: number) =>
    (await trim.tokenCounter([...system, ...messages.slice(cut, end).reverse()])) <= trim.maxTokens;
  const from = Math.max(head, (await smallestFittingCut(head, end, fits)) - 1); // one more: allowPartial's
  // With includeSystem and a budget that fits nothing, core returns `[undefined]`: drop the hole.
  const trimmed = (await trimMessages([...system, ...messages.slice(from, end)], { ...trim, endOn: undefined })).filter(
    Boolean,
  );
  const keptSystem = head && trimmed[0]?.getType() === "system" ? 1 : 0;
  const start = end - (trimmed.length - keptSystem);
  const window = safeWindow(messages, { start: Math.max(start, keptSystem), end }, trim);
  // trimmed[j + offset] stands for messages[j].
  const offset = keptSystem - start;
  return [...trimmed.slice(0, keptSystem), ...trimmed.slice(window.start + offset, window.end + offset)];
}

/**
 * Shrink a window until it splits no exchange and `startOn` / `endOn` hold: the largest end, then the smallest
 * start, that do. Linear in the window. One pass each is a fixed point: moving the start forward only removes
 * messages the end had to respect, and moving the end back only removes results the start had to respect.
 *
 * The end: the largest `e` such that no assistant message in `[start, e)` has a result at or after `e`, and the
 * window ends on `endOn` (or is empty). The start: the smallest `s` such that the window does not open on a
 * tool result, no result in `[s, end)` answers a call before `s`, and it opens on `startOn` (or is empty). Each
 * move of the original fixed point was necessary, so this is where it stopped; one prefix maximum and one
 * suffix minimum make it linear.
 */
export function safeWindow(
  messages: readonly BaseMessage[],
  // Within the messages, start <= end.
  { start: first, end: last }: { start: number; end: number },
  { startOn, endOn }: Pick<TrimMessagesOptions, "startOn" | "endOn"> = {},
) {
  const { callIndexOf, lastResultIndexOf } = pairToolCalls(messages);
  // latest[j]: the latest result of any assistant message in [first, j).
  const latest = new Int32Array(last + 1).fill(-1);
  for (let i = first; i < last; i++) latest[i + 1] = Math.max(latest[i], lastResultIndexOf[i]);
  let end = last;
  while (end > first && (latest[end] >= end || !isOfType(messages[end - 1], endOn))) end--;
  // earliest[j]: the earliest caller of any result in [j, end) (end: none).
  const earliest = new Float64Array(end + 1).fill(Infinity);
  for (let i = end - 1; i >= first; i--) earliest[i] = Math.min(earliest[i + 1], callIndexOf[i] ?? Infinity);
  let start = first;
  while (
    start < end &&
    (earliest[start] < start || isToolResult(messages[start]) || !isOfType(messages[start], startOn))
  )
    start++;
  return { start, end };
}

/** Whether a message is of one of `types`, a type string or a list of them (core's message classes are refused); none: any. */
const isOfType = (message: BaseMessage, types: unknown) => !types || [types].flat().includes(message.getType());
