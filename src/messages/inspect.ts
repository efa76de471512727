/**
 * Reading tool calls out of an AIMessage. A call can hide in many places (LANGGRAPH_NOTES.md, "Where a tool
 * call can hide"): adapters send some of them even when `tool_calls` is empty, so the engine must read, and
 * later clean, every one of them.
 */
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import { boundary } from "../errors";
import { isDict, safeJson, type Dict } from "../values";
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

const asId = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);
const asName = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Tool-use records in `additional_kwargs.tool_use` / `toolUse` come as one dict or a list of them. */
function eachToolUseRecord(value: unknown, visit: (rec: Dict, position: number) => void): void {
  if (Array.isArray(value)) value.forEach((rec, i) => isDict(rec) && visit(rec, i));
  else if (isDict(value)) visit(value, 0);
}

/**
 * Every reference to a tool call in an assistant message, in a fixed location order, including references
 * whose id is missing. Non-assistant messages have none.
 */
export const readToolCallRefs = boundary("readToolCallRefs", (message: unknown): ToolCallRef[] => {
  const refs: ToolCallRef[] = [];
  forEachToolCallRef(message, (ref) => refs.push(ref));
  return refs;
});

/** Visitor form of {@link readToolCallRefs}: no allocation beyond the refs themselves. */
export function forEachToolCallRef(message: unknown, visit: (ref: ToolCallRef) => void): void {
  if (!isAssistant(message)) return;
  const m = message as unknown as Dict;
  const push = (rawId: unknown, name: unknown, location: ToolCallLocation, position: number) =>
    visit({ id: asId(rawId), rawId, name: asName(name), location, position });

  const toolCalls = m.tool_calls;
  if (Array.isArray(toolCalls)) {
    for (let i = 0; i < toolCalls.length; i++) {
      const c = toolCalls[i];
      push(isDict(c) ? c.id : undefined, isDict(c) ? c.name : undefined, "tool_calls", i);
    }
  }
  const invalid = m.invalid_tool_calls;
  if (Array.isArray(invalid)) {
    for (let i = 0; i < invalid.length; i++) {
      const c = invalid[i];
      // An entry that is not a record names no call (the shape pass drops it).
      if (isDict(c)) push(c.id, c.name, "invalid_tool_calls", i);
    }
  }
  const kwargs = m.additional_kwargs;
  if (isDict(kwargs)) {
    const raw = kwargs.tool_calls;
    if (Array.isArray(raw)) {
      for (let i = 0; i < raw.length; i++) {
        const c = raw[i];
        const fn = isDict(c) && isDict(c.function) ? c.function : undefined;
        push(isDict(c) ? c.id : undefined, fn?.name, "additional_kwargs.tool_calls", i);
      }
    }
    if (kwargs.tool_use !== undefined)
      eachToolUseRecord(kwargs.tool_use, (rec, i) =>
        push(rec.id ?? rec.toolUseId, rec.name, "additional_kwargs.tool_use", i),
      );
    if (kwargs.toolUse !== undefined)
      eachToolUseRecord(kwargs.toolUse, (rec, i) =>
        push(rec.toolUseId ?? rec.id, rec.name, "additional_kwargs.toolUse", i),
      );
  }
  const content = m.content;
  if (Array.isArray(content)) {
    for (let i = 0; i < content.length; i++) {
      const b = content[i];
      if (!isDict(b)) continue;
      const type = b.type;
      if (type === "tool_use") push(b.id, b.name, "content.tool_use", i);
      else if (type === "tool_call") push(b.id, b.name, "content.tool_call", i);
      else if (type === "server_tool_use") push(b.id, b.name, "content.server_tool_use", i);
      else if (type === "input_json_delta" && b.id !== undefined) push(b.id, b.name, "content.input_json_delta", i);
      else if (isDict(b.toolUse)) push(b.toolUse.toolUseId ?? b.toolUse.id, b.toolUse.name, "content.toolUse", i);
    }
  }
  const meta = m.response_metadata;
  if (isDict(meta) && Array.isArray(meta.output)) {
    const output = meta.output;
    for (let i = 0; i < output.length; i++) {
      const item = output[i];
      if (isDict(item) && item.type === "function_call") push(item.call_id, item.name, "response_metadata.output", i);
    }
  }
}

