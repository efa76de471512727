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
import { callNamed, rebuildingPass, type FindContext } from "../context";
import { loopOpenedWithUnsentReasoning } from "../../messages/exchanges";
import { toolBlocksAsText } from "../profiles";

/** Why calls and results travel as text: the problem they are, and where. */
type Why = [problem: "tool_blocks_without_tools" | "unsupported_block", where: string];
const NO_TOOLS: Why = ["tool_blocks_without_tools", "in a request that carries no tools"];
const UNSENT_REASONING: Why = ["unsupported_block", "inside a tool loop whose reasoning the adapter drops"];

/** The calls and results that travel as text (none when they need not). */
function classify(messages: readonly BaseMessage[], { profile, options }: FindContext) {
  const all = toolBlocksAsText(profile, options);
  const from = all ? 0 : profile.assistantBlocks === "converse" ? loopOpenedWithUnsentReasoning(messages) : -1;
  const why = all ? NO_TOOLS : UNSENT_REASONING;
  // A result (its call named by its id), or an assistant message's calls.
  const found = [];
  for (let index = from; from >= 0 && index < messages.length; index++) {
    const m = messages[index];
    if (isToolResult(m)) found.push({ index, result: true, calls: [{ id: resultIdOf(m) }], why });
    else if (isAssistant(m)) {
      const calls = distinctCalls(m, isClientCall);
      if (calls.length) found.push({ index, result: false, calls, why });
    }
  }
  return found;
}

export const toolsAsTextPass = rebuildingPass({
  structural: false,
  clean(w) {
    const all = w.toolsAsText;
    const converse = w.profile.assistantBlocks === "converse";
    if (!all && !converse) return;
    return {
      visit: all ? (m) => m.type !== "tool" && !(m.type === "ai" && m.tool_calls?.length > 0) : undefined,
      end: () => !converse || loopOpenedWithUnsentReasoning(w.messages as BaseMessage[]) === -1,
    };
  },
  classify,
  issues: ({ result, calls, why: [problem, where] }) =>
    calls.map((call) => [
      problem,
      "converted_to_text",
      `${result ? "tool result for" : "tool call"} ${callNamed(call)} ${where}`,
      call,
    ]),
  rebuild: (message, f) =>
    f.result
      ? toolResultAsUserText(message as ToolMessage, f.why[0])
      : clientCallsAsText(message as AIMessage, f.calls as DistinctCall[]),
});
