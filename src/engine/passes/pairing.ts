/**
 * Pass "pairing": every call answered exactly once by results placed right after its assistant message.
 * Classifies orphan calls, the trailing open exchange, displaced results, messages between a call and its
 * results, orphan results and duplicate results; the repair then rebuilds the list in one walk, pulling each
 * call's results into place so that whatever sat between them naturally follows the block, in order.
 */
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import {
  orphanResultAsUserMessage,
  rewriteToolCalls,
  syntheticToolResult,
} from "../../messages/build";
import {
  forEachToolCallRef,
  hasMeaningfulContent,
  isAssistant,
  isSyntheticResult,
  isToolResult,
  resultIdOf,
  serverToolAnswered,
} from "../../messages/inspect";
import { problem, sameOrNew, type FindContext, type PassContext, type RepairPass } from "../context";
import type { ToolCallProblem, ToolCallProblemKind } from "../../types";

interface Call {
  id: string;
  name: string | undefined;
  messageIndex: number;
  /** An Anthropic server tool: it cannot be answered by a ToolMessage, only removed. */
  server: boolean;
  /** Index of the result kept for this call, if any. */
  result?: number;
}

export interface PairingAnalysis {
  calls: Call[];
  /** Calls per assistant message index, in message order. */
  callsByMessage: Map<number, Call[]>;
  /** Result index -> the call it answers (only kept results). */
  ownerOf: Map<number, Call>;
  /** Extra results of an answered call. */
  duplicates: Map<number, Call>;
  /** Results whose call is nowhere, or that carry no usable id. */
  orphans: number[];
  /** Index of the assistant message of the trailing open exchange, or -1. */
  trailing: number;
  /** Per assistant message: its kept results already in place right after it. */
  inPlace: Map<number, number[]>;
  problems: Omit<ToolCallProblem, "rules">[];
}

function callsOf(messages: readonly BaseMessage[], index: number, known: Map<string, Call>): Call[] {
  const message = messages[index];
  const calls: Call[] = [];
  forEachToolCallRef(message, (ref) => {
    if (ref.id === undefined || serverToolAnswered(message, ref)) return;
    const server = ref.location === "content.server_tool_use";
    // A server tool lives and dies inside its own message: the same id elsewhere is another call.
    if (server ? calls.some((c) => c.id === ref.id) : known.has(ref.id)) return;
    const call: Call = { id: ref.id, name: ref.name, messageIndex: index, server };
    if (!server) known.set(ref.id, call);
    calls.push(call);
  });
  return calls;
}

