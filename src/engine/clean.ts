/**
 * The clean path: one walk that decides whether any pass would find something, without building anything.
 * Most histories are clean most of the time, so this is what runs before every model call. It reads every
 * place a tool call id can live, allocates nothing per message, and never looks inside content beyond its
 * first non-blank character, so its cost does not grow with the size of tool results.
 *
 * It keeps nothing between calls: every check walks the whole history, so a message changed in place (LangChain
 * messages are mutable, and langchain's human-in-the-loop middleware does mutate `tool_calls`) can never be
 * judged by a stale verdict. Its scratch state (the ids seen, the calls of the current exchange) belongs to
 * one walker, which belongs to one repairer.
 *
 * It must agree with the passes' finders: a property test checks that it does.
 */
import { serverToolResultIds, isMovableCallBlock, isV1Message, turnOf, turnOfRole } from "../messages/inspect";
import { forEachResponseItemId } from "../messages/responses";
import { firstCallSigned } from "./passes/call-steps";
import { keepsCallBlock, keepsChatRole, type ProviderProfile } from "./profiles";
import { unsupportedBlock } from "./passes/blocks";
import { contentFix } from "./passes/content";
import { malformation } from "./passes/shape";
import {
  loopOpenedWithUnsentReasoning,
  textTurnsInReasoningLoop,
  userTurnsInReasoningLoop,
} from "../messages/exchanges";
import type { AIMessage, BaseMessage } from "@langchain/core/messages";

/** Fields read without checks on the hot path (each read is checked by its use). */
// biome-ignore lint/suspicious/noExplicitAny: the walk reads fields of messages of any shape without a cast per read
type Loose = Record<string, any>;

const MESSAGE_SYMBOL = Symbol.for("langchain.message");

/** `[a-zA-Z0-9_-]` as a lookup table. */
const ID_CHAR = new Uint8Array(128);
for (let c = 0; c < 128; c++) ID_CHAR[c] = /[a-zA-Z0-9_-]/.test(String.fromCharCode(c)) ? 1 : 0;

/** Past this many calls in one message, calls are found through a map instead of a scan. */
const SCAN_LIMIT = 8;

/** The places besides `tool_calls` that name a call; each may name a call once. */
const Location = {
  KwargsToolCalls: 1,
  KwargsToolUse: 2,
  KwargsToolUseCamel: 4,
  ContentToolUse: 8,
  ContentToolCall: 16,
  ContentConverse: 32,
  ContentDelta: 64,
  Output: 128,
} as const;
type Location = (typeof Location)[keyof typeof Location];

/**
 * The calls of the current exchange, in `tool_calls` order: which are still waiting for a result, and which
 * locations have already named each one. Found by a short scan while the exchange is small, through a map past
 * {@link SCAN_LIMIT} calls, so a fan-out of 100,000 calls stays linear.
 */
class OpenCalls {
  private ids: unknown[] = [];
  private answered: boolean[] = [];
  private named: number[] = [];
  private index = new Map<unknown, number>();
  /** Calls of the current assistant message (unanswerable server tools included). */
  count = 0;
  /** Of those, still unanswered. */
  waiting = 0;

  reset(): void {
    this.count = 0;
    this.waiting = 0;
    if (this.index.size > 0) this.index.clear();
  }

  private push(id: unknown, answered: boolean): void {
    const i = this.count++;
    this.ids[i] = id;
    this.answered[i] = answered;
    this.named[i] = 0;
    this.waiting++;
    if (this.count > SCAN_LIMIT) {
      if (this.count === SCAN_LIMIT + 1)
        for (let k = 0; k < i; k++) if (!this.index.has(this.ids[k])) this.index.set(this.ids[k], k);
      if (!this.index.has(id)) this.index.set(id, i);
    }
  }

  add(id: string): void {
    this.push(id, false);
  }

  /** An open call that no tool result can answer (an unanswered server tool): it only keeps the exchange open. */
  addUnanswerable(id: unknown): void {
    this.push(id, true);
  }

  /** Position of `id` among this message's calls, or -1. */
  indexOf(id: unknown): number {
    if (this.count > SCAN_LIMIT) return this.index.get(id) ?? -1;
    for (let i = 0; i < this.count; i++) if (this.ids[i] === id) return i;
    return -1;
  }

  /** Whether `id` names a call that `location` has not named yet (and marks it named there). */
  claim(id: unknown, location: Location): boolean {
    const i = this.indexOf(id);
    if (i < 0 || (this.named[i] & location) !== 0) return false;
    this.named[i] |= location;
    return true;
  }