/**
 * Whether an assistant message's calls live in `tool_calls` only: every other location is absent or empty,
 * except `additional_kwargs.tool_calls` holding the same ids in the same order (what ChatOpenAI stores). The
 * common case, which the passes read straight from `tool_calls` without visiting each location.
 */
export function callsOnlyInToolCalls(message: AIMessage): boolean {
  const m = message as unknown as Dict;
  const invalid = m.invalid_tool_calls;
  if (invalid !== undefined && (!Array.isArray(invalid) || invalid.length > 0)) return false;
  const toolCalls = m.tool_calls;
  if (toolCalls !== undefined && !Array.isArray(toolCalls)) return false;
  const kwargs = m.additional_kwargs;
  if (kwargs !== undefined && kwargs !== null) {
    if (!isDict(kwargs)) return false;
    if (kwargs.tool_use !== undefined || kwargs.toolUse !== undefined) return false;
    const raw = kwargs.tool_calls;
    if (raw !== undefined) {
      const calls = (toolCalls ?? []) as unknown[];
      if (!Array.isArray(raw) || raw.length !== calls.length) return false;
      for (let i = 0; i < raw.length; i++) {
        const r = raw[i];
        const c = calls[i];
        if (!isDict(r) || !isDict(c) || r.id !== c.id) return false;
      }
    }
  }
  const content = m.content;
  if (Array.isArray(content))
    for (let i = 0; i < content.length; i++) {
      const b = content[i];
      if (isDict(b) && ((typeof b.type === "string" && CALL_BLOCK_TYPES.has(b.type)) || b.toolUse !== undefined))
        return false;
    }
  const meta = m.response_metadata;
  return !(isDict(meta) && Array.isArray(meta.output) && meta.output.length > 0);
}

/** One tool call of an assistant message, read once however many locations mirror it. */
export interface DistinctCall {
  id: string | undefined;
  /** The name of its first location that has one. */
  name: string | undefined;
  /** The raw arguments of its first location (an object, or a JSON string where the format keeps one). */
  args: unknown;
  /** Its first location. */
  location: ToolCallLocation;
}

/**
 * The tool calls of an assistant message in the order the model emitted them (`tool_calls` first), one per id:
 * the same call mirrored in several locations (a `tool_use` block and `tool_calls`) comes once. A reference
 * without an id is a call of its own. `include` picks references (default: all).
 */
export function distinctCalls(message: unknown, include?: (ref: ToolCallRef) => boolean): DistinctCall[] {
  const calls: DistinctCall[] = [];
  const byId = new Map<string, DistinctCall>();
  forEachToolCallRef(message, (ref) => {
    if (include && !include(ref)) return;
    const known = ref.id === undefined ? undefined : byId.get(ref.id);
    if (known) {
      if (known.name === undefined) known.name = ref.name;
      return;
    }
    const call: DistinctCall = { id: ref.id, name: ref.name, args: rawArgsOf(message, ref), location: ref.location };
    calls.push(call);
    if (ref.id !== undefined) byId.set(ref.id, call);
  });
  return calls;
}

/** Longest argument text {@link callArgsText} gives (what was asked, not every byte of a huge payload). */
const ARGS_CHARS = 20_000;

/**
 * A call's arguments as text: JSON (cycles, BigInts and throwing getters as stand-ins), a raw string as it is;
 * cut at 20,000 characters.
 */
export function callArgsText(args: unknown): string {
  if (args === undefined || args === "") return "{}";
  if (typeof args === "string") return args.length > ARGS_CHARS ? `${args.slice(0, ARGS_CHARS)}…` : args;
  return safeJson(args, ARGS_CHARS);
}

/**
 * Every tool call id an assistant message carries, from every location, deduplicated, in order
 * (`tool_calls` first). Empty for any other message.
 */
export const toolCallIdsOf = boundary("toolCallIdsOf", function toolCallIdsOf(message: unknown): string[] {
  const ids = new Set<string>();
  const answered = serverToolResultIds(message);
  forEachToolCallRef(message, (ref) => {
    if (ref.id !== undefined && !(ref.location === "content.server_tool_use" && answered.has(ref.id))) ids.add(ref.id);
  });
  return [...ids];
});

/** Whether a content block is an inline server tool result (`web_search_tool_result`, `code_execution_tool_result`, ...). */
export function isServerToolResultBlock(block: unknown): block is Dict {
  return isDict(block) && typeof block.type === "string" && block.type.endsWith("_tool_result");
}

