/**
 * The two definitions of "the exchange a history ends on", used everywhere in the package. An exchange is an
 * assistant message that makes tool calls and the tool results that answer them.
 *
 * - {@link trailingOpenExchange}, the provider's view: the history ends on an exchange whose calls are not all
 *   answered. Every provider rejects that request; the engine answers or removes those calls before a model
 *   call (`trailing`), and summarization keeps them whole.
 * - {@link resumableExchange}, ToolNode's view: what a resume (`invoke(null)`, `Command({ resume })`) will run.
 *   LangGraph's ToolNode runs the unanswered calls of the LAST assistant message, whatever follows it. Storage
 *   layers must not close these calls, or a resume skips the real tools.
 *
 * They differ in two cases:
 * - something other than the exchange's own results follows its assistant message: for `[human, ai{a}, human]`
 *   the provider sees `a` as an orphan call in the middle of the history (not trailing), while a resume would
 *   still run `a`;
 * - only an Anthropic server tool is left open (`server_tool_use` with no inline result): the provider's view
 *   counts it, ToolNode never runs one.
 * Otherwise they agree: where the provider's view finds an open exchange with an unanswered client call,
 * ToolNode's view finds the same exchange and the same client calls (test/messages/exchanges.test.ts checks
 * this with fast-check).
 *
 * {@link unansweredCallIds} is the whole-history question the storage layers ask (which calls, anywhere, still
 * have no result: the ones a discarded step's real results may answer), built from the same predicates.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { boundary } from "../errors";
import { fieldsOf, nonEmptyString } from "../values";
import {
  callIdsOf,
  foreignPlaceholderOf,
  isAssistant,
  type Dict,
  isReasoningBlock,
  isToolResult,
  isUnsignedReasoning,
  markerOf,
  resultIdOf,
  turnOf,
  type Turn,
} from "./inspect";

/** The ids the tool results from index `from` on answer. */
function answeredFrom(messages: readonly BaseMessage[], from = 0) {
  const answered = new Set();
  for (let j = from; j < messages.length; j++)
    if (isToolResult(messages[j])) answered.add(resultIdOf(messages[j] as never));
  return answered;
}

/**
 * `calls` of the message at `index` that `answered` lacks, as an open exchange (`index`: the assistant message that
 * made the calls; `unanswered`: its calls without a result after it, in the order the message lists them); undefined
 * when there are none.
 */
function openExchange(index: number, calls: string[], answered: ReadonlySet<unknown>) {
  const unanswered = calls.filter((id) => !answered.has(id));
  return unanswered.length ? { index, unanswered } : undefined;
}

/**
 * The provider's view. The last assistant message with calls, when every message after it is a result of one
 * of its calls, each call answered at most once, and some call still has no result; undefined otherwise.
 */
export const trailingOpenExchange = boundary("trailingOpenExchange", (messages: readonly BaseMessage[]) => {
  let index = messages.length - 1;
  while (isToolResult(messages[index])) index--;
  if (!isAssistant(messages[index])) return;
  const own = new Set<unknown>(callIdsOf(messages[index], false)); // no ToolMessage answers a server tool
  const answered = answeredFrom(messages, index + 1);
  // A stray or duplicate result: not an exchange the provider sees as open.
  if (answered.size !== messages.length - index - 1 || [...answered].some((id) => !own.has(id))) return;
  return openExchange(index, callIdsOf(messages[index], true), answered);
});

/**
 * ToolNode's view. The last assistant message, when some of its calls (client calls: no ToolMessage answers a
 * server tool, and ToolNode does not run one) have no result anywhere after it; undefined otherwise.
 */
export const resumableExchange = boundary("resumableExchange", (messages: readonly BaseMessage[]) => {
  let index = messages.length - 1;
  while (index >= 0 && !isAssistant(messages[index])) index--;
  // None: no calls, so no open exchange.
  return openExchange(index, callIdsOf(messages[index], false), answeredFrom(messages, index + 1));
});

/**
 * Ids of every call in the history, in any assistant message (not only the last exchange), that no tool result
 * anywhere in it answers; another library's placeholder answers nothing. Calls are read the provider's way
 * ({@link callIdsOf} with server tools: an Anthropic server tool answered inline is not open, one without its
 * result is).
 */
export const unansweredCallIds = boundary("unansweredCallIds", (messages: readonly BaseMessage[]) => {
  const answered = answeredFrom(messages.filter((m) => !foreignPlaceholderOf(m)));
  return new Set(messages.flatMap((m) => callIdsOf(m, true).filter((id) => !answered.has(id))));
});

/*
 * The open tool loop of a thread with reasoning. With thinking on, Claude requires the assistant turn that opens the
 * tool loop a request is sent inside to start with its signed reasoning (Anthropic A10, Bedrock B11); a user turn
 * inside the loop opens a new one. The repair's view of the loop a history ends in: it starts after the last user
 * message that follows an assistant message (a new turn; a stray result the repair kept as text does not count), and
 * its anchor, the first call after that, starts with reasoning (a thread with thinking on). User messages after the
 * anchor (a steer, a stray result kept as text) are inside it. What the repair must then not send inside it:
 * - user messages (a steer, a stray result kept as text): Bedrock sends each as a turn of its own; Anthropic merges
 *   those after tool results into the results' turn, but not those after an assistant message;
 * - an assistant message without calls right before another one (a cut stream's text, moved out of an exchange):
 *   Anthropic merges the two into one turn that starts with that text, Bedrock needs a user turn between them.
 */

