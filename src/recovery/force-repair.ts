/**
 * `forceRepairToolCalls`: repairs what a provider's rejection names, even where the engine sees nothing wrong
 * (a rule it does not model, a stricter model, a history repaired for another provider). The result then goes
 * through `repairToolCalls` for the provider, so it is also valid by every rule the engine knows.
 *
 * - Ids named: each named call is answered afresh by an error-marked synthetic result placed at the end of its
 *   block of results; every existing result of it is set aside as user text after its block (nothing is lost).
 *   With `orphanCalls: "remove"` the named calls are removed from every location instead (the assistant's text
 *   stays), their results set aside the same way. A named id that only has results (no call) has them set aside.
 * - No ids named (or none found): the strictest profile repairs the turn around `messageIndex` (from the user
 *   message before it to the next one), and, when that changes nothing, the whole history.
 * - Responses reasoning items (R6, R7): the items named are taken off their ids, a reasoning item removed with
 *   the ids of the items it preceded (`withoutItemIds`); the assistant's text and reasoning summary stay.
 * - A missing thought signature (G6, names no call): every step's first call without a signature gets Google's
 *   placeholder, in the whole history (the provider's idea of the current turn may be wider than the engine's).
 * - Reasoning and server tools (A10, A13, A14, B11, B12): a server tool use the provider found alone (A13) goes as
 *   text with its result; reasoning whose signature is missing or refused (A14, B12; at the named message, or every
 *   one) goes as text; a tool loop whose opening turn lacks its reasoning (A10, B11) is closed: its calls and results
 *   go as text, so the request ends on a user turn and no loop needs reasoning. No repair can sign reasoning.
 * - Tool blocks in a request without tools (`tool_config_missing`, Bedrock B3): nothing is wrong with the history,
 *   the request lacks tools. It is repaired with `toolsInRequest: false` for the rejecting provider: every call
 *   and result travels as text (the tools-as-text pass), so the same request, still without tools, is accepted.
 */
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import { findToolCallProblems, profileFor, repairToolCalls, reportRepairsSafely } from "../engine";
import { assertArray, optionsInput, readingInput, ToolCallRepairInputError } from "../errors";
import {
  clientCallsAsText,
  defaultSyntheticText,
  orphanResultAsUserMessage,
  reasoningAsText,
  rebuildAssistant,
  rewriteToolCalls,
  serverToolBlockAsText,
  syntheticToolResult,
  toolResultAsUserText,
  withoutItemIds,
  withPlaceholderSignature,
} from "../messages/build";
import { GEMINI_SIGNATURES_KEY, resentOutputOf } from "../messages/responses";
import { coerceMessage, isMessage } from "../messages/coerce";
import {
  distinctCalls,
  forEachToolCallRef,
  isAssistant,
  isClientCall,
  isDict,
  isServerToolResultBlock,
  isToolResult,
  resultIdOf,
  serverToolResultIds,
  turnOf,
  type Dict,
} from "../messages/inspect";
import type {
  Provider,
  ProviderRejection,
  RejectingProvider,
  RejectionKind,
  RepairOptions,
  RepairResult,
  ToolCallProblemKind,
  ToolCallRepair,
} from "../types";

/** The reason stored in the marker of results and messages made by a forced repair. */
const REJECTION_REASON = "provider_rejection";

/** `repairToolCalls` options; `provider` defaults to the rejecting provider (`"strict"` when it is not one). */
export type ForceRepairOptions = RepairOptions;

/** The engine profile to satisfy after a rejection by `provider`. */
export function repairProviderFor(provider: RejectingProvider): Provider {
  return provider === "langgraph" || provider === "unknown" ? "strict" : provider;
}

const PROBLEM_OF: Partial<Record<RejectionKind, ToolCallProblemKind>> = {
  missing_results: "orphan_call",
  unexpected_results: "orphan_result",
  results_not_first: "interleaved_message",
  duplicate_results: "duplicate_result",
  duplicate_ids: "duplicate_call_id",
  invalid_id: "invalid_call_id",
  result_count_mismatch: "orphan_call",
};

