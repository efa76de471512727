/**
 * core's `trimMessages` with a valid result. `trimMessages` counts tokens and message types only: it can
 * keep a tool result whose call was trimmed away (a history that starts with a ToolMessage, rejected by
 * OpenAI O2, Anthropic A2, Bedrock B2), or, with `strategy: "first"` or `endOn`, end on calls whose results
 * were cut (O1, A1, B1).
 *
 * The fix never exceeds the budget: where `trimMessages` split an exchange, the split exchange is dropped
 * (the kept window shrinks), unlike summarization, which keeps more.
 */
import { trimMessages, type BaseMessage } from "@langchain/core/messages";
import { isToolResult } from "../messages/inspect";
import { leadingSystemCount, pairToolCalls, type ToolCallPairing } from "./boundary";

export type TrimMessagesOptions = Parameters<typeof trimMessages>[1];
type MessageTypeOrClass = NonNullable<TrimMessagesOptions["endOn"]>;

/** A kept window `[start, end)` of the original messages. */
export interface KeptWindow {
  start: number;
  end: number;
}

/**
 * Like `trimMessages(messages, options)`, then made valid:
 * - no kept tool result whose call was trimmed, and no leading tool result: the window start moves forward
 *   past them (and past the rest of their exchange);
 * - no kept assistant message whose results were trimmed: the window end moves back before it;
 * - `startOn` / `endOn` hold again after those moves.
 *
 * Messages are those `trimMessages` returned (it copies them; with `allowPartial` the first or last one may
 * be shortened). Problems the input already had (a call answered nowhere) are not the trim's doing and are
 * left for `repairToolCalls`. A history ending on open calls keeps them (`strategy: "last"` without `endOn`).
 */
export async function trimMessagesSafely(messages: BaseMessage[], options: TrimMessagesOptions): Promise<BaseMessage[]> {
  if (options.strategy === "first") return trimFirstSafely(messages, options);
  return trimLastSafely(messages, options);
}

async function trimFirstSafely(messages: BaseMessage[], options: TrimMessagesOptions): Promise<BaseMessage[]> {
  const trimmed = await trimMessages(messages, options);
  // "first" keeps a prefix: trimmed[j] stands for messages[j].
  const window = safeWindow(messages, { start: 0, end: trimmed.length }, options);
  return trimmed.slice(window.start, window.end);
}

async function trimLastSafely(messages: BaseMessage[], options: TrimMessagesOptions): Promise<BaseMessage[]> {
  // endOn is applied here, before trimming (as trimMessages does), so that the result maps back by position.
  const end = applyEndOn(messages, messages.length, 0, options.endOn);
  // With includeSystem and a budget that fits nothing, core returns `[undefined]`: drop the hole.
  const trimmed = (await trimMessages(messages.slice(0, end), { ...options, endOn: undefined })).filter(
    (m): m is BaseMessage => m !== undefined,
  );
  const systemCount = options.includeSystem ? Math.min(leadingSystemCount(messages), 1) : 0;
  const keptSystem = trimmed.length > 0 && systemCount === 1 && trimmed[0].getType() === "system" ? 1 : 0;
  const start = end - (trimmed.length - keptSystem);
  const window = safeWindow(messages, { start: Math.max(start, keptSystem), end }, options);
  const tail = trimmed.slice(keptSystem + (window.start - start), keptSystem + (window.end - start));
  return [...trimmed.slice(0, keptSystem), ...tail];
}

/** Shrink a window until it splits no exchange, then re-apply `startOn` / `endOn`, until nothing moves. */
export function safeWindow(
  messages: readonly BaseMessage[],
  window: KeptWindow,
  options: Pick<TrimMessagesOptions, "startOn" | "endOn"> = {},
): KeptWindow {
  const pairing = pairToolCalls(messages);
  let { start, end } = window;
  for (;;) {
    const nextEnd = applyEndOn(messages, moveEndBeforeOpenCalls(pairing, start, end), start, options.endOn);
    const nextStart = applyStartOn(messages, moveStartPastOrphans(messages, pairing, start, nextEnd), nextEnd, options.startOn);
    if (nextStart === start && nextEnd === end) return { start, end };
    start = nextStart;
    end = nextEnd;
  }
}

/**
 * Move the start forward until no kept result answers a call before the start, and the window does not open
 * on a tool result.
 */
export function moveStartPastOrphans(messages: readonly BaseMessage[], pairing: ToolCallPairing, start: number, end: number): number {
  for (;;) {
    let next = start;
    while (next < end && isToolResult(messages[next])) next++;
    for (let i = end - 1; i >= next; i--) {
      const caller = pairing.callIndexOf[i];
      if (caller !== undefined && caller < next) {
        next = i + 1;
        break;
      }
    }
    if (next === start) return start;
    start = next;
  }
}

/** Move the end back until no kept assistant message has a result after the end. */
export function moveEndBeforeOpenCalls(pairing: ToolCallPairing, start: number, end: number): number {
  for (let i = start; i < end; i++) {
    if (pairing.lastResultIndexOf[i] >= end) return i;
  }
  return end;
}

function applyEndOn(messages: readonly BaseMessage[], end: number, start: number, endOn: MessageTypeOrClass | undefined): number {
  if (endOn === undefined) return end;
  while (end > start && !isOfType(messages[end - 1], endOn)) end--;
  return end;
}

function applyStartOn(messages: readonly BaseMessage[], start: number, end: number, startOn: MessageTypeOrClass | undefined): number {
  if (startOn === undefined) return start;
  while (start < end && !isOfType(messages[start], startOn)) start++;
  return start;
}

/** Same matching as core's (unexported) `_isMessageType`: type strings, or message classes. */
function isOfType(message: BaseMessage, types: MessageTypeOrClass): boolean {
  const list = Array.isArray(types) ? types : [types];
  const type = message.getType();
  return list.some((t) => (typeof t === "string" ? t : new (t as new (fields: object) => BaseMessage)({}).getType()) === type);
}
