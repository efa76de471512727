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
  isAssistant,
  isDict,
  isMovableCallBlock,
  isServerToolResultBlock,
  isThinkingBlock,
  isUnsignedReasoning,
  isV1Message,
  type Dict,
} from "../../messages/inspect";
import { keepsServerResult, readsAssistantBlock, type ProviderProfile } from "../profiles";
import { problem, sameOrNew, type FindContext, type PassContext, type RepairPass } from "../context";
import type { ToolCallProblem } from "../../types";
import { safeJson } from "../../values";

/** Longest JSON an unreadable block keeps when it becomes text. */
const MAX_BLOCK_TEXT = 2_000;

interface BlockFinding {
  index: number;
  dropped: number;
  converted: number;
  unsigned: number;
  unreadable: number;
}

type Verdict = "drop" | "convert" | "unsigned" | "unreadable" | undefined;

const NO_IDS: ReadonlySet<unknown> = new Set();

const isForeignReasoning = (block: unknown): boolean =>
  isDict(block) && (block.type === "reasoning" || block.type === "reasoning_content");

/** Ids of the server tools whose inline result the adapter leaves out (A13): their whole exchange goes as text. */
function unsentServerIds(content: unknown[], profile: ProviderProfile): ReadonlySet<unknown> {
  if (!profile.anthropicBlocks || profile.serverToolResults === undefined) return NO_IDS;
  let ids: Set<unknown> | undefined;
  for (const b of content)
    if (isServerToolResultBlock(b) && !keepsServerResult(profile, b.type)) (ids ??= new Set()).add(b.tool_use_id);
  return ids ?? NO_IDS;
}

/** What the provider's adapter needs done with one assistant block (undefined: send it as it is). */
function unsupported(block: unknown, profile: ProviderProfile, v1: boolean, unsent: ReadonlySet<unknown>): Verdict {
  if (!profile.anthropicBlocks) {
    if (isThinkingBlock(block)) return "drop";
    if (isDict(block) && (block.type === "server_tool_use" || isServerToolResultBlock(block))) return "convert";
  } else if (unsent.size > 0 && isDict(block)) {
    const id =
      block.type === "server_tool_use" ? block.id : isServerToolResultBlock(block) ? block.tool_use_id : NO_IDS;
    if (unsent.has(id)) return "convert";
  }
  // Anthropic reads its own thinking blocks; ChatBedrockConverse the `reasoning` ones (thinking is dropped above).
  if (profile.signedReasoning && isUnsignedReasoning(block) && (!profile.anthropicBlocks || isThinkingBlock(block)))
    return "unsigned";
  // ChatAnthropic drops @langchain/aws reasoning blocks (and may leave the message empty): their text stays as text.
  if (profile.signedReasoning && profile.anthropicBlocks && isForeignReasoning(block)) return "unsigned";
  // Call blocks are the call-locations pass's; bare strings and nulls the shape pass's; v1 messages take
  // another path through the adapter.
  if (!v1 && isDict(block) && !isMovableCallBlock(block) && !readsAssistantBlock(profile, block)) return "unreadable";
  return undefined;
}

function classifyBlocks(messages: readonly BaseMessage[], profile: ProviderProfile): BlockFinding[] {
  const found: BlockFinding[] = [];
  for (let index = 0; index < messages.length; index++) {
    const m = messages[index];
    if (!isAssistant(m) || !Array.isArray(m.content)) continue;
    const v1 = isV1Message(m);
    const unsent = unsentServerIds(m.content, profile);
    let dropped = 0;
    let converted = 0;
    let unsigned = 0;
    let unreadable = 0;
    for (const block of m.content) {
      const verdict = unsupported(block, profile, v1, unsent);
      if (verdict === "drop") dropped++;
      else if (verdict === "convert") converted++;
      else if (verdict === "unsigned") unsigned++;
      else if (verdict === "unreadable") unreadable++;
    }
    if (dropped + converted + unsigned + unreadable > 0)
      found.push({ index, dropped, converted, unsigned, unreadable });
  }
  return found;
}