/** Repairs what `rejection` names in `messages`; see the module comment. Linear in the messages and their calls. */
export function forceRepairToolCalls<M = BaseMessage>(
  messages: M[],
  rejection: ProviderRejection,
  options: ForceRepairOptions = {},
): RepairResult<M> {
  const fn = "forceRepairToolCalls";
  assertArray(messages, fn);
  // The rejection and the options are read once, each under its own name: a getter that throws is an input error.
  const isRejection = readingInput(
    () => isDict(rejection) && Array.isArray(rejection.toolCallIds) && (void { ...rejection }, true),
    fn,
    "rejection",
  );
  if (!isRejection)
    throw new ToolCallRepairInputError(`${fn} expects a rejection from parseToolPairingError`, {
      argument: "rejection",
    });
  const given = readingInput(() => ({ ...optionsInput(options, fn) }), fn, "options") as ForceRepairOptions;
  const result = readingInput(() => forceRepair(messages, rejection, given), fn);
  const onRepair = given.onRepair;
  // Reported after the repair and outside reading the input: a throwing callback neither fails nor undoes it.
  reportRepairsSafely(onRepair, result.repairs);
  return result;
}

/**
 * The profile that turns tool blocks into text after a `tool_config_missing` rejection: the configured one when it
 * does, else the rejecting provider's, else strict (which does).
 */
function noToolsProvider(configured: Provider | undefined, rejection: ProviderRejection): Provider {
  for (const provider of [configured, repairProviderFor(rejection.provider)])
    if (provider !== undefined && profileFor(provider).toolBlocksNeedTools) return provider;
  return "strict";
}

function forceRepair<M>(messages: M[], rejection: ProviderRejection, options: ForceRepairOptions): RepairResult<M> {
  const { onRepair: _reportedByCaller, ...engineOptions } = options;
  // The request has no tools: the history is fine, its tool blocks must travel as text (B3).
  const noTools = rejection.kind === "tool_config_missing";
  const provider = noTools
    ? noToolsProvider(engineOptions.provider, rejection)
    : (engineOptions.provider ?? repairProviderFor(rejection.provider));
  const repairs: ToolCallRepair[] = [];
  const report = (repair: Omit<ToolCallRepair, "rejection">) => repairs.push({ ...repair, rejection });

  const input = messages.map((m, i) => {
    if (isMessage(m)) return m;
    const coerced = coerceMessage(m, i);
    report({
      problem: "malformed_message",
      action: "coerced_message",
      index: i,
      detail: "plain or serialized object turned into a LangChain message",
    });
    return coerced;
  });

  // `origin[k]`: the input index of the k-th message of the intermediate list (inserted ones: the message they follow).
  const inPlace = ITEM_FIXES[rejection.kind];
  let forced = noTools
    ? { messages: input, origin: input.map((_, i) => i) }
    : inPlace
      ? fixInPlace(input, rejection, inPlace, report)
      : REASONING_KINDS.has(rejection.kind)
        ? reasoningAsTextFor(input, rejection, report)
        : answerNamedCalls(input, rejection, engineOptions, report);
  if (!forced) forced = strictAround(input, rejection, engineOptions, report);

  const final = repairToolCalls(forced.messages, {
    ...engineOptions,
    provider,
    ...(noTools ? { toolsInRequest: false } : {}),
  });
  for (const repair of final.repairs) report({ ...repair, index: forced.origin[repair.index] ?? repair.index });
  return { messages: (repairs.length === 0 ? messages : final.messages) as M[], repairs };
}

interface Forced {
  messages: BaseMessage[];
  origin: number[];
}

type Report = (repair: Omit<ToolCallRepair, "rejection">) => void;

/** A fix of one assistant message for a rejection that concerns what the client stores beside its calls. */
type ItemFix = (
  message: AIMessage,
  named: ReadonlySet<string>,
) => { message: AIMessage; repair: Omit<ToolCallRepair, "index" | "rejection"> } | undefined;

const ITEM_FIXES: Partial<Record<RejectionKind, ItemFix>> = {
  reasoning_item_unpaired: (message, named) => {
    let hit = false;
    const run = sameReasoningRun(message, named);
    const { message: fixed, droppedReasoning } = withoutItemIds(
      message,
      (id) => (named.has(id) || run.has(id)) && (hit = true),
    );
    if (!hit) return undefined;
    const dropped = droppedReasoning.length > 0 ? ` (reasoning items ${droppedReasoning.join(", ")} removed)` : "";
    const detail = `Responses items ${[...named].join(", ")} sent without their ids${dropped}`;
    return { message: fixed, repair: { problem: "duplicate_response_item", action: "rebuilt_message", detail } };
  },
  missing_thought_signature: (message) => {
    const first = message.tool_calls?.[0];
    const signatures = (message.additional_kwargs as Record<string, unknown>)[GEMINI_SIGNATURES_KEY];
    const signed =
      isDict(signatures) && typeof signatures[first?.id ?? ""] === "string" && signatures[first?.id ?? ""] !== "";
    if (first?.id === undefined || signed) return undefined;
    return {
      message: withPlaceholderSignature(message),
      repair: {
        problem: "unsigned_call",
        action: "rebuilt_message",
        toolCallId: first.id,
        toolName: first.name,
        detail: `call ${first.id} given Google's placeholder thought signature`,
      },
    };
  },
};