/**
 * Ids of the Anthropic server tools (`server_tool_use`) that are answered inside the same assistant message
 * by a `*_tool_result` block: they never need a ToolMessage. One read of the content, so callers check each
 * ref against the set instead of scanning the content again.
 */
export function serverToolResultIds(message: unknown): ReadonlySet<unknown> {
  const content = isAssistant(message) ? (message as unknown as Dict).content : undefined;
  if (!Array.isArray(content)) return NO_IDS;
  let ids: Set<unknown> | undefined;
  for (let i = 0; i < content.length; i++) {
    const b = content[i];
    if (isServerToolResultBlock(b)) (ids ??= new Set()).add(b.tool_use_id);
  }
  return ids ?? NO_IDS;
}

/** The empty answer of {@link serverToolResultIds}, shared (never added to). */
const NO_IDS: ReadonlySet<unknown> = new Set();

const MESSAGE_SYMBOL = Symbol.for("langchain.message");

/**
 * A real LangChain message of `type`: what `AIMessage.isInstance` and its siblings check (the cross-copy marker,
 * readable content, the type), in the few reads the hot paths can afford (they call it for every message in
 * every pass).
 */
function isMessageOfType(message: unknown, type: string): boolean {
  if (typeof message !== "object" || message === null) return false;
  const m = message as Record<PropertyKey, unknown>;
  if (m.type !== type || m[MESSAGE_SYMBOL] !== true) return false;
  const content = m.content;
  return typeof content === "string" || Array.isArray(content);
}

/** A real assistant message (works across duplicate package copies; plain objects are false). */
export function isAssistant(message: unknown): message is AIMessage {
  return isMessageOfType(message, "ai");
}

export function isToolResult(message: unknown): message is ToolMessage {
  return isMessageOfType(message, "tool");
}

/** How the provider receives a message: a user turn, tool results, an assistant turn, a system message, or nothing. */
export type Turn = "user" | "tool" | "assistant" | "system" | undefined;

/** The turn a ChatMessage takes by its role (adapters map these roles the same way). */
export function turnOfRole(role: unknown): "user" | "assistant" | undefined {
  return role === "user" || role === "human" ? "user" : role === "assistant" || role === "ai" ? "assistant" : undefined;
}

/** A real LangChain message of any type (as `BaseMessage.isInstance`, in a few reads). */
function isAnyMessage(message: unknown): message is BaseMessage {
  if (typeof message !== "object" || message === null) return false;
  const m = message as Record<PropertyKey, unknown>;
  if (m[MESSAGE_SYMBOL] !== true || typeof m.type !== "string") return false;
  const content = m.content;
  return typeof content === "string" || Array.isArray(content);
}

/** The turn a message takes: the one definition the passes and the clean walk share. */
export function turnOf(message: unknown): Turn {
  if (!isAnyMessage(message)) return undefined;
  const type = message.type;
  if (type === "ai") return "assistant";
  if (type === "tool") return "tool";
  if (type === "human") return "user";
  if (type === "system") return "system";
  if (type === "generic") return turnOfRole((message as unknown as Dict).role);
  return undefined;
}

/** The id a tool result answers, or undefined when it has none usable. */
export function resultIdOf(message: ToolMessage): string | undefined {
  return asId((message as unknown as Dict).tool_call_id);
}

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

function markerOf(message: unknown): RepairMarker | undefined {
  const kwargs = isDict(message) || message instanceof Object ? (message as Dict).additional_kwargs : undefined;
  if (!isDict(kwargs)) return undefined;
  const marker = kwargs[REPAIR_MARKER_KEY];
  return isDict(marker) ? (marker as unknown as RepairMarker) : undefined;
}

/** A tool result this package made because none was recorded (`repairMarkerOf(m).toolRun` says what is known of the run). */
export const isSyntheticResult = boundary("isSyntheticResult", (message: unknown) => isMarkedSyntheticResult(message));

/** {@link isSyntheticResult} for the package's own loops (behind their callers' boundary). */
export function isMarkedSyntheticResult(message: unknown): boolean {
  return isToolResult(message) && markerOf(message)?.synthetic === true;
}

/** True when a string holds only white space. Scans from the start, so cost does not grow with content size. */
export function isBlankText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12 && c !== 11 && c !== 0xa0 && c !== 0xfeff) return false;
  }
  return true;
}

