/**
 * Pass "response-items": the OpenAI Responses items an assistant message is sent with (its re-sent
 * `response_metadata.output`, else its reasoning item and `fc_` ids) carry ids no earlier item carries (R5).
 * A replayed checkpoint copies an assistant message whole: the call-ids pass gives its calls new ids, and
 * this pass takes the copy's items off the ids of the original (`withoutItemIds`). A duplicate reasoning item
 * is removed (the same reasoning is sent with the original, so nothing is lost; its summary stays in the
 * copy's content); any other duplicate item is kept without its id (ids are optional on input); a reasoning
 * item whose following item lost its id goes too, and the items it preceded lose theirs (R6, R7).
 * Structural: other providers never send these items, so the fix is lossless everywhere and safe to store.
 * For a Responses request only (`reasoningFollowed`): where a message has no output to re-send and ChatOpenAI would
 * send its reasoning item before an item without an id (R7, `reasoningUnfollowed`: a store that kept
 * `additional_kwargs` only), the reasoning item goes (reported) and its calls lose their `fc_` ids (R6 would ask
 * for it), as `editOutput` does for a re-sent output. Text, calls and the reasoning summary in the content are
 * untouched; the stored thread keeps all (another provider, or a store with the output, sends it whole).
 * Limit: a message whose content holds no text (only the reasoning summary block, or `""`) also loses its reasoning
 * item, though its first call could follow it if that content went (ChatOpenAI sends an empty `message` item).
 * A v1 message (`output_version: "v1"`) is sent from its content blocks, output stored or not: its reasoning block with
 * its `rs_` id, text and calls without theirs (R7). For a Responses request only, such a message goes as
 * `output_version: "v0"` when its output is stored (ChatOpenAI re-sends that output verbatim: nothing is lost), else
 * without its reasoning blocks that carry an id (reported); the stored thread keeps it whole.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { withoutItemIds } from "../../messages/build";
import { isAssistant } from "../../messages/inspect";
import { forEachResponseItemId, reasoningUnfollowed } from "../../messages/responses";
import { type FindContext, findEach, problem, rebuildingPass } from "../context";

/**
 * The assistant messages that repeat item ids, each with the ids it repeats (in its order) and the message without
 * them (built here: what the repair reports depends on the reasoning items that go); for a Responses request also
 * those whose reasoning item the adapter would send before an item without its id (see `reasoningUnfollowed`), without
 * it (a message that repeats ids loses its reasoning item anyway), or, a v1 message, in the form it can be sent in.
 */
function classifyItems(messages: readonly BaseMessage[], ctx: FindContext) {
  const first = new Map<string, number>(); // each id: the message that carried it first
  return findEach(messages, (m, index) => {
    if (!isAssistant(m)) return;
    let ids: string[] | undefined;
    forEachResponseItemId(m, (id) => {
      if (!first.has(id)) first.set(id, index);
      else (ids ??= []).push(id);
    });
    const unfollowed = ctx.profile.reasoningFollowed && reasoningUnfollowed(m);
    if (!ids && !unfollowed) return;
    // Only this message's own ids are collected apart: copying the ids seen before per repeat would be quadratic.
    const own = new Set<string>();
    const repeat = (id: string) => first.get(id)! < index || own.has(id) || (own.add(id), false);
    const v1 = unfollowed === "v1";
    return { index, ids, ...withoutItemIds(m, ids ? repeat : () => !v1, v1) };
  });
}

const detail = (f: { ids?: string[] }) =>
  f.ids
    ? `Responses items already sent with an earlier message: ${f.ids.join(", ")}`
    : "ChatOpenAI would send a reasoning item before an item without its id";

export const responseItemsPass = rebuildingPass({
  structural: true,
  clean(walk) {
    const seen = new Set<string>();
    let repeated = false;
    const see = (id: string) => {
      if (seen.has(id)) repeated = true;
      else seen.add(id);
    };
    return {
      start: () => seen.clear(),
      ai(m) {
        repeated = false;
        forEachResponseItemId(m, see);
        return !repeated && !(walk.profile.reasoningFollowed && reasoningUnfollowed(m));
      },
    };
  },
  classify: classifyItems,
  find: (messages, ctx) =>
    classifyItems(messages, ctx).map((f) => problem(ctx, "duplicate_response_item", f.index, detail(f))),
  issues: (f) => [
    [
      "duplicate_response_item",
      "rebuilt_message",
      detail(f) + (f.droppedReasoning.length > 0 ? `; reasoning items ${f.droppedReasoning.join(", ")} removed` : ""),
    ],
  ],
  rebuild: (_, f) => f.message,
});