/**
 * The ids of the items after a named one in its message's output, up to the next reasoning item: they followed
 * the same reasoning item, so the provider would name each of them next (R6 names one item at a time).
 */
function sameReasoningRun(message: AIMessage, named: ReadonlySet<string>): Set<string> {
  const run = new Set<string>();
  let inRun = false;
  for (const item of resentOutputOf(message) ?? []) {
    if (item.type === "reasoning") inRun = false;
    else if (inRun && typeof item.id === "string") run.add(item.id);
    if (typeof item.id === "string" && named.has(item.id)) inRun = item.type !== "reasoning";
  }
  return run;
}

/** Applies `fix` to every assistant message; undefined when none changes. */
function fixInPlace(
  input: BaseMessage[],
  rejection: ProviderRejection,
  fix: ItemFix,
  report: Report,
): Forced | undefined {
  const named = new Set(rejection.toolCallIds);
  let touched = false;
  const messages = input.map((m, index) => {
    const fixed = isAssistant(m) ? fix(m, named) : undefined;
    if (!fixed) return m;
    touched = true;
    report({ ...fixed.repair, index });
    return fixed.message;
  });
  return touched ? { messages, origin: input.map((_, i) => i) } : undefined;
}

/** The call ids a rejection names: Responses item ids (`fc_...`, R5) are resolved to the calls they carry. */
function namedCallIds(messages: BaseMessage[], named: ReadonlySet<string>): Set<string> {
  const ids = new Set(named);
  for (const m of messages) {
    if (!isAssistant(m)) continue;
    const output = isDict(m.response_metadata) ? m.response_metadata.output : undefined;
    if (!Array.isArray(output)) continue;
    for (const item of output) {
      if (isDict(item) && typeof item.id === "string" && named.has(item.id) && typeof item.call_id === "string")
        ids.add(item.call_id);
    }
  }
  return ids;
}

/** The named calls of one assistant message, deduplicated, with their names. */
function namedCallsOf(message: AIMessage, ids: ReadonlySet<string>): { id: string; name?: string }[] {
  const calls = new Map<string, string | undefined>();
  const answeredInline = serverToolResultIds(message);
  forEachToolCallRef(message, (ref) => {
    if (
      ref.id === undefined ||
      !ids.has(ref.id) ||
      (ref.location === "content.server_tool_use" && answeredInline.has(ref.id))
    )
      return;
    if (!calls.has(ref.id) || calls.get(ref.id) === undefined) calls.set(ref.id, ref.name);
  });
  return [...calls].map(([id, name]) => (name ? { id, name } : { id }));
}

