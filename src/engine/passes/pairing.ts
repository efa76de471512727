/**
 * Pass "pairing" (structural): every call answered exactly once by results placed right after its assistant
 * message. Classifies orphan calls, the trailing open exchange, displaced results, messages between a call and
 * its results, orphan results and duplicate results; the repair then rebuilds the list in one walk, pulling
 * each call's results into place so that whatever sat between them naturally follows the block, in order.
 * Every step is linear in messages plus calls, whatever the fan-out or the number of results per id.
 */
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import { orphanResultAsUserMessage, rewriteToolCalls, syntheticToolResult } from "../../messages/build";
import { trailingOpenExchange } from "../../messages/exchanges";
import {
  callsOnlyInToolCalls,
  forEachToolCallRef,
  hasMeaningfulContent,
  isAssistant,
  isSyntheticResult,
  isToolResult,
  resultIdOf,
  serverToolResultIds,
} from "../../messages/inspect";
import { problem, pushTo, sameOrNew, type FindContext, type PassContext, type RepairPass } from "../context";
import type { ToolCallProblem, ToolCallProblemKind } from "../../types";
import { safeJson } from "../../values";

interface Call {
  id: string;
  name: string | undefined;
  messageIndex: number;
  /** An Anthropic server tool: it cannot be answered by a ToolMessage, only removed. */
  server: boolean;
  /** Index of the result kept for this call, if any. */
  result?: number;
}

interface PairingAnalysis {
  /** Calls per assistant message index, in message order. */
  callsByMessage: Map<number, Call[]>;
  /** Result index -> the call it answers (only kept results). */
  ownerOf: Map<number, Call>;
  /** Extra results of an answered call. */
  duplicates: Map<number, Call>;
  /** Index of the assistant message of the trailing open exchange, or -1. */
  trailing: number;
  /** Per assistant message: its kept results already in place right after it. */
  inPlace: Map<number, number[]>;
  /** Non-tool messages sitting between a call and one of its results. */
  interleaved: Set<number>;
  problems: Omit<ToolCallProblem, "rules">[];
}

/** The calls of one assistant message that the history has not seen before (a repeated id is the call-ids pass's). */
function callsOf(message: AIMessage, index: number, known: Map<string, Call>): Call[] {
  const calls: Call[] = [];
  if (callsOnlyInToolCalls(message)) {
    // The common case, read straight from tool_calls.
    const list = (message.tool_calls ?? []) as { id?: unknown; name?: unknown }[];
    for (const c of list) {
      const id = typeof c?.id === "string" && c.id !== "" ? c.id : undefined;
      if (id === undefined || known.has(id)) continue;
      const call: Call = { id, name: typeof c.name === "string" ? c.name : undefined, messageIndex: index, server: false };
      known.set(id, call);
      calls.push(call);
    }
    return calls;
  }
  const answeredInline = serverToolResultIds(message);
  let servers: Set<string> | undefined;
  forEachToolCallRef(message, (ref) => {
    if (ref.id === undefined) return;
    if (ref.location === "content.server_tool_use") {
      // A server tool lives and dies inside its own message: the same id elsewhere is another call.
      if (answeredInline.has(ref.id) || servers?.has(ref.id)) return;
      (servers ??= new Set()).add(ref.id);
      calls.push({ id: ref.id, name: ref.name, messageIndex: index, server: true });
      return;
    }
    if (known.has(ref.id)) return;
    const call: Call = { id: ref.id, name: ref.name, messageIndex: index, server: false };
    known.set(ref.id, call);
    calls.push(call);
  });
  return calls;
}

function analyzePairing(messages: readonly BaseMessage[]): PairingAnalysis {
  const byId = new Map<string, Call>();
  const callsByMessage = new Map<number, Call[]>();
  const resultsById = new Map<string, number[]>();
  const orphans: number[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (isAssistant(m)) {
      const calls = callsOf(m, i, byId);
      if (calls.length > 0) callsByMessage.set(i, calls);
    } else if (isToolResult(m)) {
      const id = resultIdOf(m);
      if (id === undefined) orphans.push(i);
      else pushTo(resultsById, id, i);
    }
  }
  const ownerOf = new Map<number, Call>();
  const duplicates = new Map<number, Call>();
  for (const call of byId.values()) {
    const results = resultsById.get(call.id);
    if (!results) continue;
    // A real result beats a synthetic one (a late real result replaces a placeholder); then the first one
    // after the call; then the first one.
    if (results.length === 1) call.result = results[0];
    else {
      const real = results.filter((r) => !isSyntheticResult(messages[r]));
      const pool = real.length > 0 ? real : results;
      call.result = pool.find((r) => r > call.messageIndex) ?? pool[0];
      for (const r of results) if (r !== call.result) duplicates.set(r, call);
    }
    ownerOf.set(call.result, call);
  }
  for (const [id, results] of resultsById) if (!byId.has(id)) for (const r of results) orphans.push(r);
  orphans.sort((a, b) => a - b);

  const trailing = trailingOpenExchange(messages)?.index ?? -1;
  const inPlace = new Map<number, number[]>();
  const interleaved = new Set<number>();
  const problems: PairingAnalysis["problems"] = [];
  let markedUpTo = 0; // messages before this index were already checked for interleaving
  for (const [index, own] of callsByMessage) {
    // Results of this message directly after it; extras and orphans in the run do not end it (they leave).
    const placed: number[] = [];
    for (let j = index + 1; j < messages.length && isToolResult(messages[j]); j++) {
      const owner = ownerOf.get(j);
      if (owner?.messageIndex === index) placed.push(j);
      else if (owner) break;
    }
    inPlace.set(index, placed);
    const placedSet = asLookup(placed);
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
      } else if (!placedSet.has(call.result)) {
        problems.push({
          kind: "displaced_result",
          index: call.result,
          ...named,
          detail: `result of ${call.id} is at message ${call.result}, not in the block right after its call at message ${index}`,
        });
        if (call.result > lastResult) lastResult = call.result;
      }
    }
    // Each message is checked once, even where the spans of several calls overlap.
    for (let j = Math.max(index + 1, markedUpTo); j < lastResult; j++) {
      if (isToolResult(messages[j]) || interleaved.has(j)) continue;
      interleaved.add(j);
      problems.push({ kind: "interleaved_message", index: j, detail: `message ${j} sits between the calls at message ${index} and their results` });
    }
    if (lastResult > markedUpTo) markedUpTo = lastResult;
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
  return { callsByMessage, ownerOf, duplicates, trailing, inPlace, interleaved, problems };
}

