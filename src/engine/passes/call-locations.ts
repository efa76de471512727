/**
 * Pass "call-locations": one truth for where an assistant message's calls live.
 * - A call found outside `tool_calls` (raw `additional_kwargs.tool_calls`, `tool_use` / `tool_call` /
 *   `toolUse` content blocks, Responses `function_call` output items) is promoted into `tool_calls`: each
 *   adapter sends a different subset of those locations (ChatOpenAI ignores the raw list once `tool_calls`
 *   is set, ChatAnthropic sends content blocks, ChatBedrockConverse only `tool_calls`), and LangGraph's
 *   ToolNode only runs `tool_calls`. After promotion every adapter sends the same calls, so answering them
 *   is valid everywhere.
 * - Call content blocks in a format the provider's adapter mis-sends leave `content` (request level; the
 *   profile's `callBlockFormats` says which stay, per adapter): ChatBedrockConverse throws on every one
 *   ("Unsupported content block type") even when `tool_calls` holds the same call, so a thread that started
 *   on Anthropic could not continue on Bedrock; ChatOpenAI sends a Converse `{ toolUse }` block as an untyped
 *   content part (O6). The call is in `tool_calls` by then, so nothing is lost.
 * `invalid_tool_calls` belong to the invalid-calls pass; answered server tools stay where they are.
 */
import type { AIMessage } from "@langchain/core/messages";
import { rebuildMessage } from "../../messages/build";
import {
  callBlockFormatOf,
  forEachToolCallRef,
  isAssistant,
  isV1Message,
  callsOnlyInToolCalls,
  rawArgsOf,
  type Dict,
  type ToolCallRef,
} from "../../messages/inspect";
import { resentOutputOf } from "../../messages/responses";
import { argsRecord, findEach, rebuildingPass, type Issue, type Loose, type RepairedCall } from "../context";
import { keepsCallBlock } from "../profiles";
import { safeJson } from "../../values";

const NOT_PROMOTED = new Set(["tool_calls", "invalid_tool_calls", "content.server_tool_use"]);

/** Ids among `ids` that a re-sent Responses output does not carry as function_call items. */
function idsMissingFromOutput(message: unknown, ids: string[]) {
  const output = resentOutputOf(message);
  if (!output) return [];
  const present = new Set(output.filter((item) => item.type === "function_call").map((item) => item.call_id));
  return ids.filter((id) => !present.has(id));
}

/**
 * A bit per place besides `tool_calls` that names a call, each naming a call once (the clean walk's claims): 1, 2, 4
 * for `additional_kwargs`' `tool_calls`, `tool_use`, `toolUse`, these for content blocks, 128 for Responses output.
 */
const BIT = { tool_use: 8, tool_call: 16, toolUse: 32, input_json_delta: 64 };

const CALL_BLOCKS: Issue = [
  "call_block_in_content",
  "moved_call_block",
  "tool call carried as a content block in a format the provider's adapter refuses or mis-sends",
];

const promoted = (call: RepairedCall, detail: string): Issue => [
  "call_outside_tool_calls",
  "promoted_call",
  detail,
  call,
];

