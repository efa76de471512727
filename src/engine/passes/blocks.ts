/**
 * Pass "blocks" (request shaping): Anthropic-only content blocks in assistant messages, for every provider but
 * Anthropic (A12). A thread started on ChatAnthropic carries them; ChatBedrockConverse throws on them
 * ("Unsupported content block type: thinking") and OpenAI rejects them.
 * - `thinking` / `redacted_thinking`: private reasoning, signed for Anthropic only; dropped (ChatOpenAI drops
 *   `thinking` itself). Bedrock's own `reasoning_content` and v1 `reasoning` blocks are not touched.
 * - `server_tool_use` and its inline `*_tool_result` (web search, code execution): real work with a real
 *   result, turned into text that says what was called and what came back, so nothing is lost.
 * On Anthropic every block stays where it is: a thinking block keeps its place before the tool use it
 * belongs to (A10), except what Claude would refuse:
 * - a server tool exchange whose result ChatAnthropic does not re-send (web fetch, code execution: A13) becomes
 *   the same text as elsewhere, so the call does not go alone;
 * - a thinking block a cancelled stream left without its signature (A14) becomes text (its reasoning kept); on
 *   Bedrock the same for a `reasoning` block without signature (B12). A `redacted_thinking` without data holds
 *   nothing to keep and is dropped. A Bedrock `reasoning` block, which ChatAnthropic drops, becomes text too.
 * For ChatBedrockConverse (profile `assistantBlocks: "converse"`) any other block it cannot read (a type another
 * adapter left, a block without a type) becomes text: its own `text` when it has one, else a short description
 * with its JSON, so the request is sent and nothing the block said is lost from what the model reads.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { rebuildMessage, reasoningAsText, serverToolBlockAsText } from "../../messages/build";
import {
  callBlockFormatOf,
  isAssistant,
  isConverseAssistantBlock,
  isDict,
  isGeminiAssistantBlock,
  isServerToolResultBlock,
  isThinkingBlock,
  isUnsignedReasoning,
  isV1Message,
  type Dict,
} from "../../messages/inspect";
import { keeps, type ProviderProfile } from "../profiles";
import { findEach, problem, rebuildingPass, type FindContext, type Issue } from "../context";
import { safeJson } from "../../values";

/**
 * What the adapter needs done with a block (dropped, a server tool as text, unsigned reasoning or an unreadable
 * block as text), as the repair does it: its action, what the blocks are (after their count), the block made text.
 */
const REPAIRED = {
  drop: ["removed_block", "thinking block(s) only Anthropic accepts", () => undefined],
  convert: ["converted_block", "server tool block(s) the adapter cannot send as they are", serverToolBlockAsText],
  unsigned: [
    "converted_block",
    "reasoning block(s) without their signature (a cut stream)",
    (b) => reasoningAsText(b, "Reasoning whose signature was never received (the stream was cut), kept as text"),
  ],
  unreadable: ["converted_block", "block(s) of a type the provider's adapter does not read", unreadableAsText],
} satisfies Record<string, [action: "removed_block" | "converted_block", what: string, asText: (b: Dict) => unknown]>;
type Verdict = keyof typeof REPAIRED;

const NO_IDS: ReadonlySet<unknown> = new Set();

const isForeignReasoning = (block: unknown) =>
  isDict(block) && (block.type === "reasoning" || block.type === "reasoning_content");

/** Ids of the server tools whose inline result the adapter leaves out (A13): their whole exchange goes as text. */
function unsentServerIds(content: unknown[], profile: ProviderProfile) {
  if (!profile.anthropicBlocks || profile.serverToolResults === undefined) return NO_IDS;
  let ids: Set<unknown> | undefined;
  for (const b of content)
    if (isServerToolResultBlock(b) && !keeps(profile.serverToolResults, b.type)) (ids ??= new Set()).add(b.tool_use_id);
  return ids ?? NO_IDS;
}

/**
 * What the provider's adapter needs done with one assistant block (undefined: send it as it is). `unsent`: the
 * message's {@link unsentServerIds}, for its `server_tool_use` blocks; the clean walk leaves it out, since an
 * unsent exchange always has its result block, judged on its own.
 */
