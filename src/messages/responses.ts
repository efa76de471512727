/**
 * What the clients store beside each tool call, keyed by its id or by position, and how a repair keeps it
 * with its call (PROVIDER_RULES.md, R5 to R7 and G6):
 * - ChatOpenAI on the Responses API: the response's `output` array in `response_metadata.output` (re-sent
 *   verbatim instead of `tool_calls` when every item has a type), its reasoning item (`rs_`) in
 *   `additional_kwargs.reasoning`, and the call id to `fc_` item id map in `__openai_function_call_ids__`
 *   (used when no output is re-sent). Item ids must be unique in a request (R5), and a reasoning item travels
 *   with the item that followed it in its response (R6, R7).
 * - ChatGoogleGenerativeAI: the thought signatures in `__gemini_function_call_thought_signatures__`, keyed by
 *   call id (G6).
 */
import { fieldsOf, isDict, type Dict } from "../values";
import { isV1Message } from "./inspect";

export const OPENAI_ITEM_IDS_KEY = "__openai_function_call_ids__";
export const GEMINI_SIGNATURES_KEY = "__gemini_function_call_thought_signatures__";

/**
 * Google's documented placeholder for a function call that carries no signature of its own (a call a client
 * injected, or one from another model): Gemini 3 accepts it where G6 asks for a signature.
 */
export const PLACEHOLDER_THOUGHT_SIGNATURE = "skip_thought_signature_validator";

/**
 * The Responses output items ChatOpenAI re-sends verbatim instead of `tool_calls` (a non-empty list whose
 * items all have a type), or undefined when the message has none.
 */
export function resentOutputOf(message: unknown) {
  const output = fieldsOf((message as Dict).response_metadata).output;
  return Array.isArray(output) && output.length && output.every((item) => isDict(item) && "type" in item)
    ? output
    : undefined;
}

/**
 * The Responses item ids an assistant message is sent with: its re-sent output's, else its reasoning item's
 * and the `fc_` ids of its call map. Calls `visit` once per id, in order.
 */
export function forEachResponseItemId(message: unknown, visit: (id: string) => void) {
  const output = resentOutputOf(message);
  if (output) {
    for (const item of output) if (typeof item.id === "string") visit(item.id);
    return;
  }
  const { reasoning, [OPENAI_ITEM_IDS_KEY]: map } = fieldsOf((message as Dict).additional_kwargs);
  if (isDict(reasoning) && typeof reasoning.id === "string") visit(reasoning.id);
  if (isDict(map)) for (const key in map) if (typeof map[key] === "string") visit(map[key]);
}

/**
 * `output` with `edit` applied per item (keep it, drop it, or replace it: a renamed call, an item without its id),
 * keeping every reasoning item next to the item that followed it (R7): a reasoning item whose follower was dropped
 * or lost its id goes too (it can no longer be sent), and the items it preceded lose their ids (R6 would ask for
 * it). Returns the ids of the reasoning items removed.
 */
export function editOutput(output: Dict[], edit: (item: Dict, index: number) => "drop" | Dict | undefined) {
  const edited = output.map(edit);
  const out: Dict[] = [];
  const droppedReasoning: string[] = [];
  let orphanedRun = false;
  for (const [i, item] of output.entries()) {
    const e = edited[i];
    if (item.type === "reasoning") {
      // Its next item (its follower): none, dropped, another reasoning item, or without its id.
      const next = edited[i + 1] ?? output[i + 1];
      orphanedRun =
        e === "drop" || typeof next !== "object" || next.type === "reasoning" || next.id !== output[i + 1].id;
      if (!orphanedRun) out.push((e ?? item) as Dict);
      else if (typeof item.id === "string") droppedReasoning.push(item.id);
    } else if (e !== "drop") {
      const kept = e ?? item;
      out.push(orphanedRun && kept.id !== undefined ? withoutId(kept) : kept);
    }
  }
  return { output: out, droppedReasoning };
}

export const withoutId = ({ id, ...rest }: Dict) => rest;

/**
 * A content block ChatOpenAI sends as a reasoning item with its id from a v1 message (`convertReasoningBlock` of
 * `convertStandardContentMessageToResponsesInput`, @langchain/openai 1.5.8).
 */
export const isSentReasoning = (block: Dict) => block?.type === "reasoning" && !!block.id;

/**
 * Whether ChatOpenAI (@langchain/openai 1.5.8 `convertMessagesToResponsesInput`) sends the message's reasoning item
 * right before an item without an id, so that R7 refuses it (`"v1"` for a v1 message):
 * - a v1 message (`response_metadata.output_version: "v1"`, from `outputVersion: "v1"` or LC_OUTPUT_VERSION=v1) is
 *   sent from its content blocks, even with an output stored: a reasoning block with its `rs_` id, text and calls
 *   without theirs;
 * - any other message only with no output to re-send (a store that kept `additional_kwargs` and not
 *   `response_metadata.output`): it rebuilds the items from the message, its reasoning item
 *   (`additional_kwargs.reasoning`) first, then a `message` item for any `content` (even `""`, or only blocks it
 *   leaves out of that item, such as the reasoning summary) or refusal, with the message's id only when that is a
 *   `msg_` id (the id of the response's own message item is stored nowhere it reads; the message's id is the
 *   response's), then the calls with their `fc_` ids.
 */
export function reasoningUnfollowed(message: object) {
  const { id, content, tool_calls, additional_kwargs } = message as Dict;
  const kwargs = fieldsOf(additional_kwargs);
  if (isV1Message(message)) return (content as Dict[]).some?.(isSentReasoning) && "v1";
  return (
    typeof fieldsOf(kwargs.reasoning).id === "string" &&
    !(typeof content === "string" || (content as [])?.length > 0 || kwargs.refusal
      ? String(id).startsWith("msg_")
      : fieldsOf(kwargs[OPENAI_ITEM_IDS_KEY])[fieldsOf((tool_calls as Dict[])?.[0]).id as string]) &&
    !resentOutputOf(message)
  );
}

/**
 * `kwargs` with the per-call maps (`__openai_function_call_ids__`, `__gemini_function_call_thought_signatures__`)
 * following renamed calls: the entry of an old id is copied to its new id (and kept only while a call still
 * has the old id). Returns a copy.
 */
export function rekeyCallMaps(kwargs: Dict, newIdOf: ReadonlyMap<string, string>, idsStillUsed: ReadonlySet<string>) {
  const out = { ...kwargs };
  for (const key of [OPENAI_ITEM_IDS_KEY, GEMINI_SIGNATURES_KEY]) {
    const map = kwargs[key];
    if (!isDict(map)) continue;
    const next: Dict = {};
    for (const id in map) {
      const renamed = newIdOf.get(id);
      if (renamed !== undefined) next[renamed] = map[id];
      if (renamed === undefined || idsStillUsed.has(id)) next[id] = map[id];
    }
    out[key] = next;
  }
  return out;
}
