/**
 * Pass "shape" (structural): message fields that adapters would crash on or silently mis-send. `tool_calls`
 * that is not an array, entries that are not objects, arguments that are not an object, malformed
 * `invalid_tool_calls`, numeric result ids, and content arrays holding bare strings (LangChain Python writes
 * them; the JS adapters throw), nulls or numbers. Rebuilt, never dropped: a bare string becomes a text block,
 * arguments that are not an object are kept under a key.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { rebuildAssistant, rebuildMessage, rebuildToolResult } from "../../messages/build";
import { isAssistant, isDict, isToolResult, type Dict } from "../../messages/inspect";
import { problem, rebuildAt, type FindContext, type RepairPass } from "../context";
import type { ToolCallProblem } from "../../types";
import { safeJson } from "../../values";

interface ShapeFinding {
  index: number;
  detail: string;
  fix: () => BaseMessage;
}

/** A content array holding something other than blocks (bare strings, nulls, numbers, nested arrays). */
function hasLooseItems(content: unknown): boolean {
  if (!Array.isArray(content)) return false;
  for (let i = 0; i < content.length; i++) if (!isDict(content[i])) return true;
  return false;
}

/** Every item a block: strings and numbers become text blocks, empty slots go (they hold nothing). */
function asBlocks(content: unknown[]): Dict[] {
  const out: Dict[] = [];
  for (const item of content) {
    if (isDict(item)) out.push(item);
    else if (typeof item === "string") out.push({ type: "text", text: item });
    else if (typeof item === "number" || typeof item === "boolean" || typeof item === "bigint")
      out.push({ type: "text", text: String(item) });
    else if (Array.isArray(item)) out.push({ type: "text", text: safeJson(item) });
  }
  return out;
}

/** Arguments as an object: a JSON object string is parsed, anything else is kept under `__raw_arguments`. */
function argsObject(args: unknown): Dict {
  if (isDict(args)) return args;
  if (args === undefined || args === null) return {};
  if (typeof args === "string") {
    try {
      const parsed: unknown = JSON.parse(args);
      if (isDict(parsed)) return parsed;
    } catch {
      // not JSON: kept as it is below
    }
  }
  return { __raw_arguments: args };
}

/** Whether some entry of a list is not an object (or, with `args`, has arguments that are not an object). */
function hasMalformedEntry(list: unknown[], args: boolean): boolean {
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (!isDict(c) || (args && !isDict(c.args))) return true;
  }
  return false;
}

/** The message's content as blocks when it holds loose items, as it is otherwise. */
const contentOf = (m: Dict, looseContent: boolean): unknown =>
  looseContent ? asBlocks(m.content as unknown[]) : m.content;

function assistantFix(message: BaseMessage, looseContent: boolean): () => BaseMessage {
  return () => {
    const m = message as unknown as Dict;
    const calls = m.tool_calls;
    const invalid = m.invalid_tool_calls;
    const list = calls === undefined || calls === null ? [] : Array.isArray(calls) ? calls : [calls];
    return rebuildAssistant(message as never, {
      content: contentOf(m, looseContent),
      tool_calls: list.filter(isDict).map((c) => ({ ...c, args: argsObject(c.args), type: "tool_call" })),
      invalid_tool_calls: Array.isArray(invalid) ? invalid.filter(isDict) : [],
    });
  };
}

function classifyShape(messages: readonly BaseMessage[]): ShapeFinding[] {
  const findings: ShapeFinding[] = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    const m = message as unknown as Dict;
    const looseContent = hasLooseItems(m.content);
    if (isAssistant(message)) {
      const calls = m.tool_calls;
      const badList = calls !== undefined && !Array.isArray(calls);
      const badEntries = Array.isArray(calls) && hasMalformedEntry(calls, true);
      const invalid = m.invalid_tool_calls;
      const badInvalid = invalid !== undefined && (!Array.isArray(invalid) || hasMalformedEntry(invalid, false));
      if (!badList && !badEntries && !badInvalid && !looseContent) continue;
      findings.push({
        index,
        detail: badList
          ? "assistant message whose tool_calls is not an array"
          : badEntries
            ? "assistant message with a malformed tool_calls entry"
            : badInvalid
              ? "assistant message with a malformed invalid_tool_calls entry"
              : "assistant message whose content array holds items that are not blocks",
        fix: assistantFix(message, looseContent),
      });
    } else if (isToolResult(message)) {
      const numericId = typeof m.tool_call_id === "number";
      if (!numericId && !looseContent) continue;
      findings.push({
        index,
        detail: numericId
          ? "tool result whose tool_call_id is a number"
          : "tool result whose content array holds items that are not blocks",
        fix: () =>
          rebuildToolResult(message as never, {
            content: contentOf(m, looseContent),
            tool_call_id: numericId ? String(m.tool_call_id) : m.tool_call_id,
          }),
      });
    } else if (looseContent) {
      findings.push({
        index,
        detail: "message whose content array holds items that are not blocks",
        fix: () => rebuildMessage(message, { content: contentOf(m, looseContent) }),
      });
    }
  }
  return findings;
}

export const shapePass: RepairPass = {
  name: "shape",
  structural: true,
  find(messages, ctx: FindContext): ToolCallProblem[] {
    return classifyShape(messages).map((f) => problem(ctx, "malformed_message", f.index, f.detail));
  },
  repair(messages, ctx) {
    return rebuildAt(messages, classifyShape(messages), ctx, (message, f) => {
      ctx.report(
        { problem: "malformed_message", action: "rebuilt_message", detail: `${f.detail}: rebuilt` },
        message,
        f.index,
      );
      return f.fix();
    });
  },
};
