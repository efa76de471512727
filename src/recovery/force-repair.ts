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
 *
 * And the one retry every surface makes after a rejection (`retryOnce`, at the end).
 */
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import {
  COERCED,
  ENGINE_OPTIONS,
  FORCED_REPAIRS,
  findToolCallProblems,
  guardedText,
  profileFor,
  repairToolCalls,
  reportRepairsSafely,
} from "../engine";
import { assertArray, boundary, expectedInput } from "../errors";
import { readOptions } from "../options";
import {
  clientCallsAsText,
  defaultSyntheticText,
  orphanResultAsUserMessage,
  reasoningAsText,
  rebuildMessage,
  rewriteToolCalls,
  serverToolBlockAsText,
  syntheticToolResult,
  toolResultAsUserText,
  withoutItemIds,
  withPlaceholderSignature,
} from "../messages/build";
import { GEMINI_SIGNATURES_KEY, resentOutputOf } from "../messages/responses";
import { isMessage, readMessage } from "../messages/coerce";
import {
  distinctCalls,
  isAssistant,
  isClientCall,
  isDict,
  isReasoningBlock,
  isServerToolResultBlock,
  isToolResult,
  resultIdOf,
  serverToolResultIds,
  turnOf,
  type Dict,
} from "../messages/inspect";
import { parseToolPairingError } from "./parse-error";
import { fieldsOf, nonEmptyString } from "../values";
import {
  PROVIDERS,
  type Provider,
  type ProviderRejection,
  type RejectingProvider,
  type RepairOptions,
  type RepairResult,
  type ToolCallProblemKind,
  type ToolCallRepair,
} from "../types";

/** The reason stored in the marker of results and messages made by a forced repair. */
const REASON = "provider_rejection";

/** The engine profile to satisfy after a rejection by `provider`. */
const repairProviderFor = (provider: RejectingProvider) =>
  (PROVIDERS as readonly unknown[]).includes(provider) ? (provider as Provider) : "strict";

/**
 * Repairs what `rejection` names in `messages`; see the module comment. Linear in the messages and their calls.
 * `options` are `repairToolCalls`'; `provider` defaults to the rejecting provider (`"strict"` when it is not one).
 */
export const forceRepairToolCalls = boundary("forceRepairToolCalls", function forceRepairToolCalls<
  M = BaseMessage,
>(messages: M[], rejection: ProviderRejection, options: RepairOptions = {}): RepairResult<M> {
  const fn = "forceRepairToolCalls";
  assertArray(messages, fn);
  // The engine's option check, before any profile is read.
  const { onRepair, ...rest } = readOptions<RepairOptions>(options, fn, ENGINE_OPTIONS);
  if (typeof Object(rejection).kind !== "string")
    throw expectedInput(fn, "rejection", "a ProviderRejection (from parseToolPairingError)", rejection);
  // A kind this version does not know (from another version of the package) gets the strict profile.
  const { fix, problem } = Object.hasOwn(FORCED_REPAIRS, rejection.kind)
    ? FORCED_REPAIRS[rejection.kind]
    : { fix: "strict" as const };
  const noTools = fix === "tools-as-text";
  const rejecting = repairProviderFor(rejection.provider);
  // Without tools: the configured profile when it turns tool blocks into text, else the rejecting one's, else strict.
  const provider = noTools
    ? ([rest.provider, rejecting].find((p) => p && profileFor(p).toolBlocksNeedTools) ?? "strict")
    : (rest.provider ?? rejecting);
  const repairs: ToolCallRepair[] = [];
  const report: Step["report"] = (repair) => repairs.push({ ...repair, rejection });
  const input = messages.map((m, index) => {
    if (isMessage(m)) return m;
    report({ problem: "malformed_message", action: "coerced_message", index, detail: COERCED });
    return readMessage(m, index);
  });
  const why = `after the provider rejected the request (${rejection.rule}: ${rejection.kind})`;
  const step = { input, rejection, problem, options: rest, report, why };
  // `origin[k]`: the input index of the k-th message of the intermediate list (inserted ones: the message they follow).
  const forced = STEPS[fix](step) ?? strictAround({ ...step, problem: undefined });
  const final = repairToolCalls(forced.messages, { ...rest, provider, ...(noTools && { toolsInRequest: false }) });
  for (const repair of final.repairs) report({ ...repair, index: forced.origin[repair.index] ?? repair.index });
  // Reported after the repair: a throwing callback neither fails nor undoes it.
  reportRepairsSafely(onRepair, repairs, "recovery");
  return { messages: (repairs.length ? final.messages : messages) as M[], repairs };
});

