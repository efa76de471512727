/**
 * The pre-check: whether a thread's stored messages are clean, read from the serialized data itself, without
 * reviving LangChain messages (reviving costs about 45 µs a message; parsing the JSON a small part of it).
 *
 * It is NOT a second judge. It recognises one narrow shape, the one agents store most of the time
 * (createAgent / createReactAgent with a chat model that answers in text or `tool_calls`), whose every
 * message is clean for every provider's rules but Gemini's steps (those it checks for the provider judged
 * for), and calls everything else suspicious: a suspicious thread is
 * revived by the saver and judged by the engine as before. A clean verdict must therefore always be one the
 * engine would give; test/threads/precheck.test.ts checks that on generated stored threads.
 *
 * The shape, stricter than the `strict` profile (the union of every provider's rules):
 * - every message is an lc-serialized `HumanMessage`, `AIMessage` or `ToolMessage` of `langchain_core`;
 * - turns go human, assistant, then (results of all its calls, assistant)*, and again; a thread may end on a
 *   human or an assistant turn whose calls are all answered (never on an open exchange);
 * - a call has an object `args`, an id every provider accepts, used once in the thread; results answer the
 *   calls of the assistant message right before them, each once; `additional_kwargs.tool_calls`, when
 *   present, mirrors `tool_calls` id for id; no `invalid_tool_calls`, no Responses `output`;
 * - contents are strings, not blank (an assistant's may be empty when it makes calls);
 * - for a provider with one call per step (Gemini, G3), one call a message; with signed calls (G6), none in the
 *   current turn (after the last human message): this shape never carries a signature.
 * Anything the serializer would revive differently (an `lc` record where a value is expected) is outside it.
 */
import { isAcceptedId, profileFor } from "../engine";
import { isBlankText } from "../messages/inspect";
import type { Provider } from "../types";

/** Fields of parsed JSON, read without checks (each read is checked by its use). */
// biome-ignore lint/suspicious/noExplicitAny: parsed JSON, each read checked by its use
type Loose = Record<string, any>;

const STRICT = profileFor("strict", "request");

const isRecord = (value: unknown): value is Loose =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A plain object the serializer's reviver leaves as it is (no `lc` marker of a record it would rebuild). */
const isPlainValue = (value: unknown): value is Loose => isRecord(value) && !("lc" in value);

/** Absent, or the serializer's record of `undefined`. */
const revivesUndefined = (value: unknown) =>
  value === undefined || (isRecord(value) && value.lc === 2 && value.type === "undefined");

/** No keys but those in `allowed` (or keys whose value revives as `undefined`, as ChatOpenAI's `function_call`). */
function onlyKeys(record: unknown, allowed: readonly string[] = []) {
  if (!isPlainValue(record)) return record === undefined;
  for (const key in record) if (!allowed.includes(key) && !revivesUndefined(record[key])) return false;
  return true;
}

/** The class name of an lc-serialized `langchain_core` message, or undefined. */
function messageClass(value: unknown) {
  if (!isRecord(value) || value.lc !== 1 || value.type !== "constructor" || !isPlainValue(value.kwargs)) return;
  const { id } = value;
  if (Array.isArray(id) && id.length === 3 && id[0] === "langchain_core" && id[1] === "messages") return id[2];
}

/**
 * The ids of an assistant message's calls when it has the shape above (none: an empty list), else undefined.
 * `seen` holds every call id of the thread so far.
 */
function assistantCalls(kwargs: Loose, seen: Set<string>) {
  const { invalid_tool_calls: invalid, response_metadata: meta, additional_kwargs: extra, content } = kwargs;
  const calls = kwargs.tool_calls ?? [];
  if (
    (invalid !== undefined && !(Array.isArray(invalid) && !invalid.length)) ||
    (meta !== undefined && (!isPlainValue(meta) || meta.output !== undefined)) ||
    !onlyKeys(extra, ["tool_calls"]) ||
    !Array.isArray(calls)
  )
    return;
  const ids: string[] = [];
  for (const call of calls) {
    const id = isPlainValue(call) ? call.id : undefined;
    if (
      typeof id !== "string" ||
      !call.name ||
      typeof call.name !== "string" ||
      !isPlainValue(call.args) ||
      (call.type !== undefined && call.type !== "tool_call") ||
      !isAcceptedId(id, STRICT) || // "" too: strict's id pattern takes one character at least
      seen.has(id)
    )
      return;
    seen.add(id);
    ids.push(id);
  }
  const raw = extra?.tool_calls;
  // The raw OpenAI calls: the same calls in the same order, or the reviver would read them into tool_calls.
  if (
    !revivesUndefined(raw) &&
    !(
      Array.isArray(raw) &&
      raw.length === ids.length &&
      ids.length &&
      raw.every((r, i) => isPlainValue(r) && r.id === ids[i])
    )
  )
    return;
  if (typeof content !== "string" || (isBlankText(content) && (content !== "" || !ids.length))) return;
  return ids;
}