/** Content block types that carry a client tool call (answered by a ToolMessage, or streamed parts of one). */
const MOVABLE_CALL_BLOCK_TYPES = new Set(["tool_use", "tool_call", "input_json_delta"]);
/** Content block types that carry any tool call, server tools and call chunks included. */
const CALL_BLOCK_TYPES = new Set([...MOVABLE_CALL_BLOCK_TYPES, "server_tool_use", "tool_call_chunk"]);

/**
 * A client tool call carried in content (`tool_use`, v1 `tool_call`, `input_json_delta`, Converse `toolUse`):
 * the blocks ChatBedrockConverse refuses. Server tools and their results are not among them.
 */
export function isMovableCallBlock(block: unknown): boolean {
  return (
    isDict(block) &&
    ((typeof block.type === "string" && MOVABLE_CALL_BLOCK_TYPES.has(block.type)) || isDict(block.toolUse))
  );
}

/**
 * The formats a client tool call takes as a content block: Anthropic `tool_use`, v1 `tool_call`, a streamed
 * `input_json_delta`, or Converse `{ toolUse }` (no `type`).
 */
export type CallBlockFormat = "tool_use" | "tool_call" | "input_json_delta" | "toolUse";

/**
 * Which format a movable call block is in: Anthropic `tool_use`, v1 `tool_call`, a streamed
 * `input_json_delta`, or Converse `{ toolUse }` (no `type`). Undefined for anything else. A block with a call
 * `type` is read by its type first, as the adapters do.
 */
export function callBlockFormatOf(block: unknown): CallBlockFormat | undefined {
  if (!isDict(block)) return undefined;
  const type = block.type;
  if (type === "tool_use" || type === "tool_call" || type === "input_json_delta") return type;
  return isDict(block.toolUse) ? "toolUse" : undefined;
}

/** A content block that carries a tool call rather than something the model said. */
function isCallBlock(block: unknown): boolean {
  if (!isDict(block)) return false;
  return (typeof block.type === "string" && CALL_BLOCK_TYPES.has(block.type)) || isDict(block.toolUse);
}

/**
 * Whether call blocks in `content` are this message's own format: v1 messages (`output_version: "v1"`)
 * keep their calls as `tool_call` blocks (the constructor writes them from `tool_calls`), and every
 * adapter converts them.
 */
export function isV1Message(message: unknown): boolean {
  const meta = (message as Dict).response_metadata;
  return isDict(meta) && meta.output_version === "v1";
}

const pick = (value: unknown, key: string): unknown => (isDict(value) ? value[key] : undefined);

/** The raw arguments stored at one call reference (an object, or a JSON string where the format keeps one). */
export function rawArgsOf(message: unknown, ref: ToolCallRef): unknown {
  const m = message as Dict;
  const kwargs = isDict(m.additional_kwargs) ? m.additional_kwargs : {};
  const item = (list: unknown) => (Array.isArray(list) ? list[ref.position] : ref.position === 0 ? list : undefined);
  switch (ref.location) {
    case "tool_calls":
    case "invalid_tool_calls":
      return pick(item(m[ref.location]), "args");
    case "additional_kwargs.tool_calls":
      return pick(pick(item(kwargs.tool_calls), "function"), "arguments");
    case "additional_kwargs.tool_use":
      return pick(item(kwargs.tool_use), "input");
    case "additional_kwargs.toolUse":
      return pick(item(kwargs.toolUse), "input");
    case "content.toolUse":
      return pick(pick(item(m.content), "toolUse"), "input");
    case "content.tool_call":
      return pick(item(m.content), "args");
    case "content.input_json_delta":
      return pick(item(m.content), "partial_json") ?? pick(item(m.content), "input");
    case "content.tool_use":
    case "content.server_tool_use":
      return pick(item(m.content), "input");
    case "response_metadata.output":
      return pick(item(isDict(m.response_metadata) ? m.response_metadata.output : undefined), "arguments");
  }
}

/** A text block whose text is only white space (rejected by Anthropic A9 and Bedrock B8). */
export function isBlankTextBlock(block: unknown): boolean {
  if (typeof block === "string") return isBlankText(block);
  return isDict(block) && block.type === "text" && (typeof block.text !== "string" || isBlankText(block.text));
}

