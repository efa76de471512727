/**
 * Reading tool calls out of an AIMessage. A call can hide in many places (LANGGRAPH_NOTES.md, "Where a tool
 * call can hide"): adapters send some of them even when `tool_calls` is empty, so the engine must read, and
 * later clean, every one of them.
 */
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import { boundary } from "../errors";
import { clip, fieldsOf, isDict, nonEmptyString, safeJson, type Dict } from "../values";
import type { ToolRunState } from "../types";

export { isDict, type Dict };

export type ToolCallLocation =
  | "tool_calls"
  | "invalid_tool_calls"
  | "additional_kwargs.tool_calls"
  | "additional_kwargs.tool_use"
  | "additional_kwargs.toolUse"
  | "content.tool_use"
  | "content.tool_call"
  | "content.toolUse"
  | "content.server_tool_use"
  | "content.input_json_delta"
  | "response_metadata.output";

/** One place in one message that names a tool call. */
export interface ToolCallRef {
  /** The id as stored; undefined when missing or not a non-empty string. */
  id: string | undefined;
  /** The raw id value, for reporting malformed ones. */
  rawId: unknown;
  name: string | undefined;
  location: ToolCallLocation;
  /** Index inside its location (array index, content block index). */
  position: number;
}

/**
 * Tool-use records in `additional_kwargs.tool_use` / `toolUse` (one dict or a list of them, none when absent), their
 * ids under `first`.
 */
function eachToolUseRecord(kwargs: Dict, key: "tool_use" | "toolUse", first: string, visit: Visit) {
  const value = kwargs[key];
  if (value === undefined) return;
  const list = Array.isArray(value) ? value : [value];
  for (let i = 0; i < list.length; i++) {
    const r = list[i];
    if (isDict(r)) push(visit, r[first] ?? r.id ?? r.toolUseId, r.name, `additional_kwargs.${key}`, i);
  }
}

/** One ref to `visit` (a function of its own: no closure per message on the passes' walks). */
const push = (visit: Visit, rawId: unknown, name: unknown, location: ToolCallLocation, position: number) =>
  visit({ id: nonEmptyString(rawId), rawId, name: typeof name === "string" ? name : undefined, location, position });
type Visit = (ref: ToolCallRef) => void;

/**
 * Every reference to a tool call in an assistant message, in a fixed location order, including references whose
 * id is missing, each to `visit` (no allocation beyond the refs themselves). Non-assistant messages have none.
 */
export function forEachToolCallRef(message: unknown, visit: Visit) {
  if (!isAssistant(message)) return;
  const { tool_calls: calls, invalid_tool_calls: invalid, additional_kwargs: kwargs } = fieldsOf(message);
  if (Array.isArray(calls))
    for (let i = 0; i < calls.length; i++) push(visit, fieldsOf(calls[i]).id, fieldsOf(calls[i]).name, "tool_calls", i);
  // An entry that is not a record names no call (the shape pass drops it).
  if (Array.isArray(invalid))
    for (let i = 0; i < invalid.length; i++)
      if (isDict(invalid[i])) push(visit, invalid[i].id, invalid[i].name, "invalid_tool_calls", i);
  if (isDict(kwargs)) {
    const raw = kwargs.tool_calls;
    if (Array.isArray(raw))
      for (let i = 0; i < raw.length; i++)
        push(visit, fieldsOf(raw[i]).id, fieldsOf(fieldsOf(raw[i]).function).name, "additional_kwargs.tool_calls", i);
    eachToolUseRecord(kwargs, "tool_use", "id", visit);
    eachToolUseRecord(kwargs, "toolUse", "toolUseId", visit);
  }
  const content = message.content;
  if (Array.isArray(content))
    for (let i = 0; i < content.length; i++) {
      // A block that carries a call, by its type first, as the adapters read it.
      const b = fieldsOf(content[i]);
      const format = b.type === "server_tool_use" ? b.type : callBlockFormatOf(b);
      const call = format === "toolUse" ? (b.toolUse as Dict) : b;
      // A streamed delta names a call only with its id.
      if (format && (format !== "input_json_delta" || b.id !== undefined))
        push(visit, format === "toolUse" ? (call.toolUseId ?? call.id) : call.id, call.name, `content.${format}`, i);
    }
  const output = fieldsOf(message.response_metadata).output;
  if (Array.isArray(output))
    for (let i = 0; i < output.length; i++)
      if (fieldsOf(output[i]).type === "function_call")
        push(visit, output[i].call_id, output[i].name, "response_metadata.output", i);
}