  /** Marks `id` answered; false when it is not a waiting call of this exchange. */
  answer(id: unknown): boolean {
    const i = this.indexOf(id);
    if (i < 0 || this.answered[i]) return false;
    this.answered[i] = true;
    this.waiting--;
    return true;
  }
}

/**
 * A random seed per process, mixed into the id hash: ids cannot be crafted offline to collide in
 * {@link IdSet}, since the low bits of the table index depend on a seed the sender never sees.
 */
const HASH_SEED = (Math.random() * 0x100000000) >>> 0 || 0x9e3779b9;

/**
 * Every id the history has used so far: open addressing over a power-of-two table, the hash computed while
 * the id's characters are read for the provider's pattern anyway, cleared in O(1) by a generation stamp. A
 * native Set would do, but each check starts from an empty one, and growing a Set from empty to hundreds of
 * entries reallocates it at every doubling: this table is allocated once per walker and kept.
 */
class IdSet {
  private keys: (string | undefined)[] = new Array(256);
  private stamps = new Uint32Array(256);
  private mask = 255;
  private generation = 1;
  private count = 0;

  clear(): void {
    this.count = 0;
    if (++this.generation === 0xffffffff) {
      this.stamps.fill(0);
      this.generation = 1;
    }
  }

  /** Adds `id` (its hash given); false when it was already there. */
  add(id: string, hash: number): boolean {
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

  private grow(): void {
    const old = this.keys;
    const oldStamps = this.stamps;
    const oldGeneration = this.generation;
    const size = (this.mask + 1) * 2;
    this.keys = new Array(size);
    this.stamps = new Uint32Array(size);
    this.mask = size - 1;
    this.generation = 1;
    this.count = 0;
    for (let i = 0; i < old.length; i++) if (oldStamps[i] === oldGeneration) this.add(old[i]!, idHash(old[i]!));
  }
}

/** The seeded hash of an id (the same function {@link CleanWalk} computes inline). */
function idHash(id: string): number {
  let h = HASH_SEED ^ id.length;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return finalHash(h);
}

/** murmur3's finalizer: every bit of the state reaches the low bits that index the table. */
function finalHash(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Turns as the provider sees them. */
const NONE = 0;
const USER = 1;
const TOOL = 2;
const ASSISTANT = 3;

const turnCode = (role: unknown): number => {
  const turn = turnOfRole(role);
  return turn === "user" ? USER : turn === "assistant" ? ASSISTANT : NONE;
};

/** One walker: its scratch state is reused by every check of the repairer that owns it. */
export class CleanWalk {
  private readonly seen = new IdSet();
  private readonly open = new OpenCalls();
  private readonly pendingServer: unknown[] = [];
  /** The Responses item ids sent so far (R5; the response-items pass): few histories have any. */
  private readonly itemIds = new Set<string>();
  private repeatedItem = false;
  private readonly visitItemId = (id: string): void => {
    if (this.itemIds.has(id)) this.repeatedItem = true;
    else this.itemIds.add(id);
  };
  /** The current exchange has parallel calls that a one-call-per-step profile splits once answered (G3). */
  private parallel = false;
  /** Index of the first message of the current turn (after the last user message), for G6. */
  private currentTurn = 0;
  /** The walk's own position, for an error raised while reading a message. */
  at = -1;

  /**
   * `toolsAsText`: the request carries no tools and the provider needs them for tool blocks, so any call or
   * result is something to repair (the tools-as-text pass).
   */
  constructor(
    private readonly profile: ProviderProfile,
    private readonly toolsAsText = false,
  ) {}

  /**
   * Whether the passes would find nothing. `trailingAllowed`: an open trailing exchange is acceptable (storage
   * layers keep it for a resume).
   */
  isClean(messages: readonly unknown[], trailingAllowed: boolean): boolean {
    this.seen.clear();
    if (this.itemIds.size > 0) this.itemIds.clear();
    this.open.reset();
    this.pendingServer.length = 0;
    // B11 through ChatBedrockConverse: an open loop whose opening reasoning the adapter drops (tools-as-text).
    const clean = this.walk(messages) && this.cleanReasoningLoop(messages as readonly BaseMessage[]);
    this.at = -1;
    return clean && (this.open.waiting === 0 || trailingAllowed);
  }

  /**
   * The open tool loop of a thread with reasoning (request level): no text-only assistant message the turn-order pass
   * joins (A10, B11), and on Bedrock no opening reasoning the adapter drops (the tools-as-text pass).
   */
  private cleanReasoningLoop(messages: readonly BaseMessage[]): boolean {
    if (!this.profile.signedReasoning) return true;
    const { alternation } = this.profile;
    if (textTurnsInReasoningLoop(messages, alternation).length > 0) return false;
    if (!alternation && userTurnsInReasoningLoop(messages, false).length > 0) return false;
    return this.profile.assistantBlocks !== "converse" || loopOpenedWithUnsentReasoning(messages) === -1;
  }

  /** An id `tool_calls` may carry: a new string the provider accepts (1 to `maxIdLength` characters of its pattern). */
  private acceptNewId(id: unknown): boolean {
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
    return this.seen.add(id, finalHash(h));
  }

  /** Every id of one location (a list, or one record) names a different call of this message's `tool_calls`. */
  private allClaimed(list: unknown, location: Location): boolean {
    if (list === undefined || list === null) return true;
    if (!Array.isArray(list)) return this.claimRecord(list, location);
    for (let i = 0; i < list.length; i++) if (!this.claimRecord(list[i], location)) return false;
    return true;
  }

  /** The id of one raw call record (Bedrock's records may say `toolUseId`) claimed for `location`. */
  private claimRecord(c: Loose, location: Location): boolean {
    if (c === null || typeof c !== "object") return this.open.claim(undefined, location);
    return this.open.claim(location === Location.KwargsToolCalls ? c.id : (c.toolUseId ?? c.id), location);
  }

  /** An assistant message's content: call blocks agree with `tool_calls`; no blocks the provider refuses. */
  private cleanAssistantContent(m: Loose, content: unknown[], v1: boolean): boolean {
    const { profile, open } = this;
    let answeredServers: ReadonlySet<unknown> | undefined;
    for (let i = 0; i < content.length; i++) {
      const b = content[i] as Loose;
      if (b === null || typeof b !== "object" || Array.isArray(b)) return false;
      const type = b.type;
      if (type === "text") continue; // the content pass's (contentFix)
      if (isMovableCallBlock(b)) {
        if (!v1 && !keepsCallBlock(profile, b)) return false;
        if (type === "input_json_delta" && b.id === undefined) continue;
        const claimed =
          type === "tool_use"
            ? open.claim(b.id, Location.ContentToolUse)
            : type === "tool_call"
              ? open.claim(b.id, Location.ContentToolCall)
              : type === "input_json_delta"
                ? open.claim(b.id, Location.ContentDelta)
                : open.claim(b.toolUse.toolUseId ?? b.toolUse.id, Location.ContentConverse);
        if (!claimed) return false;
      } else {
        if (type === "server_tool_use" && profile.anthropicBlocks) {
          // Server tool ids are unique in the request too (A4: a replayed message repeats them).
          if (typeof b.id !== "string" || b.id === "" || !this.acceptNewId(b.id)) return false;
          answeredServers ??= serverToolResultIds(m);
          if (!answeredServers.has(b.id)) this.pendingServer.push(b.id);
        }
        if (unsupportedBlock(b, profile, v1) !== undefined) return false;
      }
    }
    return true;
  }

  /** Responses output items that ChatOpenAI re-sends instead of `tool_calls` carry exactly these calls. */
  private cleanOutput(output: unknown): boolean {
    if (!Array.isArray(output) || output.length === 0) return true;
    const open = this.open;
    let functionCalls = 0;
    let resent = true;
    for (let i = 0; i < output.length; i++) {
      const item = output[i] as Loose;
      if (item === null || typeof item !== "object" || !("type" in item)) resent = false;
      else if (item.type === "function_call") {
        if (!open.claim(item.call_id, Location.Output)) return false;
        functionCalls++;
      }
    }
    return !resent || functionCalls === open.count;
  }

  /** Checks one assistant message and opens its exchange. */
  private cleanAssistant(m: Loose, content: string | unknown[]): boolean {
    const { profile, open } = this;
    const stepCalls = m.tool_calls;
    if (Array.isArray(stepCalls) && stepCalls.length > 0) {
      this.parallel = profile.oneCallPerStep && stepCalls.length > 1;
      if (profile.signedCalls && this.at >= this.currentTurn && !firstCallSigned(m as AIMessage)) return false;
    } else this.parallel = false;
    open.reset();
    const calls = m.tool_calls; // an array of records by now (the shape pass's malformation)
    if (calls !== undefined)
      for (let k = 0; k < calls.length; k++) {
        // A rejected id, or one already used (earlier in this message or in the history).
        if (!this.acceptNewId(calls[k].id)) return false;
        open.add(calls[k].id);
      }
    const invalid = m.invalid_tool_calls;
    if (invalid !== undefined && (!Array.isArray(invalid) || invalid.length > 0)) return false;
    const kwargs = m.additional_kwargs;
    if (
      kwargs !== undefined &&
      kwargs !== null &&
      (!this.allClaimed(kwargs.tool_calls, Location.KwargsToolCalls) ||
        !this.allClaimed(kwargs.tool_use, Location.KwargsToolUse) ||
        !this.allClaimed(kwargs.toolUse, Location.KwargsToolUseCamel))
    )
      return false;
    if (typeof content !== "string") {
      this.pendingServer.length = 0;
      if (!this.cleanAssistantContent(m, content, isV1Message(m))) return false;
    }
    const meta = m.response_metadata;
    if (meta !== undefined && meta !== null && !this.cleanOutput(meta.output)) return false;
    // The response-items pass's rule: item ids no earlier message sent.
    this.repeatedItem = false;
    forEachResponseItemId(m, this.visitItemId);
    if (this.repeatedItem) return false;
    // An unanswered server tool can only be closed by removal: it is open like a call, but no result answers it.
    const pending = this.pendingServer;
    if (pending.length > 0) {
      for (let i = 0; i < pending.length; i++) open.addUnanswerable(pending[i]);
      pending.length = 0;
    }
    return true;
  }

  /** Walks the whole history; false as soon as a pass would find something (an open trailing exchange aside). */
  private walk(messages: readonly unknown[]): boolean {
    const { profile, open } = this;
    this.parallel = false;
    this.currentTurn = 0;
    if (profile.signedCalls)
      for (let i = messages.length - 1; i >= 0; i--)
        if (turnOf(messages[i]) === "user") {
          this.currentTurn = i + 1;
          break;
        }
    const system = profile.systemInConversation;
    let prev = NONE;
    let prevSystem = false;
    let serverEnded = false; // the previous assistant turn ended on a server tool call (A11)
    for (let i = 0; i < messages.length; i++) {
      this.at = i;
      const m = messages[i] as Loose; // a hole reads as undefined
      if (m === null || typeof m !== "object" || (m as Record<symbol, unknown>)[MESSAGE_SYMBOL] !== true) return false;
      const content = m.content;
      const type = m.type;
      if ((typeof content !== "string" && !Array.isArray(content)) || malformation(m as BaseMessage) !== undefined)
        return false;
      if (type === "tool") {
        if (this.toolsAsText || !open.answer(m.tool_call_id)) return false;
        if (this.parallel && open.waiting === 0) return false; // the call-steps pass splits the answered block
        if (profile.nonEmptyContent && contentFix(m as BaseMessage)) return false;
        prev = TOOL;
        prevSystem = false;
        continue;
      }
      if (open.waiting > 0) return false;
      if (type === "ai") {
        if ((prev === NONE && profile.leadingUser) || (prev === ASSISTANT && profile.alternation)) return false;
        if (!this.cleanAssistant(m, content)) return false;
        if (profile.nonEmptyContent && contentFix(m as BaseMessage)) return false;
        // Every other location of a call agrees with `tool_calls` by now: a call anywhere means one there.
        if (this.toolsAsText && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) return false;
        serverEnded =
          Array.isArray(content) &&
          content.length > 0 &&
          (content[content.length - 1] as Loose)?.type === "server_tool_use";
        prev = ASSISTANT;
        prevSystem = false;
        continue;
      }
      open.reset();
      if (type === "system") {
        // Leading system messages are lifted out by every adapter; the others follow the profile.
        if (prev !== NONE && system !== "any") {
          if (system === "none" || prevSystem) return false;
          const placedAfter = prev === USER || prev === TOOL || (prev === ASSISTANT && serverEnded);
          const next = messages[i + 1] as Loose | undefined;
          if (!placedAfter || (next !== undefined && (next === null || typeof next !== "object" || next.type !== "ai")))
            return false;
        }
        prevSystem = prev !== NONE;
        continue;
      }
      if (type === "generic" && !keepsChatRole(profile, m.role)) return false; // the chat-messages pass types it
      const turn = type === "human" ? USER : type === "generic" ? turnCode(m.role) : NONE;
      prevSystem = false;
      if (turn === NONE) continue; // other messages are not turns
      if (profile.nonEmptyContent && contentFix(m as BaseMessage)) return false;
      if (turn === ASSISTANT) {
        if ((prev === NONE && profile.leadingUser) || (prev === ASSISTANT && profile.alternation)) return false;
        serverEnded = false;
      } else if (profile.alternation && (prev === USER || prev === TOOL)) return false;
      prev = turn;
    }
    return true;
  }
}
