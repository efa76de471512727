/**
 * Healing a STORED message list (checkpoint values, graph state), as opposed to a request about to be sent:
 * - only structural repairs (the engine's `"structural"` level): a stored thread keeps every message as it was
 *   written, each with its own id; provider shaping belongs to requests;
 * - the exchange a resume may still run (ToolNode's view, {@link resumableExchange}) is left alone;
 * - real tool results that LangGraph would throw away (pending writes of a discarded step) are put back
 *   instead of placeholders.
 */
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { createRepairer, type Repairer } from "../engine";
import { assertArray, expectedInput, optionsInput, ownInput, readingInput } from "../errors";
import { isMessage } from "../messages/coerce";
import { resumableExchange } from "../messages/exchanges";
import {
  isAssistant,
  isMarkedSyntheticResult,
  isToolResult,
  repairMarkerOf,
  resultIdOf,
  toolCallIdsOf,
} from "../messages/inspect";
import type { RepairOptions, ToolCallRepair } from "../types";

/** Engine options a storage layer passes through (it decides `level` and `trailing` itself and reports repairs itself). */
export type StoredRepairOptions = Omit<RepairOptions, "trailing" | "onRepair" | "level">;

export interface HealStoredOptions {
  /**
   * Close the exchange the history ends on (a new input abandoned it). Otherwise the last exchange is kept
   * as it is whenever a resume may still run it.
   */
  closeOpen?: boolean;
  /**
   * Calls known to be abandoned: the last exchange is not protected when its unanswered calls are all in
   * this set (a run that discarded them keeps writing its stale in-memory list).
   */
  abandoned?: ReadonlySet<string>;
  /** Real results to put back for calls that have none (or only a synthetic one). */
  salvage?: ReadonlyMap<string, ToolMessage>;
}

export interface HealResult {
  /** The input array itself when nothing changed. */
  messages: BaseMessage[];
  repairs: ToolCallRepair[];
  /** Calls whose real result was put back from `salvage`. */
  salvaged: string[];
}

const unchanged = (messages: BaseMessage[]): HealResult => ({ messages, repairs: [], salvaged: [] });

/**
 * Real tool results in pending writes of `channel` (a task's write is one message or a list of them), for
 * the given calls only; synthetic results never count as real work.
 */
export function resultsInWrites(
  writes: readonly (readonly [string, string, unknown])[] | undefined,
  channel: string,
  wanted: ReadonlySet<string>,
): Map<string, ToolMessage> {
  const found = new Map<string, ToolMessage>();
  if (!writes || wanted.size === 0) return found;
  for (const [, written, value] of writes) {
    if (written !== channel) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (!isToolResult(item) || isMarkedSyntheticResult(item)) continue;
      const id = resultIdOf(item);
      if (id !== undefined && wanted.has(id) && !found.has(id)) found.set(id, item);
    }
  }
  return found;
}

/**
 * Puts real results back: a synthetic result of the same call is replaced in place; a call with no result
 * gets it right after its assistant message's block of results. Calls that already have a real result are
 * left alone.
 */
export function putBackResults(messages: BaseMessage[], salvage: ReadonlyMap<string, ToolMessage>) {
  const realAnswered = new Set<string>();
  const syntheticAt = new Map<string, number>();
  messages.forEach((m, i) => {
    if (!isToolResult(m)) return;
    const id = resultIdOf(m);
    if (id === undefined || !salvage.has(id)) return;
    if (isMarkedSyntheticResult(m)) syntheticAt.set(id, i);
    else realAnswered.add(id);
  });
  // callIndex: where the call's message (or the replaced placeholder) is in the input, for the report.
  const salvaged: { id: string; callIndex: number }[] = [];
  const out: BaseMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const id = isToolResult(m) ? resultIdOf(m) : undefined;
    if (id !== undefined && syntheticAt.get(id) === i && !realAnswered.has(id)) {
      out.push(salvage.get(id)!);
      realAnswered.add(id);
      salvaged.push({ id, callIndex: i });
      continue;
    }
    out.push(m);
    if (!isAssistant(m)) continue;
    const missing = toolCallIdsOf(m).filter(
      (callId) => salvage.has(callId) && !realAnswered.has(callId) && !syntheticAt.has(callId),
    );
    if (missing.length === 0) continue;
    const callIndex = i;
    while (i + 1 < messages.length && isToolResult(messages[i + 1])) out.push(messages[++i]);
    for (const callId of missing) {
      out.push(salvage.get(callId)!);
      realAnswered.add(callId);
      salvaged.push({ id: callId, callIndex });
    }
  }
  return { messages: salvaged.length > 0 ? out : messages, salvaged };
}

/**
 * {@link putBackResults}, each result put back reported as a `salvaged_result` repair (a marked placeholder that a
 * surface made knowing more, as `synthesized_result`). The same array when none is put back.
 */
export function withSalvagedResults(
  messages: BaseMessage[],
  salvage: ReadonlyMap<string, ToolMessage>,
): { messages: BaseMessage[]; repairs: ToolCallRepair[] } {
  const { messages: out, salvaged } = putBackResults(messages, salvage);
  return { messages: out, repairs: salvaged.map(({ id, callIndex }) => salvageRepair(salvage.get(id)!, callIndex)) };
}