export function analyzePairing(messages: readonly BaseMessage[]): PairingAnalysis {
  const byId = new Map<string, Call>();
  const callsByMessage = new Map<number, Call[]>();
  const resultsById = new Map<string, number[]>();
  const orphans: number[] = [];
  let lastCaller = -1;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (isAssistant(m)) {
      const calls = callsOf(messages, i, byId);
      if (calls.length > 0) {
        callsByMessage.set(i, calls);
        lastCaller = i;
      }
    } else if (isToolResult(m)) {
      const id = resultIdOf(m);
      if (id === undefined) orphans.push(i);
      else resultsById.set(id, [...(resultsById.get(id) ?? []), i]);
    }
  }
  const calls = [...callsByMessage.values()].flat();
  const ownerOf = new Map<number, Call>();
  const duplicates = new Map<number, Call>();
  for (const call of calls) {
    const results = call.server ? undefined : resultsById.get(call.id); // no ToolMessage answers a server tool
    if (!results) continue;
    // A real result beats a synthetic one; then the first one after the call; then the first one.
    const real = results.filter((r) => !isSyntheticResult(messages[r]));
    const pool = real.length > 0 ? real : results;
    call.result = pool.find((r) => r > call.messageIndex) ?? pool[0];
    ownerOf.set(call.result, call);
    for (const r of results) if (r !== call.result) duplicates.set(r, call);
  }
  for (const [id, results] of resultsById) if (!byId.has(id)) orphans.push(...results);
  orphans.sort((a, b) => a - b);

  // The trailing exchange: the last assistant message with calls, followed only by its own results.
  let trailing = -1;
  if (lastCaller >= 0) {
    const own = callsByMessage.get(lastCaller)!;
    let onlyOwnResults = true;
    for (let j = lastCaller + 1; j < messages.length && onlyOwnResults; j++)
      onlyOwnResults = isToolResult(messages[j]) && ownerOf.get(j)?.messageIndex === lastCaller;
    if (onlyOwnResults && own.some((c) => c.result === undefined)) trailing = lastCaller;
  }

  const inPlace = new Map<number, number[]>();
  const problems: PairingAnalysis["problems"] = [];
  for (const [index, own] of callsByMessage) {
    // Results of this message directly after it; extras and orphans in the run do not end it (they leave).
    const placed: number[] = [];
    for (let j = index + 1; j < messages.length && isToolResult(messages[j]); j++) {
      const owner = ownerOf.get(j);
      if (owner?.messageIndex === index) placed.push(j);
      else if (owner) break;
    }
    inPlace.set(index, placed);
    let lastResult = index;
    for (const call of own) {
      const named = { toolCallId: call.id, toolName: call.name };
      if (call.result === undefined) {
        const kind: ToolCallProblemKind = index === trailing ? "trailing_open_exchange" : "orphan_call";
        problems.push({
          kind,
          index,
          ...named,
          detail: `${call.server ? "server tool call" : "tool call"} ${call.id}${call.name ? ` to "${call.name}"` : ""} has no result${
            kind === "trailing_open_exchange" ? " and the history ends on it" : ""
          }`,
        });
      } else if (!placed.includes(call.result)) {
        problems.push({
          kind: "displaced_result",
          index: call.result,
          ...named,
          detail: `result of ${call.id} is at message ${call.result}, not in the block right after its call at message ${index}`,
        });
        lastResult = Math.max(lastResult, call.result);
      }
    }
    for (let j = index + 1; j < lastResult; j++)
      if (!isToolResult(messages[j]))
        problems.push({ kind: "interleaved_message", index: j, detail: `message ${j} sits between the calls at message ${index} and their results` });
  }
  for (const r of orphans) {
    const id = resultIdOf(messages[r] as ToolMessage);
    problems.push(
      id === undefined
        ? { kind: "missing_result_id", index: r, detail: `tool result without a usable tool_call_id` }
        : { kind: "orphan_result", index: r, toolCallId: id, detail: `tool result for ${id}, whose call is not in the history` },
    );
  }
  for (const [r, call] of duplicates)
    problems.push({
      kind: "duplicate_result",
      index: r,
      toolCallId: call.id,
      toolName: call.name,
      detail: `another result for ${call.id}, already answered at message ${call.result}`,
    });
  problems.sort((a, b) => a.index - b.index);
  return { calls, callsByMessage, ownerOf, duplicates, orphans, trailing, inPlace, problems };
}

function sameContent(a: BaseMessage, b: BaseMessage): boolean {
  if (typeof a.content === "string" || typeof b.content === "string") return a.content === b.content;
  return JSON.stringify(a.content) === JSON.stringify(b.content);
}

