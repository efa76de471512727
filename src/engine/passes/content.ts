/**
 * Pass "content" (request shaping): what Anthropic (A9), Bedrock (B8, B9, B10) and Gemini reject in any message:
 * blank text blocks, assistant messages left with nothing to say, empty user messages, empty tool results.
 * Only blank things are removed; a tool result that is empty is filled, not dropped, so its call stays answered.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { rebuildMessage } from "../../messages/build";
import {
  forEachToolCallRef,
  hasMeaningfulContent,
  isBlankText,
  isBlankTextBlock,
  turnOf,
} from "../../messages/inspect";
import { findEach, rebuildingPass } from "../context";

/** Each fix: the problem it repairs and its action. */
const FIXES = {
  remove: ["empty_message", "removed_message"],
  strip_blank_blocks: ["blank_text_block", "removed_block"],
  blank_string: ["blank_text_block", "removed_block"],
  fill: ["empty_tool_result", "filled_empty_result"],
} as const;
type Fix = keyof typeof FIXES;

const hasId = (call: { id?: unknown } | null) => typeof call?.id === "string" && call.id !== "";

/** Whether an assistant message makes any call, in any location (the clean walk's case first: an id in tool_calls). */
function makesCalls(message: BaseMessage) {
  const calls = (message as { tool_calls?: unknown }).tool_calls;
  if (Array.isArray(calls) && calls.some(hasId)) return true;
  let found = false;
  forEachToolCallRef(message, (ref) => {
    if (ref.id !== undefined) found = true;
  });
  return found;
}

/**
 * Whether content may be blank: an array, or a string that is empty or starts with white space. A string that starts
 * with anything else is not blank, whatever its size.
 */
function mayBeBlank(content: unknown) {
  if (typeof content !== "string" || content.length === 0) return true;
  const c = content.charCodeAt(0);
  return c <= 32 || c === 0xa0 || c === 0xfeff;
}

/**
 * What a message needs, and why; undefined when the provider takes it as it is. The clean walk asks of every
 * message, so content that starts with something to say is answered before any helper is called.
 */
function contentFix(m: BaseMessage): [Fix, string] | undefined {
  const content = m.content;
  if (!mayBeBlank(content)) return;
  const type = m.type;
  const blankString = typeof content === "string" && isBlankText(content);
  const blankBlock = Array.isArray(content) && content.some(isBlankTextBlock);
  if (type === "ai") {
    const says = typeof content === "string" ? !blankString : hasMeaningfulContent(content, true);
    if (!says && !makesCalls(m)) return ["remove", "assistant message with no content and no calls"];
    if (blankBlock) return ["strip_blank_blocks", "blank text block in an assistant message"];
    if (blankString && (content as string).length)
      return ["blank_string", "assistant message whose text is only white space"];
  }
  const turn = type === "tool" ? "tool" : type === "human" ? "user" : type === "generic" ? turnOf(m) : undefined;
  if (turn !== "tool" && turn !== "user" && turn !== "assistant") return;
  const what = turn === "tool" ? "tool result" : `${type === "generic" ? "chat" : "user"} message`;
  if (blankString || (Array.isArray(content) && content.every(isBlankTextBlock)))
    return turn === "tool" ? ["fill", "tool result with empty content"] : ["remove", `${what} with no content`];
  return blankBlock ? ["strip_blank_blocks", `blank text block in a ${what}`] : undefined;
}

export const contentPass = rebuildingPass({
  structural: false,
  clean: ({ profile }) =>
    profile.nonEmptyContent ? { visit: (m) => contentFix(m as BaseMessage) === undefined } : undefined,
  classify: (messages, { profile }) =>
    profile.nonEmptyContent
      ? findEach(messages, (m, index) => {
          const fix = contentFix(m);
          return fix && { index, fix };
        })
      : [],
  issues: ({ fix: [fix, detail] }) => [[...FIXES[fix], detail]],
  // Only blank things go: blank text blocks (the content is blocks then), a blank string, an empty result filled.
  rebuild: (m, { fix: [fix] }) =>
    fix === "remove"
      ? undefined
      : rebuildMessage(m, {
          content:
            fix === "fill"
              ? "(the tool returned no output)"
              : fix === "blank_string"
                ? ""
                : (m.content as unknown[]).filter((b) => !isBlankTextBlock(b)),
        }),
});
