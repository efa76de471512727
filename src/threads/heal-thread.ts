/**
 * The ONE place that decides how a stored thread is judged and what an offline repair of it changes.
 * Everything the thread tools (`scanThreads`, `repairThreads`, the CLI) judge or write goes through these
 * functions.
 *
 * What is stored is structural only (the engine's `"structural"` level): calls without results, results
 * without calls or in the wrong place, duplicate or missing ids, calls outside `tool_calls`. How a request is
 * shaped for one provider (merging user turns, placeholder turns, id pattern rewrites) stays a request-time
 * concern (toolCallRepairMiddleware, toolCallRepairHook, withRequestRepair): storing it would bind the thread
 * to one provider.
 */
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { createRepairer, type Repairer } from "../engine";
import { createStoredHealer, type HealResult } from "../integrations/heal";
import { trailingOpenExchange } from "../messages/exchanges";
import type { Provider, RepairLevel, ToolCallProblem } from "../types";

/**
 * A repairer for one judgement (an open trailing exchange is never a problem here). Made per call, so no
 * walk state is shared through the module: creating one costs about a microsecond, reading a thread from a
 * saver about a millisecond.
 */
function judge(provider: Provider, level: RepairLevel): Repairer {
  return createRepairer({ provider, level, trailing: "keep" });
}

/** What a stored repair fixes: the structural problems of a thread. Most threads are clean: one walk. */
export function structuralProblems(messages: readonly BaseMessage[], provider: Provider = "strict"): ToolCallProblem[] {
  const repairer = judge(provider, "structural");
  return repairer.isClean(messages) ? [] : repairer.find(messages);
}

/** Every problem of a stored thread for `provider`, request shaping included. */
export function storedThreadProblems(messages: readonly BaseMessage[], provider: Provider = "strict"): ToolCallProblem[] {
  const repairer = judge(provider, "request");
  return repairer.isClean(messages) ? [] : repairer.find(messages);
}

/**
 * True when the history ends on an assistant message whose calls are not all answered and nothing but its
 * own results follows (the provider's view of an open exchange): the tools may still be pending, and a
 * resume runs them. Such an exchange is left open. One that a user message follows was abandoned by a new
 * input and is closed.
 */
export function awaitsResume(messages: readonly BaseMessage[]): boolean {
  return trailingOpenExchange(messages) !== undefined;
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
  return createStoredHealer().heal(messages, { closeOpen: !awaitsResume(messages), salvage: options.salvage });
}
