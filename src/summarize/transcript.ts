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
  type DistinctCall,
  distinctCalls,
  isAssistant,
  isToolResult,
  resultIdOf,
} from "../messages/inspect";
import { isDict } from "../values";
import { readMessageList } from "./boundary";

/** Content block types that carry a tool call (rendered as calls, not as text), or are not conversation text. */
const SILENT_BLOCK_TYPES = new Set([
  ...["tool_use", "tool_call", "server_tool_use", "input_json_delta", "tool_call_chunk"],
  ...["thinking", "redacted_thinking", "reasoning"],
]);

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
  const text = contentText(message.content);
  if (isAssistant(message)) {
    const calls = transcriptCalls(message);
    const n = calls.length;
    return [
      ...(text !== "" || n === 0 ? [`Assistant: ${text}`] : []),
      ...(n === 0 ? [] : [n === 1 ? "Assistant called 1 tool:" : `Assistant called ${n} tools in parallel:`]),
      ...calls.map(({ id, name, args }) => {
        if (id !== undefined) callNames.set(id, name);
        return `  - ${name ?? "(unnamed tool)"} [${id ? `id ${id}` : "no id"}] ${args}`;
      }),
    ].join("\n");
  }
  const type = message.getType();
  if (!isToolResult(message)) {
    const role = (message as { role?: unknown }).role;
    const label =
      type === "generic"
        ? (typeof role === "string" && role) || "Message"
        : ({ human: "User", system: "System" }[type as string] ?? type.charAt(0).toUpperCase() + type.slice(1));
    return `${label}: ${text}`;
  }
  const id = resultIdOf(message);
  const matched = id !== undefined && callNames.has(id);
  const own = (typeof message.name === "string" && message.name) || undefined;
  const name = matched ? (callNames.get(id) ?? own) : own;
  const head = id === undefined ? "Tool result with no call id" : `Tool result for ${id}`;
  const tail = `${id === undefined || matched ? "" : ", no matching call"}${message.status === "error" ? ", error" : ""}`;
  return `${head}${name ? ` (${name})` : ""}${tail}: ${text}`;
}

/**
 * The tool calls of an assistant message, in the order the model emitted them (`tool_calls` first), one per
 * id: the same call mirrored in several locations (a `tool_use` block and `tool_calls`) is shown once. The
 * arguments as JSON text (or the raw string when they did not parse).
 */
export function transcriptCalls(message: BaseMessage): (DistinctCall & { args: string })[] {
  return distinctCalls(message).map((call) => ({ ...call, args: callArgsText(call.args) }));
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
  const text = typeof block.text === "string" ? block.text : "";
  if (typeof block.type !== "string") return isDict(block.toolUse) ? "" : text;
  if (SILENT_BLOCK_TYPES.has(block.type)) return "";
  if (typeof block.text === "string") return text;
  return block.type === "image" || block.type === "image_url" ? "[image]" : `[${block.type}]`;
}