/**
 * The number of messages when `value` (a messages channel as parsed from the saver's JSON, not revived) has
 * the clean shape above; undefined when it is suspicious (anything else).
 */
export function cleanMessageCount(value: unknown, provider: Provider = "strict") {
  if (!Array.isArray(value)) return;
  const { oneCallPerStep, signedCalls } = profileFor(provider, "request");
  /** An assistant message after the last human one made calls (unsigned: this shape has no signatures). */
  let callsThisTurn = false;
  const seen = new Set<string>();
  /** Calls of the current exchange still waiting for their result. */
  let waiting = new Set<string>();
  /** What the last message was: none yet, human, assistant, tool result. */
  let last: "none" | "human" | "ai" | "tool" = "none";
  for (const message of value) {
    const kind = messageClass(message);
    const kwargs = message?.kwargs;
    if (kind === "AIMessage") {
      const ids = last === "none" || last === "ai" || waiting.size ? undefined : assistantCalls(kwargs, seen);
      if (!ids || (oneCallPerStep && ids.length > 1)) return;
      callsThisTurn ||= ids.length > 0;
      waiting = new Set(ids);
      last = "ai";
      continue;
    }
    if (kind === "HumanMessage") {
      if (last === "human" || last === "tool" || waiting.size) return;
      last = "human";
      callsThisTurn = false;
    } else if (kind === "ToolMessage") {
      const { tool_call_id: id, status } = kwargs;
      // Call ids are strings: no other value is waiting.
      if (!waiting.delete(id) || (!revivesUndefined(status) && status !== "success" && status !== "error")) return;
      last = "tool";
    } else return;
    if (typeof kwargs.content !== "string" || isBlankText(kwargs.content) || !onlyKeys(kwargs.additional_kwargs))
      return;
  }
  // Ending on results: the assistant has not answered yet (fine); ending on an open exchange: suspicious.
  return !waiting.size && !(signedCalls && callsThisTurn) ? value.length : undefined;
}

/** A thread's latest checkpoint as stored (see source.ts): its messages still serialized. */
export interface StoredCheckpoint {
  checkpointId: string;
  /** The serializer's type and bytes: PostgreSQL, the messages channel's blob; SQLite, the whole checkpoint. */
  type: string | null;
  data: Uint8Array | string | null;
  /** What `data` holds once decoded: the messages themselves, or a checkpoint with them in `channel_values`. */
  holds: "messages" | "checkpoint";
  /** The checkpoint's `ts`, when the row has it apart from `data` (PostgreSQL). */
  writtenAt?: unknown;
}

/** What the pre-check tells of a clean thread: what its report needs. */
export interface CleanThread {
  checkpointId: string;
  writtenAt?: string;
  messageCount: number;
}

const decoder = new TextDecoder();

/**
 * The pre-check of a thread as stored (`source.ts`): decoded as the JSON serializer does before reviving
 * (`JSON.parse` of the UTF-8 text), its messages judged by {@link cleanMessageCount}. Undefined (suspicious)
 * for another serializer type, bytes that do not parse, or a checkpoint without a string `ts`.
 */
export function cleanStoredThread(
  { type, data, holds, checkpointId, writtenAt: ts }: StoredCheckpoint,
  messagesKey: string,
  provider: Provider = "strict",
) {
  if (type !== "json") return;
  let parsed: Loose | null;
  try {
    // No data (null) does not decode: suspicious.
    parsed = JSON.parse(typeof data === "string" ? data : decoder.decode(data!));
  } catch {
    return;
  }
  const whole = holds === "checkpoint";
  const writtenAt = whole ? parsed?.ts : ts;
  const values = parsed?.channel_values;
  const messageCount = cleanMessageCount(whole ? isPlainValue(values) && values[messagesKey] : parsed, provider);
  if (typeof writtenAt === "string" && messageCount !== undefined) return { checkpointId, writtenAt, messageCount };
}
