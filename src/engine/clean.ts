/**
 * The clean path: one walk that decides whether any pass would find something, without building anything.
 * Most histories are clean most of the time, so this is what runs before every model call; it reads every
 * place a tool call id can live and never looks inside content beyond its first non-blank character.
 * It must agree with the passes' finders (a property test checks it does).
 */
import { BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import {
  forEachToolCallRef,
  hasMeaningfulContent,
  isAssistant,
  isBlankText,
  isBlankTextBlock,
  isToolResult,
  resultIdOf,
  serverToolAnswered,
  type ToolCallRef,
} from "../messages/inspect";
import { isAcceptedId, type ProviderProfile } from "./profiles";
import { idsMissingFromOutput, isMovableCallBlock, resentOutputOf } from "./passes/call-locations";

type Dict = Record<string, unknown>;

const hasBlankBlock = (content: unknown) => Array.isArray(content) && content.some(isBlankTextBlock);

export function isCleanHistory(messages: readonly unknown[], profile: ProviderProfile, trailingAllowed: boolean): boolean {
  const seen = new Set<string>();
  let open: Set<string> | undefined; // calls of the current exchange still waiting for their result
  let openCount = 0;
  let prev: "user" | "tool" | "assistant" | undefined;
  let ok = true;
  const perMessage = new Set<string>();
  let callsHere = 0;
  const visitRef = (message: unknown) => (ref: ToolCallRef) => {
    if (!ok) return;
    if (ref.id === undefined) return void (ok = false);
    if (ref.location === "invalid_tool_calls") return void (ok = false);
    const occurrenceKey = `${ref.location}\u0000${ref.id}`;
    if (perMessage.has(occurrenceKey)) return void (ok = false); // same id twice in one location
    perMessage.add(occurrenceKey);
    if (open!.has(ref.id)) return; // the same call seen in another location
    // A call outside tool_calls is sent by some adapters and not others (the call-locations pass).
    if (ref.location !== "tool_calls" && ref.location !== "content.server_tool_use") return void (ok = false);
    if (ref.location === "content.server_tool_use") {
      if (!serverToolAnswered(message, ref)) ok = false;
      return;
    }
    if (seen.has(ref.id) || !isAcceptedId(ref.id, profile)) return void (ok = false);
    seen.add(ref.id);
    open!.add(ref.id);
    openCount++;
    callsHere++;
  };

  for (let i = 0; i < messages.length && ok; i++) {
    const m = messages[i];
    if (!BaseMessage.isInstance(m as BaseMessage)) return false;
    const fields = m as Dict;
    const content = fields.content;
    if (isAssistant(m)) {
      if (openCount > 0) return false;
      if (content === null || content === undefined) return false;
      const calls = fields.tool_calls;
      if (calls !== undefined && !Array.isArray(calls)) return false;
      if (Array.isArray(calls) && calls.some((c) => typeof c !== "object" || c === null || typeof (c as Dict).args !== "object" || (c as Dict).args === null))
        return false;
      perMessage.clear();
      callsHere = 0;
      open = new Set();
      forEachToolCallRef(m, visitRef(m));
      if (!ok) return false;
      if (!profile.callBlocksInContent && Array.isArray(content) && content.some(isMovableCallBlock)) return false;
      if (callsHere > 0 && resentOutputOf(m) && idsMissingFromOutput(m, open!).length > 0) return false;
      if (profile.nonEmptyContent) {
        if (callsHere === 0 && !hasMeaningfulContent(content)) return false;
        if (hasBlankBlock(content)) return false;
        if (typeof content === "string" && content.length > 0 && isBlankText(content)) return false;
      }
      if (prev === undefined && profile.leadingUser) return false;
      if (prev === "assistant" && profile.alternation) return false;
      prev = "assistant";
      if (callsHere === 0) open = undefined;
    } else if (isToolResult(m)) {
      if (typeof fields.tool_call_id === "number" || content === null || content === undefined) return false;
      const id = resultIdOf(m);
      if (id === undefined || !open || !open.delete(id)) return false;
      openCount--;
      if (profile.nonEmptyContent) {
        if (typeof content === "string" ? isBlankText(content) : Array.isArray(content) && (content.length === 0 || content.some(isBlankTextBlock)))
          return false;
      }
      prev = "tool";
    } else {
      if (openCount > 0) return false;
      open = undefined;
      if (SystemMessage.isInstance(m as BaseMessage)) continue;
      const isUser = HumanMessage.isInstance(m as BaseMessage) || (m as BaseMessage).getType?.() === "generic";
      if (!isUser) continue;
      if (profile.nonEmptyContent) {
        if (content === null || content === undefined) return false;
        if (typeof content === "string" ? isBlankText(content) : Array.isArray(content) && content.every(isBlankTextBlock)) return false;
        if (hasBlankBlock(content)) return false;
      }
      if (profile.alternation && (prev === "user" || prev === "tool")) return false;
      prev = "user";
    }
  }
  return ok && (openCount === 0 || trailingAllowed);
}