/** Membership in a short sorted list by a scan (most exchanges have a few results), through a Set past that. */
function asLookup(list: number[]): { has(value: number): boolean } {
  return list.length <= 8 ? { has: (value) => list.includes(value) } : new Set(list);
}

/** The same content, compared whole (a differing duplicate is real data and must not be dropped). */
function sameContent(a: BaseMessage, b: BaseMessage): boolean {
  if (typeof a.content === "string" || typeof b.content === "string") return a.content === b.content;
  return safeJson(a.content, Number.MAX_SAFE_INTEGER) === safeJson(b.content, Number.MAX_SAFE_INTEGER);
}

/** The repair walk: emits each assistant message with its results, then whatever followed, in order. */
function rebuild(messages: BaseMessage[], analysis: PairingAnalysis, ctx: PassContext): BaseMessage[] {
  const { options } = ctx;
  const out: BaseMessage[] = [];
  const emitted = new Set<number>();

  const handleCallMessage = (index: number, own: Call[]) => {
    const message = messages[index] as AIMessage;
    const isTrailing = index === analysis.trailing;
    const problemKind: ToolCallProblemKind = isTrailing ? "trailing_open_exchange" : "orphan_call";
    const strategyOf = (call: Call) => (call.server ? "remove" : isTrailing ? options.trailing : options.orphanCalls);
    const remove = new Set<string>();
    const answer: Call[] = [];
    for (const call of own) {
      if (call.result !== undefined) continue;
      const strategy = strategyOf(call);
      if (strategy === "remove") remove.add(call.id);
      else if (strategy === "answer") answer.push(call);
    }

    let kept: BaseMessage | undefined = message;
    if (remove.size > 0) {
      const rewritten = rewriteToolCalls(message, (ref) => (ref.id !== undefined && remove.has(ref.id) ? "drop" : undefined));
      for (const call of own)
        if (remove.has(call.id))
          ctx.report(
            { problem: problemKind, action: "removed_call", toolCallId: call.id, toolName: call.name, detail: `unanswered call ${call.id} removed from every location` },
            message,
            index,
          );
      const callsLeft = own.length > remove.size;
      if (!callsLeft && !hasMeaningfulContent(rewritten.content)) {
        kept = undefined;
        ctx.report({ problem: problemKind, action: "removed_message", detail: "assistant message left with no calls and no content, removed" }, message, index);
      } else {
        kept = rewritten;
        ctx.derive(message, rewritten);
      }
    }
    if (kept) out.push(kept);

    // Results already in place keep their order; pulled ones follow in call order; synthetic ones last.
    const placed = analysis.inPlace.get(index) ?? [];
    const placedSet = asLookup(placed);
    const pulled: number[] = [];
    for (const call of own) if (call.result !== undefined && !placedSet.has(call.result)) pulled.push(call.result);
    for (const r of placed) {
      out.push(messages[r]);
      emitted.add(r);
    }
    for (const r of pulled) {
      out.push(messages[r]);
      emitted.add(r);
      const call = analysis.ownerOf.get(r)!;
      ctx.report(
        { problem: "displaced_result", action: "moved_result", toolCallId: call.id, toolName: call.name, detail: `result of ${call.id} moved right after its call` },
        messages[r],
        r,
      );
    }
    for (const call of answer) {
      const note = ctx.callNotes.get(call.id);
      const reason: ToolCallProblemKind = note !== undefined ? "invalid_tool_call" : problemKind;
      const text = options.syntheticResultText({ id: call.id, name: call.name, reason, note });
      out.push(syntheticToolResult({ toolCallId: call.id, toolName: call.name, reason, text }));
      ctx.report(
        { problem: problemKind, action: "synthesized_result", toolCallId: call.id, toolName: call.name, detail: `synthetic error result added for ${call.id}` },
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
      if (analysis.interleaved.has(i))
        ctx.report({ problem: "interleaved_message", action: "moved_message", detail: `message moved after the tool results it interrupted` }, m, i);
      out.push(m);
    }
  }
  return sameOrNew(messages, out);
}

export const pairingPass: RepairPass = {
  name: "pairing",
  structural: true,
  find(messages, ctx: FindContext): ToolCallProblem[] {
    return analyzePairing(messages)
      .problems.filter((p) => ctx.trailingIsProblem || p.kind !== "trailing_open_exchange")
      .map((p) => problem(ctx, p.kind, p.index, p.detail, { id: p.toolCallId, name: p.toolName }));
  },
  repair(messages, ctx) {
    const analysis = analyzePairing(messages);
    const actionable = analysis.problems.some((p) => p.kind !== "trailing_open_exchange" || ctx.options.trailing !== "keep");
    return actionable ? rebuild(messages, analysis, ctx) : messages;
  },
};
