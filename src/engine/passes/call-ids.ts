/**
 * Pass "call-ids": tool call ids that are missing, used twice (within one message or across messages), or
 * that break the provider's pattern or length. Each gets a deterministic, collision-free new id, applied to
 * every location of the call and to the results that answer that very call.
 */
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import { rebuildMessage, rewriteToolCalls } from "../../messages/build";
import {
  isAssistant,
  callsOnlyInToolCalls,
  forEachToolCallRef,
  isToolResult,
  resultIdOf,
  type ToolCallRef,
} from "../../messages/inspect";
import { isAcceptedId, type ProviderProfile } from "../profiles";
import { pushTo, rebuildingPass } from "../context";

interface Slot {
  messageIndex: number;
  /** The n-th call with this id in its location (duplicate ids within one message are separate calls). */
  occurrence: number;
  /** For a call without a usable id: where it is (it is never the same call as another ref). */
  location: ToolCallRef["location"];
  position: number;
  id: string | undefined;
  rawId: unknown;
  name: string | undefined;
  newId?: string;
  reason?: keyof typeof DETAIL;
}

/**
 * Identifies a call inside its message: `id#occurrence`, or the ref's position when the id is missing. Built
 * only for calls being renamed, and recomputed by {@link rewriteToolCalls}'s editor for each ref.
 */
function slotKey(ref: Pick<ToolCallRef, "id" | "location" | "position">, occurrence: number, at = ref.location) {
  return ref.id !== undefined ? `${ref.id}#${occurrence}` : `?${at}#${ref.position}`;
}

