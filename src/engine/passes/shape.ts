/**
 * Pass "shape" (structural): message fields that adapters would crash on or silently mis-send. `tool_calls`
 * that is not an array, entries that are not objects, arguments that are not an object, malformed
 * `invalid_tool_calls`, numeric result ids, and content arrays holding bare strings (LangChain Python writes
 * them; the JS adapters throw), nulls or numbers. Rebuilt, never dropped: a bare string becomes a text block,
 * arguments that are not an object are kept under a key.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { rebuildMessage } from "../../messages/build";
import { isAssistant, isDict, isToolResult, type Dict } from "../../messages/inspect";
import { argsRecord, findEach, rebuildingPass } from "../context";
import { safeJson } from "../../values";

/** A content array holding something other than blocks (bare strings, nulls, numbers, nested arrays). */
function hasLooseItems(content: unknown) {
  if (!Array.isArray(content)) return false;
  for (let i = 0; i < content.length; i++) if (!isDict(content[i])) return true;
  return false;
}

/** Every item a block: strings and numbers become text blocks, empty slots go (they hold nothing). */
function asBlocks(content: unknown[]) {
  const out = [];
  for (const item of content) {
    if (isDict(item)) out.push(item);
    else if (["string", "number", "boolean", "bigint"].includes(typeof item))
      out.push({ type: "text", text: String(item) });
    else if (Array.isArray(item)) out.push({ type: "text", text: safeJson(item) });
  }
  return out;
}

/** Arguments as an object: a JSON object string is parsed, anything else is kept under `__raw_arguments`. */
const argsObject = (args: unknown) =>
  args === undefined || args === null ? {} : (argsRecord(args) ?? { __raw_arguments: args });

/** Whether some entry of a list is not an object (or, with `args`, has arguments that are not an object). */
function hasMalformedEntry(list: unknown[], args: boolean) {
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (!isDict(c) || (args && !isDict(c.args))) return true;
  }
  return false;
}

/**
 * What is malformed in a message, as a sentence; undefined when nothing is. The clean walk asks too, so the
 * shape rules live here only.
 */
function malformation(message: BaseMessage) {
  const m = message as unknown as Dict;
  const type = m.type;
  if (type === "ai") {
    const calls = m.tool_calls;
    const invalid = m.invalid_tool_calls;
    if (calls !== undefined && !Array.isArray(calls)) return "assistant message whose tool_calls is not an array";
    if (Array.isArray(calls) && hasMalformedEntry(calls, true))
      return "assistant message with a malformed tool_calls entry";
    if (invalid !== undefined && (!Array.isArray(invalid) || hasMalformedEntry(invalid, false)))
      return "assistant message with a malformed invalid_tool_calls entry";
  } else if (type === "tool" && typeof m.tool_call_id === "number") return "tool result whose tool_call_id is a number";
  if (!hasLooseItems(m.content)) return;
  const what = type === "ai" ? "assistant message" : type === "tool" ? "tool result" : "message";
  return `${what} whose content array holds items that are not blocks`;
}

/** The message rebuilt: content as blocks, calls as objects with object arguments, a numeric result id as text. */
function reshaped(message: BaseMessage) {
  const m = message as unknown as Dict;
  const content = hasLooseItems(m.content) ? asBlocks(m.content as unknown[]) : m.content;
  if (isToolResult(message)) {
    const id = m.tool_call_id;
    return rebuildMessage(message, { content, tool_call_id: typeof id === "number" ? String(id) : id });
  }
  if (!isAssistant(message)) return rebuildMessage(message, { content });
  const calls = m.tool_calls;
  const invalid = m.invalid_tool_calls;
  const list = calls === undefined || calls === null ? [] : Array.isArray(calls) ? calls : [calls];
  return rebuildMessage(message, {
    content,
    tool_calls: list.filter(isDict).map((c) => ({ ...c, args: argsObject(c.args), type: "tool_call" })),
    invalid_tool_calls: Array.isArray(invalid) ? invalid.filter(isDict) : [],
  });
}

export const shapePass = rebuildingPass({
  structural: true,
  clean: () => ({ visit: (m) => malformation(m as BaseMessage) === undefined }),
  // The malformed messages, by index (a loop: the repair path asks of every message).
  classify: (messages) =>
    findEach(messages, (m, index) => {
      const detail = malformation(m);
      return detail !== undefined && { index, detail };
    }),
  issues: (f) => [["malformed_message", "rebuilt_message", f.detail]],
  rebuild: reshaped,
});