/**
 * Whether an assistant message's calls live in `tool_calls` only: every other location is absent or empty,
 * except `additional_kwargs.tool_calls` holding the same ids in the same order (what ChatOpenAI stores). The
 * common case, which the passes read straight from `tool_calls` without visiting each location.
 */
export function callsOnlyInToolCalls(message: AIMessage) {
  const { invalid_tool_calls: invalid, tool_calls: calls = [], additional_kwargs: kwargs } = fieldsOf(message);
  if ((invalid !== undefined && !(Array.isArray(invalid) && !invalid.length)) || !Array.isArray(calls)) return false;
  if (kwargs != null) {
    if (!isDict(kwargs) || kwargs.tool_use !== undefined || kwargs.toolUse !== undefined) return false;
    const raw = kwargs.tool_calls;
    if (raw !== undefined) {
      if (!Array.isArray(raw) || raw.length !== calls.length) return false;
      for (let i = 0; i < raw.length; i++)
        if (!isDict(raw[i]) || !isDict(calls[i]) || raw[i].id !== calls[i].id) return false;
    }
  }
  if (Array.isArray(message.content) && message.content.some(isCallBlock)) return false;
  const output = fieldsOf(message.response_metadata).output;
  return !(Array.isArray(output) && output.length);
}

/** One tool call of an assistant message, read once however many locations mirror it. */
export interface DistinctCall {
  id: string | undefined;
  /** The name of its first location that has one. */
  name: string | undefined;
  /** The raw arguments of its first location (an object, or a JSON string where the format keeps one). */
  args: unknown;
}

/**
 * The tool calls of an assistant message in the order the model emitted them (`tool_calls` first), one per id:
 * the same call mirrored in several locations (a `tool_use` block and `tool_calls`) comes once. A reference
 * without an id is a call of its own. `include` picks references (default: all).
 */
export function distinctCalls(message: unknown, include?: (ref: ToolCallRef) => boolean) {
  const byId = new Map<string | ToolCallRef, DistinctCall>();
  forEachToolCallRef(message, (ref) => {
    if (include && !include(ref)) return;
    const known = byId.get(ref.id ?? ref);
    if (known) known.name ??= ref.name;
    else byId.set(ref.id ?? ref, { id: ref.id, name: ref.name, args: rawArgsOf(message, ref) });
  });
  return [...byId.values()];
}

/**
 * A call's arguments as text: JSON (cycles, BigInts and throwing getters as stand-ins), a raw string as it is;
 * cut at 20,000 characters (what was asked, not every byte of a huge payload).
 */
export const callArgsText = (args: unknown) =>
  args === undefined || args === "" ? "{}" : typeof args === "string" ? clip(args, 20_000) : safeJson(args, 20_000);

/**
 * The call ids of an assistant message, every location, deduplicated, in order (`tool_calls` first); empty for
 * any other message. An Anthropic server tool answered inline never counts; one without its result counts only
 * with `servers` (no ToolMessage can answer it, but it keeps the exchange open for the provider).
 */
export function callIdsOf(message: unknown, servers: boolean) {
  const ids = new Set<string>();
  const answered = serverToolResultIds(message);
  forEachToolCallRef(message, (ref) => {
    if (ref.id && (isClientCall(ref) || (servers && !answered.has(ref.id)))) ids.add(ref.id);
  });
  return [...ids];
}

/**
 * Every tool call id an assistant message carries, from every location, deduplicated, in order
 * (`tool_calls` first). Empty for any other message.
 */
export const toolCallIdsOf = boundary("toolCallIdsOf", (message: unknown) => callIdsOf(message, true));

/** Whether a content block is an inline server tool result (`web_search_tool_result`, `code_execution_tool_result`, ...). */
export const isServerToolResultBlock = (block: unknown): block is Dict =>
  isDict(block) && typeof block.type === "string" && block.type.endsWith("_tool_result");