/** A block the adapter cannot read, as text: its own text, or what it is and its JSON. */
function unreadableAsText(block: Dict): Dict | undefined {
  // Another provider's reasoning (a Bedrock `reasoning` block on Gemini): its text, never its signature.
  if (isForeignReasoning(block)) return reasoningAsText(block, "Reasoning from another model, kept as text");
  if (typeof block.text === "string" && block.text.trim() !== "") return { type: "text", text: block.text };
  const kind = typeof block.type === "string" && block.type !== "" ? `"${block.type.slice(0, 100)}"` : "without a type";
  return {
    type: "text",
    text: `[Content block ${kind} that this provider does not accept: ${safeJson(block, MAX_BLOCK_TEXT)}]`,
  };
}

function convertBlocks(content: unknown[], profile: ProviderProfile, v1: boolean): unknown[] {
  const unsent = unsentServerIds(content, profile);
  const out: unknown[] = [];
  for (const block of content) {
    const verdict = unsupported(block, profile, v1, unsent);
    if (verdict === "drop") continue;
    if (verdict === "unsigned") {
      const text = reasoningAsText(
        block as Dict,
        "Reasoning whose signature was never received (the stream was cut), kept as text",
      );
      if (text) out.push(text);
      continue;
    }
    if (verdict === "unreadable") {
      const text = unreadableAsText(block as Dict);
      if (text) out.push(text);
      continue;
    }
    out.push(verdict === "convert" ? serverToolBlockAsText(block as Dict) : block);
  }
  return out;
}

function describe(f: BlockFinding, profile: ProviderProfile): string {
  const parts = [];
  if (f.dropped > 0) parts.push(`${f.dropped} thinking block(s)`);
  if (f.converted > 0) parts.push(`${f.converted} server tool block(s)`);
  const why = profile.anthropicBlocks ? "the adapter would send without their result" : "only Anthropic accepts";
  const anthropicOnly = parts.length > 0 ? `${parts.join(" and ")} that ${why}` : "";
  const unsigned = f.unsigned > 0 ? `${f.unsigned} reasoning block(s) without their signature` : "";
  const unreadable = f.unreadable > 0 ? `${f.unreadable} block(s) of a type the provider's adapter does not read` : "";
  return `assistant message with ${[anthropicOnly, unsigned, unreadable].filter((p) => p !== "").join(", and ")}`;
}

/** Whether the pass has anything to look for under `profile`. */
const appliesTo = (profile: ProviderProfile): boolean =>
  !profile.anthropicBlocks ||
  profile.assistantBlocks !== "any" ||
  profile.signedReasoning ||
  profile.serverToolResults !== undefined;

export const blocksPass: RepairPass = {
  name: "blocks",
  structural: false,
  find(messages, ctx: FindContext): ToolCallProblem[] {
    if (!appliesTo(ctx.profile)) return [];
    return classifyBlocks(messages, ctx.profile).map((f) =>
      problem(ctx, "unsupported_block", f.index, describe(f, ctx.profile)),
    );
  },
  repair(messages, ctx: PassContext) {
    if (!appliesTo(ctx.profile)) return messages;
    const found = classifyBlocks(messages, ctx.profile);
    if (found.length === 0) return messages;
    const out = messages.slice();
    for (const f of found) {
      const message = messages[f.index];
      out[f.index] = rebuildMessage(message, {
        content: convertBlocks(message.content as unknown[], ctx.profile, isV1Message(message)),
      });
      ctx.derive(message, out[f.index]);
      if (f.dropped > 0)
        ctx.report(
          {
            problem: "unsupported_block",
            action: "removed_block",
            detail: `${f.dropped} thinking block(s) removed (only Anthropic accepts them)`,
          },
          message,
          f.index,
        );
      if (f.converted > 0)
        ctx.report(
          {
            problem: "unsupported_block",
            action: "converted_block",
            detail: `${f.converted} server tool block(s) turned into text that keeps what was called and returned`,
          },
          message,
          f.index,
        );
      if (f.unsigned > 0)
        ctx.report(
          {
            problem: "unsupported_block",
            action: "converted_block",
            detail: `${f.unsigned} reasoning block(s) without signature (a cut stream) turned into text (its reasoning kept)`,
          },
          message,
          f.index,
        );
      if (f.unreadable > 0)
        ctx.report(
          {
            problem: "unsupported_block",
            action: "converted_block",
            detail: `${f.unreadable} block(s) the provider's adapter does not read turned into text (their text, or what they were)`,
          },
          message,
          f.index,
        );
    }
    return sameOrNew(messages, out);
  },
};
