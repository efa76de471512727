/**
 * Render a history as plain text for a summarizer prompt, keeping tool-call identity. core's
 * `getBufferString` prints a result as `Tool: <name>, <content>` with no call id: with two calls to the same
 * tool, which result answers which is lost. Here every call keeps its id, name and arguments,
 * the calls of one assistant message stay grouped as the model emitted them, and every result names the call
 * id (and tool) it answers.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { boundary } from "../errors";
import {
  callArgsText,
  distinctCalls,
  isAssistant,
  isToolResult,
  resultIdOf,
  type ToolCallLocation,
  isDict,
  type Dict,
} from "../messages/inspect";
import { readMessageList } from "./input";

/** Content block types that carry a tool call: rendered as calls, not as text. */
const CALL_BLOCK_TYPES = new Set(["tool_use", "tool_call", "server_tool_use", "input_json_delta", "tool_call_chunk"]);
/** Blocks that are not conversation text (private reasoning, signatures). */
const SILENT_BLOCK_TYPES = new Set(["thinking", "redacted_thinking", "reasoning"]);

/** One tool call as shown in the transcript. */
export interface TranscriptCall {
  id: string | undefined;
  name: string | undefined;
  /** The arguments as JSON text (or the raw string when they did not parse). */
  args: string;
  location: ToolCallLocation;
}

/**
 * Render `messages` as text, one entry per message:
 * ```
 * User: weather in Paris and Rome?
 * Assistant called 2 tools in parallel:
 *   - get_weather [id call_1] {"city":"Paris"}
 *   - get_weather [id call_2] {"city":"Rome"}
 * Tool result for call_2 (get_weather): 18C
 * Tool result for call_1 (get_weather), error: timeout
 * ```
 * Calls are read from every location an adapter sends (deduplicated by id). A call without an id is shown
 * as `[no id]`; a result without an id, or whose id matches no earlier call, says so.
 */
export const messagesToTranscript = boundary("messagesToTranscript", (messages: readonly BaseMessage[]): string =>
  transcriptOf(readMessageList(messages, "messagesToTranscript")),
);

/** {@link messagesToTranscript} of messages already read. */
export function transcriptOf(messages: readonly BaseMessage[]): string {
  const callNames = new Map<string, string | undefined>();
  return messages.map((message) => renderMessage(message, callNames)).join("\n");
}

function renderMessage(message: BaseMessage, callNames: Map<string, string | undefined>): string {
  if (isAssistant(message)) {
    const calls = transcriptCalls(message);
    for (const call of calls) if (call.id !== undefined) callNames.set(call.id, call.name);
    return renderAssistant(contentText(message.content), calls);
  }
  if (isToolResult(message)) return renderResult(message, callNames);
  return `${roleLabel(message)}: ${contentText(message.content)}`;
}

function roleLabel(message: BaseMessage): string {
  const type = message.getType();
  if (type === "human") return "User";
  if (type === "system") return "System";
  if (type === "generic") {
    const role = (message as unknown as Dict).role;
    return typeof role === "string" && role !== "" ? role : "Message";
  }
  return type.charAt(0).toUpperCase() + type.slice(1);
}

function renderAssistant(text: string, calls: TranscriptCall[]): string {
  const lines: string[] = [];
  if (text !== "" || calls.length === 0) lines.push(`Assistant: ${text}`);
  if (calls.length === 1) lines.push(`Assistant called 1 tool:`);
  else if (calls.length > 1) lines.push(`Assistant called ${calls.length} tools in parallel:`);
  for (const call of calls)
    lines.push(`  - ${call.name ?? "(unnamed tool)"} [${call.id ? `id ${call.id}` : "no id"}] ${call.args}`);
  return lines.join("\n");
}

function renderResult(message: BaseMessage, callNames: Map<string, string | undefined>): string {
  const id = resultIdOf(message as never);
  const ownName = typeof message.name === "string" && message.name !== "" ? message.name : undefined;
  const status = (message as unknown as Dict).status === "error" ? ", error" : "";
  const text = contentText(message.content);
  if (id === undefined) return `Tool result with no call id${ownName ? ` (${ownName})` : ""}${status}: ${text}`;
  if (!callNames.has(id))
    return `Tool result for ${id}${ownName ? ` (${ownName})` : ""}, no matching call${status}: ${text}`;
  const name = callNames.get(id) ?? ownName;
  return `Tool result for ${id}${name ? ` (${name})` : ""}${status}: ${text}`;
}

/**
 * The tool calls of an assistant message, in the order the model emitted them (`tool_calls` first), one per
 * id: the same call mirrored in several locations (a `tool_use` block and `tool_calls`) is shown once.
 */
export function transcriptCalls(message: BaseMessage): TranscriptCall[] {
  return distinctCalls(message).map((call) => ({
    ...call,
    args: callArgsText(call.args),
  }));
}

/** The conversation text of a message: text blocks joined; tool-call blocks omitted (rendered as calls). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map(blockText)
    .filter((text) => text !== "")
    .join("\n");
}

function blockText(block: unknown): string {
  if (typeof block === "string") return block;
  if (!isDict(block)) return "";
  const type = typeof block.type === "string" ? block.type : undefined;
  if (type === undefined) return isDict(block.toolUse) ? "" : typeof block.text === "string" ? block.text : "";
  if (CALL_BLOCK_TYPES.has(type) || SILENT_BLOCK_TYPES.has(type)) return "";
  if (typeof block.text === "string") return block.text;
  if (type === "image" || type === "image_url") return "[image]";
  return `[${type}]`;
}
