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
  forEachToolCallRef,
  foreignPlaceholderOf,
  hasMeaningfulContent,
  isAssistant,
  isNoResult,
  isToolResult,
  resultIdOf,
  serverToolResultIds,
} from "../../messages/inspect";
import { callNamed, problem, pushTo, sameOrNew, type FindContext, type PassContext, type RepairPass } from "../context";
import type { ToolCallProblemKind } from "../../types";
import { safeJson } from "../../values";

/** A problem the pass found, with the call it concerns. */
type Found = { kind: ToolCallProblemKind; index: number; detail: string; call?: { id?: string; name?: string } };

interface Call {
  id: string;
  name: string | undefined;
  messageIndex: number;
  /** An Anthropic server tool: it cannot be answered by a ToolMessage, only removed. */
  server: boolean;
  /** Index of the result kept for this call, if any. */
  result?: number;
  /** No result, or one elsewhere than right after the call. */
  problem?: Found;
  /** Its result is another library's placeholder (no result): it is told in the package's words. */
  foreign?: Found;
}

/** The calls of one assistant message that the history has not seen before (a repeated id is the call-ids pass's). */
function callsOf(message: AIMessage, index: number, known: Map<string, Call>) {
  const calls: Call[] = [];
  const answeredInline = serverToolResultIds(message);
  let servers: Set<string> | undefined;
  forEachToolCallRef(message, ({ id, name, location }) => {
    if (id === undefined) return;
    const server = location === "content.server_tool_use";
    // A server tool lives and dies inside its own message: the same id elsewhere is another call.
    if (server ? answeredInline.has(id) || servers?.has(id) : known.has(id)) return;
    const call: Call = { id, name, messageIndex: index, server };
    if (server) (servers ??= new Set()).add(id);
    else known.set(id, call);
    calls.push(call);
  });
  return calls;
}

function analyzePairing(messages: readonly BaseMessage[]) {
  const n = messages.length;
  const byId = new Map<string, Call>();
  /** Calls per message index (set for the assistant messages that make calls). */
  const callsAt: (Call[] | undefined)[] = new Array(n);
  /** The problem of each result no call keeps and each message between a call and its results. */
  const at: (Found | undefined)[] = new Array(n);
  const problems: Found[] = [];
  const add = (kind: ToolCallProblemKind, index: number, detail: string, call?: Found["call"]) => {
    const found = { kind, index, detail, call };
    problems.push(found);
    return found;
  };
  const results = [];
  for (let i = 0; i < n; i++) {
    const m = messages[i];
    if (isToolResult(m)) results.push(i);
    else if (isAssistant(m)) {
      const calls = callsOf(m, i, byId);
      if (calls.length) callsAt[i] = calls;
    }
  }
  // Each result goes to its call, in order (a result may come before its call); the first one on the call itself,
  // only the rare further ones to a map.
  let moreResults: Map<Call, number[]> | undefined;
  for (const i of results) {
    const id = resultIdOf(messages[i] as ToolMessage);
    const call = byId.get(id as string); // none for no id
    if (!call)
      at[i] =
        id === undefined
          ? add("missing_result_id", i, "tool result without a usable tool_call_id")
          : add("orphan_result", i, `tool result for ${id}, whose call is not in the history`, { id });
    else if (call.result === undefined) call.result = i;
    else pushTo((moreResults ??= new Map()), call, i);
  }
  if (moreResults)
    for (const [call, more] of moreResults) {
      // A real result beats a placeholder (a late real result replaces one); then the first one after the call;
      // then the first one.
      const results = [call.result!, ...more];
      const real = results.filter((r) => !isNoResult(messages[r]));
      const pool = real.length ? real : results;
      call.result = pool.find((r) => r > call.messageIndex) ?? pool[0];
      const detail = `another result for ${call.id}, already answered at message ${call.result}`;
      for (const r of results) if (r !== call.result) at[r] = add("duplicate_result", r, detail, call);
    }
  const ownerAt: (Call | undefined)[] = new Array(n);
  for (const call of byId.values()) if (call.result !== undefined) ownerAt[call.result] = call;

  const trailing = trailingOpenExchange(messages)?.index ?? -1;
  /** Per assistant message: its kept results already in place right after it. */
  const inPlaceAt: (number[] | undefined)[] = new Array(n);
  /** 1 for a kept result already in place right after its call. */
  const placed = new Uint8Array(n);
  let markedUpTo = 0; // messages before this index were already checked for interleaving
  for (let index = 0; index < n; index++) {
    const own = callsAt[index];
    if (!own) continue;
    // Results of this message directly after it; extras and orphans in the run do not end it (they leave).
    const inPlace = [];
    for (let j = index + 1; j < n && isToolResult(messages[j]); j++) {
      const owner = ownerAt[j];
      if (owner?.messageIndex === index) {
        inPlace.push(j);
        placed[j] = 1;
      } else if (owner) break;
    }
    inPlaceAt[index] = inPlace;
    let lastResult = index;
    for (const call of own) {
      const library = foreignPlaceholderOf(messages[call.result!] ?? {});
      if (library)
        call.foreign = add(
          "orphan_call",
          index,
          `tool call ${callNamed(call)} has only a placeholder ${library} wrote`,
          call,
        );
      if (call.result === undefined) {
        const last = index === trailing;
        call.problem = add(
          last ? "trailing_open_exchange" : "orphan_call",
          index,
          `${call.server ? "server tool call" : "tool call"} ${callNamed(call)} has no result${
            last ? " and the history ends on it" : ""
          }`,
          call,
        );
      } else if (placed[call.result] === 0) {
        call.problem = add(
          "displaced_result",
          call.result,
          `result of ${call.id} is at message ${call.result}, not in the block right after its call at message ${index}`,
          call,
        );
        if (call.result > lastResult) lastResult = call.result;
      }
    }
    // Each message is checked once, even where the spans of several calls overlap.
    for (let j = Math.max(index + 1, markedUpTo); j < lastResult; j++) {
      if (isToolResult(messages[j]) || at[j]) continue;
      at[j] = add(
        "interleaved_message",
        j,
        `message ${j} sits between the calls at message ${index} and their results`,
      );
    }
    if (lastResult > markedUpTo) markedUpTo = lastResult;
  }
  return { callsAt, ownerAt, trailing, inPlaceAt, placed, at, problems };
}

