/**
 * Copy-on-write builders. Every new message gets all its fields in the constructor: serialization keeps only
 * constructor kwargs, so a field set afterwards is lost at the next checkpoint (LANGGRAPH_NOTES.md).
 */
import {
  AIMessage,
  type BaseMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import type { MessageContent } from "@langchain/core/messages";
import {
  callArgsText,
  forEachToolCallRef,
  isBlankText,
  isClientCall,
  isDict,
  isServerToolResultBlock,
  isSyntheticResult,
  reasoningTextOf,
  type DistinctCall,
  REPAIR_MARKER_KEY,
  type Dict,
  type RepairMarker,
  type ToolCallLocation,
  type ToolCallRef,
} from "./inspect";
import { safeJson } from "../values";
import {
  editOutput,
  GEMINI_SIGNATURES_KEY,
  OPENAI_ITEM_IDS_KEY,
  PLACEHOLDER_THOUGHT_SIGNATURE,
  rekeyCallMaps,
  resentOutputOf,
  withoutId,
} from "./responses";
import { TOOL_RUN_STATES, type ToolRunState } from "../types";
import { boundary, expectedInput } from "../errors";

/** What to do with one reference to a tool call: drop it, or keep it (optionally under a new id / name). */
export type RefEdit = "drop" | { id?: string; name?: string } | undefined;

/** The edit for each ref; `occurrence` counts refs with the same id in the same location (duplicate ids). */
export type RefEditor = (ref: ToolCallRef, occurrence: number) => RefEdit;

/**
 * A copy of `value` with `key` set to `id` and, when given, `name` set: one spread, then assignments (a second
 * spread into the same literal makes V8 build a slow object).
 */
function withId(value: Dict, key: string, id: string | undefined, name?: string): Dict {
  if (id === undefined && name === undefined) return value;
  const out: Dict = { ...value };
  if (id !== undefined) out[key] = id;
  if (name !== undefined) out.name = name;
  return out;
}

/**
 * Rewrite every location of every tool call in an assistant message at once. Returns the same message when
 * the editor changes nothing. A `tool_use` block left in content or a Responses `function_call` left in
 * `response_metadata.output` is still sent by the adapters, so removal must reach all of them.
 */
export function rewriteToolCalls(message: AIMessage, edit: RefEditor, extra?: { promoted?: Dict[] }): AIMessage {
  const edits = new Map<ToolCallLocation, Map<number, RefEdit>>();
  const occurrences = new Map<string, number>();
  // Old id to new id, and the ids some ref still carries: the per-call maps follow (rekeyCallMaps).
  const renames = new Map<string, string>();
  const idsKept = new Set<string>();
  let changed = false;
  forEachToolCallRef(message, (ref) => {
    const key = `${ref.location}\u0000${ref.id ?? ""}`;
    const occurrence = occurrences.get(key) ?? 0;
    occurrences.set(key, occurrence + 1);
    const e = edit(ref, occurrence);
    const renamed = e !== undefined && e !== "drop" && e.id !== undefined && e.id !== ref.id;
    if (ref.id !== undefined) {
      if (renamed) renames.set(ref.id, e.id!);
      else if (e !== "drop") idsKept.add(ref.id);
    }
    if (e === undefined) return;
    if (e !== "drop" && !renamed && (e.name === undefined || e.name === ref.name)) return;
    changed = true;
    let byPos = edits.get(ref.location);
    if (!byPos) edits.set(ref.location, (byPos = new Map()));
    byPos.set(ref.position, e);
  });
  if (!changed && !extra?.promoted?.length) return message;

  const apply = <T>(
    items: T[],
    location: ToolCallLocation,
    rewrite: (item: T, e: { id?: string; name?: string }) => T,
  ) => {
    const byPos = edits.get(location);
    if (!byPos) return items;
    const out: T[] = [];
    items.forEach((item, i) => {
      const e = byPos.get(i);
      if (e === "drop") return;
      out.push(e ? rewrite(item, e) : item);
    });
    return out;
  };
  const m = message as unknown as Dict;
  const renameStd = (c: Dict, e: { id?: string; name?: string }) => withId(c, "id", e.id, e.name);

  let toolCalls = Array.isArray(m.tool_calls) ? apply(m.tool_calls as Dict[], "tool_calls", renameStd) : [];
  if (extra?.promoted?.length) toolCalls = [...toolCalls, ...extra.promoted];
  const invalidToolCalls = Array.isArray(m.invalid_tool_calls)
    ? apply(m.invalid_tool_calls as Dict[], "invalid_tool_calls", renameStd)
    : [];

  let kwargs = isDict(m.additional_kwargs) ? m.additional_kwargs : {};
  if (edits.has("additional_kwargs.tool_calls") && Array.isArray(kwargs.tool_calls)) {
    const raw = apply(kwargs.tool_calls as Dict[], "additional_kwargs.tool_calls", (c, e) => {
      const fn = isDict(c.function) ? c.function : {};
      const out = withId(c, "id", e.id);
      if (e.name !== undefined) out.function = withId(fn, "name", e.name);
      return out;
    });
    kwargs = { ...kwargs, tool_calls: raw };
    if (raw.length === 0) delete kwargs.tool_calls;
  }
  for (const [key, location, idKey] of [
    ["tool_use", "additional_kwargs.tool_use", "id"],
    ["toolUse", "additional_kwargs.toolUse", "toolUseId"],
  ] as const) {
    if (!edits.has(location)) continue;
    const value = kwargs[key];
    const list = Array.isArray(value) ? (value as Dict[]) : [value as Dict];
    const rewritten = apply(list, location, (rec, e) => {
      const k = rec.toolUseId !== undefined ? "toolUseId" : rec.id !== undefined ? "id" : idKey;
      return withId(rec, k, e.id, e.name);
    });
    kwargs = { ...kwargs };
    if (rewritten.length === 0) delete kwargs[key];
    else kwargs[key] = Array.isArray(value) ? rewritten : rewritten[0];
  }

  let content = m.content as MessageContent;
  if (Array.isArray(content)) {
    const byPos = new Map<number, RefEdit>();
    for (const loc of [
      "content.tool_use",
      "content.tool_call",
      "content.toolUse",
      "content.server_tool_use",
      "content.input_json_delta",
    ] as const)
      edits.get(loc)?.forEach((e, pos) => byPos.set(pos, e));
    if (byPos.size > 0) {
      const out: unknown[] = [];
      // A server tool's inline result follows its call's new id, and leaves with it (A4, A13).
      const servers = new Map<unknown, RefEdit>();
      edits
        .get("content.server_tool_use")
        ?.forEach((e, pos) => servers.set(((content as unknown[])[pos] as Dict).id, e));
      (content as unknown[]).forEach((block, i) => {
        const result = servers.size > 0 && isServerToolResultBlock(block) ? servers.get(block.tool_use_id) : undefined;
        if (result === "drop") return;
        if (result) return out.push(withId(block as Dict, "tool_use_id", result.id));
        const e = byPos.get(i);
        if (e === "drop") return;
        if (!e) return out.push(block);
        const b = block as Dict;
        if (isDict(b.toolUse)) {
          const tu = b.toolUse;
          const k = tu.toolUseId !== undefined ? "toolUseId" : "id";
          const copy: Dict = { ...b };
          copy.toolUse = withId(tu, k, e.id, e.name);
          out.push(copy);
        } else out.push(renameStd(b, e));
      });
      content = out as MessageContent;
    }
  }

  let responseMetadata = isDict(m.response_metadata) ? m.response_metadata : {};
  const outputEdits = edits.get("response_metadata.output");
  if (outputEdits && Array.isArray(responseMetadata.output)) {
    // A renamed call keeps its item id (unique item ids are the response-items pass's); a reasoning item whose
    // call is removed goes with it (R7).
    const { output, droppedReasoning } = editOutput(responseMetadata.output as Dict[], (item, i) => {
      const e = outputEdits.get(i);
      return e === undefined || e === "drop" ? e : withId(item, "call_id", e.id, e.name);
    });
    responseMetadata = { ...responseMetadata, output };
    const reasoning = kwargs.reasoning;
    if (isDict(reasoning) && droppedReasoning.includes(reasoning.id as string)) {
      kwargs = { ...kwargs };
      delete kwargs.reasoning;
    }
  }
  if (renames.size > 0) kwargs = rekeyCallMaps(kwargs, renames, idsKept);
  return rebuildAssistant(message, {
    content,
    tool_calls: toolCalls,
    invalid_tool_calls: invalidToolCalls,
    additional_kwargs: kwargs,
    response_metadata: responseMetadata,
  });
}

/**
 * The message with the Responses items whose ids `goes` names taken off them: a reasoning item is removed
 * (`additional_kwargs.reasoning` with it), any other item is kept without its id (in the re-sent output, or its
 * `fc_` id out of the call map), and a reasoning item left without its following item goes too (R7). The
 * message's content (its text, its reasoning summary) is untouched. Returns the ids of the reasoning items removed.
 */
export function withoutItemIds(
  message: AIMessage,
  goes: (id: string) => boolean,
): { message: AIMessage; droppedReasoning: string[] } {
  const kwargs: Dict = isDict(message.additional_kwargs) ? { ...message.additional_kwargs } : {};
  const output = resentOutputOf(message);
  const fields: Dict = { additional_kwargs: kwargs };
  let droppedReasoning: string[] = [];
  const reasoning = kwargs.reasoning;
  if (output) {
    const edited = editOutput(output, (item) =>
      typeof item.id !== "string" || !goes(item.id) ? undefined : item.type === "reasoning" ? "drop" : withoutId(item),
    );
    fields.response_metadata = { ...message.response_metadata, output: edited.output };
    droppedReasoning = edited.droppedReasoning;
    if (isDict(reasoning) && droppedReasoning.includes(reasoning.id as string)) delete kwargs.reasoning;
  } else {
    if (isDict(reasoning) && typeof reasoning.id === "string" && goes(reasoning.id)) {
      delete kwargs.reasoning;
      droppedReasoning = [reasoning.id];
    }
    const map = kwargs[OPENAI_ITEM_IDS_KEY];
    if (isDict(map)) {
      const kept: Dict = {};
      for (const [callId, itemId] of Object.entries(map))
        if (typeof itemId !== "string" || !goes(itemId)) kept[callId] = itemId;
      kwargs[OPENAI_ITEM_IDS_KEY] = kept;
    }
  }
  return { message: rebuildAssistant(message, fields), droppedReasoning };
}

/** A new AIMessage with the given fields replaced and every other constructor field carried over. */
export function rebuildAssistant(message: AIMessage, fields: Partial<Record<string, unknown>>): AIMessage {
  return new AIMessage(
    assistantFields(message as unknown as Dict, fields) as ConstructorParameters<typeof AIMessage>[0] & object,
  );
}

/** `fields` over `m`'s own, in the message's field order. */
const field = (fields: Dict, m: Dict, key: string, fallback: unknown): unknown =>
  key in fields ? fields[key] : m[key] !== undefined ? m[key] : fallback;

/**
 * The constructor fields of a rebuilt assistant message, as one object literal: spreading two objects into
 * a third makes V8 build it in a slow shape that the message then keeps (measured 20x slower to build).
 */
function assistantFields(m: Dict, fields: Dict): Dict {
  const init: Dict = {
    content: field(fields, m, "content", ""),
    // Always explicit: without it the constructor re-parses additional_kwargs.tool_calls.
    tool_calls: "tool_calls" in fields ? fields.tool_calls : Array.isArray(m.tool_calls) ? m.tool_calls : [],
    invalid_tool_calls:
      "invalid_tool_calls" in fields
        ? fields.invalid_tool_calls
        : Array.isArray(m.invalid_tool_calls)
          ? m.invalid_tool_calls
          : [],
    additional_kwargs:
      "additional_kwargs" in fields ? fields.additional_kwargs : isDict(m.additional_kwargs) ? m.additional_kwargs : {},
    response_metadata:
      "response_metadata" in fields ? fields.response_metadata : isDict(m.response_metadata) ? m.response_metadata : {},
  };
  const id = field(fields, m, "id", undefined);
  if (id !== undefined) init.id = id;
  const name = field(fields, m, "name", undefined);
  if (name !== undefined) init.name = name;
  const usage = field(fields, m, "usage_metadata", undefined);
  if (usage !== undefined) init.usage_metadata = usage;
  return init;
}

/**
 * A new message of the same kind with `fields` replaced and every other constructor field carried over (the
 * one place that knows each class's fields). Assistant and tool messages go through their own builders.
 */
export function rebuildMessage<T extends BaseMessage>(message: T, fields: Partial<Record<string, unknown>>): T {
  if (AIMessage.isInstance(message)) return rebuildAssistant(message, fields) as unknown as T;
  if (ToolMessage.isInstance(message)) return rebuildToolResult(message, fields) as unknown as T;
  const m = message as unknown as Dict;
  const init: Dict = {
    content: field(fields, m, "content", ""),
    additional_kwargs:
      "additional_kwargs" in fields ? fields.additional_kwargs : isDict(m.additional_kwargs) ? m.additional_kwargs : {},
    response_metadata:
      "response_metadata" in fields ? fields.response_metadata : isDict(m.response_metadata) ? m.response_metadata : {},
  };
  const id = field(fields, m, "id", undefined);
  if (id !== undefined) init.id = id;
  const name = field(fields, m, "name", undefined);
  if (name !== undefined) init.name = name;
  if (ChatMessage.isInstance(message)) {
    init.role = message.role;
    return new ChatMessage(init as never) as unknown as T;
  }
  if (SystemMessage.isInstance(message)) return new SystemMessage(init as never) as unknown as T;
  if (HumanMessage.isInstance(message)) return new HumanMessage(init as never) as unknown as T;
  // Any other class (function messages, custom subclasses): its own constructor with its own kwargs.
  const Message = message.constructor as new (fields: Dict) => T;
  return new Message(Object.assign({}, message.lc_kwargs as Dict, init));
}

/** A new ToolMessage answering `toolCallId`, every other field carried over. */
export function rebuildToolResult(message: ToolMessage, fields: Partial<Record<string, unknown>>): ToolMessage {
  const m = message as unknown as Dict;
  const init: Dict = {
    content: field(fields, m, "content", ""),
    tool_call_id: "tool_call_id" in fields ? fields.tool_call_id : m.tool_call_id,
    additional_kwargs:
      "additional_kwargs" in fields ? fields.additional_kwargs : isDict(m.additional_kwargs) ? m.additional_kwargs : {},
    response_metadata:
      "response_metadata" in fields ? fields.response_metadata : isDict(m.response_metadata) ? m.response_metadata : {},
  };
  for (const key of ["id", "name", "status", "artifact"]) {
    const value = field(fields, m, key, undefined);
    if (value !== undefined) init[key] = value;
  }
  return new ToolMessage(init as ConstructorParameters<typeof ToolMessage>[0] & object);
}

function marker(marker: RepairMarker): Dict {
  const out: Dict = { synthetic: marker.synthetic, reason: marker.reason };
  if (marker.toolCallId !== undefined) out.toolCallId = marker.toolCallId;
  if (marker.toolName !== undefined) out.toolName = marker.toolName;
  if (marker.toolRun !== undefined) out.toolRun = marker.toolRun;
  return { [REPAIR_MARKER_KEY]: out };
}

/**
 * A result for a call that has no real one. Providers ignore `status`, so the content itself says what is known
 * (`toolRun`). The marker in `additional_kwargs` is machine-readable, carries `toolRun` too, and survives
 * checkpoint serialization.
 */
export function syntheticToolResult(args: {
  toolCallId: string;
  toolName?: string;
  reason: string;
  text: string;
  toolRun: ToolRunState;
}): ToolMessage {
  return new ToolMessage({
    content: args.text,
    tool_call_id: args.toolCallId,
    ...(args.toolName ? { name: args.toolName } : {}),
    status: "error",
    id: `tool-repair-${args.toolCallId}`,
    additional_kwargs: marker({ ...args, synthetic: true }),
  });
}

/**
 * The default text of a synthetic result. It claims only what is known: a call whose tool may have started is
 * never said not to have run (a payment or an email may have gone out), so the model is told to check, not to
 * repeat it.
 */
export const defaultSyntheticText = boundary(
  "defaultSyntheticText",
  function defaultSyntheticText(call: {
    id: string;
    name?: string;
    reason: string;
    note?: string;
    toolRun?: ToolRunState;
  }): string {
    const fn = "defaultSyntheticText";
    if (!isDict(call)) throw expectedInput(fn, "call", "an object { id, name?, reason, note?, toolRun? }", call);
    const { id, name, note, toolRun = "outcome_unknown" } = call;
    if (typeof id !== "string" && typeof id !== "number") throw expectedInput(fn, "call.id", "a string", id);
    if (name !== undefined && typeof name !== "string")
      throw expectedInput(fn, "call.name", "a string or undefined", name);
    if (note !== undefined && typeof note !== "string")
      throw expectedInput(fn, "call.note", "a string or undefined", note);
    if (!TOOL_RUN_STATES.includes(toolRun))
      throw expectedInput(fn, "call.toolRun", `one of ${TOOL_RUN_STATES.join(", ")}`, toolRun);
    const tool = name ? `Tool "${name}"` : "The tool";
    if (toolRun === "never_started") {
      const why = note ?? "it was never started";
      return `${tool} (call ${id}) did not run: ${why}. No result is available; call it again if it is still needed.`;
    }
    if (toolRun === "cancelled") {
      const why = note ?? "it was waiting for the user's approval, and the user sent a new message instead";
      return `${tool} (call ${id}) did not run: ${why}. Do not run it unless the user asks for it again.`;
    }
    const why = note ?? "the run stopped before its result was recorded";
    return (
      `${tool} (call ${id}) has no result: ${why}. It may have started, and may have taken effect; its outcome is unknown. ` +
      "Do not call it again without first checking whether it already took effect."
    );
  },
);

/**
 * A user message holding the content of a tool result whose call is gone: every provider accepts a user
 * message, none accepts a tool result without its call.
 */
export function orphanResultAsUserMessage(
  result: ToolMessage | BaseMessage,
  toolCallId: string | undefined,
): HumanMessage {
  const name = (result as unknown as Dict).name;
  const label = `[Tool result${typeof name === "string" && name ? ` from "${name}"` : ""}${
    toolCallId ? ` for call ${toolCallId}` : ""
  }; its tool call is no longer in this conversation.]`;
  const content = result.content as MessageContent;
  const body: MessageContent =
    typeof content === "string"
      ? `${label}\n${content}`
      : ([{ type: "text", text: label }, ...((Array.isArray(content) ? content : []) as Dict[])] as MessageContent);
  const id = (result as unknown as Dict).id;
  return new HumanMessage({
    content: body,
    ...(typeof id === "string" ? { id } : {}),
    additional_kwargs: marker({
      synthetic: false,
      reason: "orphan_result",
      toolCallId,
      toolName: typeof name === "string" ? name : undefined,
    }),
  });
}

/** What a tool result without output says when it is sent as text. */
const NO_OUTPUT_TEXT = "(the tool returned no output)";

/** Longest JSON text a block of a converted result keeps. */
const MAX_BLOCK_JSON = 20_000;

/** Content block types every adapter sends in a user message (text, images, files, audio, video). */
const USER_BLOCK_TYPES = new Set(["text", "image_url", "image", "file", "document", "audio", "video"]);

/** Blocks a user message may carry as they are; any other one (a JSON result block, a bare string) as its text. */
function asUserBlocks(content: unknown[], maxJson: number): Dict[] {
  const out: Dict[] = [];
  for (const block of content) {
    if (typeof block === "string") out.push({ type: "text", text: block });
    else if (isDict(block) && typeof block.type === "string" && USER_BLOCK_TYPES.has(block.type)) out.push(block);
    else out.push({ type: "text", text: safeJson(block, maxJson) });
  }
  return out;
}

/**
 * A tool result as a user message, for a request that carries no tools: a label that names the tool, the call
 * it answers and an error status, then its content (text as it is, blocks a user
 * message takes as they are, any other block as its JSON). Keeps the result's id; marked, not synthetic unless
 * the result was.
 */
export function toolResultAsUserText(result: ToolMessage, reason: string): HumanMessage {
  const r = result as unknown as Dict;
  const name = typeof r.name === "string" && r.name !== "" ? r.name : undefined;
  const toolCallId = typeof r.tool_call_id === "string" && r.tool_call_id !== "" ? r.tool_call_id : undefined;
  const failed = r.status === "error" ? " (the tool reported an error)" : "";
  const label = `[Result of ${name ? `tool "${name}"` : "a tool"}${toolCallId ? ` for call ${toolCallId}` : ""}${failed}:]`;
  const content = result.content as unknown;
  const blocks = Array.isArray(content) ? asUserBlocks(content, MAX_BLOCK_JSON) : undefined;
  const empty = blocks ? blocks.length === 0 : typeof content !== "string" || isBlankText(content);
  const body: MessageContent = empty
    ? `${label}\n${NO_OUTPUT_TEXT}`
    : blocks
      ? ([{ type: "text", text: label }, ...blocks] as MessageContent)
      : `${label}\n${content as string}`;
  return new HumanMessage({
    content: body,
    ...(typeof r.id === "string" ? { id: r.id } : {}),
    additional_kwargs: marker({ synthetic: isSyntheticResult(result), reason, toolCallId, toolName: name }),
  });
}

/**
 * A system message the provider does not accept where it stands, as a user message that keeps its content
 * (marked, not synthetic: the words are real) and its id.
 */
export function systemMessageAsUserText(message: BaseMessage): HumanMessage {
  return labeledUserText(message, "[System message]", "misplaced_system_message");
}

/** A message as user text under `label`, keeping its content (blocks too) and id; marked, not synthetic. */
export function labeledUserText(message: BaseMessage, label: string, reason: string): HumanMessage {
  const content = message.content as MessageContent;
  const body: MessageContent =
    typeof content === "string"
      ? `${label}\n${content}`
      : ([{ type: "text", text: label }, ...(Array.isArray(content) ? content : [])] as MessageContent);
  const id = (message as unknown as Dict).id;
  return new HumanMessage({
    content: body,
    ...(typeof id === "string" ? { id } : {}),
    additional_kwargs: marker({ synthetic: false, reason }),
  });
}

/**
 * A ChatMessage (or any message) as the typed message of `kind`, keeping its content, id, name, kwargs and
 * metadata: the same words, sent as the turn they were meant to be.
 */
export function typedMessageOf(
  message: BaseMessage,
  kind: "user" | "assistant" | "system",
): HumanMessage | AIMessage | SystemMessage {
  const m = message as unknown as Dict;
  const init: Dict = {
    content: m.content ?? "",
    additional_kwargs: isDict(m.additional_kwargs) ? m.additional_kwargs : {},
    response_metadata: isDict(m.response_metadata) ? m.response_metadata : {},
  };
  if (typeof m.id === "string") init.id = m.id;
  if (typeof m.name === "string") init.name = m.name;
  if (kind === "user") return new HumanMessage(init as never);
  if (kind === "system") return new SystemMessage(init as never);
  // Explicit: without it the constructor would parse raw `additional_kwargs.tool_calls` (the call-locations pass reads them).
  init.tool_calls = [];
  init.invalid_tool_calls = [];
  return new AIMessage(init as never);
}

export function syntheticUserMessage(text: string, reason: string, id: string): HumanMessage {
  return new HumanMessage({ content: text, id, additional_kwargs: marker({ synthetic: true, reason }) });
}

export function syntheticAssistantMessage(text: string, reason: string, id: string): AIMessage {
  return new AIMessage({ content: text, id, tool_calls: [], additional_kwargs: marker({ synthetic: true, reason }) });
}

/** The message with Google's placeholder thought signature for its first call (G6), its other signatures kept. */
export function withPlaceholderSignature(message: AIMessage): AIMessage {
  const kwargs = isDict(message.additional_kwargs) ? message.additional_kwargs : {};
  const signatures = isDict(kwargs[GEMINI_SIGNATURES_KEY]) ? kwargs[GEMINI_SIGNATURES_KEY] : {};
  const id = (message.tool_calls ?? [])[0]?.id as string;
  const signed = { ...signatures, [id]: PLACEHOLDER_THOUGHT_SIGNATURE };
  return rebuildAssistant(message, { additional_kwargs: { ...kwargs, [GEMINI_SIGNATURES_KEY]: signed } });
}

/**
 * One call of a parallel step as its own assistant step (Gemini G3 through @langchain/google-genai): no text,
 * the call, its thought signature (the model signs only the first of parallel calls, so the others get Google's
 * placeholder, G6), marked synthetic. Its id derives from the message it came from.
 */
export function callStepOf(message: AIMessage, call: Dict, signature: string, step: number): AIMessage {
  const id = (message as unknown as Dict).id;
  return new AIMessage({
    content: "",
    ...(typeof id === "string" ? { id: `${id}-step-${step}` } : {}),
    tool_calls: [call as never],
    invalid_tool_calls: [],
    additional_kwargs: {
      ...marker({ synthetic: true, reason: "parallel_calls" }),
      [GEMINI_SIGNATURES_KEY]: { [call.id as string]: signature },
    },
  });
}

/** Longest text a converted server tool result keeps (the stored thread keeps the block itself). */
const MAX_RESULT_TEXT = 20_000;

/** What a web search returned, as lines a model can read; any other result as its JSON. */
function resultText(block: Dict): string {
  const content = block.content;
  if (block.type === "web_search_tool_result" && Array.isArray(content)) {
    const lines = content
      .filter(isDict)
      .map((r) => [r.title, r.url].filter((v) => typeof v === "string" && v !== "").join(" — "))
      .filter((line) => line !== "");
    if (lines.length > 0) return lines.join("\n");
  }
  return safeJson(content ?? null, MAX_RESULT_TEXT);
}

/**
 * An Anthropic server tool block (`server_tool_use` or its inline `*_tool_result`) as a text block that says what was
 * called and what came back: for a provider that does not take them, or a result its adapter does not re-send (A13).
 */
export function serverToolBlockAsText(block: Dict): Dict {
  if (block.type === "server_tool_use") {
    const name = typeof block.name === "string" ? block.name : "server tool";
    return {
      type: "text",
      text: `[Server tool "${name}" was called (id ${safeJson(block.id, 200)}) with input ${safeJson(block.input ?? {}, 2_000)}.]`,
    };
  }
  const kind = String(block.type).replace(/_tool_result$/, "");
  return {
    type: "text",
    text: `[Result of the ${kind} server tool (call ${safeJson(block.tool_use_id, 200)}):]\n${resultText(block)}`,
  };
}

/** A reasoning block (Anthropic `thinking`, Bedrock `reasoning`) as a text block under `label`; undefined when it holds no text. */
export function reasoningAsText(block: Dict, label: string): Dict | undefined {
  const text = reasoningTextOf(block);
  return text.trim() === "" ? undefined : { type: "text", text: `[${label}:]\n${text}` };
}

function describeCall(call: DistinctCall): string {
  return (
    `[Called ${call.name ? `tool "${call.name}"` : "a tool"} (call ${call.id ?? "without an id"}) ` +
    `with arguments ${callArgsText(call.args)}]`
  );
}

/** The message's own content, then one line per call. */
function withCallText(content: MessageContent, calls: DistinctCall[]): MessageContent {
  const text = calls.map(describeCall).join("\n");
  if (typeof content === "string") return isBlankText(content) ? text : `${content}\n\n${text}`;
  return [...content, { type: "text", text }] as MessageContent;
}

/** An assistant message with its client calls (every location) written out as text after its own content. */
export function clientCallsAsText(message: AIMessage, calls: DistinctCall[]): AIMessage {
  const stripped = rewriteToolCalls(message, (ref) => (isClientCall(ref) ? "drop" : undefined));
  return rebuildAssistant(stripped, { content: withCallText(stripped.content as MessageContent, calls) });
}