/** What each step reads: the messages, the rejection, the problem its kind reports (`FORCED_REPAIRS`), the options. */
interface Step {
  input: BaseMessage[];
  rejection: ProviderRejection;
  problem?: ToolCallProblemKind;
  options: RepairOptions;
  report: (repair: Omit<ToolCallRepair, "rejection">) => void;
  /** What the repairs were made for, as their details say it. */
  why: string;
}

const unchanged = (messages: BaseMessage[]) => ({ messages, origin: [...messages.keys()] });

/** A fix of one message: the message rebuilt and what to report, or undefined when it changes nothing. */
type Fix = (m: BaseMessage, i: number) => [BaseMessage, Omit<ToolCallRepair, "index" | "problem">] | undefined | false;

/** Applies `fix` to every message; undefined when none changes. Each fix using it has its problem in `FORCED_REPAIRS`. */
function each({ input, problem, report }: Step, fix: Fix) {
  let touched = false;
  const messages = input.map((m, index) => {
    const fixed = fix(m, index);
    if (!fixed) return m;
    touched = true;
    report({ problem: problem!, ...fixed[1], index });
    return fixed[0];
  });
  if (touched) return unchanged(messages);
}

/**
 * A14, B12: reasoning blocks (at the message named, or in every one) go as text; A13 (`servers`): the server tool
 * uses named (or all) go as text with their results. Undefined when there is none.
 */
const blocksAsText = (servers: boolean) => (step: Step) => {
  const named = new Set(step.rejection.toolCallIds);
  const at = servers ? undefined : step.rejection.messageIndex;
  const converts = (b: Dict) =>
    servers
      ? (b.type === "server_tool_use" && (!named.size || named.has(b.id as string))) ||
        (isServerToolResultBlock(b) && named.has(b.tool_use_id as string))
      : isReasoningBlock(b);
  return each(step, (m, i) => {
    if (!isAssistant(m) || !Array.isArray(m.content) || (at !== undefined && at !== i)) return;
    let changed = 0;
    const content = (m.content as unknown[]).flatMap((block) => {
      if (!isDict(block) || !converts(block)) return [block];
      changed++;
      const label = "Reasoning the provider did not accept (no valid signature), kept as text";
      return (servers ? serverToolBlockAsText(block) : reasoningAsText(block, label)) ?? [];
    });
    const detail = `${changed} ${servers ? "server tool" : "reasoning"} block(s) turned into text ${step.why}`;
    return changed > 0 && [rebuildMessage(m, { content }), { action: "converted_block", detail }];
  });
};

/** Each fix of `FORCED_REPAIRS` (engine/profiles.ts); undefined: nothing of it to change, the strict profile follows. */
const STEPS = {
  "answer-calls": answerNamedCalls,
  "answer-exchange": answerExchange,
  strict: (step: Step) => answerNamedCalls({ ...step, problem: "orphan_call" }) ?? strictAround(step),
  "response-items": (step: Step) => each(step, (m) => isAssistant(m) && withoutNamedItems(m, step.rejection)),
  "thought-signature": (step: Step) => each(step, (m) => isAssistant(m) && withPlaceholderFirst(m)),
  "close-open-loop": closeOpenLoop,
  "reasoning-as-text": blocksAsText(false),
  "server-tools-as-text": blocksAsText(true),
  "tools-as-text": ({ input }: Step) => unchanged(input),
};

/** R6, R7: the named Responses items (and the rest of a named item's reasoning run) go without their ids. */
function withoutNamedItems(message: AIMessage, rejection: ProviderRejection): ReturnType<Fix> {
  const goes = new Set(rejection.toolCallIds);
  const named = [...goes].join(", ");
  // The items after a named one, up to the next reasoning item, followed the same reasoning item: the provider
  // would name each of them next (R6 names one item at a time). Each goes too (and so continues the run).
  let inRun = false;
  for (const { type, id } of resentOutputOf(message) ?? []) {
    if (type === "reasoning") inRun = false;
    else if (inRun && typeof id === "string") goes.add(id);
    if (goes.has(id as string)) inRun = type !== "reasoning";
  }
  let hit = false;
  const { message: fixed, droppedReasoning: gone } = withoutItemIds(message, (id) => goes.has(id) && (hit = true));
  const detail = `Responses items ${named} sent without their ids${gone.length ? ` (reasoning items ${gone.join(", ")} removed)` : ""}`;
  return hit && [fixed, { action: "rebuilt_message", detail }];
}