/** Reasoning a thinking model put first in its message (Anthropic `thinking`, Bedrock `reasoning`). */
const startsWithReasoning = (message: BaseMessage) =>
  Array.isArray(message.content) && isReasoningBlock(message.content[0]);

const makesCalls = (m: BaseMessage) => {
  const calls = fieldsOf(m).tool_calls;
  return turnOf(m) === "assistant" && Array.isArray(calls) && calls.length > 0;
};

/** Whether `turn` counts as the turn before: system messages are no turn, and with `skipUsers` neither are users. */
const isTurn = (turn: Turn, skipUsers: boolean) => !!turn && turn !== "system" && !(skipUsers && turn === "user");

/**
 * The open reasoning loop: `from`, where it starts, and `anchor`, its first call (see above). Undefined when the
 * history does not end on tool results or that call does not start with reasoning. Walked back from the end only as
 * far as the loop's start: its cost is the loop's, not the history's (the clean walk asks before every model call).
 */
function reasoningLoop(messages: readonly BaseMessage[], alternation: boolean) {
  // The last turn (see isTurn). Without alternation (Anthropic) user text after the last results goes out in their
  // turn: the loop is still open.
  let last = messages.length - 1;
  while (last >= 0 && !isTurn(turnOf(messages[last]), !alternation)) last--;
  if (turnOf(messages[last]) !== "tool") return;
  let from = 0;
  // The first message with calls at or after i; where the walk stops, the anchor (the first at or after `from`:
  // message `from - 1` is a user message, it makes none).
  let anchor = -1;
  // The turn before a user message (users skipped) is at `prior`: found once for a whole run of user messages, so a
  // long run of them (stray results kept as text) stays linear.
  let prior = messages.length;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (makesCalls(messages[i])) anchor = i;
    if (turnOf(messages[i]) !== "user") continue;
    if (prior >= i) for (prior = i - 1; prior >= 0 && !isTurn(turnOf(messages[prior]), true); prior--);
    // A user message after tool results stays inside the loop (at -1 there is no turn before it: no message there).
    if (turnOf(messages[prior]) === "tool") continue;
    // A user message after an assistant message is a new turn (never moved), unless it is the model's own reasoning turn
    // that follows it: then it sits inside the loop only when the repair made it (a stray result kept as text: a tool
    // result whose call was gone, which stood inside the loop, as a result).
    if (markerOf(messages[i])?.reason === "orphan_result" && !startsWithReasoning(messages[anchor] ?? messages[i]))
      continue;
    from = i + 1;
    break;
  }
  return anchor !== -1 && startsWithReasoning(messages[anchor]) ? { from, anchor } : undefined;
}

/**
 * The user messages inside the open reasoning loop that the request must not send where they stand (see above): with
 * `alternation` (Bedrock) every one after the anchor, otherwise those after an assistant message. In order.
 */
export function userTurnsInReasoningLoop(messages: readonly BaseMessage[], alternation: boolean) {
  const found: number[] = [];
  let before: Turn = "assistant"; // the turn before message i, users skipped: the anchor's first
  for (let i = (reasoningLoop(messages, alternation)?.anchor ?? messages.length) + 1; i < messages.length; i++) {
    const turn = turnOf(messages[i]);
    if (turn === "user" && (alternation || before === "assistant")) found.push(i);
    if (isTurn(turn, true)) before = turn;
  }
  return found;
}

/**
 * The assistant messages without calls right before another assistant message in the open reasoning loop (`alternation`:
 * the provider's turns alternate, so user text after the last results closes the loop). In order.
 */
export function textTurnsInReasoningLoop(messages: readonly BaseMessage[], alternation: boolean) {
  const found: number[] = [];
  for (let i = reasoningLoop(messages, alternation)?.from ?? messages.length; i < messages.length - 1; i++)
    if (turnOf(messages[i]) === "assistant" && !makesCalls(messages[i]) && turnOf(messages[i + 1]) === "assistant")
      found.push(i);
  return found;
}

/**
 * The anchor of the open reasoning loop when ChatBedrockConverse sends none of the reasoning it starts with: Claude
 * with reasoning on then finds the loop opened without it (B11). Its index, or -1.
 */
export function loopOpenedWithUnsentReasoning(messages: readonly BaseMessage[]) {
  const anchor = reasoningLoop(messages, true)?.anchor ?? -1;
  if (anchor === -1) return -1;
  for (const block of messages[anchor].content as Dict[]) {
    if (!isReasoningBlock(block)) break;
    // Whether ChatBedrockConverse sends this reasoning block (`langchainReasoningBlockToBedrockReasoningBlock`,
    // @langchain/aws 1.4.5): only with text or redacted content. A signed block with empty text (Claude's omitted
    // thinking) is dropped. An unsigned one becomes text (the blocks pass): it opens no loop either.
    const sent =
      block.type === "reasoning"
        ? nonEmptyString(block.reasoning)
        : (nonEmptyString(fieldsOf(block.reasoningText).text) ?? nonEmptyString(block.redactedContent));
    if (sent && !isUnsignedReasoning(block)) return -1;
  }
  return anchor;
}