/**
 * The same content, compared whole (a differing duplicate is real data and must not be dropped). A string is
 * compared as it is: serializing a large result twice per duplicate was most of a repair's time.
 */
const sameContent = (a: BaseMessage, b: BaseMessage) =>
  typeof a.content === "string"
    ? a.content === b.content
    : safeJson(a.content, Infinity) === safeJson(b.content, Infinity);

/**
 * The repair walk: emits each assistant message with its results, then whatever followed, in order. Each repair
 * is reported with the sentence of the problem it resolves.
 */
function rebuild(messages: BaseMessage[], analysis: ReturnType<typeof analyzePairing>, ctx: PassContext) {
  const { options } = ctx;
  const { placed, at } = analysis;
  const out: BaseMessage[] = [];
  /** A call's synthetic result, told in the package's words (`reason`, `note`), reported as made for `problem`. */
  const answer = (call: Call, index: number, reason: ToolCallProblemKind, problem: Found, note?: string) => {
    // Arguments that did not parse never reach a tool; any other call may have started, and nothing here says why
    // it has no result.
    const toolRun = note ? "never_started" : "outcome_unknown";
    ctx.report(messages[index], index, problem.kind, "synthesized_result", problem.detail, { ...call, toolRun });
    const text = options.syntheticResultText({ id: call.id, name: call.name, reason, note, toolRun });
    return syntheticToolResult({ toolCallId: call.id, toolName: call.name, reason, text, toolRun });
  };
  /** The kept result at `r`: itself, or the package's placeholder for another library's. */
  const result = (r: number) => {
    const call = analysis.ownerAt[r];
    if (!call?.foreign) return messages[r];
    const made = answer(call, r, "orphan_call", call.foreign);
    ctx.derive(messages[r], made);
    return made;
  };
  for (let index = 0; index < messages.length; index++) {
    const m = messages[index];
    const own = analysis.callsAt[index];
    const found = at[index];
    if (!own) {
      if (!isToolResult(m)) {
        if (found) ctx.report(m, index, "interleaved_message", "moved_message", found.detail);
        out.push(m);
      } else if (found) {
        // A result no call keeps: dropped when it repeats the kept one (or when asked), else kept as user text.
        const kept = found.kind === "duplicate_result" ? (found.call as Call).result! : -1;
        const drop =
          (kept >= 0 && (isNoResult(m) || sameContent(m, messages[kept]))) || options.orphanResults === "drop";
        if (!drop) {
          const converted = orphanResultAsUserMessage(m, found.call?.id);
          out.push(converted);
          ctx.derive(m, converted);
        }
        ctx.report(m, index, found.kind, drop ? "dropped_result" : "converted_result", found.detail, found.call);
      } // a kept result is emitted with its call, earlier or later
      continue;
    }
    const message = m as AIMessage;
    const inPlace = analysis.inPlaceAt[index]!;
    // Every call answered in place: the message and its block as they are.
    if (own.every((call) => !call.problem && !call.foreign)) {
      out.push(message);
      for (const r of inPlace) out.push(messages[r]);
      continue;
    }
    const isTrailing = index === analysis.trailing;
    const kind = isTrailing ? "trailing_open_exchange" : "orphan_call";
    const remove = new Set<string>();
    const answered = [];
    for (const call of own) {
      if (call.result !== undefined) continue;
      const strategy = call.server ? "remove" : isTrailing ? options.trailing : options.orphanCalls;
      if (strategy === "remove") remove.add(call.id);
      else if (strategy === "answer") answered.push(call);
    }

    let kept: BaseMessage | undefined = message;
    if (remove.size) {
      kept = rewriteToolCalls(message, (ref) => (ref.id !== undefined && remove.has(ref.id) ? "drop" : undefined));
      for (const call of own)
        if (remove.has(call.id)) ctx.report(message, index, kind, "removed_call", call.problem!.detail, call);
      if (own.length === remove.size && !hasMeaningfulContent(kept.content)) {
        kept = undefined;
        ctx.report(message, index, kind, "removed_message", "assistant message left with no calls and no content");
      } else ctx.derive(message, kept);
    }
    if (kept) out.push(kept);

    // Results already in place keep their order; pulled ones follow in call order; synthetic ones last.
    for (const r of inPlace) out.push(result(r));
    for (const call of own) {
      const r = call.result;
      if (r === undefined || placed[r] === 1) continue;
      out.push(result(r));
      ctx.report(messages[r], r, "displaced_result", "moved_result", call.problem!.detail, call);
    }
    for (const call of answered) {
      const note = ctx.callNotes.get(call.id);
      out.push(answer(call, index, note ? "invalid_tool_call" : kind, call.problem!, note));
    }
  }
  return sameOrNew(messages, out);
}