/** G6: the step's first call, when unsigned, gets Google's placeholder signature. */
function withPlaceholderFirst(message: AIMessage): ReturnType<Fix> {
  const first = message.tool_calls?.[0];
  const signatures = fieldsOf(message.additional_kwargs[GEMINI_SIGNATURES_KEY]);
  if (first?.id === undefined || nonEmptyString(signatures[first.id])) return;
  const detail = `call ${first.id} given Google's placeholder thought signature`;
  return [
    withPlaceholderSignature(message),
    { action: "rebuilt_message", toolCallId: first.id, toolName: first.name, detail },
  ];
}

/** The calls the rejection names answered afresh (or removed), their results set aside; undefined when it names none. */
function answerNamedCalls({ input, rejection, problem = "orphan_call", options, report, why }: Step) {
  if (!rejection.toolCallIds.length) return;
  // The ids named: Responses item ids (`fc_...`, R5) resolve to the calls they carry.
  const ids = new Set<unknown>(rejection.toolCallIds);
  for (const m of input)
    for (const { id, call_id } of (isAssistant(m) && resentOutputOf(m)) || [])
      if (ids.has(id) && typeof call_id === "string") ids.add(call_id);
  const hadResult = new Set(input.map((m) => isToolResult(m) && resultIdOf(m)));
  const note = `the provider rejected this exchange (${rejection.rule})`;
  // Removing: a message without a named call comes back as it is.
  const remove = options.orphanCalls === "remove";
  // Each message with its input index; `later`: what goes at the end of the current block of tool results (fresh
  // answers, then results set aside).
  const out: [BaseMessage, number][] = [];
  const later: typeof out = [];
  input.forEach((m, i) => {
    if (isToolResult(m)) {
      const id = resultIdOf(m);
      if (!ids.has(id)) return out.push([m, i]);
      later.push([orphanResultAsUserMessage(m, id), i]);
      return report({
        problem: problem === "duplicate_result" ? problem : "orphan_result",
        action: "converted_result",
        index: i,
        toolCallId: id,
        detail: `result set aside as user text ${why}`,
      });
    }
    out.push(...later.splice(0));
    // One per id; a server tool use answered inline is none to answer.
    const inline = isAssistant(m) && serverToolResultIds(m);
    const calls = inline
      ? distinctCalls(m, (ref) => ids.has(ref.id) && (isClientCall(ref) || !inline.has(ref.id)))
      : [];
    const named = new Set(calls.map((call) => call.id));
    out.push([
      remove ? rewriteToolCalls(m as AIMessage, (ref) => (named.has(ref.id ?? "") ? "drop" : undefined)) : m,
      i,
    ]);
    for (const { id = "", name } of calls) {
      const call = { index: i, toolCallId: id, ...(name && { toolName: name }) };
      if (remove) {
        report({ problem, action: "removed_call", ...call, detail: `call removed ${why}` });
        continue;
      }
      // Whatever the call did before the rejection is not known here.
      const toolRun = "outcome_unknown";
      const ours = () =>
        hadResult.has(id)
          ? `${name ? `Tool "${name}"` : "The tool"} (call ${id}): ${note}, so its result was set aside; it follows as user text.`
          : defaultSyntheticText({ id, name, reason: REASON, note: `${note} and no result for it was sent`, toolRun });
      const own = options.syntheticResultText;
      const text = (own ? guardedText(own, ours) : ours)({ id, name, reason: problem, note, toolRun });
      later.push([syntheticToolResult({ toolCallId: id, toolName: name, reason: REASON, text, toolRun }), i]);
      report({ problem, action: "synthesized_result", ...call, toolRun, detail: `call answered afresh ${why}` });
    }
  });
  out.push(...later);
  // Changed: a result set aside, a call answered (the list grows) or removed (its message rewritten).
  if (out.some(([m], k) => m !== input[k]))
    return { messages: out.map(([m]) => m), origin: out.map(([, from]) => from) };
}

/**
 * A3 names the position of the turn after the calls, not their ids. Where the engine sees results out of place, the
 * strict profile moves them; else the exchange there (the assistant message with calls at or before it) has its calls
 * answered afresh.
 */
function answerExchange(step: Step) {
  const { input, rejection } = step;
  if (findToolCallProblems(input, { provider: "strict" }).some((p) => p.kind === step.problem)) return;
  let at = rejection.messageIndex ?? -1;
  const calls = () => (isAssistant(input[at]) ? distinctCalls(input[at], isClientCall) : []);
  while (at >= 0 && !calls().length) at--;
  return answerNamedCalls({ ...step, rejection: { ...rejection, toolCallIds: calls().map((call) => call.id!) } });
}