function unsupportedBlock(block: unknown, profile: ProviderProfile, v1: boolean, unsent = NO_IDS) {
  if (!profile.anthropicBlocks) {
    if (isThinkingBlock(block)) return "drop";
    if (isDict(block) && (block.type === "server_tool_use" || isServerToolResultBlock(block))) return "convert";
  } else if (isServerToolResultBlock(block)) {
    if (!keeps(profile.serverToolResults, block.type) || unsent.has(block.tool_use_id)) return "convert";
  } else if (unsent.size > 0 && isDict(block) && block.type === "server_tool_use" && unsent.has(block.id))
    return "convert";
  // Anthropic reads its own thinking blocks; ChatBedrockConverse the `reasoning` ones (thinking is dropped above).
  // ChatAnthropic drops @langchain/aws reasoning blocks (and may leave the message empty): their text stays as text.
  if (
    profile.signedReasoning &&
    ((isUnsignedReasoning(block) && (!profile.anthropicBlocks || isThinkingBlock(block))) ||
      (profile.anthropicBlocks && isForeignReasoning(block)))
  )
    return "unsigned";
  // Call blocks are the call-locations pass's; bare strings and nulls the shape pass's; v1 messages take
  // another path through the adapter.
  const only = profile.assistantBlocks;
  if (!v1 && only !== "any" && isDict(block) && !callBlockFormatOf(block))
    return (only === "converse" ? isConverseAssistantBlock : isGeminiAssistantBlock)(block) ? undefined : "unreadable";
}

const classifyBlocks = (messages: readonly BaseMessage[], { profile }: FindContext) =>
  findEach(messages, (m, index) => {
    if (!isAssistant(m) || !Array.isArray(m.content)) return;
    const unsent = unsentServerIds(m.content, profile);
    const counts = { drop: 0, convert: 0, unsigned: 0, unreadable: 0 };
    let any = false;
    for (const block of m.content) {
      const verdict = unsupportedBlock(block, profile, isV1Message(m), unsent);
      if (verdict) any = counts[verdict]++ >= 0;
    }
    if (any) return { index, counts };
  });

/** A block the adapter cannot read, as text: its own text, or what it is and its JSON (at most 2,000 characters). */
function unreadableAsText(block: Dict) {
  // Another provider's reasoning (a Bedrock `reasoning` block on Gemini): its text, never its signature.
  if (isForeignReasoning(block)) return reasoningAsText(block, "Reasoning from another model, kept as text");
  if (typeof block.text === "string" && block.text.trim() !== "") return { type: "text", text: block.text };
  const kind = typeof block.type === "string" && block.type !== "" ? `"${block.type.slice(0, 100)}"` : "without a type";
  return {
    type: "text",
    text: `[Content block ${kind} that this provider does not accept: ${safeJson(block, 2_000)}]`,
  };
}

/** The blocks of each verdict the message holds, with their count. */
const issuesOf = ({ counts }: { index: number; counts: Record<Verdict, number> }): Issue[] =>
  (Object.keys(counts) as Verdict[])
    .filter((v) => counts[v] > 0)
    .map((v) => ["unsupported_block", REPAIRED[v][0], `${counts[v]} ${REPAIRED[v][1]}`]);

export const blocksPass = rebuildingPass({
  structural: false,
  // Only when the profile has anything to look for (nothing at the structural level, where the pass does not run).
  clean: ({ profile }) =>
    !profile.anthropicBlocks ||
    profile.assistantBlocks !== "any" ||
    profile.signedReasoning ||
    profile.serverToolResults !== undefined
      ? {
          ai(m) {
            const content = m.content;
            if (typeof content === "string") return true;
            const v1 = isV1Message(m);
            for (let i = 0; i < content.length; i++) {
              const b = content[i];
              if (b.type !== "text" && !callBlockFormatOf(b) && unsupportedBlock(b, profile, v1) !== undefined)
                return false;
            }
            return true;
          },
        }
      : undefined,
  classify: classifyBlocks,
  // One problem per message, naming every kind of block it holds; one repair per kind.
  find: (messages, ctx) =>
    classifyBlocks(messages, ctx).map((f) =>
      problem(
        ctx,
        "unsupported_block",
        f.index,
        `assistant message with ${issuesOf(f)
          .map((i) => i[2])
          .join(", ")}`,
      ),
    ),
  issues: issuesOf,
  rebuild(message, _, { profile }) {
    const v1 = isV1Message(message);
    const unsent = unsentServerIds(message.content as unknown[], profile);
    return rebuildMessage(message, {
      content: (message.content as unknown[]).flatMap((block) => {
        const verdict = unsupportedBlock(block, profile, v1, unsent);
        return verdict ? (REPAIRED[verdict][2](block as Dict) ?? []) : [block];
      }),
    });
  },
});