function fnv1a(text: string) {
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
function freshIds(profile: ProviderProfile, taken: Set<string>) {
  const next = new Map<string, number>();
  return (base: string) => {
    const max = Math.min(profile.maxIdLength, 64);
    let clean = profile.idPattern || !/^[\x21-\x7e]+$/.test(base) ? base.replace(/[^a-zA-Z0-9_-]/g, "_") : base;
    clean ||= "call";
    if (clean.length > max) clean = `${clean.slice(0, max - 9)}_${fnv1a(base)}`;
    let candidate = clean;
    let k = next.get(clean) ?? 2;
    while (taken.has(candidate)) {
      const suffix = `_${k++}`;
      candidate = clean.slice(0, max - suffix.length) + suffix;
    }
    next.set(clean, k);
    taken.add(candidate);
    return candidate;
  };
}

/**
 * Whether no call needs a new id, decided without building slots: every call lives in `tool_calls` only and has
 * a new id the provider accepts (the common case: most broken histories are broken elsewhere).
 */
function needsNoRenames(messages: readonly BaseMessage[], profile: ProviderProfile) {
  const seen = new Set<string>();
  for (const m of messages) {
    if (!isAssistant(m)) continue;
    if (!callsOnlyInToolCalls(m)) return false;
    const calls = m.tool_calls ?? [];
    for (let k = 0; k < calls.length; k++) {
      const id = calls[k]?.id;
      if (typeof id !== "string" || id === "" || seen.has(id) || !isAcceptedId(id, profile)) return false;
      seen.add(id);
    }
  }
  return true;
}

/**
 * Finds the slots to rename and gives them new ids; returns the new id of each result that follows one, by index.
 * Every id in the history (calls and results) is taken: new ids avoid them.
 */
function planRenames(messages: readonly BaseMessage[], profile: ProviderProfile, renamed: Slot[]): Map<number, string> {
  if (needsNoRenames(messages, profile)) return new Map();
  const allSlots: Slot[] = [];
  const created = new Map<string, number>();
  const occurrences = new Map<string, number>();
  // The calls of each message as slots: the k-th call with id X in any location is slot (X, k), so the same call
  // mirrored in several locations is one slot. `created` and `occurrences` are scratch maps, cleared per message.
  messages.forEach((message, messageIndex) => {
    created.clear();
    occurrences.clear();
    const mirrored = callsOnlyInToolCalls(message as AIMessage);
    forEachToolCallRef(message, ({ id, location, position, rawId, name }) => {
      // ChatOpenAI's mirror of `tool_calls` in `additional_kwargs` names the same calls, with or without ids.
      if (mirrored && location !== "tool_calls") return;
      // Server tools count too (a replayed message repeats their srvtoolu_ ids: A4); their inline result follows the rename.
      let occurrence = 0;
      if (id !== undefined) {
        if (location === "tool_calls") occurrence = created.get(id) ?? 0;
        else {
          const key = `${location}\u0000${id}`;
          occurrence = occurrences.get(key) ?? 0;
          occurrences.set(key, occurrence + 1);
          if (occurrence < (created.get(id) ?? 0)) return; // a call already seen in an earlier location
        }
        created.set(id, occurrence + 1);
      }
      allSlots.push({ messageIndex, occurrence, location, position, id, rawId, name });
    });
  });
  const accepted = new Set<string>();
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
  if (!renamed.length) return new Map();
  const taken = new Set<string>();
  const callIds = new Set<string>();
  for (const slot of allSlots) if (slot.id !== undefined) taken.add(slot.id), callIds.add(slot.id);
  for (const m of messages) {
    const id = isToolResult(m) ? resultIdOf(m) : undefined;
    if (id !== undefined) taken.add(id);
  }
  const fresh = freshIds(profile, taken);
  for (const slot of renamed) {
    // A numeric id keeps its digits, so results that carried the same number (stringified) still match.
    const digits = typeof slot.rawId === "number" ? String(slot.rawId) : undefined;
    if (digits !== undefined && !callIds.has(digits) && isAcceptedId(digits, profile)) {
      callIds.add(digits);
      taken.add((slot.newId = digits));
    } else {
      const base =
        slot.id ?? `call_${slot.messageIndex}_${slotKey(slot, slot.occurrence).replace(/[^a-zA-Z0-9]/g, "")}`;
      slot.newId = fresh(base);
    }
  }
  return assignResults(messages, allSlots, renamed);
}

/**
 * Which call does each result of a renamed id answer? The nearest message before it that still has an
 * unanswered call with that id (earliest such call inside the message); a result before every call answers
 * the first unanswered one. One walk: per id, a stack of the unanswered calls, each message's pushed last first.
 */
function assignResults(messages: readonly BaseMessage[], allSlots: Slot[], renamed: Slot[]) {
  const results = new Map<number, string>();
  const ids = new Set<string>();
  for (const s of renamed) if (s.id !== undefined) ids.add(s.id);
  if (!ids.size) return results;
  // The slots of these ids, in message order (slots are collected message by message).
  const slots = allSlots.filter((s) => s.id !== undefined && ids.has(s.id));
  const slotsById = new Map<string, Slot[]>();
  for (const slot of slots) pushTo(slotsById, slot.id!, slot);
  const answered = new Set<Slot>();
  const stacks = new Map<string, Slot[]>();
  const front = new Map<string, number>();
  let cursor = 0;
  for (let j = 0; j < messages.length; j++) {
    const start = cursor;
    while (cursor < slots.length && slots[cursor].messageIndex === j) cursor++;
    for (let k = cursor - 1; k >= start; k--) {
      const s = slots[k];
      const stack = stacks.get(s.id!) ?? [];
      stacks.set(s.id!, stack); // seen, even if all its calls were answered early
      if (!answered.has(s)) stack.push(s);
    }
    const m = messages[j];
    const id = isToolResult(m) ? resultIdOf(m) : undefined;
    if (id === undefined || !ids.has(id)) continue;
    let owner = stacks.get(id)?.pop();
    if (!stacks.has(id)) {
      // No call with this id before the result: it answers the first unanswered one.
      const k = front.get(id) ?? 0;
      owner = slotsById.get(id)![k];
      front.set(id, k + 1);
    }
    if (!owner) continue; // an extra result: the pairing pass decides what to do with it
    answered.add(owner);
    if (owner.newId !== undefined) results.set(j, owner.newId);
  }
  return results;
}

/** `[a-zA-Z0-9_-]` as a lookup table. */
const ID_CHAR = new Uint8Array(128);
for (let c = 0; c < 128; c++) ID_CHAR[c] = /[a-zA-Z0-9_-]/.test(String.fromCharCode(c)) ? 1 : 0;

/**
 * A random seed per process, mixed into the id hash: ids cannot be crafted offline to collide in
 * {@link IdSet}, since the low bits of the table index depend on a seed the sender never sees.
 */
const HASH_SEED = (Math.random() * 0x100000000) >>> 0 || 0x9e3779b9;

/** murmur3's finalizer: every bit of the state reaches the low bits that index the table. */
function finalHash(h: number) {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Every id the history has used so far, for the clean walk: open addressing over a power-of-two table, the hash
 * computed while the id's characters are read for the provider's pattern anyway, cleared in O(1) by a generation
 * stamp. A native Set would do, but each check starts from an empty one, and growing a Set from empty to hundreds
 * of entries reallocates it at every doubling: this table is allocated once per walker and kept.
 */
class IdSet {
  private keys: (string | undefined)[] = new Array(256);
  private stamps = new Uint32Array(256);
  private mask = 255;
  private generation = 1;
  private count = 0;

  constructor(private readonly profile: ProviderProfile) {}

  clear() {
    this.count = 0;
    if (++this.generation === 0xffffffff) {
      this.stamps.fill(0);
      this.generation = 1;
    }
  }

  /** Whether `id` is a new string the provider accepts (1 to `maxIdLength` characters of its pattern); adds it. */
  accept(id: unknown) {
    if (typeof id !== "string") return false;
    const n = id.length;
    if (n === 0 || n > this.profile.maxIdLength) return false;
    const pattern = this.profile.idPattern;
    let h = HASH_SEED ^ n;
    for (let i = 0; i < n; i++) {
      const c = id.charCodeAt(i);
      if (pattern && (c > 127 || ID_CHAR[c] === 0)) return false;
      h = Math.imul(h ^ c, 0x01000193);
    }
    return this.add(id, finalHash(h));
  }

  /** Adds `id` (its hash given); false when it was already there. */
  private add(id: string, hash: number) {
    if ((this.count + 1) * 2 > this.mask) this.grow();
    const { keys, stamps, mask, generation } = this;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      if (stamps[i] !== generation) {
        stamps[i] = generation;
        keys[i] = id;
        this.count++;
        return true;
      }
      if (keys[i] === id) return false;
    }
  }

  private grow() {
    const old = this.keys;
    const oldStamps = this.stamps;
    const oldGeneration = this.generation;
    const size = (this.mask + 1) * 2;
    this.keys = new Array(size);
    this.stamps = new Uint32Array(size);
    this.mask = size - 1;
    this.generation = 1;
    this.count = 0;
    // Every id kept was accepted once: accepting it again only hashes and adds it.
    for (let i = 0; i < old.length; i++) if (oldStamps[i] === oldGeneration) this.accept(old[i]);
  }
}

const DETAIL = {
  missing_call_id: "tool call without a usable id",
  invalid_call_id: "tool call id that the provider rejects (pattern or length)",
  duplicate_call_id: "tool call id already used by an earlier call",
};

export const callIdsPass = rebuildingPass({
  // Missing and duplicate ids are structural; the pattern and length of an id are the provider's (the
  // structural profile accepts every non-empty string).
  structural: true,
  clean({ profile }) {
    const seen = new IdSet(profile);
    return {
      start: () => seen.clear(),
      ai(m) {
        const { tool_calls: calls, content } = m;
        if (calls) for (let k = 0; k < calls.length; k++) if (!seen.accept(calls[k].id)) return false;
        // Server tool ids are unique in the request too (A4: a replayed message repeats them).
        if (profile.anthropicBlocks && typeof content !== "string")
          for (let i = 0; i < content.length; i++)
            if (content[i].type === "server_tool_use" && !seen.accept(content[i].id)) return false;
        return true;
      },
    };
  },
  // The assistant messages with calls to rename (in order), then the results that follow a renamed call.
  classify(messages, { profile }) {
    const renamed: Slot[] = [];
    const results = planRenames(messages, profile, renamed);
    const found: { index: number; slots: Slot[]; newId?: string }[] = [];
    for (const slot of renamed) {
      const last = found.at(-1);
      if (last?.index === slot.messageIndex) last.slots.push(slot);
      else found.push({ index: slot.messageIndex, slots: [slot] });
    }
    for (const [index, newId] of results) found.push({ index, slots: [], newId });
    return found;
  },
  issues: ({ slots }) =>
    slots.map((s) => [s.reason!, "renamed_call_id", `${DETAIL[s.reason!]}: ${s.id ?? "(none)"}`, s]),
  rebuild(message, { slots, newId }) {
    if (newId !== undefined) return rebuildMessage(message, { tool_call_id: newId });
    // Each ref of the message's renamed slots gets its new id, in every location. `mirrored`: the calls live in
    // `tool_calls` only, ChatOpenAI's `additional_kwargs.tool_calls` naming the same ones position by position (a
    // call without an id there is the slot of its `tool_calls` position).
    const mirrored = callsOnlyInToolCalls(message as AIMessage);
    const byKey = new Map(slots.map((s) => [slotKey(s, s.occurrence), s.newId]));
    return rewriteToolCalls(message as AIMessage, (ref, occurrence) => {
      const id = byKey.get(slotKey(ref, occurrence, mirrored ? "tool_calls" : ref.location));
      return id === undefined ? undefined : { id };
    });
  },
});
