/**
 * Pass "call-ids": tool call ids that are missing, used twice (within one message or across messages), or
 * that break the provider's pattern or length. Each gets a deterministic, collision-free new id, applied to
 * every location of the call and to the results that answer that very call.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { rebuildToolResult, rewriteToolCalls } from "../../messages/build";
import { forEachToolCallRef, isAssistant, isToolResult, resultIdOf, type ToolCallRef } from "../../messages/inspect";
import { isAcceptedId, type ProviderProfile } from "../profiles";
import { problem, pushTo, sameOrNew, type FindContext, type RepairPass } from "../context";
import type { ToolCallProblem, ToolCallProblemKind } from "../../types";

interface Slot {
  messageIndex: number;
  /** Identifies the call inside its message: `id#occurrence`, or the ref's position when the id is missing. */
  key: string;
  id: string | undefined;
  rawId: unknown;
  name: string | undefined;
  newId?: string;
  reason?: Extract<ToolCallProblemKind, "missing_call_id" | "invalid_call_id" | "duplicate_call_id">;
}

/** The key that {@link rewriteToolCalls} can recompute for the same ref. */
function slotKey(ref: ToolCallRef, occurrence: number): string {
  return ref.id !== undefined ? `${ref.id}#${occurrence}` : `?${ref.location}#${ref.position}`;
}

function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

/**
 * Deterministic ids the provider accepts, never used before (recorded in `taken`). Remembers the next suffix
 * per base, so 10,000 calls sharing one id cost 10,000 steps, not 50 million.
 */
class FreshIds {
  private readonly next = new Map<string, number>();
  constructor(
    private readonly profile: ProviderProfile,
    private readonly taken: Set<string>,
  ) {}

  take(base: string): string {
    const max = Math.min(this.profile.maxIdLength, 64);
    let clean = this.profile.idPattern || !/^[\x21-\x7e]+$/.test(base) ? base.replace(/[^a-zA-Z0-9_-]/g, "_") : base;
    if (clean.length === 0) clean = "call";
    if (clean.length > max) clean = `${clean.slice(0, max - 9)}_${fnv1a(base)}`;
    let candidate = clean;
    let k = this.next.get(clean) ?? 2;
    while (this.taken.has(candidate)) {
      const suffix = `_${k++}`;
      candidate = clean.slice(0, max - suffix.length) + suffix;
    }
    this.next.set(clean, k);
    this.taken.add(candidate);
    return candidate;
  }
}

function collectSlots(message: BaseMessage, index: number, into: Slot[]): void {
  const seen = new Set<string>();
  const occurrences = new Map<string, number>();
  forEachToolCallRef(message, (ref) => {
    // Server tools are answered inside their own message; renaming them would orphan that answer.
    if (ref.location === "content.server_tool_use") return;
    const occKey = `${ref.location}\u0000${ref.id ?? ""}`;
    const occurrence = occurrences.get(occKey) ?? 0;
    occurrences.set(occKey, occurrence + 1);
    const key = slotKey(ref, occurrence);
    if (seen.has(key)) return;
    seen.add(key);
    into.push({ messageIndex: index, key, id: ref.id, rawId: ref.rawId, name: ref.name });
  });
}

interface CallIdAnalysis {
  renamed: Slot[];
  /** Per assistant message index: slot key -> new id. */
  byMessage: Map<number, Map<string, string>>;
  /** Per tool result index: its new id. */
  results: Map<number, string>;
}

function classifyCallIds(messages: readonly BaseMessage[], profile: ProviderProfile): CallIdAnalysis {
  const allSlots: Slot[] = [];
  const taken = new Set<string>();
  const callIds = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (isAssistant(m)) collectSlots(m, i, allSlots);
    else if (isToolResult(m)) {
      const id = resultIdOf(m);
      if (id !== undefined) taken.add(id);
    }
  }
  for (const slot of allSlots) if (slot.id !== undefined) taken.add(slot.id), callIds.add(slot.id);
  const accepted = new Set<string>();
  const renamed: Slot[] = [];
  for (const slot of allSlots) {
    if (slot.id === undefined) slot.reason = "missing_call_id";
    else if (!isAcceptedId(slot.id, profile)) slot.reason = "invalid_call_id";
    else if (accepted.has(slot.id)) slot.reason = "duplicate_call_id";
    else {
      accepted.add(slot.id);
      continue;
    }
    renamed.push(slot);
  }
  const analysis: CallIdAnalysis = { renamed, byMessage: new Map(), results: new Map() };
  if (renamed.length === 0) return analysis;

  const fresh = new FreshIds(profile, taken);
  for (const slot of renamed) {
    // A numeric id keeps its digits, so results that carried the same number (stringified) still match.
    const digits = typeof slot.rawId === "number" ? String(slot.rawId) : undefined;
    if (digits !== undefined && !callIds.has(digits) && isAcceptedId(digits, profile)) {
      callIds.add(digits);
      taken.add((slot.newId = digits));
    } else {
      const base = slot.id ?? `call_${slot.messageIndex}_${slot.key.replace(/[^a-zA-Z0-9]/g, "")}`;
      slot.newId = fresh.take(base);
    }
    let map = analysis.byMessage.get(slot.messageIndex);
    if (!map) analysis.byMessage.set(slot.messageIndex, (map = new Map()));
    map.set(slot.key, slot.newId);
  }
  assignResults(messages, allSlots, renamed, analysis);
  return analysis;
}

