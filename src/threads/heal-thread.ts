/**
 * The ONE place that decides what an offline repair of a stored thread changes. Everything the thread tools
 * (`scanThreads`, `repairThreads`, the CLI) judge or write goes through the two functions below, so the rule
 * can be re-pointed here alone.
 *
 * What is stored must be structural only: calls without results, results without calls or in the wrong place,
 * duplicate or missing ids, calls outside `tool_calls`. How a request is shaped for one provider (merging user
 * turns, placeholder turns, id pattern rewrites) stays a request-time concern (toolCallRepairMiddleware,
 * toolCallRepairNode): storing it would bind the thread to one provider. The engine has no structural-only
 * switch yet; the "openai" profile (no turn-order, no id-pattern, no content rules) is the closest to it.
 */
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { isCleanHistory } from "../engine/clean";
import { findToolCallProblems } from "../engine/problems";
import { profileFor } from "../engine/profiles";
import { healStoredMessages, openLastExchange, type HealResult } from "../integrations/heal";
import { isToolResult } from "../messages/inspect";
import type { Provider, ToolCallProblem, ToolCallProblemKind } from "../types";

/** Problem kinds a stored repair fixes. Every other kind is request shaping for one provider. */
export const STRUCTURAL_PROBLEMS: ReadonlySet<ToolCallProblemKind> = new Set<ToolCallProblemKind>([
  "orphan_call",
  "trailing_open_exchange",
  "displaced_result",
  "interleaved_message",
  "orphan_result",
  "duplicate_result",
  "duplicate_call_id",
  "missing_call_id",
  "missing_result_id",
  "invalid_tool_call",
  "call_outside_tool_calls",
]);

export const isStructural = (problem: ToolCallProblem): boolean => STRUCTURAL_PROBLEMS.has(problem.kind);

/**
 * True when the history ends on an assistant message whose calls are not all answered and nothing but its
 * own results follows: the tools may still be pending, and a resume (`invoke(null)`, `Command({ resume })`)
 * runs them. Such an exchange is left open. One that a user message follows was abandoned by a new input.
 */
export function awaitsResume(messages: readonly BaseMessage[]): boolean {
  const { index } = openLastExchange(messages);
  if (index < 0) return false;
  for (let i = index + 1; i < messages.length; i++) if (!isToolResult(messages[i])) return false;
  return true;
}

/**
 * Every problem of a stored thread for `provider`; an exchange that awaits a resume is not one. Most threads
 * are clean: the engine's clean walk answers those without running the finders.
 */
export function storedThreadProblems(messages: readonly BaseMessage[], provider: Provider | undefined): ToolCallProblem[] {
  if (isCleanHistory(messages, profileFor(provider), true)) return [];
  return findToolCallProblems(messages, { provider, trailingIsProblem: false });
}

export interface HealStoredThreadOptions {
  /** Real results of calls that have none (pending writes of a discarded step), put back instead of placeholders. */
  salvage?: ReadonlyMap<string, ToolMessage>;
}

/**
 * Heals a stored thread structurally. An exchange that awaits a resume is kept; one that a new input
 * abandoned is closed, with the real results from `salvage` where the tools had finished.
 */
export function healStoredThread(messages: BaseMessage[], options: HealStoredThreadOptions = {}): HealResult {
  return healStoredMessages(messages, { provider: "openai" }, { closeOpen: !awaitsResume(messages), salvage: options.salvage });
}