/**
 * Whether ChatBedrockConverse reads `block` in an assistant message (@langchain/aws
 * `convertAIMessageToConverseMessage`): text, reasoning (`reasoning`, `reasoning_content`) and a default cache
 * point. Anything else makes it throw before sending (calls are sent from `tool_calls`, not from content).
 */
export function isConverseAssistantBlock(block: unknown): boolean {
  if (!isDict(block)) return false;
  const type = block.type;
  if (type === "text" || type === "reasoning" || type === "reasoning_content") return true;
  const cachePoint = block.cachePoint;
  return (
    isDict(cachePoint) &&
    cachePoint.type === "default" &&
    (cachePoint.ttl === undefined || cachePoint.ttl === "5m" || cachePoint.ttl === "1h")
  );
}

/** Block types @langchain/google-genai converts in an assistant message (it throws `Unknown content type` on others). */
const GEMINI_BLOCK_TYPES = new Set([
  "text",
  "executableCode",
  "codeExecutionResult",
  "image_url",
  "media",
  "image",
  "video",
  "audio",
  "file",
  "text-plain",
]);

/** Whether ChatGoogleGenerativeAI can send this assistant block (`thinking` aside: the blocks pass drops it). */
export function isGeminiAssistantBlock(block: unknown): boolean {
  if (!isDict(block)) return false;
  const type = block.type;
  if (typeof type === "string" && GEMINI_BLOCK_TYPES.has(type)) return true;
  // A `mime/type` block with inline data, or a raw `functionCall` part.
  return (
    (typeof type === "string" && /^[^/]+\/[^/]+$/.test(type) && typeof block.data === "string") ||
    "functionCall" in block
  );
}

/** Reasoning kept by Anthropic (`thinking`, `redacted_thinking`); other adapters refuse or drop it. */
export function isThinkingBlock(block: unknown): boolean {
  return isDict(block) && (block.type === "thinking" || block.type === "redacted_thinking");
}

/** A client call: answered by a ToolMessage (Anthropic server tools live inside their own message). */
export const isClientCall = (ref: ToolCallRef): boolean => ref.location !== "content.server_tool_use";

/**
 * Reasoning a stream left without its signature (cancelled before `signature_delta`): a `thinking` block without
 * `signature` or a `redacted_thinking` block without `data` (ChatAnthropic), a `reasoning` / `reasoning_content`
 * block with text but no signature (ChatBedrockConverse). Claude refuses it (A14, B12).
 */
export function isUnsignedReasoning(block: unknown): boolean {
  if (!isDict(block)) return false;
  const signed = (value: unknown) => typeof value === "string" && value !== "";
  switch (block.type) {
    case "thinking":
      return !signed(block.signature);
    case "redacted_thinking":
      return !signed(block.data);
    case "reasoning":
      return signed(block.reasoning) && !signed(block.signature);
    case "reasoning_content":
      return isDict(block.reasoningText) && signed(block.reasoningText.text) && !signed(block.reasoningText.signature);
  }
  return false;
}

/** The text of a reasoning block (Anthropic `thinking`, Bedrock `reasoning` / `reasoning_content`), or "". */
export function reasoningTextOf(block: Dict): string {
  const nested = isDict(block.reasoningText) ? block.reasoningText.text : undefined;
  const text = block.type === "thinking" ? block.thinking : block.type === "reasoning" ? block.reasoning : nested;
  return typeof text === "string" ? text : "";
}

/**
 * Whether a request can send this content as a message: {@link hasMeaningfulContent} less reasoning blocks
 * whose text is blank (an empty signed reasoning block; @langchain/aws drops it, leaving the message empty, B9).
 */
export function saysSomethingToSend(content: unknown): boolean {
  if (!hasMeaningfulContent(content)) return false;
  if (!Array.isArray(content)) return true;
  for (const block of content) {
    if (isCallBlock(block) || isBlankTextBlock(block)) continue;
    const blankReasoning =
      isDict(block) &&
      (block.type === "reasoning" || block.type === "reasoning_content" || block.type === "thinking") &&
      reasoningTextOf(block).trim() === "";
    if (!blankReasoning) return true;
  }
  return false;
}

/** Whether content says anything beyond tool calls and blank text (reasoning, images and documents count). */
export function hasMeaningfulContent(content: unknown): boolean {
  if (typeof content === "string") return !isBlankText(content);
  if (!Array.isArray(content)) return false;
  for (const block of content) if (!isCallBlock(block) && !isBlankTextBlock(block)) return true;
  return false;
}