function answerNamedCalls(
  input: BaseMessage[],
  rejection: ProviderRejection,
  options: RepairOptions,
  report: Report,
): Forced | undefined {
  if (rejection.toolCallIds.length === 0) return undefined;
  const ids = namedCallIds(input, new Set(rejection.toolCallIds));
  const remove = options.orphanCalls === "remove";
  const hadResult = new Set<string>();
  for (const m of input) {
    const id = isToolResult(m) ? resultIdOf(m) : undefined;
    if (id !== undefined && ids.has(id)) hadResult.add(id);
  }

  const out: BaseMessage[] = [];
  const origin: number[] = [];
  let touched = false;
  // What goes at the end of the current block of tool results: fresh answers, then results set aside.
  let answers: { message: ToolMessage; from: number }[] = [];
  let setAside: { message: BaseMessage; from: number }[] = [];
  const flush = () => {
    for (const { message, from } of [...answers, ...setAside]) {
      out.push(message);
      origin.push(from);
    }
    answers = [];
    setAside = [];
  };
  const why = `after the provider rejected the request (${rejection.rule}: ${rejection.kind})`;

  input.forEach((m, i) => {
    if (isToolResult(m)) {
      const id = resultIdOf(m);
      if (id !== undefined && ids.has(id)) {
        touched = true;
        setAside.push({ message: orphanResultAsUserMessage(m, id), from: i });
        report({
          problem: rejection.kind === "duplicate_results" ? "duplicate_result" : "orphan_result",
          action: "converted_result",
          index: i,
          toolCallId: id,
          detail: `result set aside as user text ${why}`,
        });
        return;
      }
      out.push(m);
      origin.push(i);
      return;
    }
    flush();
    const calls = isAssistant(m) ? namedCallsOf(m, ids) : [];
    if (calls.length === 0) {
      out.push(m);
      origin.push(i);
      return;
    }
    touched = true;
    const problem = PROBLEM_OF[rejection.kind] ?? "orphan_call";
    if (remove) {
      const named = new Set(calls.map((c) => c.id));
      out.push(
        rewriteToolCalls(m as AIMessage, (ref) => (ref.id !== undefined && named.has(ref.id) ? "drop" : undefined)),
      );
      origin.push(i);
      for (const call of calls)
        report({
          problem,
          action: "removed_call",
          index: i,
          toolCallId: call.id,
          ...(call.name ? { toolName: call.name } : {}),
          detail: `call removed ${why}`,
        });
      return;
    }
    out.push(m);
    origin.push(i);
    for (const call of calls) {
      // Whatever the call did before the rejection is not known here.
      const toolRun = "outcome_unknown";
      const text = options.syntheticResultText
        ? options.syntheticResultText({
            id: call.id,
            name: call.name,
            reason: problem,
            note: `the provider rejected this exchange (${rejection.rule})`,
            toolRun,
          })
        : forcedResultText(call, rejection, hadResult.has(call.id));
      answers.push({
        message: syntheticToolResult({
          toolCallId: call.id,
          toolName: call.name,
          reason: REJECTION_REASON,
          text,
          toolRun,
        }),
        from: i,
      });
      report({
        problem,
        action: "synthesized_result",
        index: i,
        toolCallId: call.id,
        ...(call.name ? { toolName: call.name } : {}),
        toolRun,
        detail: `call answered afresh ${why}`,
      });
    }
  });
  flush();
  return touched ? { messages: out, origin } : undefined;
}

function forcedResultText(
  call: { id: string; name?: string },
  rejection: ProviderRejection,
  hadResult: boolean,
): string {
  if (!hadResult) {
    const note = `the provider rejected this exchange (${rejection.rule}) and no result for it was sent`;
    return defaultSyntheticText({ ...call, reason: REJECTION_REASON, note, toolRun: "outcome_unknown" });
  }
  const tool = call.name ? `Tool "${call.name}"` : "The tool";
  return (
    `${tool} (call ${call.id}): the provider rejected this exchange (${rejection.rule}), so its ` +
    "result was set aside; it follows as user text."
  );
}

/** Rejections about reasoning and server tools: their blocks go as text, never through the strict profile (it drops thinking). */
const REASONING_KINDS: ReadonlySet<RejectionKind> = new Set([
  "thinking_block_required",
  "unsigned_reasoning",
  "server_tool_result_missing",
]);

const REASONING_TYPES = new Set(["thinking", "redacted_thinking", "reasoning", "reasoning_content"]);
const REFUSED_REASONING = "Reasoning the provider did not accept (no valid signature), kept as text";

/** The A10 / B11 / A13 / A14 / B12 repair (see the module comment); undefined when there is nothing of it to change. */
function reasoningAsTextFor(input: BaseMessage[], rejection: ProviderRejection, report: Report): Forced | undefined {
  const why = `after the provider rejected the request (${rejection.rule}: ${rejection.kind})`;
  const out = input.slice();
  let touched = false;
  if (rejection.kind === "thinking_block_required") {
    const from = openLoopStart(input);
    if (from === -1) return undefined;
    for (let i = from; i < input.length; i++) {
      const m = input[i];
      if (isToolResult(m)) out[i] = toolResultAsUserText(m, REJECTION_REASON);
      else if (isAssistant(m) && distinctCalls(m, isClientCall).length > 0)
        out[i] = clientCallsAsText(m, distinctCalls(m, isClientCall));
      else continue;
      touched = true;
      const detail = `tool exchange of the open loop written out as text ${why}`;
      report({ problem: "unsupported_block", action: "converted_to_text", index: i, detail });
    }
  } else {
    const named = new Set(rejection.toolCallIds);
    input.forEach((m, i) => {
      if (!isAssistant(m) || !Array.isArray(m.content)) return;
      if (
        rejection.kind === "unsigned_reasoning" &&
        rejection.messageIndex !== undefined &&
        rejection.messageIndex !== i
      )
        return;
      const servers = rejection.kind === "server_tool_result_missing";
      const content: unknown[] = [];
      let changed = 0;
      for (const block of m.content as unknown[]) {
        const b = isDict(block) ? block : undefined;
        const isNamedUse = (d: Dict) => d.type === "server_tool_use" && (named.size === 0 || named.has(d.id as string));
        const server =
          servers &&
          b !== undefined &&
          (isNamedUse(b) || (isServerToolResultBlock(b) && named.has(b.tool_use_id as string)));
        const reasoning = !servers && b !== undefined && REASONING_TYPES.has(String(b.type));
        if (!server && !reasoning) content.push(block);
        else {
          changed++;
          const text = server ? serverToolBlockAsText(b as Dict) : reasoningAsText(b as Dict, REFUSED_REASONING);
          if (text) content.push(text);
        }
      }
      if (changed === 0) return;
      touched = true;
      out[i] = rebuildAssistant(m, { content });
      const detail = `${changed} ${servers ? "server tool" : "reasoning"} block(s) turned into text ${why}`;
      report({ problem: "unsupported_block", action: "converted_block", index: i, detail });
    });
  }
  return touched ? { messages: out, origin: out.map((_, i) => i) } : undefined;
}

