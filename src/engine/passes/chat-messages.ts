/**
 * Pass "chat-messages" (request shaping): a `ChatMessage` (LangChain's `generic` message with a free `role`)
 * whose role the provider's adapter does not send as the turn it means. No adapter maps every role: ChatAnthropic
 * throws on any ChatMessage, ChatBedrockConverse sends every one as a user turn, ChatOpenAI sends the role as
 * it is (`human`, `ai` and unknown roles are refused, `tool` goes without a call id), Gemini takes the role as
 * its author name (`user` and `assistant` throw). The profile's `chatMessageRoles` says which roles stay.
 *
 * Every other one becomes the typed message its role means, keeping its id and content:
 * - `user` / `human` → HumanMessage; `assistant` / `ai` → AIMessage; `system` / `developer` → SystemMessage
 *   (the system-messages pass then places it);
 * - `tool` / `function`: a result without a call (it has no call id) → user text that keeps its content, as
 *   an orphan result becomes;
 * - any other role → user text under a label that names the role.
 *
 * It runs first at the request level, so every later pass judges the turns the adapter will send. Storage
 * (the structural level) keeps the user's ChatMessage as it is.
 */
import { labeledUserText, orphanResultAsUserMessage, typedMessageOf } from "../../messages/build";
import { findEach, rebuildingPass } from "../context";
import { keeps } from "../profiles";
import { quoteValue } from "../../values";

/** What a role means; undefined: a role no provider defines (sent as labeled user text). */
const ROLE_MEANING = new Map<string, "user" | "assistant" | "system" | "result" | "labeled">([
  ["user", "user"],
  ["human", "user"],
  ["assistant", "assistant"],
  ["ai", "assistant"],
  ["system", "system"],
  ["developer", "system"],
  ["tool", "result"],
  ["function", "result"],
]);

export const chatMessagesPass = rebuildingPass({
  structural: false,
  clean: ({ profile }) =>
    profile.chatMessageRoles
      ? { visit: (m) => m.type !== "generic" || keeps(profile.chatMessageRoles, m.role) }
      : undefined,
  classify: (messages, { profile }) =>
    findEach(messages, (m, index) => {
      const role = (m as { role?: unknown }).role;
      if (m.type === "generic" && !keeps(profile.chatMessageRoles, role))
        return { index, role, conversion: ROLE_MEANING.get(role as string) ?? "labeled" };
    }),
  issues: (f) => [
    [
      "chat_message_role",
      "converted_message",
      `ChatMessage with role ${quoteValue(f.role)}, which the provider's adapter does not send as that turn`,
    ],
  ],
  rebuild: (message, { conversion: to, role }) =>
    to === "result"
      ? orphanResultAsUserMessage(message, undefined)
      : to === "labeled"
        ? labeledUserText(message, `[Message with role ${quoteValue(role)}]`, "chat_message_role")
        : typedMessageOf(message, to),
});
