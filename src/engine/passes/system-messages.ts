/**
 * Pass "system-messages" (request shaping): a system message inside the conversation, after the first
 * non-system message. Leading system messages are lifted out by every adapter and never touched.
 * - Anthropic (A11, Opus 4.8 and later; @langchain/anthropic sends a later SystemMessage in place): accepted
 *   only right after a user turn (tool results are one) or an assistant turn that ends on a server tool call,
 *   never two in a row, and only last or followed by an assistant turn. One placed anywhere else is turned
 *   into user text. With `systemMessages: "user-text"` (models before Opus 4.8 accept none) every one is.
 * - Gemini (@langchain/google-genai accepts only a first system message) and strict: every one becomes user
 *   text. OpenAI takes them anywhere; @langchain/aws lifts every one into `system`: untouched there.
 * The text is kept word for word, under a label that says it was a system message.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { labeledUserText } from "../../messages/build";
import { turnOf, type Turn } from "../../messages/inspect";
import { findEach, rebuildingPass } from "../context";

/** Whether an assistant message's content ends on a server tool call (after which Anthropic accepts a system message). */
function endsOnServerTool(message: BaseMessage) {
  if (message.type !== "ai") return false;
  const content = message.content;
  return Array.isArray(content) && content.at(-1)?.type === "server_tool_use";
}

/**
 * Judges messages left to right, on the list as it will be (the pass and the clean walk alike): true for a system
 * message to turn into user text.
 */
function misplacedSystem(mode: "placed" | "none", list: { messages: readonly unknown[] }) {
  let prev: Turn; // the last turn before this message, in the list as repaired so far
  let prevMessage: BaseMessage | undefined;
  let prevWasKeptSystem = false;
  const reset = () => {
    prev = prevMessage = undefined;
    prevWasKeptSystem = false;
  };
  const misplaced = (m: BaseMessage, i: number, turn = turnOf(m)) => {
    if (turn !== "system") {
      if (turn !== undefined) {
        prev = turn;
        prevMessage = m;
      }
      prevWasKeptSystem = false;
      return false;
    }
    if (prev === undefined) return false; // a leading system message
    const placed =
      mode === "placed" &&
      !prevWasKeptSystem &&
      (prev === "user" || prev === "tool" || (prev === "assistant" && endsOnServerTool(prevMessage!))) &&
      (i === list.messages.length - 1 || turnOf(list.messages[i + 1]) === "assistant");
    prevWasKeptSystem = placed;
    if (placed) return false;
    prev = "user"; // it becomes a user turn
    prevMessage = m;
    return true;
  };
  return { misplaced, reset };
}

export const systemMessagesPass = rebuildingPass({
  structural: false,
  clean(w) {
    const mode = w.profile.systemInConversation;
    if (mode === "any") return;
    const { misplaced, reset } = misplacedSystem(mode, w);
    return {
      start: reset,
      visit: (m, i, turn) => !misplaced(m as BaseMessage, i, turn),
    };
  },
  // The system messages to turn into user text.
  classify(messages, { profile: { systemInConversation: mode } }) {
    if (mode === "any") return [];
    const { misplaced } = misplacedSystem(mode, { messages });
    return findEach(messages, (m, index) => misplaced(m, index) && { index });
  },
  issues: () => [
    [
      "misplaced_system_message",
      "converted_message",
      "a system message inside the conversation where the provider does not accept one",
    ],
  ],
  rebuild: (message) => labeledUserText(message, "[System message]", "misplaced_system_message"),
});