/**
 * Which call does each result of a renamed id answer? The nearest message before it that still has an
 * unanswered call with that id (earliest such call inside the message); a result before every call answers
 * the first unanswered one. One walk: per id, a stack of the messages that still have unanswered calls.
 */
function assignResults(messages: readonly BaseMessage[], allSlots: Slot[], renamed: Slot[], analysis: CallIdAnalysis): void {
  const ids = new Set<string>();
  for (const s of renamed) if (s.id !== undefined) ids.add(s.id);
  if (ids.size === 0) return;
  const slotsById = new Map<string, Slot[]>();
  const slotsByMessage = new Map<number, Slot[]>();
  for (const slot of allSlots) {
    if (slot.id === undefined || !ids.has(slot.id)) continue;
    pushTo(slotsById, slot.id, slot);
    pushTo(slotsByMessage, slot.messageIndex, slot);
  }
  const answered = new Set<Slot>();
  const stacks = new Map<string, { slots: Slot[]; next: number }[]>();
  const front = new Map<string, number>();
  for (let j = 0; j < messages.length; j++) {
    const own = slotsByMessage.get(j);
    if (own) {
      const byId = new Map<string, Slot[]>();
      for (const s of own) if (!answered.has(s)) pushTo(byId, s.id!, s);
      for (const [id, slots] of byId) pushTo(stacks, id, { slots, next: 0 });
      for (const s of own) if (!stacks.has(s.id!)) stacks.set(s.id!, []); // seen, even if all answered early
      continue;
    }
    const m = messages[j];
    if (!isToolResult(m)) continue;
    const id = resultIdOf(m);
    if (id === undefined || !ids.has(id)) continue;
    let owner: Slot | undefined;
    const stack = stacks.get(id);
    if (stack) {
      while (stack.length > 0 && stack[stack.length - 1].next >= stack[stack.length - 1].slots.length) stack.pop();
      const top = stack[stack.length - 1];
      if (top) owner = top.slots[top.next++];
    } else {
      // No call with this id before the result: it answers the first unanswered one.
      const slots = slotsById.get(id)!;
      let k = front.get(id) ?? 0;
      while (k < slots.length && answered.has(slots[k])) k++;
      owner = slots[k];
      front.set(id, k + 1);
    }
    if (!owner) continue; // an extra result: the pairing pass decides what to do with it
    answered.add(owner);
    if (owner.newId !== undefined) analysis.results.set(j, owner.newId);
  }
}

const DETAIL: Record<NonNullable<Slot["reason"]>, string> = {
  missing_call_id: "tool call without a usable id",
  invalid_call_id: "tool call id that the provider rejects (pattern or length)",
  duplicate_call_id: "tool call id already used by an earlier call",
};

export const callIdsPass: RepairPass = {
  name: "call-ids",
  // Missing and duplicate ids are structural; the pattern and length of an id are the provider's (the
  // structural profile accepts every non-empty string).
  structural: true,
  find(messages, ctx: FindContext): ToolCallProblem[] {
    return classifyCallIds(messages, ctx.profile).renamed.map((s) =>
      problem(ctx, s.reason!, s.messageIndex, `${DETAIL[s.reason!]}: ${s.id ?? "(none)"}`, { id: s.id, name: s.name }),
    );
  },
  repair(messages, ctx) {
    const analysis = classifyCallIds(messages, ctx.profile);
    if (analysis.renamed.length === 0) return messages;
    const out = messages.slice();
    for (const [index, map] of analysis.byMessage) {
      out[index] = rewriteToolCalls(messages[index] as never, (ref, occurrence) => {
        const newId = map.get(slotKey(ref, occurrence));
        return newId === undefined ? undefined : { id: newId };
      });
      ctx.derive(messages[index], out[index]);
    }
    for (const [index, newId] of analysis.results) {
      out[index] = rebuildToolResult(messages[index] as never, { tool_call_id: newId });
      ctx.derive(messages[index], out[index]);
    }
    for (const s of analysis.renamed)
      ctx.report(
        {
          problem: s.reason!,
          action: "renamed_call_id",
          toolCallId: s.id,
          toolName: s.name,
          newToolCallId: s.newId,
          detail: `${DETAIL[s.reason!]}: ${s.id ?? "(none)"} renamed to ${s.newId}, with its results`,
        },
        messages[s.messageIndex],
        s.messageIndex,
      );
    return sameOrNew(messages, out);
  },
};