/** The repair walk: emits each assistant message with its results, then whatever followed, in order. */
function rebuild(messages: BaseMessage[], analysis: PairingAnalysis, ctx: PassContext): BaseMessage[] {
  const { options } = ctx;
  const out: BaseMessage[] = [];
  const emitted = new Set<number>();
  const interleaved = new Set(analysis.problems.filter((p) => p.kind === "interleaved_message").map((p) => p.index));

  const handleCallMessage = (index: number, own: Call[]) => {
    const message = messages[index] as AIMessage;
    const isTrailing = index === analysis.trailing;
    const strategyOf = (call: Call) =>
      call.server ? "remove" : isTrailing ? options.trailing : options.orphanCalls;
    const unanswered = own.filter((c) => c.result === undefined);
    const remove = new Set(unanswered.filter((c) => strategyOf(c) === "remove").map((c) => c.id));
    const answer = unanswered.filter((c) => strategyOf(c) === "answer");
    const problemOf = (): ToolCallProblemKind => (isTrailing ? "trailing_open_exchange" : "orphan_call");

    let kept: BaseMessage | undefined = message;
    if (remove.size > 0) {
      const rewritten = rewriteToolCalls(message, (ref) => (ref.id !== undefined && remove.has(ref.id) ? "drop" : undefined));
      for (const call of own.filter((c) => remove.has(c.id)))
        ctx.report(
          { problem: problemOf(), action: "removed_call", toolCallId: call.id, toolName: call.name, detail: `unanswered call ${call.id} removed from every location` },
          message,
          index,
        );
      const callsLeft = own.length > remove.size;
      if (!callsLeft && !hasMeaningfulContent(rewritten.content)) {
        kept = undefined;
        ctx.report({ problem: problemOf(), action: "removed_message", detail: "assistant message left with no calls and no content, removed" }, message, index);
      } else {
        kept = rewritten;
        ctx.derive(message, rewritten);
      }
    }
    if (kept) out.push(kept);

    // Results already in place keep their order; pulled ones follow in call order; synthetic ones last.
    const placed = analysis.inPlace.get(index) ?? [];
    const pulled = own.filter((c) => c.result !== undefined && !placed.includes(c.result)).map((c) => c.result!);
    for (const r of [...placed, ...pulled]) {
      out.push(messages[r]);
      emitted.add(r);
    }
    for (const r of pulled) {
      const call = analysis.ownerOf.get(r)!;
      ctx.report(
        { problem: "displaced_result", action: "moved_result", toolCallId: call.id, toolName: call.name, detail: `result of ${call.id} moved right after its call` },
        messages[r],
        r,
      );
    }
    for (const call of answer) {
      const note = ctx.callNotes.get(call.id);
      const reason: ToolCallProblemKind = note !== undefined ? "invalid_tool_call" : problemOf();
      const text = options.syntheticResultText({ id: call.id, name: call.name, reason, note });
      out.push(syntheticToolResult({ toolCallId: call.id, toolName: call.name, reason, text }));
      ctx.report(
        { problem: problemOf(), action: "synthesized_result", toolCallId: call.id, toolName: call.name, detail: `synthetic error result added for ${call.id}` },
        message,
        index,
      );
    }
  };

  const handleStrayResult = (index: number) => {
    const result = messages[index] as ToolMessage;
    const dupOf = analysis.duplicates.get(index);
    const id = resultIdOf(result);
    const kind: ToolCallProblemKind = dupOf ? "duplicate_result" : id === undefined ? "missing_result_id" : "orphan_result";
    const redundant = dupOf !== undefined && (isSyntheticResult(result) || sameContent(result, messages[dupOf.result!]));
    if (redundant || options.orphanResults === "drop") {
      ctx.report({ problem: kind, action: "dropped_result", toolCallId: id, detail: `tool result ${id ?? "(no id)"} dropped${redundant ? " (same as the kept one)" : ""}` }, result, index);
      return;
    }
    const converted = orphanResultAsUserMessage(result, id);
    out.push(converted);
    ctx.derive(result, converted);
    ctx.report(
      { problem: kind, action: "converted_result", toolCallId: id, detail: `tool result ${id ?? "(no id)"} kept as a user message (its call is gone)` },
      result,
      index,
    );
  };

  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const own = analysis.callsByMessage.get(i);
    if (own) handleCallMessage(i, own);
    else if (isToolResult(m)) {
      if (emitted.has(i) || analysis.ownerOf.has(i)) continue; // emitted with its call, earlier or later
      handleStrayResult(i);
    } else {
      if (interleaved.has(i))
        ctx.report({ problem: "interleaved_message", action: "moved_message", detail: `message moved after the tool results it interrupted` }, m, i);
      out.push(m);
    }
  }
  return sameOrNew(messages, out);
}

export const pairingPass: RepairPass = {
  name: "pairing",
  find(messages, ctx: FindContext): ToolCallProblem[] {
    return analyzePairing(messages)
      .problems.filter((p) => ctx.trailingIsProblem || p.kind !== "trailing_open_exchange")
      .map((p) => ({ ...problem(ctx, p.kind, p.index, p.detail, { id: p.toolCallId, name: p.toolName }) }));
  },
  repair(messages, ctx) {
    const analysis = analyzePairing(messages);
    const actionable = analysis.problems.some(
      (p) => p.kind !== "trailing_open_exchange" || ctx.options.trailing !== "keep",
    );
    return actionable ? rebuild(messages, analysis, ctx) : messages;
  },
};
