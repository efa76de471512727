/**
 * Pass "shape": message fields that adapters would crash on or silently mis-send. `tool_calls` that is not
 * an array, entries that are not objects, null content, numeric ids. Rebuilt, never dropped silently.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { rebuildAssistant, rebuildToolResult } from "../../messages/build";
import { isAssistant, isDict, isToolResult, type Dict } from "../../messages/inspect";
import { problem, sameOrNew, type FindContext, type RepairPass } from "../context";
import type { ToolCallProblem } from "../../types";


interface ShapeFinding {
  index: number;
  detail: string;
  fix: () => BaseMessage;
}

function classifyShape(messages: readonly BaseMessage[]): ShapeFinding[] {
  const findings: ShapeFinding[] = [];
  messages.forEach((message, index) => {
    const m = message as unknown as Dict;
    if (isAssistant(message)) {
      const calls = m.tool_calls;
      const badList = calls !== undefined && !Array.isArray(calls);
      const badEntries = Array.isArray(calls) && calls.some((c) => !isDict(c) || !isDict(c.args));
      const nullContent = m.content === null || m.content === undefined;
      const invalid = m.invalid_tool_calls;
      const badInvalid = invalid !== undefined && (!Array.isArray(invalid) || invalid.some((c) => !isDict(c)));
      if (!badList && !badEntries && !nullContent && !badInvalid) return;
      findings.push({
        index,
        detail: badList
          ? "assistant message whose tool_calls is not an array"
          : badEntries
            ? "assistant message with a malformed tool_calls entry"
            : nullContent
              ? "assistant message with null content"
              : "assistant message with a malformed invalid_tool_calls entry",
        fix: () => {
          const list = calls === undefined || calls === null ? [] : Array.isArray(calls) ? calls : [calls];
          return rebuildAssistant(message as never, {
            content: m.content ?? "",
            tool_calls: list.filter(isDict).map((c) => ({ ...c, args: isDict(c.args) ? c.args : {}, type: "tool_call" })),
            invalid_tool_calls: Array.isArray(invalid) ? invalid.filter(isDict) : [],
          });
        },
      });
    } else if (isToolResult(message)) {
      const numericId = typeof m.tool_call_id === "number";
      const nullContent = m.content === null || m.content === undefined;
      if (!numericId && !nullContent) return;
      findings.push({
        index,
        detail: numericId ? "tool result whose tool_call_id is a number" : "tool result with null content",
        fix: () =>
          rebuildToolResult(message as never, {
            content: m.content ?? "",
            tool_call_id: numericId ? String(m.tool_call_id) : m.tool_call_id,
          }),
      });
    }
  });
  return findings;
}

export const shapePass: RepairPass = {
  name: "shape",
  find(messages, ctx: FindContext): ToolCallProblem[] {
    return classifyShape(messages).map((f) => problem(ctx, "malformed_message", f.index, f.detail));
  },
  repair(messages, ctx) {
    const findings = classifyShape(messages);
    if (findings.length === 0) return messages;
    const out = messages.slice();
    for (const f of findings) {
      out[f.index] = f.fix();
      ctx.derive(messages[f.index], out[f.index]);
      ctx.report({ problem: "malformed_message", action: "rebuilt_message", detail: `${f.detail}: rebuilt` }, messages[f.index], f.index);
    }
    return sameOrNew(messages, out);
  },
};
