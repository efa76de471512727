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
import { assertArray, readingInput } from "../errors";
import { forEachToolCallRef, isAssistant, isToolResult, resultIdOf, serverToolResultIds } from "./inspect";

export interface OpenExchange {
  /** Index of the assistant message that made the calls. */
  index: number;
  /** Its calls without a result after it, in the order the message lists them. */
  unanswered: string[];
}

/**
 * Calls of one assistant message that a result can answer: every location, deduplicated, in location order.
 * With `servers`, unanswered Anthropic server tools (`server_tool_use` with no inline result) are included:
 * no ToolMessage can answer them, but they keep the exchange open for the provider.
 */
function exchangeCallIds(message: unknown, servers: boolean): string[] {
  const ids = new Set<string>();
  const answeredInline = serverToolResultIds(message);
  forEachToolCallRef(message, (ref) => {
    if (ref.id === undefined) return;
    if (ref.location === "content.server_tool_use" && (!servers || answeredInline.has(ref.id))) return;
    ids.add(ref.id);
  });
  return [...ids];
}

/** Index of the last assistant message (any), or -1. */
function lastAssistantIndex(messages: readonly BaseMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (isAssistant(messages[i])) return i;
  return -1;
}

/**
 * The provider's view. The last assistant message with calls, when every message after it is a result of one
 * of its calls, each call answered at most once, and some call still has no result; undefined otherwise.
 */
export function trailingOpenExchange(messages: readonly BaseMessage[]): OpenExchange | undefined {
  assertArray(messages, "trailingOpenExchange");
  return readingInput(() => providerView(messages), "trailingOpenExchange");
}

function providerView(messages: readonly BaseMessage[]): OpenExchange | undefined {
  let index = messages.length - 1;
  while (index >= 0 && isToolResult(messages[index])) index--;
  if (index < 0 || !isAssistant(messages[index])) return undefined;
  const calls = exchangeCallIds(messages[index], true);
  if (calls.length === 0) return undefined;
  const own = new Set(exchangeCallIds(messages[index], false)); // no ToolMessage answers a server tool
  const answered = new Set<string>();
  for (let j = index + 1; j < messages.length; j++) {
    const id = resultIdOf(messages[j] as never);
    if (id === undefined || !own.has(id) || answered.has(id)) return undefined; // a stray or duplicate result
    answered.add(id);
  }
  const unanswered = calls.filter((id) => !answered.has(id));
  return unanswered.length > 0 ? { index, unanswered } : undefined;
}

/**
 * ToolNode's view. The last assistant message, when some of its calls (client calls: no ToolMessage answers a
 * server tool, and ToolNode does not run one) have no result anywhere after it; undefined otherwise.
 */
export function resumableExchange(messages: readonly BaseMessage[]): OpenExchange | undefined {
  assertArray(messages, "resumableExchange");
  return readingInput(() => toolNodeView(messages), "resumableExchange");
}

function toolNodeView(messages: readonly BaseMessage[]): OpenExchange | undefined {
  const index = lastAssistantIndex(messages);
  if (index < 0) return undefined;
  const calls = exchangeCallIds(messages[index], false);
  if (calls.length === 0) return undefined;
  const answered = new Set<string>();
  for (let j = index + 1; j < messages.length; j++) {
    const m = messages[j];
    if (!isToolResult(m)) continue;
    const id = resultIdOf(m);
    if (id !== undefined) answered.add(id);
  }
  const unanswered = calls.filter((id) => !answered.has(id));
  return unanswered.length > 0 ? { index, unanswered } : undefined;
}

/**
 * Ids of every call in the history, in any assistant message (not only the last exchange), that no tool result
 * anywhere in it answers. Calls are read the provider's way ({@link exchangeCallIds} with server tools: an
 * Anthropic server tool answered inline is not open, one without its result is).
 */
export function unansweredCallIds(messages: readonly BaseMessage[]): Set<string> {
  assertArray(messages, "unansweredCallIds");
  return readingInput(() => openCallIds(messages), "unansweredCallIds");
}

function openCallIds(messages: readonly BaseMessage[]): Set<string> {
  const calls = new Set<string>();
  for (const m of messages) if (isAssistant(m)) for (const id of exchangeCallIds(m, true)) calls.add(id);
  for (const m of messages) {
    if (!isToolResult(m)) continue;
    const id = resultIdOf(m);
    if (id !== undefined) calls.delete(id);
  }
  return calls;
}