/** A10, B11: the open tool loop's calls and results go as text; undefined when no loop is open. */
function closeOpenLoop(step: Step) {
  const { input } = step;
  // Where the open loop starts: after the last user message that does not follow tool results.
  // (Past the start, `input[-1]` is undefined: no turn, no tool result.)
  let end = input.length - 1;
  while (turnOf(input[end]) === "system") end--;
  if (!isToolResult(input[end])) return;
  // Scanning back, `after` is past the latest user message of a run of user (and system) messages; the loop starts
  // there when the turn before that run is no tool result.
  let from = 0;
  for (let i = end, after = 0; i >= -1 && !from; i--) {
    const turn = turnOf(input[i]);
    if (turn === "user") after ||= i + 1;
    else if (turn !== "system") [from, after] = [isToolResult(input[i]) ? 0 : after, 0];
  }
  const detail = `tool exchange of the open loop written out as text ${step.why}`;
  return each(step, (m, i) => {
    if (i < from) return;
    const calls = isAssistant(m) ? distinctCalls(m, isClientCall) : [];
    const message = calls.length
      ? clientCallsAsText(m as AIMessage, calls)
      : isToolResult(m) && toolResultAsUserText(m, REASON);
    return message && [message, { action: "converted_to_text", detail }];
  });
}

/**
 * No ids to act on: the strictest profile, first on the turn around `messageIndex`, then on everything when
 * that changed nothing or left a problem of the kind the provider named elsewhere in the history.
 */
function strictAround({ input, rejection, problem: leftOver, options, report }: Step) {
  const strict = { ...options, provider: "strict" as const };
  // On the whole history, its repairs reported through `origin` (spliced once the turn is repaired).
  const whole = (messages: BaseMessage[]) => {
    const repaired = repairToolCalls(messages, strict);
    for (const repair of repaired.repairs) report({ ...repair, index: origin[repair.index] ?? repair.index });
    // The engine does not say where inserted messages came from: beyond the input, name the last message.
    return { messages: repaired.messages, origin: repaired.messages.map((_, k) => Math.min(k, input.length - 1)) };
  };
  const origin = [...input.keys()];
  const at = rejection.messageIndex ?? -1;
  if (!input[at]) return whole(input);
  let [start, end] = [at, at + 1];
  while (start && input[start].getType() !== "human") start--;
  while (end < input.length && input[end].getType() !== "human") end++;
  // Before a later user message (`input[end]`), the turn's open calls are answered.
  const slice = repairToolCalls(input.slice(start, end), input[end] ? { ...strict, trailing: "answer" } : strict);
  if (!slice.repairs.length) return whole(input);
  const messages = [...input.slice(0, start), ...slice.messages, ...input.slice(end)];
  for (const repair of slice.repairs) report({ ...repair, index: repair.index + start });
  origin.splice(start, end - start, ...slice.messages.map((_, k) => Math.min(start + k, end - 1)));
  return leftOver === undefined || !findToolCallProblems(messages, strict).some((p) => p.kind === leftOver)
    ? { messages, origin }
    : whole(messages);
}

// --- the one retry --------------------------------------------------------------------------------------------
// Every surface decides with `retryOnce` whether an error is a history rejection worth a retry, and, when the
// retry fails too, hands back the ORIGINAL error with the diagnosis attached (`attach`). A surface
// retries at most once per model call: an error that already carries a diagnosis is never retried again, so
// nested surfaces cannot loop.

/** Property of the original error that holds the diagnosis after a recovery gave up. */
export const REJECTION_DIAGNOSIS_KEY = "toolCallRejection";

/** What a surface knew when it gave up: attached to the original error it rethrows. */
export interface RejectionDiagnosis {
  /** The rejection, as parsed from the original error. */
  rejection: ProviderRejection;
  /** What the force repair changed for the retry (empty: nothing to change, so no retry was made). */
  repairs: ToolCallRepair[];
  /** Whether the repaired request was sent. */
  retried: boolean;
  /** The retry's own error, when it failed. */
  retryError?: unknown;
  /** The retry's error, parsed, when it was a history rejection too. */
  retryRejection?: ProviderRejection;
}

/** The diagnosis a surface attached to an error it rethrew after a failed recovery, if any. */
export function rejectionDiagnosisOf(error: unknown) {
  try {
    const value = Object(error)[REJECTION_DIAGNOSIS_KEY];
    if (isDict(value)) return value as unknown as RejectionDiagnosis;
  } catch {
    // as parseToolPairingError: an error object that cannot be read carries no diagnosis
  }
}