/** Whether the pass acts on a problem: an open trailing exchange is left alone with `trailing: "keep"`. */
const actionable = (p: Found, { options }: FindContext) =>
  p.kind !== "trailing_open_exchange" || options.trailing !== "keep";

export const pairingPass: RepairPass = {
  structural: true,
  // Opens each exchange (the calls other checks read), then answers its calls, one result each, right after it.
  clean: (w) => {
    const { open, profile } = w;
    return {
      visit(m) {
        // Another library's placeholder is no result: it is told in the package's words.
        if (m.type === "tool") return open.answer(m.tool_call_id) && !foreignPlaceholderOf(m);
        if (open.waiting > 0) return false;
        open.reset();
        if (m.type !== "ai") return true;
        const { tool_calls: calls, content } = m;
        if (calls) for (let k = 0; k < calls.length; k++) open.add(calls[k].id);
        // An unanswered server tool can only be closed by removal: it is open like a call, but no result answers it.
        if (profile.anthropicBlocks && typeof content !== "string") {
          let answered: ReadonlySet<unknown> | undefined;
          for (let i = 0; i < content.length; i++)
            if (content[i].type === "server_tool_use" && !(answered ??= serverToolResultIds(m)).has(content[i].id))
              open.add(content[i].id, true);
        }
        return true;
      },
      end: () => open.waiting === 0 || w.trailingAllowed,
    };
  },
  find: (messages, ctx) =>
    analyzePairing(messages)
      .problems.filter((p) => actionable(p, ctx))
      .map((p) => problem(ctx, p.kind, p.index, p.detail, p.call)),
  repair(messages, ctx) {
    const analysis = analyzePairing(messages);
    return analysis.problems.some((p) => actionable(p, ctx)) ? rebuild(messages, analysis, ctx) : messages;
  },
};
