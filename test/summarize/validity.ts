/**
 * Validity checks for the summarization tests: the engine's `findToolCallProblems` for every provider, plus a
 * small independent check of the strictest rules (written before the engine existed; it also covers the
 * no-prefill rule, "end on a user or tool turn", which the engine does not report).
 */
import type { BaseMessage } from "@langchain/core/messages";
import { findToolCallProblems } from "../../src/engine";
import { isAssistant, isToolResult, resultIdOf, toolCallIdsOf } from "../../src/messages/inspect";
import { contentText } from "../../src/summarize/summarize";
import { PROVIDERS, type ToolCallProblem } from "../../src/types";

/**
 * Gemini's step shaping (parallel calls one step each, G3 through its adapter; a thought signature per step of the
 * current turn, G6) is about the thread's own calls, not about where a summary cuts: these generated threads are
 * not stored by a Gemini client, and the request surfaces apply it (the call-steps pass).
 */
const NOT_THE_SUMMARY: ReadonlySet<string> = new Set(["parallel_calls", "unsigned_call"]);

/** `findToolCallProblems` for every provider, tagged with the provider. */
export function engineProblems(
  messages: readonly BaseMessage[],
  trailingIsProblem = true,
): (ToolCallProblem & { provider: string })[] {
  return PROVIDERS.flatMap((provider) =>
    findToolCallProblems(messages, { provider, trailingIsProblem })
      .filter((p) => !NOT_THE_SUMMARY.has(p.kind))
      .map((p) => ({ provider, ...p })),
  );
}

/** Everything wrong with `messages` for any provider: the engine's view and the independent check. */
export function problemsEverywhere(messages: readonly BaseMessage[], options: CheckOptions = {}): unknown[] {
  return [...engineProblems(messages, options.trailingIsProblem ?? true), ...pairingProblems(messages, options)];
}

export type PairingProblemKind =
  | "orphan_result"
  | "unanswered_call"
  | "duplicate_call_id"
  | "duplicate_result"
  | "leading_non_user"
  | "consecutive_same_role"
  | "empty_message"
  | "ends_on_assistant";

export interface PairingProblem {
  kind: PairingProblemKind;
  index: number;
  id?: string;
}

export interface CheckOptions {
  /** Bedrock / Gemini: first non-system message is a user turn, roles alternate. Default true. */
  roles?: boolean;
  /** No-prefill models: the history ends on a user or tool turn. Default true. */
  endsOnUser?: boolean;
  /** Whether an open trailing exchange counts. Default true. */
  trailingIsProblem?: boolean;
}

type Role = "user" | "assistant" | "system";

function roleOf(message: BaseMessage): Role {
  if (isAssistant(message)) return "assistant";
  if (message.getType() === "system") return "system";
  return "user";
}

/** Problems of `messages` under the strictest rules (see file comment). */
export function pairingProblems(messages: readonly BaseMessage[], options: CheckOptions = {}): PairingProblem[] {
  const problems: PairingProblem[] = [];
  checkExchanges(messages, options.trailingIsProblem ?? true, problems);
  if (options.roles ?? true) checkRoles(messages, problems);
  checkEmpty(messages, problems);
  if ((options.endsOnUser ?? true) && messages.length > 0 && roleOf(messages[messages.length - 1]) === "assistant") {
    const last = messages[messages.length - 1];
    const open = toolCallIdsOf(last).length > 0;
    if (!open || (options.trailingIsProblem ?? true))
      problems.push({ kind: "ends_on_assistant", index: messages.length - 1 });
  }
  return problems;
}

function checkExchanges(
  messages: readonly BaseMessage[],
  trailingIsProblem: boolean,
  problems: PairingProblem[],
): void {
  const seenCalls = new Set<string>();
  let open = new Set<string>();
  let answered = new Set<string>();
  let callerIndex = -1;
  const closeExchange = (atEnd: boolean) => {
    if (atEnd && !trailingIsProblem) return;
    for (const id of open) problems.push({ kind: "unanswered_call", index: callerIndex, id });
  };
  messages.forEach((message, index) => {
    if (isToolResult(message)) {
      const id = resultIdOf(message);
      if (id !== undefined && answered.has(id)) problems.push({ kind: "duplicate_result", index, id });
      else if (id === undefined || !open.has(id)) problems.push({ kind: "orphan_result", index, id });
      else {
        open.delete(id);
        answered.add(id);
      }
      return;
    }
    closeExchange(false);
    open = new Set();
    answered = new Set();
    if (!isAssistant(message)) return;
    callerIndex = index;
    for (const id of toolCallIdsOf(message)) {
      if (seenCalls.has(id)) problems.push({ kind: "duplicate_call_id", index, id });
      seenCalls.add(id);
      open.add(id);
    }
  });
  closeExchange(true);
}

function checkRoles(messages: readonly BaseMessage[], problems: PairingProblem[]): void {
  const turns = messages
    .map((m, index) => ({ role: roleOf(m), index, tool: isToolResult(m) }))
    .filter((t) => t.role !== "system");
  if (turns.length > 0 && turns[0].role !== "user") problems.push({ kind: "leading_non_user", index: turns[0].index });
  for (let i = 1; i < turns.length; i++) {
    const [prev, cur] = [turns[i - 1], turns[i]];
    // A run of tool results is one user turn (the adapters merge it).
    if (prev.role === cur.role && !(prev.tool && cur.tool))
      problems.push({ kind: "consecutive_same_role", index: cur.index });
  }
}

function checkEmpty(messages: readonly BaseMessage[], problems: PairingProblem[]): void {
  messages.forEach((message, index) => {
    if (isToolResult(message)) return;
    if (isAssistant(message) && toolCallIdsOf(message).length > 0) return;
    if (contentText(message.content).trim() === "") problems.push({ kind: "empty_message", index });
  });
}

const SPLIT_KINDS = new Set([
  "orphan_call",
  "trailing_open_exchange",
  "displaced_result",
  "interleaved_message",
  "orphan_result",
]);

/** Only the problems a cut can cause between calls and results (no role rules), from both checks. */
export function splitExchangeProblems(messages: readonly BaseMessage[]): { kind: string; id?: string }[] {
  const own = pairingProblems(messages, { roles: false, endsOnUser: false }).filter((p) => p.kind !== "empty_message");
  const engine = findToolCallProblems(messages, { provider: "strict" })
    .filter((p) => SPLIT_KINDS.has(p.kind))
    .map((p) => ({ kind: `engine:${p.kind}`, id: p.toolCallId }));
  return [...own, ...engine];
}