/** Where the tool loop a history ends in starts: after the last user message that does not follow tool results; -1 if none is open. */
function openLoopStart(messages: BaseMessage[]): number {
  let end = messages.length - 1;
  while (end >= 0 && turnOf(messages[end]) === "system") end--;
  if (end < 0 || !isToolResult(messages[end])) return -1;
  for (let i = end; i >= 0; i--) {
    if (turnOf(messages[i]) !== "user") continue;
    let before = i - 1;
    while (before >= 0 && (turnOf(messages[before]) === "system" || turnOf(messages[before]) === "user")) before--;
    if (before < 0 || !isToolResult(messages[before])) return i + 1;
  }
  return 0;
}

/** The engine's problem for a rejection that names no ids: the strict profile must leave none of it. */
const LEFT_OVER: Partial<Record<RejectionKind, ToolCallProblemKind>> = {
  misplaced_system_message: "misplaced_system_message",
  invalid_content_part: "malformed_message",
  roles_must_alternate: "consecutive_same_role",
  must_start_with_user: "leading_non_user",
  empty_content: "empty_message",
  blank_text: "blank_text_block",
  unsupported_content_block: "unsupported_block",
};

/**
 * No ids to act on: the strictest profile, first on the turn around `messageIndex`, then on everything when
 * that changed nothing or left a problem of the kind the provider named elsewhere in the history.
 */
function strictAround(
  input: BaseMessage[],
  rejection: ProviderRejection,
  options: RepairOptions,
  report: Report,
): Forced {
  const strict: RepairOptions = { ...options, provider: "strict" };
  const at = rejection.messageIndex;
  const leftOver = LEFT_OVER[rejection.kind];
  if (at !== undefined && at >= 0 && at < input.length) {
    const isTurnStart = (m: BaseMessage) => m.getType() === "human";
    let start = at;
    while (start > 0 && !isTurnStart(input[start])) start--;
    let end = at + 1;
    while (end < input.length && !isTurnStart(input[end])) end++;
    const slice = repairToolCalls(
      input.slice(start, end),
      end === input.length ? strict : { ...strict, trailing: "answer" },
    );
    if (slice.repairs.length > 0) {
      const messages = [...input.slice(0, start), ...slice.messages, ...input.slice(end)];
      for (const repair of slice.repairs) report({ ...repair, index: repair.index + start });
      const origin = originAfterSplice(input.length, start, end, slice.messages.length);
      if (leftOver === undefined || !findToolCallProblems(messages, strict).some((p) => p.kind === leftOver))
        return { messages, origin };
      const whole = repairToolCalls(messages, strict);
      for (const repair of whole.repairs) report({ ...repair, index: origin[repair.index] ?? repair.index });
      return { messages: whole.messages, origin: whole.messages.map((_, k) => Math.min(k, input.length - 1)) };
    }
  }
  const whole = repairToolCalls(input, strict);
  for (const repair of whole.repairs) report(repair);
  // The engine does not say where inserted messages came from: beyond the input, name the last message.
  return { messages: whole.messages, origin: whole.messages.map((_, k) => Math.min(k, input.length - 1)) };
}

function originAfterSplice(length: number, start: number, end: number, replaced: number): number[] {
  const origin: number[] = [];
  for (let i = 0; i < start; i++) origin.push(i);
  for (let k = 0; k < replaced; k++) origin.push(Math.min(start + k, end - 1));
  for (let i = end; i < length; i++) origin.push(i);
  return origin;
}