export const callLocationsPass = rebuildingPass({
  // Promoting a hidden call is structural; taking call blocks out of content is request shaping (the
  // structural profile keeps every format).
  structural: true,
  // Every other place that names a call names a different call of `tool_calls` (which the pairing check opened).
  clean: ({ profile, open }) => {
    const claimed = (c: Loose | null, bit: number) =>
      open.claim(c === null || typeof c !== "object" ? undefined : bit === 1 ? c.id : (c.toolUseId ?? c.id), bit);
    const allClaimed = (list: unknown, bit: number) => {
      if (list === undefined || list === null) return true;
      if (!Array.isArray(list)) return claimed(list as Loose, bit);
      for (let i = 0; i < list.length; i++) if (!claimed(list[i], bit)) return false;
      return true;
    };
    return {
      ai(m) {
        const { additional_kwargs: kwargs, content } = m;
        if (
          kwargs != null &&
          !(allClaimed(kwargs.tool_calls, 1) && allClaimed(kwargs.tool_use, 2) && allClaimed(kwargs.toolUse, 4))
        )
          return false;
        if (typeof content !== "string") {
          const v1 = isV1Message(m);
          for (let i = 0; i < content.length; i++) {
            const b = content[i];
            const format = callBlockFormatOf(b); // the content is blocks by now (the shape check)
            if (format === undefined) continue;
            if (!v1 && !profile.callBlockFormats.has(format)) return false;
            if (format === "input_json_delta" && b.id === undefined) continue;
            if (!open.claim(format === "toolUse" ? (b.toolUse.toolUseId ?? b.toolUse.id) : b.id, BIT[format]))
              return false;
          }
        }
        // Responses output items that ChatOpenAI re-sends instead of `tool_calls` carry exactly these calls.
        const output = m.response_metadata?.output;
        if (!Array.isArray(output) || output.length === 0) return true;
        let calls = 0;
        let resent = true;
        for (let i = 0; i < output.length; i++) {
          const item = output[i];
          if (item === null || typeof item !== "object" || !("type" in item)) resent = false;
          else if (item.type === "function_call") {
            if (!open.claim(item.call_id, 128)) return false;
            calls++;
          }
        }
        return !resent || calls === open.count;
      },
    };
  },
  classify: (messages, { profile }) =>
    findEach(messages, (m, index) => {
      if (!isAssistant(m) || callsOnlyInToolCalls(m)) return; // nothing outside tool_calls to promote or strip
      const inToolCalls = new Set<string>();
      const invalidIds = new Set<unknown>();
      const outside = new Map<string, ToolCallRef>();
      forEachToolCallRef(m, (ref) => {
        if (ref.id === undefined) return;
        if (ref.location === "tool_calls") inToolCalls.add(ref.id);
        else if (ref.location === "invalid_tool_calls") invalidIds.add(ref.id);
        else if (!NOT_PROMOTED.has(ref.location) && !outside.has(ref.id)) outside.set(ref.id, ref);
      });
      const promotable = [...outside.values()].filter((ref) => !inToolCalls.has(ref.id!) && !invalidIds.has(ref.id));
      // A v1 message keeps its calls as tool_call blocks by design, and every adapter converts them.
      const hasBlocks =
        Array.isArray(m.content) && !isV1Message(m) && m.content.some((b) => !keepsCallBlock(profile, b));
      const outputMissing = idsMissingFromOutput(m, [...inToolCalls, ...promotable.map((r) => r.id!)]);
      if (promotable.length || hasBlocks || outputMissing.length)
        return { index, outside: promotable, hasBlocks, outputMissing };
    }),
  // A finding's problems, each with the action its repair takes.
  issues: (f) => [
    ...f.outside.map((ref) => promoted(ref, `call ${ref.id} lives in ${ref.location} but not in tool_calls`)),
    ...f.outputMissing.map((id) =>
      promoted({ id }, `call ${id} is in tool_calls but not in the Responses output that ChatOpenAI re-sends instead`),
    ),
    ...(f.hasBlocks ? [CALL_BLOCKS] : []),
  ],
  rebuild(m, f, { profile }) {
    const message = m as AIMessage;
    const content = f.hasBlocks
      ? (message.content as unknown[]).filter((b) => keepsCallBlock(profile, b))
      : message.content;
    const toolCalls = [
      ...(message.tool_calls ?? []),
      ...f.outside.map((ref) => ({
        id: ref.id!,
        name: ref.name || "unknown_tool",
        args: argsRecord(rawArgsOf(message, ref)) ?? {},
        type: "tool_call",
      })),
    ];
    const fields: Dict = { content, tool_calls: toolCalls };
    if (f.outputMissing.length) {
      const missing = new Set(f.outputMissing);
      const meta = message.response_metadata as Dict;
      const added = toolCalls
        .filter((c) => c.id !== undefined && missing.has(c.id))
        .map((c) => ({
          type: "function_call",
          call_id: c.id,
          name: c.name,
          arguments: safeJson(c.args ?? {}, Number.MAX_SAFE_INTEGER),
          status: "completed",
        }));
      fields.response_metadata = { ...meta, output: [...(meta.output as Dict[]), ...added] };
    }
    return rebuildMessage(message, fields);
  },
});