/**
 * Ids of the Anthropic server tools (`server_tool_use`) that are answered inside the same assistant message
 * by a `*_tool_result` block: they never need a ToolMessage. One read of the content, so callers check each
 * ref against the set instead of scanning the content again.
 */
export function serverToolResultIds(message: unknown) {
  const content = isAssistant(message) ? message.content : undefined;
  let ids: Set<unknown> | undefined;
  if (Array.isArray(content))
    for (let i = 0; i < content.length; i++)
      if (isServerToolResultBlock(content[i])) (ids ??= new Set()).add(content[i].tool_use_id);
  return ids ?? NO_IDS;
}

/** The empty answer of {@link serverToolResultIds}, shared (never added to). */
const NO_IDS: ReadonlySet<unknown> = new Set();

const MESSAGE_SYMBOL = Symbol.for("langchain.message");

/**
 * A real LangChain message (of `type`, when given): what `BaseMessage.isInstance`, `AIMessage.isInstance` and
 * their siblings check (the cross-copy marker, the type, readable content), in the few reads the hot paths can
 * afford (they call it for every message in every pass).
 */
function isMessageOfType(message: unknown, type?: string) {
  if (typeof message !== "object" || !message) return false;
  const m = message as Record<PropertyKey, unknown>;
  if ((type === undefined ? typeof m.type !== "string" : m.type !== type) || m[MESSAGE_SYMBOL] !== true) return false;
  return typeof m.content === "string" || Array.isArray(m.content);
}

/** A real assistant message (works across duplicate package copies; plain objects are false). */
export const isAssistant = (message: unknown): message is AIMessage => isMessageOfType(message, "ai");

export const isToolResult = (message: unknown): message is ToolMessage => isMessageOfType(message, "tool");

/** How the provider receives a message: a user turn, tool results, an assistant turn, a system message, or nothing. */
export type Turn = "user" | "tool" | "assistant" | "system" | undefined;

/** The turn a ChatMessage takes by its role (adapters map these roles the same way). */
export const turnOfRole = (role: unknown) =>
  role === "user" || role === "human" ? "user" : role === "assistant" || role === "ai" ? "assistant" : undefined;

/** The turn a message takes: the one definition the passes and the clean walk share. */
export function turnOf(message: unknown) {
  if (!isMessageOfType(message)) return;
  const type = (message as BaseMessage).type; // compared in turn: faster than a Map on the hot walks
  if (type === "ai") return "assistant";
  if (type === "human") return "user";
  if (type === "tool" || type === "system") return type as Turn;
  return type === "generic" ? turnOfRole((message as Dict).role) : undefined;
}

/** The id a tool result answers, or undefined when it has none usable. */
export const resultIdOf = (message: ToolMessage) => nonEmptyString(message.tool_call_id);

/** Marker stored in `additional_kwargs` of every message this package creates or converts. */
export const REPAIR_MARKER_KEY = "tool_call_repair";

export interface RepairMarker {
  /** True for messages that stand in for something that has no real record (a tool result nobody recorded). */
  synthetic: boolean;
  /** The problem that made this message. */
  reason: string;
  toolCallId?: string;
  toolName?: string;
  /** On a synthetic tool result: what is known of the call's run (never started, outcome unknown, cancelled). */
  toolRun?: ToolRunState;
}

export const repairMarkerOf = boundary("repairMarkerOf", (message: unknown) => markerOf(message));

/** {@link repairMarkerOf} for the package's own loops (behind their callers' boundary). */
export function markerOf(message: unknown) {
  const marker = fieldsOf((message as Dict | null)?.additional_kwargs)[REPAIR_MARKER_KEY];
  return isDict(marker) ? (marker as unknown as RepairMarker) : undefined;
}

/** A tool result this package made because none was recorded (`repairMarkerOf(m).toolRun` says what is known of the run). */
export const isSyntheticResult = boundary("isSyntheticResult", (message: unknown) => isMarkedSyntheticResult(message));

/** {@link isSyntheticResult} for the package's own loops (behind their callers' boundary). */
export const isMarkedSyntheticResult = (message: unknown) =>
  isToolResult(message) && markerOf(message)?.synthetic === true;