export interface RecoveryStepOptions extends RepairOptions {
  /**
   * The messages exactly as the model received them, when `messages` lacks some (a system prompt the
   * surface prepends), and where `messages` starts in them. Used to map the provider's position back.
   */
  sent?: { messages: readonly unknown[]; offset: number };
}

/**
 * The engine profile a forced repair satisfies: `"strict"` stays strict (valid everywhere); a named provider
 * yields to the one that actually rejected the request, when the error says who that was.
 */
export function recoveryProvider(configured: Provider | undefined, rejection: ProviderRejection): Provider {
  const rejecting = repairProviderFor(rejection.provider);
  return !configured || configured === "strict" ? "strict" : rejecting === "strict" ? configured : rejecting;
}

/** The request options that cure a rejection of each kind (besides the provider): lessons for the thread. */
const LESSONS: Record<string, RepairOptions> = {
  tool_config_missing: { toolsInRequest: false },
  misplaced_system_message: { systemMessages: "user-text" },
};

/**
 * What recovered rejections taught about each thread's later requests, in memory (per process and surface, the
 * `max` threads taught last): the request options that cured them, so the thread's next request is sent with them and
 * not rejected again: the provider that rejected (when the request was shaped for another one) and `LESSONS`. A fix
 * of the history itself teaches nothing here.
 */
export function requestLessons(max = 4096) {
  const lessons = new Map<string, RepairOptions>();
  return {
    of: (thread: string) => lessons.get(thread),
    /** Learns what cured `rejection` of a request made with `sent` options (the thread is now the one taught last). */
    learn(thread: string, rejection: ProviderRejection, sent: RepairOptions) {
      const provider = recoveryProvider(sent.provider, rejection);
      const lesson = {
        ...lessons.get(thread),
        ...(provider !== sent.provider && { provider }),
        ...LESSONS[rejection.kind],
      };
      if (!thread || !Object.keys(lesson).length) return;
      if (!lessons.delete(thread) && lessons.size >= max) lessons.delete(lessons.keys().next().value!);
      lessons.set(thread, lesson);
    },
  };
}

/**
 * `send` once more with the force-repaired messages after `error`: the retry's answer, with the rejection and the
 * repairs. Rethrows `error` as it is when it is not a history rejection, is already diagnosed, or the repair
 * fails; with the diagnosis attached when nothing could be repaired, or, when the retry fails too (`toolCallRejection`,
 * and `cause` when free).
 */
export async function retryOnce<T>(
  error: unknown,
  messages: BaseMessage[],
  options: RecoveryStepOptions,
  send: (messages: BaseMessage[]) => T | Promise<T>,
) {
  const { sent, onRepair: _reportedBySurface, ...repairOptions } = options;
  const parsed =
    !rejectionDiagnosisOf(error) &&
    parseToolPairingError(error, { messages: sent?.messages ?? messages, provider: options.provider });
  if (!parsed) throw error;
  // `messageIndex` counted in the caller's messages rather than in what was sent (a prepended system prompt).
  const { messageIndex, ...rest } = parsed;
  const own = (messageIndex ?? -1) - (sent?.offset ?? 0);
  const rejection: ProviderRejection = own >= 0 && own < messages.length ? { ...rest, messageIndex: own } : rest;
  let repaired: RepairResult<BaseMessage>;
  try {
    repaired = forceRepairToolCalls(messages, rejection, {
      ...repairOptions,
      provider: recoveryProvider(options.provider, rejection),
    });
  } catch {
    throw error;
  }
  const { repairs } = repaired;
  if (!repairs.length) throw attach(error, { rejection, repairs, retried: false });
  try {
    return { rejection, messages: repaired.messages, repairs, answer: await send(repaired.messages) };
  } catch (retryError) {
    const retryRejection = parseToolPairingError(retryError);
    throw attach(error, { rejection, repairs, retried: true, retryError, ...(retryRejection && { retryRejection }) });
  }
}

function attach(error: unknown, diagnosis: RejectionDiagnosis) {
  if (!isDict(error)) return error;
  const hidden = { value: diagnosis, enumerable: false, configurable: true, writable: true };
  try {
    Object.defineProperty(error, REJECTION_DIAGNOSIS_KEY, hidden);
    if (error.cause === undefined) Object.defineProperty(error, "cause", hidden);
  } catch {
    // A frozen error is rethrown as it is.
  }
  return error;
}
