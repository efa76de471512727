/**
 * Pass "invalid-calls": entries of `invalid_tool_calls` (arguments that did not parse). Adapters send them
 * inconsistently: ChatOpenAI drops them while sending their ToolMessages, or, when no call is valid, re-sends
 * the raw `additional_kwargs.tool_calls`, malformed ones included. Either way a call or a result goes
 * unmatched. "answer" turns each into a regular call (empty args) that the pairing pass answers with an error
 * naming the parse failure; "remove" deletes it from every location.
 */
import type { AIMessage } from "@langchain/core/messages";
import { rewriteToolCalls } from "../../messages/build";
import { isAssistant, isDict } from "../../messages/inspect";
import { callNamed, findEach, rebuildingPass } from "../context";
import { clip, nonEmptyString, safeJson } from "../../values";

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export const invalidCallsPass = rebuildingPass({
  structural: true,
  clean: () => ({
    ai: ({ invalid_tool_calls: c }) => c === undefined || (Array.isArray(c) && c.length === 0),
  }),
  // The assistant messages with invalid calls, each with them.
  classify: (messages) =>
    findEach(messages, (message, index) => {
      const invalid = isAssistant(message) ? message.invalid_tool_calls : undefined;
      if (!Array.isArray(invalid)) return;
      const calls = invalid.filter(isDict).map((c) => ({
        id: nonEmptyString(c.id),
        name: nonEmptyString(c.name),
        // The parse error, as ` (...)` after a sentence; empty when there is none.
        error: typeof c.error === "string" && c.error ? ` (${c.error})` : "",
        args: c.args,
      }));
      return calls.length > 0 && { index, calls };
    }),
  issues: ({ calls }, { options }) =>
    calls.map((c) => [
      "invalid_tool_call",
      options.invalidCalls === "answer" && c.id !== undefined ? "promoted_invalid_call" : "removed_call",
      `invalid tool call ${callNamed(c)}${c.error}`,
      c,
    ]),
  rebuild(message, { calls }, ctx) {
    const validIds = new Set(((message as AIMessage).tool_calls ?? []).map((c) => c.id));
    const removeIds = new Set<string>();
    const promoted = [];
    for (const c of calls) {
      if (c.id === undefined) continue;
      if (ctx.options.invalidCalls !== "answer") {
        removeIds.add(c.id);
        continue;
      }
      const raw = typeof c.args === "string" ? clip(c.args, 2_000) : safeJson(c.args ?? null, 2_000);
      ctx.callNotes.set(c.id, `its arguments could not be parsed${c.error}; raw arguments: ${raw}`);
      // The name must pass the provider's pattern; an unusable one becomes a neutral name.
      const name = c.name && TOOL_NAME.test(c.name) ? c.name : "invalid_tool_call";
      if (!validIds.has(c.id)) promoted.push({ id: c.id, name, args: {}, type: "tool_call" });
    }
    return rewriteToolCalls(
      message as AIMessage,
      (ref) =>
        ref.location === "invalid_tool_calls" ||
        (ref.id !== undefined && removeIds.has(ref.id) && ref.location !== "tool_calls")
          ? "drop"
          : undefined,
      promoted,
    );
  },
});
