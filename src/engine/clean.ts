/**
 * The clean path: one walk that decides whether any pass would find something, without building anything.
 * Most histories are clean most of the time, so this is what runs before every model call. It reads every
 * place a tool call id can live, allocates nothing per message, and never looks inside content beyond its
 * first non-blank character, so its cost does not grow with the size of tool results.
 * It must agree with the passes' finders: a property test checks that it does.
 */
import {
  hasMeaningfulContent,
  isBlankText,
  isBlankTextBlock,
  isMovableCallBlock,
  isV1Message,
  serverToolAnsweredIn,
} from "../messages/inspect";
import { IdSet, OpenCalls } from "./id-set";
import { type ProviderProfile } from "./profiles";

type Dict = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const MESSAGE_SYMBOL = Symbol.for("langchain.message");
const seen = new IdSet();
const open = new OpenCalls();

/**
 * Tracks that ids of one location name calls of `tool_calls`, each at most once. A bit per call while there
 * are few; past 31 calls a pairwise check.
 */
function claim(id: unknown, used: number): number {
  const i = open.indexOf(id);
  if (i < 0) return -1;
  if (i < 31) {
    const bit = 1 << i;
    return used & bit ? -1 : used | bit;
  }
  return used; // beyond the bitmask: duplicates checked pairwise by the caller
}

function pairwiseUnique(items: Dict[], idOf: (item: Dict) => unknown): boolean {
  for (let i = 1; i < items.length; i++) for (let j = 0; j < i; j++) if (idOf(items[i]) === idOf(items[j])) return false;
  return true;
}

const rawCallId = (c: Dict) => (c !== null && typeof c === "object" ? c.id : undefined);
const recordId = (c: Dict) => (c !== null && typeof c === "object" ? (c.toolUseId ?? c.id) : undefined);
const blockId = (b: Dict) => (b.toolUse ? (b.toolUse.toolUseId ?? b.toolUse.id) : b.id);

/** Every id of a list (or single record) is one of this message's `tool_calls`, none twice. */
function allKnown(list: unknown, idOf: (item: Dict) => unknown): boolean {
  if (list === undefined || list === null) return true;
  if (!Array.isArray(list)) return open.indexOf(idOf(list as Dict)) >= 0;
  let used = 0;
  for (let i = 0; i < list.length; i++) if ((used = claim(idOf(list[i]), used)) < 0) return false;
  return open.count < 31 || pairwiseUnique(list, idOf);
}

/** Unanswered server tool calls of the current message: open until the message ends the history. */
const pendingServer: unknown[] = [];

/** An assistant message's content: call blocks agree with `tool_calls`; no blank blocks where forbidden. */
function cleanAssistantContent(content: unknown[], profile: ProviderProfile, blocksAllowed: boolean): boolean {
  let used = 0;
  for (let i = 0; i < content.length; i++) {
    const b = content[i] as Dict;
    if (b === null || typeof b !== "object") {
      if (profile.nonEmptyContent && typeof b === "string" && isBlankText(b)) return false;
      continue;
    }
    const type = b.type;
    if (type === "text") {
      if (profile.nonEmptyContent && (typeof b.text !== "string" || isBlankText(b.text))) return false;
    } else if (isMovableCallBlock(b)) {
      if (!blocksAllowed) return false;
      if (type === "input_json_delta" && b.id === undefined) continue;
      if ((used = claim(blockId(b), used)) < 0) return false;
    } else if (type === "server_tool_use" && !serverToolAnsweredIn(content, b.id)) pendingServer.push(b.id);
  }
  return open.count < 31 || pairwiseUnique(content.filter((b) => b !== null && typeof b === "object" && isMovableCallBlock(b)) as Dict[], blockId);
}

/** Responses output items that ChatOpenAI re-sends instead of `tool_calls` carry exactly these calls. */
function cleanOutput(output: unknown): boolean {
  if (!Array.isArray(output) || output.length === 0) return true;
  let functionCalls = 0;
  let resent = true;
  let used = 0;
  for (let i = 0; i < output.length; i++) {
    const item = output[i] as Dict;
    if (item === null || typeof item !== "object" || !("type" in item)) resent = false;
    else if (item.type === "function_call") {
      if ((used = claim(item.call_id, used)) < 0) return false;
      functionCalls++;
    }
  }
  if (open.count >= 31 && !pairwiseUnique(output.filter((x) => (x as Dict)?.type === "function_call") as Dict[], (x) => x.call_id)) return false;
  return !resent || functionCalls === open.count;
}

