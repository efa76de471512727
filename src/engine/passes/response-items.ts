/**
 * Pass "response-items": the OpenAI Responses items an assistant message is sent with (its re-sent
 * `response_metadata.output`, else its reasoning item and `fc_` ids) carry ids no earlier item carries (R5).
 * A replayed checkpoint copies an assistant message whole: the call-ids pass gives its calls new ids, and
 * this pass takes the copy's items off the ids of the original (`withoutItemIds`). A duplicate reasoning item
 * is removed (the same reasoning is sent with the original, so nothing is lost; its summary stays in the
 * copy's content); any other duplicate item is kept without its id (ids are optional on input); a reasoning
 * item whose following item lost its id goes too, and the items it preceded lose theirs (R6, R7).
 * Structural: other providers never send these items, so the fix is lossless everywhere and safe to store.
 */
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import { withoutItemIds } from "../../messages/build";
import { isAssistant } from "../../messages/inspect";
import { forEachResponseItemId } from "../../messages/responses";
import { findEach, problem, sameOrNew, type RepairPass } from "../context";

interface DuplicateItems {
  index: number;
  /** The item ids this message repeats, in its order. */
  ids: string[];
}

function classifyItems(messages: readonly BaseMessage[]) {
  const seen = new Set<string>();
  return findEach(messages, (m, index): DuplicateItems | undefined => {
    let ids: string[] | undefined;
    if (isAssistant(m))
      forEachResponseItemId(m, (id) => {
        if (!seen.has(id)) seen.add(id);
        else (ids ??= []).push(id);
      });
    if (ids) return { index, ids };
  });
}

const detail = (f: DuplicateItems) => `Responses items already sent with an earlier message: ${f.ids.join(", ")}`;

export const responseItemsPass: RepairPass = {
  name: "response-items",
  structural: true,
  clean() {
    const seen = new Set<string>();
    let repeated = false;
    const see = (id: string): void => {
      if (seen.has(id)) repeated = true;
      else seen.add(id);
    };
    return {
      start: () => seen.clear(),
      ai(m) {
        repeated = false;
        forEachResponseItemId(m, see);
        return !repeated;
      },
    };
  },
  find(messages, ctx) {
    return classifyItems(messages).map((f) => problem(ctx, "duplicate_response_item", f.index, detail(f)));
  },
  repair(messages, ctx) {
    const found = classifyItems(messages);
    if (found.length === 0) return messages;
    const out = messages.slice();
    const seenBefore = new Set<string>();
    let next = 0;
    for (let index = 0; next < found.length; index++) {
      const m = messages[index];
      if (index === found[next].index) {
        // Only this message's own ids are collected apart: copying `seenBefore` per repeat would be quadratic.
        const own = new Set<string>();
        const isRepeat = (id: string): boolean => seenBefore.has(id) || own.has(id) || (own.add(id), false);
        const { message, droppedReasoning } = withoutItemIds(m as AIMessage, isRepeat);
        out[index] = message;
        ctx.derive(m, message);
        const dropped = droppedReasoning.length > 0 ? `; reasoning items ${droppedReasoning.join(", ")} removed` : "";
        ctx.report(m, index, "duplicate_response_item", "rebuilt_message", detail(found[next++]) + dropped);
      }
      if (isAssistant(m)) forEachResponseItemId(m, (id) => seenBefore.add(id));
    }
    return sameOrNew(messages, out);
  },
};