/**
 * Placeholders other libraries write for a call that got no result, as the exact text each writes for a call's id
 * (anchored at both ends): no result, as much as the package's own. deepagents JS and Python
 * (`PatchToolCallsMiddleware`, in every deep agent before any user middleware) write the same words.
 */
export const FOREIGN_PLACEHOLDERS: [string, string, (id: unknown) => string][] = [
  [
    "deepagents",
    "Tool call ",
    (id) => ` with id ${id} was cancelled - another message came in before it could be completed.`,
  ],
];

/** The library whose placeholder this tool result is ({@link FOREIGN_PLACEHOLDERS}); undefined for any other message. */
export function foreignPlaceholderOf(message: object) {
  const { type, content: text, tool_call_id: id } = message as Dict;
  // A loop, not `find`: the clean walk calls it for every tool result, and allocates nothing per message.
  if (type === "tool" && typeof text === "string")
    for (let i = 0; i < FOREIGN_PLACEHOLDERS.length; i++) {
      const [library, starts, ends] = FOREIGN_PLACEHOLDERS[i];
      if (text.startsWith(starts) && text.endsWith(ends(id))) return library;
    }
}

/** A tool result that holds no result: the package's own placeholder or another library's. */
export const isNoResult = (message: unknown) =>
  isMarkedSyntheticResult(message) || !!foreignPlaceholderOf(Object(message));

/** True when a string holds only white space. Scans from the start (no regex: it runs for every text block). */
export function isBlankText(text: string) {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && (c < 9 || c > 13) && c !== 0xa0 && c !== 0xfeff) return false;
  }
  return true;
}

/**
 * The formats a client tool call takes as a content block: Anthropic `tool_use`, v1 `tool_call`, a streamed
 * `input_json_delta`, or Converse `{ toolUse }` (no `type`).
 */
export type CallBlockFormat = "tool_use" | "tool_call" | "input_json_delta" | "toolUse";

/**
 * Which format a client call block is in (see {@link CallBlockFormat}); undefined for anything else. A block
 * with a call `type` is read by its type first, as the adapters do.
 */
export function callBlockFormatOf(block: unknown) {
  const { type, toolUse } = fieldsOf(block);
  if (type === "tool_use" || type === "tool_call" || type === "input_json_delta") return type;
  return isDict(toolUse) ? "toolUse" : undefined;
}

/** A content block that carries a tool call rather than something the model said (server tools and chunks too). */
const CALL_BLOCK_TYPES = new Set(["tool_use", "tool_call", "input_json_delta", "server_tool_use", "tool_call_chunk"]);
const isCallBlock = (block: unknown) =>
  isDict(block) && (CALL_BLOCK_TYPES.has(block.type as string) || isDict(block.toolUse));

/**
 * Whether call blocks in `content` are this message's own format: v1 messages (`output_version: "v1"`)
 * keep their calls as `tool_call` blocks (the constructor writes them from `tool_calls`), and every
 * adapter converts them.
 */
export const isV1Message = (message: unknown) => fieldsOf((message as Dict).response_metadata).output_version === "v1";

/** The raw arguments stored at one call reference (an object, or a JSON string where the format keeps one). */
export function rawArgsOf(message: unknown, { location, position }: ToolCallRef) {
  const m = message as Dict;
  const [head, key] = location.split(".");
  const list = !key || head === "content" ? m[head] : fieldsOf(m[head])[key];
  const item = fieldsOf(Array.isArray(list) ? list[position] : position === 0 ? list : undefined);
  if (!key || key === "tool_call") return item.args;
  // `additional_kwargs.tool_calls` (`tool_calls` itself has no key)
  if (key === "tool_calls") return fieldsOf(item.function).arguments;
  if (key === "output") return item.arguments;
  if (key === "input_json_delta") return item.partial_json ?? item.input;
  return location === "content.toolUse" ? fieldsOf(item.toolUse).input : item.input;
}

/** A text block whose text is only white space (rejected by Anthropic A9 and Bedrock B8). */
export function isBlankTextBlock(block: unknown) {
  if (typeof block === "string") return isBlankText(block);
  const { type, text } = fieldsOf(block);
  return type === "text" && (typeof text !== "string" || isBlankText(text));
}

