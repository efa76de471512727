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

const REASON = "tool_blocks_without_tools";

type Finding = { index: number; kind: "calls"; calls: DistinctCall[] } | { index: number; kind: "result" };

/** Why calls and results travel as text, and from which message on; undefined when they need not. */
interface Scope {
  from: number;
  problem: "tool_blocks_without_tools" | "unsupported_block";
  why: string;
}

function scopeOf(
  messages: readonly BaseMessage[],
  profile: ProviderProfile,
  options: { toolsInRequest: boolean },
): Scope | undefined {
  if (toolBlocksAsText(profile, options)) return { from: 0, problem: REASON, why: "the request carries no tools" };
  if (profile.assistantBlocks !== "converse") return undefined;
  const from = loopOpenedWithUnsentReasoning(messages);
  return from === -1
    ? undefined
    : { from, problem: "unsupported_block", why: "the open tool loop's reasoning is dropped by the adapter" };
}

function classify(messages: readonly BaseMessage[], from: number): Finding[] {
  const found: Finding[] = [];
  for (let index = from; index < messages.length; index++) {
    const m = messages[index];
    if (isToolResult(m)) found.push({ index, kind: "result" });
    else if (isAssistant(m)) {
      const calls = distinctCalls(m, isClientCall);
      if (calls.length > 0) found.push({ index, kind: "calls", calls });
    }
  }
  return found;
}

const named = (call: { id?: string; name?: string }) =>
  `${call.id ?? "(no id)"}${call.name ? ` to "${call.name}"` : ""}`;

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
    const scope = scopeOf(messages, ctx.profile, ctx.options);
    if (scope === undefined) return [];
    const problems: ToolCallProblem[] = [];
    const where =
      scope.problem === REASON
        ? "in a request that carries no tools"
        : "inside a tool loop whose reasoning the adapter drops";
    for (const f of classify(messages, scope.from)) {
      if (f.kind === "result") {
        const id = resultIdOf(messages[f.index] as ToolMessage);
        problems.push(problem(ctx, scope.problem, f.index, `tool result for ${id ?? "(no id)"} ${where}`, { id }));
      } else
        for (const call of f.calls)
          problems.push(
            problem(ctx, scope.problem, f.index, `tool call ${named(call)} ${where}`, { id: call.id, name: call.name }),
          );
    }
    return problems;
  },
  repair(messages, ctx: PassContext) {
    const scope = scopeOf(messages, ctx.profile, ctx.options);
    if (scope === undefined) return messages;
    return rebuildAt(messages, classify(messages, scope.from), ctx, (message, f) => {
      if (f.kind === "result") {
        const id = resultIdOf(message as ToolMessage);
        const detail = `result of ${id ?? "(no id)"} turned into user text (${scope.why})`;
        ctx.report(message, f.index, scope.problem, "converted_to_text", detail, { id });
        return toolResultAsUserText(message as ToolMessage, scope.problem);
      }
      for (const call of f.calls)
        ctx.report(
          message,
          f.index,
          scope.problem,
          "converted_to_text",
          `call ${named(call)} turned into assistant text (${scope.why})`,
          call,
        );
      return clientCallsAsText(message as AIMessage, f.calls);
    });
  },
};
