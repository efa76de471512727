/**
 * Pass "tools-as-text" (request shaping): the request carries no tools (`toolsInRequest: false`) and the provider
 * refuses tool blocks then. Bedrock B3: "The toolConfig field must be defined when using toolUse and toolResult
 * content blocks", which ChatBedrockConverse meets whenever no tools are bound (a summarizer, a title generator,
 * a final-answer node, structured output without tools) on a thread that used tools.
 * - Every call leaves every location (`tool_calls`, raw `additional_kwargs`, call content blocks,
 *   `invalid_tool_calls`, Responses output) and becomes assistant text that names the tool, its id and its
 *   arguments, after the message's own text.
 * - Every tool result becomes a user message that names the call it answers and keeps its content
 *   (`toolResultAsUserText`; images and files stay blocks).
 * Nothing is lost: the model reads the whole exchange as text. Runs after pairing (each result sits right after
 * its call) and before content and turn-order, which merge the user messages this makes into one turn.
 * Anthropic server tools are not client calls: the blocks pass turns them into text on these providers.
 */
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { MessageContent } from "@langchain/core/messages";
import { rebuildAssistant, rewriteToolCalls, toolResultAsUserText } from "../../messages/build";
import { callArgsText, distinctCalls, isAssistant, isBlankText, isToolResult, resultIdOf, type DistinctCall, type ToolCallRef } from "../../messages/inspect";
import { problem, sameOrNew, type FindContext, type PassContext, type RepairPass } from "../context";
import { toolBlocksAsText } from "../profiles";
import type { ToolCallProblem } from "../../types";

const REASON = "tool_blocks_without_tools";

/** A client call: answered by a ToolMessage (server tools live inside their own message). */
const isClientCall = (ref: ToolCallRef) => ref.location !== "content.server_tool_use";

function describeCall(call: DistinctCall): string {
  return `[Called ${call.name ? `tool "${call.name}"` : "a tool"} (call ${call.id ?? "without an id"}) with arguments ${callArgsText(call.args)}]`;
}

/** The message's own content, then one line per call. */
function withCallText(content: MessageContent, calls: DistinctCall[]): MessageContent {
  const text = calls.map(describeCall).join("\n");
  if (typeof content === "string") return isBlankText(content) ? text : `${content}\n\n${text}`;
  return [...content, { type: "text", text }] as MessageContent;
}

type Finding = { index: number; kind: "calls"; calls: DistinctCall[] } | { index: number; kind: "result" };

function classify(messages: readonly BaseMessage[]): Finding[] {
  const found: Finding[] = [];
  for (let index = 0; index < messages.length; index++) {
    const m = messages[index];
    if (isToolResult(m)) found.push({ index, kind: "result" });
    else if (isAssistant(m)) {
      const calls = distinctCalls(m, isClientCall);
      if (calls.length > 0) found.push({ index, kind: "calls", calls });
    }
  }
  return found;
}

const named = (call: { id?: string; name?: string }) => `${call.id ?? "(no id)"}${call.name ? ` to "${call.name}"` : ""}`;

export const toolsAsTextPass: RepairPass = {
  name: "tools-as-text",
  structural: false,
  find(messages, ctx: FindContext): ToolCallProblem[] {
    if (!toolBlocksAsText(ctx.profile, ctx.options)) return [];
    const problems: ToolCallProblem[] = [];
    for (const f of classify(messages)) {
      if (f.kind === "result") {
        const id = resultIdOf(messages[f.index] as ToolMessage);
        problems.push(problem(ctx, REASON, f.index, `tool result for ${id ?? "(no id)"} in a request that carries no tools`, { id }));
      } else
        for (const call of f.calls)
          problems.push(problem(ctx, REASON, f.index, `tool call ${named(call)} in a request that carries no tools`, { id: call.id, name: call.name }));
    }
    return problems;
  },
  repair(messages, ctx: PassContext) {
    if (!toolBlocksAsText(ctx.profile, ctx.options)) return messages;
    const found = classify(messages);
    if (found.length === 0) return messages;
    const out = messages.slice();
    for (const f of found) {
      const message = messages[f.index];
      if (f.kind === "result") {
        const id = resultIdOf(message as ToolMessage);
        out[f.index] = toolResultAsUserText(message as ToolMessage, REASON);
        ctx.report({ problem: REASON, action: "converted_to_text", toolCallId: id, detail: `result of ${id ?? "(no id)"} turned into user text (the request carries no tools)` }, message, f.index);
      } else {
        const stripped = rewriteToolCalls(message as AIMessage, (ref) => (isClientCall(ref) ? "drop" : undefined));
        out[f.index] = rebuildAssistant(stripped, { content: withCallText(stripped.content as MessageContent, f.calls) });
        for (const call of f.calls)
          ctx.report(
            { problem: REASON, action: "converted_to_text", toolCallId: call.id, toolName: call.name, detail: `call ${named(call)} turned into assistant text (the request carries no tools)` },
            message,
            f.index,
          );
      }
      ctx.derive(message, out[f.index]);
    }
    return sameOrNew(messages, out);
  },
};
