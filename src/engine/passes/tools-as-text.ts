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
 *
 * The same conversion closes the open tool loop of a Bedrock request whose opening message starts with reasoning
 * that ChatBedrockConverse drops (a signed block with empty text, Claude's omitted thinking): Claude with reasoning
 * on refuses a loop opened without it (B11), and no repair can sign reasoning. As text, the request ends on a user
 * turn and no loop is open; with reasoning off it is as valid.
 */
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import { clientCallsAsText, toolResultAsUserText } from "../../messages/build";
import {
  distinctCalls,
  isAssistant,
  isClientCall,
  isToolResult,
  resultIdOf,
  type DistinctCall,
} from "../../messages/inspect";
import { problem, rebuildAt, type FindContext, type PassContext, type RepairPass } from "../context";
import { loopOpenedWithUnsentReasoning } from "../../messages/exchanges";
import { toolBlocksAsText, type ProviderProfile } from "../profiles";
import type { ToolCallProblem } from "../../types";

/** A result (its call named by its id), or an assistant message's calls. */
type Finding = { index: number; result: boolean; calls: { id?: string; name?: string }[] };

/** The calls and results that travel as text, the problem they are and why; undefined when they need not. */
function classify(
  messages: readonly BaseMessage[],
  profile: ProviderProfile,
  options: { toolsInRequest: boolean },
): { problem: "tool_blocks_without_tools" | "unsupported_block"; where: string; found: Finding[] } | undefined {
  const all = toolBlocksAsText(profile, options);
  const from = all ? 0 : profile.assistantBlocks === "converse" ? loopOpenedWithUnsentReasoning(messages) : -1;
  if (from === -1) return undefined;
  const found: Finding[] = [];
  for (let index = from; index < messages.length; index++) {
    const m = messages[index];
    if (isToolResult(m)) found.push({ index, result: true, calls: [{ id: resultIdOf(m) }] });
    else if (isAssistant(m)) {
      const calls = distinctCalls(m, isClientCall);
      if (calls.length > 0) found.push({ index, result: false, calls });
    }
  }
  return all
    ? { problem: "tool_blocks_without_tools", where: "in a request that carries no tools", found }
    : { problem: "unsupported_block", where: "inside a tool loop whose reasoning the adapter drops", found };
}

const detail = (f: Finding, call: { id?: string; name?: string }, where: string) =>
  `${f.result ? "tool result for" : "tool call"} ${call.id ?? "(no id)"}${call.name ? ` to "${call.name}"` : ""} ${where}`;

export const toolsAsTextPass: RepairPass = {
  name: "tools-as-text",
  structural: false,
  clean(w) {
    const { toolsAsText: all } = w;
    const converse = w.profile.assistantBlocks === "converse";
    if (!all && !converse) return undefined;
    return {
      visit: all ? (m) => m.type !== "tool" && !(m.type === "ai" && m.tool_calls?.length > 0) : undefined,
      end: () => !converse || loopOpenedWithUnsentReasoning(w.messages as BaseMessage[]) === -1,
    };
  },
  find(messages, ctx: FindContext): ToolCallProblem[] {
    const scope = classify(messages, ctx.profile, ctx.options);
    return (scope?.found ?? []).flatMap((f) =>
      f.calls.map((call) => problem(ctx, scope!.problem, f.index, detail(f, call, scope!.where), call)),
    );
  },
  repair(messages, ctx: PassContext) {
    const scope = classify(messages, ctx.profile, ctx.options);
    if (scope === undefined) return messages;
    return rebuildAt(messages, scope.found, ctx, (message, f) => {
      for (const call of f.calls)
        ctx.report(message, f.index, scope.problem, "converted_to_text", detail(f, call, scope.where), call);
      return f.result
        ? toolResultAsUserText(message as ToolMessage, scope.problem)
        : clientCallsAsText(message as AIMessage, f.calls as DistinctCall[]);
    });
  },
};
