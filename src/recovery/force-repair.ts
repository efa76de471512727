/**
 * `forceRepairToolCalls`: repairs what a provider's rejection names, even where the engine sees nothing wrong
 * (a rule it does not model, a stricter model, a history repaired for another provider). What it does follows the
 * rejection's kind (`FORCED_REPAIRS` in engine/profiles.ts: a fix, and the problem it reports); nothing here knows
 * a rule. The result then goes through `repairToolCalls` for the provider, so it is valid by every rule the engine
 * knows too.
 *
 * - Ids named: each named call is answered afresh by an error-marked synthetic result placed at the end of its
 *   block of results; every existing result of it is set aside as user text after its block (nothing is lost).
 *   With `orphanCalls: "remove"` the named calls are removed from every location instead (the assistant's text
 *   stays), their results set aside the same way. A named id that only has results (no call) has them set aside.
 * - No ids named (or none found), and whenever a fix finds nothing to change: the strictest profile repairs the turn
 *   around `messageIndex` (from the user message before it to the next one), and, when that changes nothing (or
 *   leaves the kind's problem elsewhere), the whole history.
 * - The other fixes (Responses items, thought signatures, reasoning and server tool blocks as text, tools as text
 *   for a request without tools) are described at `FORCED_REPAIRS`. No repair can sign reasoning.
 */
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import { FORCED_REPAIRS, findToolCallProblems, profileFor, repairToolCalls, reportRepairsSafely } from "../engine";
import { assertArray, boundary, optionsInput, ToolCallRepairInputError } from "../errors";
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
  isAssistant,
  isClientCall,
  isDict,
  isServerToolResultBlock,
  isToolResult,
  resultIdOf,
  serverToolResultIds,
  turnOf,
  type Dict,
  type ToolCallRef,
} from "../messages/inspect";
import type {
  Provider,
  ProviderRejection,
  RejectingProvider,
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

/** Repairs what `rejection` names in `messages`; see the module comment. Linear in the messages and their calls. */
export const forceRepairToolCalls = boundary("forceRepairToolCalls", function forceRepairToolCalls<
  M = BaseMessage,
>(messages: M[], rejection: ProviderRejection, options: ForceRepairOptions = {}): RepairResult<M> {
  const fn = "forceRepairToolCalls";
  assertArray(messages, fn);
  if (!isDict(rejection) || !Array.isArray(rejection.toolCallIds))
    throw new ToolCallRepairInputError(`${fn} expects a rejection from parseToolPairingError`, {
      argument: "rejection",
    });
  const given = optionsInput(options, fn) as ForceRepairOptions;
  const result = forceRepair(messages, rejection, given);
  // Reported after the repair: a throwing callback neither fails nor undoes it.
  reportRepairsSafely(given.onRepair, result.repairs);
  return result;
});

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
  // A kind this version does not know (from another version of the package) gets the strict profile.
  const { fix, problem } = Object.hasOwn(FORCED_REPAIRS, rejection.kind)
    ? FORCED_REPAIRS[rejection.kind]
    : { fix: "strict" as const, problem: undefined };
  const noTools = fix === "tools-as-text";
  const provider = noTools
    ? noToolsProvider(engineOptions.provider, rejection)
    : (engineOptions.provider ?? repairProviderFor(rejection.provider));
  const repairs: ToolCallRepair[] = [];
  const report: Report = (repair) => repairs.push({ ...repair, rejection });
  const input = messages.map((m, i) => {
    if (isMessage(m)) return m;
    const detail = "plain or serialized object turned into a LangChain message";
    report({ problem: "malformed_message", action: "coerced_message", index: i, detail });
    return coerceMessage(m, i);
  });

  // `origin[k]`: the input index of the k-th message of the intermediate list (inserted ones: the message they follow).
  const step = { input, rejection, problem, options: engineOptions, report };
  const forced = STEPS[fix](step) ?? strictAround({ ...step, problem: undefined });
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

/** What each step reads: the messages, the rejection, the problem its kind reports (`FORCED_REPAIRS`), the options. */
interface Step {
  input: BaseMessage[];
  rejection: ProviderRejection;
  problem: ToolCallProblemKind | undefined;
  options: RepairOptions;
  report: Report;
}

const unchanged = (messages: BaseMessage[]): Forced => ({ messages, origin: messages.map((_, i) => i) });
const whyOf = (rejection: ProviderRejection) =>
  `after the provider rejected the request (${rejection.rule}: ${rejection.kind})`;

/** Each fix of `FORCED_REPAIRS` (engine/profiles.ts); undefined: nothing of it to change, the strict profile follows. */
const STEPS: Record<(typeof FORCED_REPAIRS)[keyof typeof FORCED_REPAIRS]["fix"], (step: Step) => Forced | undefined> = {
  "answer-calls": (step) => answerNamedCalls(step, step.problem ?? "orphan_call"),
  strict: (step) => answerNamedCalls(step, "orphan_call") ?? strictAround(step),
  "response-items": (step) => eachAssistant(step, withoutNamedItems),
  "thought-signature": (step) => eachAssistant(step, withPlaceholderFirst),
  "close-open-loop": closeOpenLoop,
  "reasoning-as-text": (step) => blocksAsText(step, false),
  "server-tools-as-text": (step) => blocksAsText(step, true),
  "tools-as-text": (step) => unchanged(step.input),
};

/** A fix of one assistant message: the message rebuilt, and what to report; undefined when it changes nothing. */
type MessageFix = (
  message: AIMessage,
  named: ReadonlySet<string>,
) => { message: AIMessage; repair: Omit<ToolCallRepair, "index" | "rejection" | "problem"> } | undefined;

/** Applies `fix` to every assistant message; undefined when none changes. */
function eachAssistant({ input, rejection, problem, report }: Step, fix: MessageFix): Forced | undefined {
  const named = new Set(rejection.toolCallIds);
  let touched = false;
  const messages = input.map((m, index) => {
    const fixed = isAssistant(m) ? fix(m, named) : undefined;
    if (!fixed) return m;
    touched = true;
    report({ problem: problem ?? "malformed_message", ...fixed.repair, index });
    return fixed.message;
  });
  return touched ? unchanged(messages) : undefined;
}

/** R6, R7: the named Responses items (and the rest of a named item's reasoning run) go without their ids. */
const withoutNamedItems: MessageFix = (message, named) => {
  let hit = false;
  const run = sameReasoningRun(message, named);
  const { message: fixed, droppedReasoning } = withoutItemIds(
    message,
    (id) => (named.has(id) || run.has(id)) && (hit = true),
  );
  if (!hit) return undefined;
  const dropped = droppedReasoning.length > 0 ? ` (reasoning items ${droppedReasoning.join(", ")} removed)` : "";
  return {
    message: fixed,
    repair: {
      action: "rebuilt_message",
      detail: `Responses items ${[...named].join(", ")} sent without their ids${dropped}`,
    },
  };
};

/** G6: the step's first call, when unsigned, gets Google's placeholder signature. */
const withPlaceholderFirst: MessageFix = (message) => {
  const first = message.tool_calls?.[0];
  const signatures = (message.additional_kwargs as Dict)[GEMINI_SIGNATURES_KEY];
  const signature = isDict(signatures) ? signatures[first?.id ?? ""] : undefined;
  if (first?.id === undefined || (typeof signature === "string" && signature !== "")) return undefined;
  const detail = `call ${first.id} given Google's placeholder thought signature`;
  return {
    message: withPlaceholderSignature(message),
    repair: { action: "rebuilt_message", toolCallId: first.id, toolName: first.name, detail },
  };
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

/** The call ids a rejection names: Responses item ids (`fc_...`, R5) are resolved to the calls they carry. */
function namedCallIds(messages: BaseMessage[], named: ReadonlySet<string>): Set<string> {
  const ids = new Set(named);
  for (const m of messages) {
    const output = isAssistant(m) && isDict(m.response_metadata) ? m.response_metadata.output : undefined;
    if (!Array.isArray(output)) continue;
    for (const item of output)
      if (isDict(item) && named.has(item.id as string) && typeof item.call_id === "string") ids.add(item.call_id);
  }
  return ids;
}

/** The named calls of one assistant message, one per id (a server tool use answered inline is none to answer). */
function namedCallsOf(message: AIMessage, ids: ReadonlySet<string>): { id: string; name?: string }[] {
  const answeredInline = serverToolResultIds(message);
  const named = (ref: ToolCallRef) =>
    ref.id !== undefined &&
    ids.has(ref.id) &&
    !(ref.location === "content.server_tool_use" && answeredInline.has(ref.id));
  return distinctCalls(message, named) as { id: string; name?: string }[];
}

/** The calls the rejection names answered afresh (or removed), their results set aside; undefined when it names none. */
function answerNamedCalls(
  { input, rejection, options, report }: Step,
  problem: ToolCallProblemKind,
): Forced | undefined {
  if (rejection.toolCallIds.length === 0) return undefined;
  const ids = namedCallIds(input, new Set(rejection.toolCallIds));
  const hadResult = new Set(input.map((m) => (isToolResult(m) ? resultIdOf(m) : undefined)));
  const why = whyOf(rejection);
  const out: Forced = { messages: [], origin: [] };
  const put = (message: BaseMessage, from: number) => {
    out.messages.push(message);
    out.origin.push(from);
  };
  // What goes at the end of the current block of tool results: fresh answers, then results set aside.
  let answers: [ToolMessage, number][] = [];
  let setAside: [BaseMessage, number][] = [];
  const flush = () => {
    for (const [message, from] of [...answers, ...setAside]) put(message, from);
    answers = [];
    setAside = [];
  };
  let touched = false;
  for (const [i, m] of input.entries()) {
    if (isToolResult(m)) {
      const id = resultIdOf(m);
      if (id === undefined || !ids.has(id)) put(m, i);
      else {
        touched = true;
        setAside.push([orphanResultAsUserMessage(m, id), i]);
        const detail = `result set aside as user text ${why}`;
        const kind = problem === "duplicate_result" ? problem : "orphan_result";
        report({ problem: kind, action: "converted_result", index: i, toolCallId: id, detail });
      }
      continue;
    }
    flush();
    const calls = isAssistant(m) ? namedCallsOf(m, ids) : [];
    const remove = options.orphanCalls === "remove" && calls.length > 0;
    const named = new Set(calls.map((call) => call.id));
    put(remove ? rewriteToolCalls(m as AIMessage, (ref) => (named.has(ref.id ?? "") ? "drop" : undefined)) : m, i);
    for (const { id, name } of calls) {
      touched = true;
      const call = { index: i, toolCallId: id, ...(name ? { toolName: name } : {}) };
      if (remove) {
        report({ problem, action: "removed_call", ...call, detail: `call removed ${why}` });
        continue;
      }
      // Whatever the call did before the rejection is not known here.
      const toolRun = "outcome_unknown";
      const note = `the provider rejected this exchange (${rejection.rule})`;
      const text =
        options.syntheticResultText?.({ id, name, reason: problem, note, toolRun }) ??
        forcedResultText({ id, name }, rejection, hadResult.has(id));
      answers.push([
        syntheticToolResult({ toolCallId: id, toolName: name, reason: REJECTION_REASON, text, toolRun }),
        i,
      ]);
      report({ problem, action: "synthesized_result", ...call, toolRun, detail: `call answered afresh ${why}` });
    }
  }
  flush();
  return touched ? out : undefined;
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

const REASONING_TYPES = new Set(["thinking", "redacted_thinking", "reasoning", "reasoning_content"]);
const REFUSED_REASONING = "Reasoning the provider did not accept (no valid signature), kept as text";

/** A10, B11: the open tool loop's calls and results go as text; undefined when no loop is open. */
function closeOpenLoop({ input, rejection, problem = "unsupported_block", report }: Step): Forced | undefined {
  const from = openLoopStart(input);
  if (from === -1) return undefined;
  const out = input.slice();
  let touched = false;
  for (let i = from; i < input.length; i++) {
    const m = input[i];
    const calls = isAssistant(m) ? distinctCalls(m, isClientCall) : [];
    if (isToolResult(m)) out[i] = toolResultAsUserText(m, REJECTION_REASON);
    else if (calls.length > 0) out[i] = clientCallsAsText(m as AIMessage, calls);
    else continue;
    touched = true;
    const detail = `tool exchange of the open loop written out as text ${whyOf(rejection)}`;
    report({ problem, action: "converted_to_text", index: i, detail });
  }
  return touched ? unchanged(out) : undefined;
}

/**
 * A14, B12: reasoning blocks (at the message named, or in every one) go as text; A13 (`servers`): the server tool
 * uses named (or all) go as text with their results. Undefined when there is none.
 */
function blocksAsText({ input, rejection, problem = "unsupported_block", report }: Step, servers: boolean) {
  const named = new Set(rejection.toolCallIds);
  const at = servers ? undefined : rejection.messageIndex;
  const isNamedUse = (b: Dict) => b.type === "server_tool_use" && (named.size === 0 || named.has(b.id as string));
  const converts = (b: Dict) =>
    servers
      ? isNamedUse(b) || (isServerToolResultBlock(b) && named.has(b.tool_use_id as string))
      : REASONING_TYPES.has(String(b.type));
  const out = input.slice();
  let touched = false;
  input.forEach((m, i) => {
    if (!isAssistant(m) || !Array.isArray(m.content) || (at !== undefined && at !== i)) return;
    let changed = 0;
    const content = (m.content as unknown[]).flatMap((block) => {
      if (!isDict(block) || !converts(block)) return [block];
      changed++;
      const text = servers ? serverToolBlockAsText(block) : reasoningAsText(block, REFUSED_REASONING);
      return text ? [text] : [];
    });
    if (changed === 0) return;
    touched = true;
    out[i] = rebuildAssistant(m, { content });
    const detail = `${changed} ${servers ? "server tool" : "reasoning"} block(s) turned into text ${whyOf(rejection)}`;
    report({ problem, action: "converted_block", index: i, detail });
  });
  return touched ? unchanged(out) : undefined;
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

/**
 * No ids to act on: the strictest profile, first on the turn around `messageIndex`, then on everything when
 * that changed nothing or left a problem of the kind the provider named elsewhere in the history.
 */
function strictAround({ input, rejection, problem: leftOver, options, report }: Step): Forced {
  const strict: RepairOptions = { ...options, provider: "strict" };
  const at = rejection.messageIndex;
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
      const { origin } = unchanged(input);
      origin.splice(start, end - start, ...slice.messages.map((_, k) => Math.min(start + k, end - 1)));
      if (leftOver === undefined || !findToolCallProblems(messages, strict).some((p) => p.kind === leftOver))
        return { messages, origin };
      return whole(messages, origin);
    }
  }
  return whole(input, unchanged(input).origin);

  function whole(messages: BaseMessage[], origin: number[]): Forced {
    const repaired = repairToolCalls(messages, strict);
    for (const repair of repaired.repairs) report({ ...repair, index: origin[repair.index] ?? repair.index });
    // The engine does not say where inserted messages came from: beyond the input, name the last message.
    return { messages: repaired.messages, origin: repaired.messages.map((_, k) => Math.min(k, input.length - 1)) };
  }
}