/**
 * Whether ChatBedrockConverse reads `block` in an assistant message (@langchain/aws
 * `convertAIMessageToConverseMessage`): text, reasoning (`reasoning`, `reasoning_content`) and a default cache
 * point. Anything else makes it throw before sending (calls are sent from `tool_calls`, not from content).
 */
export function isConverseAssistantBlock(block: unknown) {
  const { type, cachePoint: c } = fieldsOf(block);
  if (type === "text" || type === "reasoning" || type === "reasoning_content") return true;
  return isDict(c) && c.type === "default" && [undefined, "5m", "1h"].includes(c.ttl as never);
}

/** Block types @langchain/google-genai converts in an assistant message (it throws `Unknown content type` on others). */
const GEMINI_BLOCK_TYPES = new Set(
  "text executableCode codeExecutionResult image_url media image video audio file text-plain".split(" "),
);

/** Whether ChatGoogleGenerativeAI can send this assistant block (`thinking` aside: the blocks pass drops it). */
export function isGeminiAssistantBlock(block: unknown) {
  const { type, data } = fieldsOf(block);
  // A `mime/type` block with inline data, or a raw `functionCall` part.
  return (
    (typeof type === "string" &&
      (GEMINI_BLOCK_TYPES.has(type) || (/^[^/]+\/[^/]+$/.test(type) && typeof data === "string"))) ||
    "functionCall" in fieldsOf(block)
  );
}

const REASONING_BLOCKS = new Set(["thinking", "redacted_thinking", "reasoning", "reasoning_content"]);
/** A reasoning block of any provider: Anthropic `thinking` / `redacted_thinking`, Bedrock `reasoning` / `reasoning_content`. */
export const isReasoningBlock = (block: unknown) => isDict(block) && REASONING_BLOCKS.has(block.type as string);

/** Reasoning kept by Anthropic (`thinking`, `redacted_thinking`); other adapters refuse or drop it. */
export function isThinkingBlock(block: unknown) {
  const type = fieldsOf(block).type;
  return type === "thinking" || type === "redacted_thinking";
}

/** A client call: answered by a ToolMessage (Anthropic server tools live inside their own message). */
export const isClientCall = (ref: ToolCallRef) => ref.location !== "content.server_tool_use";

/**
 * Reasoning a stream left without its signature (cancelled before `signature_delta`): a `thinking` block without
 * `signature` or a `redacted_thinking` block without `data` (ChatAnthropic), a `reasoning` / `reasoning_content`
 * block with text but no signature (ChatBedrockConverse). Claude refuses it (A14, B12).
 */
export function isUnsignedReasoning(block: unknown) {
  const { type, signature, data, reasoning, reasoningText } = fieldsOf(block);
  const { text, signature: nested } = fieldsOf(reasoningText);
  if (type === "thinking") return !nonEmptyString(signature);
  if (type === "redacted_thinking") return !nonEmptyString(data);
  if (type === "reasoning") return !!nonEmptyString(reasoning) && !nonEmptyString(signature);
  return type === "reasoning_content" && !!nonEmptyString(text) && !nonEmptyString(nested);
}

/** The text of a reasoning block (Anthropic `thinking`, Bedrock `reasoning` / `reasoning_content`), or "". */
export function reasoningTextOf(block: Dict) {
  const nested = fieldsOf(block.reasoningText).text;
  const text = block.type === "thinking" ? block.thinking : block.type === "reasoning" ? block.reasoning : nested;
  return typeof text === "string" ? text : "";
}

/**
 * Whether content says anything beyond tool calls and blank text (reasoning, images and documents count). With
 * `toSend`, whether a request can send it as a message: less reasoning blocks whose text is blank (an empty signed
 * reasoning block; @langchain/aws drops it, leaving the message empty, B9).
 */
export function hasMeaningfulContent(content: unknown, toSend = false) {
  if (typeof content === "string") return !isBlankText(content);
  if (Array.isArray(content))
    for (const block of content)
      if (
        !isCallBlock(block) &&
        !isBlankTextBlock(block) &&
        !(toSend && isReasoningBlock(block) && block.type !== "redacted_thinking" && !reasoningTextOf(block).trim())
      )
        return true;
  return false;
}