/** Checks one assistant message and opens its exchange. */
function cleanAssistant(m: Dict, content: string | unknown[], profile: ProviderProfile): boolean {
  open.reset();
  const calls = m.tool_calls;
  if (calls !== undefined) {
    if (!Array.isArray(calls)) return false;
    for (let k = 0; k < calls.length; k++) {
      const c = calls[k];
      if (c === null || typeof c !== "object" || c.args === null || typeof c.args !== "object" || Array.isArray(c.args)) return false;
      // A rejected id, or one already used (earlier in this message or in the history).
      if (!seen.addAccepted(c.id, profile.maxIdLength, profile.idPattern)) return false;
      open.add(c.id);
    }
  }
  const invalid = m.invalid_tool_calls;
  if (invalid !== undefined && (!Array.isArray(invalid) || invalid.length > 0)) return false;
  const kwargs = m.additional_kwargs;
  if (kwargs !== undefined && kwargs !== null) {
    if (!allKnown(kwargs.tool_calls, rawCallId) || !allKnown(kwargs.tool_use, recordId) || !allKnown(kwargs.toolUse, recordId)) return false;
  }
  if (typeof content === "string") {
    if (profile.nonEmptyContent && (content.length > 0 || open.count === 0) && isBlankText(content)) return false;
  } else {
    if (pendingServer.length > 0) pendingServer.length = 0;
    if (!cleanAssistantContent(content, profile, profile.callBlocksInContent || isV1Message(m))) return false;
    if (profile.nonEmptyContent && open.count === 0 && pendingServer.length === 0 && !hasMeaningfulContent(content)) return false;
  }
  const meta = m.response_metadata;
  if (meta !== undefined && meta !== null && !cleanOutput(meta.output)) return false;
  // An unanswered server tool can only be closed by removal: it is open like a call, but no result answers it.
  if (pendingServer.length > 0) {
    for (let i = 0; i < pendingServer.length; i++) open.addUnanswerable(pendingServer[i]);
    pendingServer.length = 0;
  }
  return true;
}

/** The turn a ChatMessage takes by its role: 1 user, 3 assistant, 0 none. */
export function chatTurn(role: unknown): number {
  return role === "user" || role === "human" ? 1 : role === "assistant" || role === "ai" ? 3 : 0;
}

/**
 * The last history walked to its end, so that the next check of the same history grown by a few messages
 * (before each model call of a tool loop) only walks what is new. Messages are immutable by LangChain's
 * convention and this engine never mutates one, so the same objects in the same places mean the same
 * verdict. Holds strong references to that one history until the next check.
 */
interface Walked {
  refs: unknown[];
  profile: ProviderProfile;
  prev: number;
}
let walked: Walked | undefined;

function resumableFrom(messages: readonly unknown[], profile: ProviderProfile): number {
  const last = walked;
  if (!last || last.profile !== profile || messages.length < last.refs.length) return -1;
  const refs = last.refs;
  for (let i = 0; i < refs.length; i++) if (messages[i] !== refs[i]) return -1;
  return refs.length;
}

/**
 * Whether `repairToolCalls(messages, { provider })` would change nothing. `trailingAllowed`: an open
 * trailing exchange is acceptable (storage layers keep it for a resume).
 */
export function isCleanHistory(messages: readonly unknown[], profile: ProviderProfile, trailingAllowed: boolean): boolean {
  let start = resumableFrom(messages, profile);
  let prev = 0; // 0 none yet, 1 user, 2 tool, 3 assistant
  if (start < 0) {
    start = 0;
    seen.clear();
    open.reset();
    walked = undefined;
  } else prev = walked!.prev;
  const verdict = walk(messages, start, prev, profile);
  if (verdict < 0) {
    walked = undefined; // stopped early: the shared state describes nothing reusable
    return false;
  }
  if (start === 0) walked = { refs: messages.slice(), profile, prev: verdict };
  else {
    for (let i = start; i < messages.length; i++) walked!.refs.push(messages[i]);
    walked!.prev = verdict;
  }
  return open.waiting === 0 || trailingAllowed;
}

/** Walks `messages[start..]`; the last turn kind when it reached the end, -1 when a problem stopped it. */
function walk(messages: readonly unknown[], start: number, prev: number, profile: ProviderProfile): number {
  for (let i = start; i < messages.length; i++) {
    const m = messages[i] as Dict;
    if (m === null || typeof m !== "object" || (m as Record<symbol, unknown>)[MESSAGE_SYMBOL] !== true) return -1;
    const content = m.content;
    if (typeof content !== "string" && !Array.isArray(content)) return -1;
    const type = m.type;
    if (type === "tool") {
      if (!open.answer(m.tool_call_id)) return -1;
      if (profile.nonEmptyContent && (typeof content === "string" ? isBlankText(content) : content.length === 0 || content.some(isBlankTextBlock)))
        return -1;
      prev = 2;
      continue;
    }
    if (open.waiting > 0) return -1;
    if (type === "ai") {
      if ((prev === 0 && profile.leadingUser) || (prev === 3 && profile.alternation)) return -1;
      if (!cleanAssistant(m, content, profile)) return -1;
      prev = 3;
    } else {
      open.reset();
      const turn = type === "human" ? 1 : type === "generic" ? chatTurn(m.role) : 0;
      if (turn === 0) continue; // system and other messages are not turns
      if (profile.nonEmptyContent && (typeof content === "string" ? isBlankText(content) : content.length === 0 || content.some(isBlankTextBlock)))
        return -1;
      if (turn === 3) {
        if ((prev === 0 && profile.leadingUser) || (prev === 3 && profile.alternation)) return -1;
      } else if (profile.alternation && (prev === 1 || prev === 2)) return -1;
      prev = turn;
    }
  }
  return prev;
}
