/**
 * Pass "content" (request shaping): what Anthropic (A9), Bedrock (B8, B9, B10) and Gemini reject in any message:
 * blank text blocks, assistant messages left with nothing to say, empty user messages, empty tool results.
 * Only blank things are removed; a tool result that is empty is filled, not dropped, so its call stays answered.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { rebuildMessage } from "../../messages/build";
import { forEachToolCallRef, isBlankText, isBlankTextBlock, saysSomethingToSend, turnOf } from "../../messages/inspect";
import { problem, sameOrNew, type FindContext, type PassContext, type RepairPass } from "../context";
import type { ToolCallProblem, ToolCallProblemKind } from "../../types";

const EMPTY_RESULT_TEXT = "(the tool returned no output)";

type Fix = "remove" | "strip_blank_blocks" | "blank_string" | "fill";

interface ContentFinding {
  index: number;
  kind: Extract<ToolCallProblemKind, "empty_message" | "blank_text_block" | "empty_tool_result">;
  fix: Fix;
  detail: string;
}

const isEmptyContent = (content: unknown) =>
  content === undefined ||
  content === null ||
  (typeof content === "string" ? isBlankText(content) : Array.isArray(content) && content.every(isBlankTextBlock));

/** Whether an assistant message makes any call, in any location (stops at the first). */
function makesCalls(message: BaseMessage): boolean {
  // The common case first: a call with an id in tool_calls.
  const calls = (message as { tool_calls?: unknown }).tool_calls;
  if (Array.isArray(calls))
    for (let i = 0; i < calls.length; i++) {
      const id = (calls[i] as { id?: unknown } | null)?.id;
      if (typeof id === "string" && id !== "") return true;
    }
  let found = false;
  forEachToolCallRef(message, (ref) => {
    if (ref.id !== undefined) found = true;
  });
  return found;
}

function classifyContent(messages: readonly BaseMessage[]): ContentFinding[] {
  const found: ContentFinding[] = [];
  for (let index = 0; index < messages.length; index++) {
    const m = messages[index];
    const content = m.content as unknown;
    const hasBlankBlock = Array.isArray(content) && content.some(isBlankTextBlock);
    const turn = turnOf(m);
    if (turn === "assistant" && m.type === "ai") {
      if (!saysSomethingToSend(content) && !makesCalls(m))
        found.push({
          index,
          kind: "empty_message",
          fix: "remove",
          detail: "assistant message with no content and no calls",
        });
      else if (hasBlankBlock)
        found.push({
          index,
          kind: "blank_text_block",
          fix: "strip_blank_blocks",
          detail: "blank text block in an assistant message",
        });
      else if (typeof content === "string" && content.length > 0 && isBlankText(content))
        found.push({
          index,
          kind: "blank_text_block",
          fix: "blank_string",
          detail: "assistant message whose text is only white space",
        });
    } else if (turn === "tool") {
      if (isEmptyContent(content))
        found.push({ index, kind: "empty_tool_result", fix: "fill", detail: "tool result with empty content" });
      else if (hasBlankBlock)
        found.push({
          index,
          kind: "blank_text_block",
          fix: "strip_blank_blocks",
          detail: "blank text block in a tool result",
        });
    } else if (turn === "user" || turn === "assistant") {
      if (isEmptyContent(content))
        found.push({
          index,
          kind: "empty_message",
          fix: "remove",
          detail: `${m.type === "generic" ? "chat" : "user"} message with no content`,
        });
      else if (hasBlankBlock)
        found.push({
          index,
          kind: "blank_text_block",
          fix: "strip_blank_blocks",
          detail: `blank text block in a ${m.type === "generic" ? "chat" : "user"} message`,
        });
    }
  }
  return found;
}

function applyFix(message: BaseMessage, fix: Fix): BaseMessage | undefined {
  if (fix === "remove") return undefined;
  const content = message.content as unknown;
  if (fix === "fill") return rebuildMessage(message, { content: EMPTY_RESULT_TEXT });
  if (fix === "blank_string") return rebuildMessage(message, { content: "" });
  return rebuildMessage(message, {
    content: Array.isArray(content) ? content.filter((b) => !isBlankTextBlock(b)) : content,
  });
}

const ACTION = {
  remove: "removed_message",
  strip_blank_blocks: "removed_block",
  blank_string: "removed_block",
  fill: "filled_empty_result",
} as const;

export const contentPass: RepairPass = {
  name: "content",
  structural: false,
  find(messages, ctx: FindContext): ToolCallProblem[] {
    if (!ctx.profile.nonEmptyContent) return [];
    return classifyContent(messages).map((f) => problem(ctx, f.kind, f.index, f.detail));
  },
  repair(messages, ctx: PassContext) {
    if (!ctx.profile.nonEmptyContent) return messages;
    const found = classifyContent(messages);
    if (found.length === 0) return messages;
    const fixes: (ContentFinding | undefined)[] = new Array(messages.length);
    for (const f of found) fixes[f.index] = f;
    const out: BaseMessage[] = [];
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      const f = fixes[i];
      if (!f) {
        out.push(m);
        continue;
      }
      const fixed = applyFix(m, f.fix);
      ctx.report(
        { problem: f.kind, action: ACTION[f.fix], detail: `${f.detail}: ${ACTION[f.fix].replace(/_/g, " ")}` },
        m,
        i,
      );
      if (fixed) {
        ctx.derive(m, fixed);
        out.push(fixed);
      }
    }
    return sameOrNew(messages, out);
  },
};