function salvageRepair(message: ToolMessage, index: number): ToolCallRepair {
  const id = resultIdOf(message)!;
  const name = (message as unknown as { name?: unknown }).name;
  const toolRun = isMarkedSyntheticResult(message) ? repairMarkerOf(message)?.toolRun : undefined;
  if (toolRun !== undefined) {
    // A placeholder a surface made knowing more than the engine (a call the user never approved).
    return {
      problem: "orphan_call",
      action: "synthesized_result",
      index,
      toolCallId: id,
      ...(typeof name === "string" && name ? { toolName: name } : {}),
      toolRun,
      detail: `synthetic error result (${toolRun.replace("_", " ")}) added for ${id}`,
    };
  }
  return {
    problem: "orphan_call",
    action: "salvaged_result",
    index,
    toolCallId: id,
    ...(typeof name === "string" && name ? { toolName: name } : {}),
    detail: `real result of call ${id} put back from the pending writes of a discarded step, instead of a placeholder`,
  };
}

/** True when `result` keeps the slice of `input` from `from` on, object for object, at its end. */
function keepsTail(result: readonly BaseMessage[], input: readonly BaseMessage[], from: number): boolean {
  const length = input.length - from;
  if (result.length < length) return false;
  const offset = result.length - length;
  for (let k = 0; k < length; k++) if (result[offset + k] !== input[from + k]) return false;
  return true;
}

/** Heals stored histories under one set of options (the engine resolved once). */
export interface StoredHealer {
  heal(messages: BaseMessage[], heal?: HealStoredOptions): HealResult;
}

/**
 * A healer for stored histories. Clean histories cost one walk and return the very input array; a list
 * holding anything but LangChain messages is returned as it is (some other reducer's values). The last
 * exchange is protected unless `closeOpen` (or all its open calls are `abandoned`): when the repair of the
 * whole list would touch it, only the part before it is repaired.
 */
export function createStoredHealer(options: StoredRepairOptions = {}): StoredHealer {
  return storedHealer(options, "createStoredHealer");
}

/** Options of one heal, checked: `closeOpen` a boolean, `abandoned` a Set, `salvage` a Map. */
function healOptions(heal: unknown, fn: string): HealStoredOptions {
  const record = optionsInput(heal, fn, "heal");
  const out: HealStoredOptions = {};
  const closeOpen = ownInput(record, "closeOpen", fn, "heal");
  if (closeOpen !== undefined && typeof closeOpen !== "boolean")
    throw expectedInput(fn, "heal.closeOpen", "a boolean", closeOpen);
  const abandoned = ownInput(record, "abandoned", fn, "heal");
  if (abandoned !== undefined && !(abandoned instanceof Set))
    throw expectedInput(fn, "heal.abandoned", "a Set of call ids", abandoned);
  const salvage = ownInput(record, "salvage", fn, "heal");
  if (salvage !== undefined && !(salvage instanceof Map))
    throw expectedInput(fn, "heal.salvage", "a Map of call ids to their ToolMessages", salvage);
  if (closeOpen !== undefined) out.closeOpen = closeOpen;
  if (abandoned !== undefined) out.abandoned = abandoned as ReadonlySet<string>;
  if (salvage !== undefined) out.salvage = salvage as ReadonlyMap<string, ToolMessage>;
  return out;
}

function storedHealer(input: unknown, fn: string): StoredHealer {
  // Read once (a getter that throws is an input error naming the options); the engine checks each option.
  const options = readingInput(() => ({ ...optionsInput(input, fn) }), fn, "options") as StoredRepairOptions;
  // A stored thread gets structural repairs only; an orphan call further back is closed the user's way.
  const keeping: Repairer = createRepairer({ ...options, level: "structural", trailing: "keep" });
  const closing: Repairer = createRepairer({
    ...options,
    level: "structural",
    trailing: options.orphanCalls ?? "answer",
  });
  return {
    heal(messages, given = {}) {
      assertArray(messages, "heal");
      const heal = healOptions(given, "heal");
      const closeOpen = heal.closeOpen === true;
      if (!heal.salvage?.size && (closeOpen ? closing : keeping).isClean(messages)) return unchanged(messages);
      // Stored values that are not LangChain messages belong to some other reducer: never coerce them.
      if (!messages.every(isMessage)) return unchanged(messages);

      const { messages: working, salvaged } = heal.salvage?.size
        ? putBackResults(messages, heal.salvage)
        : { messages, salvaged: [] };
      const salvageRepairs = salvaged.map(({ id, callIndex }) => salvageRepair(heal.salvage!.get(id)!, callIndex));
      const salvagedIds = salvaged.map((s) => s.id);

      if (closeOpen) {
        const result = closing.repair(working);
        return { messages: result.messages, repairs: [...salvageRepairs, ...result.repairs], salvaged: salvagedIds };
      }
      const whole = keeping.repair(working);
      const last = resumableExchange(working);
      const protectLast = last !== undefined && !last.unanswered.every((id) => heal.abandoned?.has(id));
      if (!protectLast || keepsTail(whole.messages, working, last.index)) {
        return { messages: whole.messages, repairs: [...salvageRepairs, ...whole.repairs], salvaged: salvagedIds };
      }
      // The last exchange may still be resumed: repair only what comes before it (its last exchange is an orphan).
      const head = closing.repair(working.slice(0, last.index));
      const repaired = head.repairs.length === 0 ? working : [...head.messages, ...working.slice(last.index)];
      return { messages: repaired, repairs: [...salvageRepairs, ...head.repairs], salvaged: salvagedIds };
    },
  };
}

/** {@link createStoredHealer} for one history. */
export function healStoredMessages(
  messages: BaseMessage[],
  options: StoredRepairOptions = {},
  heal: HealStoredOptions = {},
): HealResult {
  const fn = "healStoredMessages";
  assertArray(messages, fn);
  const checked = healOptions(heal, fn);
  return storedHealer(options, fn).heal(messages, checked);
}
