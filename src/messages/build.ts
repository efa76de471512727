/**
 * Copy-on-write builders. Every new message gets all its fields in the constructor: serialization keeps only
 * constructor kwargs, so a field set afterwards is lost at the next checkpoint (LANGGRAPH_NOTES.md).
 */
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import {
  callArgsText,
  forEachToolCallRef,
  isBlankText,
  isClientCall,
  isMarkedSyntheticResult,
  isServerToolResultBlock,
  reasoningTextOf,
  type DistinctCall,
  REPAIR_MARKER_KEY,
  type RepairMarker,
  type ToolCallRef,
} from "./inspect";
import { fieldsOf, isDict, nonEmptyString, safeJson, type Dict } from "../values";
import {
  editOutput,
  GEMINI_SIGNATURES_KEY,
  OPENAI_ITEM_IDS_KEY,
  PLACEHOLDER_THOUGHT_SIGNATURE,
  rekeyCallMaps,
  isSentReasoning,
  resentOutputOf,
  withoutId,
} from "./responses";
import type { ToolRunState } from "../types";
import { boundary } from "../errors";

/** What to do with one reference to a tool call: drop it, or keep it (optionally under a new id). */
type RefEdit = "drop" | { id: string } | undefined;

/** The edit for each ref; `occurrence` counts refs with the same id in the same location (duplicate ids). */
export type RefEditor = (ref: ToolCallRef, occurrence: number) => RefEdit;

/**
 * A copy of `value` with `key` set to `id`: one spread, then an assignment (a second spread into the same literal
 * makes V8 build a slow object).
 */
function withId(value: Dict, key: string, id: string) {
  const out = { ...value };
  out[key] = id;
  return out;
}

/** The key a tool-use record keeps its id under: the one it has (`toolUseId` first), else the format's own. */
const idKeyOf = (record: Dict, own: string) =>
  record.toolUseId !== undefined ? "toolUseId" : record.id !== undefined ? "id" : own;

/**
 * A call's record under its new id: with `own` (a raw record in `additional_kwargs`) under the id key it has, else
 * the format's; an inline server result under `tool_use_id`; a Converse `{ toolUse }` block in its record; else `id`.
 */
const renamed = (item: Dict, id: string, own?: string) =>
  own
    ? withId(item, idKeyOf(item, own), id)
    : isServerToolResultBlock(item as unknown)
      ? withId(item, "tool_use_id", id)
      : isDict(item.toolUse)
        ? { ...item, toolUse: withId(item.toolUse, idKeyOf(item.toolUse, "id"), id) }
        : withId(item, "id", id);

const listOf = (value: unknown) => (Array.isArray(value) ? value : []);

/** `kwargs` without its reasoning item when that item is among `dropped` (a copy then). */
function withoutReasoning(kwargs: Dict, dropped: string[]) {
  const { reasoning, ...rest } = kwargs;
  return isDict(reasoning) && dropped.includes(reasoning.id as string) ? rest : kwargs;
}

/**
 * Rewrite every location of every tool call in an assistant message at once. Returns the same message when
 * the editor changes nothing. A `tool_use` block left in content or a Responses `function_call` left in
 * `response_metadata.output` is still sent by the adapters, so removal must reach all of them. `promoted` calls
 * are appended to `tool_calls`.
 */
export function rewriteToolCalls(message: AIMessage, edit: RefEditor, promoted: Dict[] = []) {
  // Per list (content blocks are one list), the edit at each position; the edits of server tool calls by id.
  const edits = new Map<string, Map<number, RefEdit>>();
  const servers = new Map<unknown, RefEdit>();
  const occurrences = new Map<string, number>();
  // Old id to new id, and the ids some ref still carries: the per-call maps follow (rekeyCallMaps).
  const renames = new Map<string, string>();
  const idsKept = new Set<string>();
  forEachToolCallRef(message, (ref) => {
    const key = `${ref.location}\u0000${ref.id ?? ""}`;
    const occurrence = occurrences.get(key) ?? 0;
    occurrences.set(key, occurrence + 1);
    const e = edit(ref, occurrence);
    const changed = e === "drop" || (e && e.id !== ref.id);
    // Keyed by the id as stored: an empty id ("", no id to pair by) still keys its call's signature. Several calls
    // stored under one id: what is keyed by it follows the first (the signature is the first call's, G6).
    const stored = ref.rawId;
    if (typeof stored === "string" && e !== "drop")
      changed ? renames.has(stored) || renames.set(stored, e!.id) : idsKept.add(stored);
    if (!changed) return;
    const list = ref.location.startsWith("content.") ? "content" : ref.location;
    edits.set(list, (edits.get(list) ?? new Map()).set(ref.position, e));
    if (ref.location === "content.server_tool_use") servers.set(stored, e);
  });
  if (!edits.size && !promoted.length) return message;
  const m = fieldsOf(message);

  /** `items` with the edits of `list` applied (`own`: the id key of its records); the same array when it has none. */
  const apply = (items: unknown, list: string, own?: string) => {
    const byPos = edits.get(list);
    if (!byPos || !Array.isArray(items)) return items;
    return items.flatMap((item, i) => {
      const e = byPos.get(i);
      return e === "drop" ? [] : [e ? renamed(item, e.id, own) : item];
    });
  };

  let kwargs = { ...fieldsOf(m.additional_kwargs) };
  for (const key of ["tool_calls", "tool_use", "toolUse"]) {
    const location = `additional_kwargs.${key}`;
    if (!edits.has(location)) continue;
    const value = kwargs[key];
    const many = Array.isArray(value);
    const rewritten = apply(many ? value : [value], location, key === "toolUse" ? "toolUseId" : "id") as unknown[];
    if (!rewritten.length) delete kwargs[key];
    else kwargs[key] = many ? rewritten : rewritten[0];
  }

  // A server tool's inline result follows its call's new id, and leaves with it (A4, A13). An edit of a location
  // means refs there: its list is an array (content here, the output below).
  const content = m.content;
  if (servers.size)
    (content as unknown[]).forEach((block, i) => {
      const e = isServerToolResultBlock(block) && servers.get(block.tool_use_id);
      if (e) edits.get("content")!.set(i, e);
    });

  let meta = isDict(m.response_metadata) ? m.response_metadata : {};
  const outputEdits = edits.get("response_metadata.output");
  if (outputEdits) {
    // A renamed call keeps its item id (unique item ids are the response-items pass's); a reasoning item whose
    // call is removed goes with it (R7).
    const { output, droppedReasoning } = editOutput(meta.output as Dict[], (item, i) => {
      const e = outputEdits.get(i);
      return !e || e === "drop" ? e : withId(item, "call_id", e.id);
    });
    meta = { ...meta, output };
    kwargs = withoutReasoning(kwargs, droppedReasoning);
  }
  if (renames.size) kwargs = rekeyCallMaps(kwargs, renames, idsKept);
  return rebuildMessage(message, {
    content: apply(content, "content"),
    tool_calls: [...(apply(listOf(m.tool_calls), "tool_calls") as unknown[]), ...promoted],
    invalid_tool_calls: apply(listOf(m.invalid_tool_calls), "invalid_tool_calls"),
    additional_kwargs: kwargs,
    response_metadata: meta,
  });
}

/**
 * The message with the Responses items whose ids `goes` names taken off them: a reasoning item is removed
 * (`additional_kwargs.reasoning` with it), any other item is kept without its id (in the re-sent output, or its
 * `fc_` id out of the call map), and a reasoning item left without its following item goes too (R7). The
 * message's content (its text, its reasoning summary) is untouched. Returns the ids of the reasoning items removed.
 * `v1`, for a Responses request only: the v1 message as ChatOpenAI can send it (it sends a v1 message from its content
 * blocks, reasoning with its id, the rest without: R7): with an output to re-send, as `output_version: "v0"`, whose
 * output the converter re-sends verbatim, follower ids and all; else without the reasoning blocks that carry an id.
 */
export function withoutItemIds(message: AIMessage, goes: (id: string) => boolean, v1?: boolean) {
  const gone = (id: unknown) => typeof id === "string" && goes(id);
  const output = resentOutputOf(message);
  const kwargs = { ...fieldsOf(message.additional_kwargs) };
  const fields: Dict = {};
  let dropped: string[] = [];
  if (output) {
    const { output: kept, droppedReasoning } = editOutput(output, (item) =>
      !gone(item.id) ? undefined : item.type === "reasoning" ? "drop" : withoutId(item),
    );
    fields.response_metadata = { ...message.response_metadata, output: kept, ...(v1 && { output_version: "v0" }) };
    dropped = droppedReasoning;
  } else {
    const { reasoning, [OPENAI_ITEM_IDS_KEY]: map } = kwargs;
    // A v1 message is sent from its content: its reasoning blocks go (its kwargs' reasoning item with them).
    if (v1) {
      const content = message.content as Dict[];
      fields.content = content.filter((b) => !isSentReasoning(b));
      dropped = content.filter(isSentReasoning).map((b) => b.id as string);
    } else if (isDict(reasoning) && gone(reasoning.id)) dropped = [reasoning.id as string];
    if (isDict(map)) kwargs[OPENAI_ITEM_IDS_KEY] = Object.fromEntries(Object.entries(map).filter(([, v]) => !gone(v)));
  }
  fields.additional_kwargs = withoutReasoning(kwargs, dropped);
  return { message: rebuildMessage(message, fields), droppedReasoning: dropped };
}

/**
 * The constructor fields of a rebuilt message, `fields` over the message's own, in the message's field order:
 * `content`, the `always` fields (tool calls: without them the constructor re-parses
 * `additional_kwargs.tool_calls`), the kwargs and metadata, then the `optional` ones it has. Built key by key:
 * spreading two objects into a third makes V8 build it in a slow shape that the message then keeps (measured 20x
 * slower to build).
 */
function carried(message: object, fields: Dict, always: string[], optional: string[]) {
  const m = message as Dict;
  const own = (key: string) => (key in fields ? fields[key] : m[key]);
  const init: Dict = { content: "content" in fields || m.content !== undefined ? own("content") : "" };
  for (const key of always)
    init[key] = key in fields || key === "tool_call_id" || Array.isArray(m[key]) ? own(key) : [];
  for (const key of ["additional_kwargs", "response_metadata"])
    init[key] = key in fields || isDict(m[key]) ? own(key) : {};
  for (const key of optional) if (own(key) !== undefined) init[key] = own(key);
  return init;
}

/**
 * A new message of the same kind with `fields` replaced and every other constructor field carried over (the
 * one place that knows each class's fields).
 */
export function rebuildMessage<T extends BaseMessage>(message: T, fields: Dict) {
  if (AIMessage.isInstance(message))
    return new AIMessage(
      carried(message, fields, ["tool_calls", "invalid_tool_calls"], ["id", "name", "usage_metadata"]) as never,
    ) as never;
  if (ToolMessage.isInstance(message))
    return new ToolMessage(
      carried(message, fields, ["tool_call_id"], ["id", "name", "status", "artifact"]) as never,
    ) as never;
  // Any other class (human, system, chat: its role is among its kwargs, function messages, custom subclasses): its
  // own constructor with its own kwargs.
  return new (message.constructor as new (fields: Dict) => T)(
    Object.assign({}, message.lc_kwargs, carried(message, fields, [], ["id", "name"])),
  );
}

/** `additional_kwargs` holding the repair marker (its fields that are set, one by one: a repair makes one per synthetic message). */
function marker(fields: Partial<RepairMarker>) {
  const set: Dict = {};
  for (const key of ["synthetic", "reason", "toolCallId", "toolName", "toolRun"] as const)
    if (fields[key] !== undefined) set[key] = fields[key];
  return { [REPAIR_MARKER_KEY]: set };
}

/**
 * A result for a call that has no real one. Providers ignore `status`, so the content itself says what is known
 * (`toolRun`). The marker in `additional_kwargs` is machine-readable, carries `toolRun` too, and survives
 * checkpoint serialization.
 */
export const syntheticToolResult = (args: {
  toolCallId: string;
  toolName?: string;
  reason: string;
  text: string;
  toolRun: ToolRunState;
}) =>
  new ToolMessage({
    content: args.text,
    tool_call_id: args.toolCallId,
    ...(args.toolName && { name: args.toolName }),
    status: "error",
    id: `tool-repair-${args.toolCallId}`,
    additional_kwargs: marker({ ...args, synthetic: true }),
  });

/** What the model should do about a call that may have started: check first, unless the tool only reads. */
const CHECK_FIRST =
  "It may have started, and may have taken effect; its outcome is unknown. " +
  "Do not call it again without first checking whether it already took effect.";
const READ_ONLY = "It is read-only, so it can simply be called again if its result is still needed.";

/** Per run state: what the default text says happened, why by default, and what the model should do. */
const SYNTHETIC_TEXTS = {
  never_started: [
    "did not run",
    "it was never started",
    "No result is available; call it again if it is still needed.",
  ],
  cancelled: [
    "did not run",
    "it was waiting for the user's approval, and the user sent a new message instead",
    "Do not run it unless the user asks for it again.",
  ],
  outcome_unknown: ["has no result", "no result was recorded for it", CHECK_FIRST],
  interrupted: ["has no result", "the run stopped before its result was recorded", CHECK_FIRST],
};

/**
 * The default text of a synthetic result. It claims only what is known: a call whose tool may have started is
 * never said not to have run (a payment or an email may have gone out), so the model is told to check, not to
 * repeat it; a read-only tool's (`readOnly`) may simply be called again.
 */
export const defaultSyntheticText = boundary(
  "defaultSyntheticText",
  (call: { id: string; name?: string; reason: string; note?: string; toolRun?: ToolRunState; readOnly?: boolean }) => {
    const { id, name, note, toolRun = "outcome_unknown" } = call;
    const [said, why, advice] = SYNTHETIC_TEXTS[toolRun];
    const again = call.readOnly && advice === CHECK_FIRST ? READ_ONLY : advice;
    return `${name ? `Tool "${name}"` : "The tool"} (call ${id}) ${said}: ${note ?? why}. ${again}`;
  },
);

/**
 * A user message that says `label`, then `content` (text after it, blocks after a text block of it), keeping
 * `id`: every provider accepts a user message. Marked with `marked` (not synthetic unless said).
 */
const userText = (content: unknown, label: string, id: unknown, marked: Partial<RepairMarker>) =>
  new HumanMessage({
    content: (typeof content === "string"
      ? `${label}\n${content}`
      : [{ type: "text", text: label }, ...listOf(content)]) as never,
    ...(typeof id === "string" && { id }),
    additional_kwargs: marker({ synthetic: false, ...marked }),
  });

/**
 * A user message holding the content of a tool result whose call is gone: every provider accepts a user
 * message, none accepts a tool result without its call.
 */
export function orphanResultAsUserMessage(result: BaseMessage, toolCallId: string | undefined) {
  const toolName = typeof result.name === "string" ? result.name : undefined;
  return userText(
    result.content,
    `[Tool result${toolName ? ` from "${toolName}"` : ""}${toolCallId ? ` for call ${toolCallId}` : ""}` +
      "; its tool call is no longer in this conversation.]",
    result.id,
    { reason: "orphan_result", toolCallId, toolName },
  );
}

/** Content block types every adapter sends in a user message (text, images, files, audio, video). */
const USER_BLOCK_TYPES = new Set(["text", "image_url", "image", "file", "document", "audio", "video"]);

/**
 * A tool result as a user message, for a request that carries no tools: a label that names the tool, the call
 * it answers and an error status, then its content (text as it is, blocks a user message takes as they are, any
 * other block, a bare string, as its text, JSON cut at 20,000 characters). Keeps the result's id; marked, not
 * synthetic unless the result was. A result without output says so.
 */
export function toolResultAsUserText(result: ToolMessage, reason: string) {
  const toolName = nonEmptyString(result.name);
  const toolCallId = nonEmptyString(result.tool_call_id);
  const failed = result.status === "error" ? " (the tool reported an error)" : "";
  const label = `[Result of ${toolName ? `tool "${toolName}"` : "a tool"}${toolCallId ? ` for call ${toolCallId}` : ""}${failed}:]`;
  const { content } = result;
  const blocks = Array.isArray(content)
    ? Array.from(content, (b) =>
        isDict(b) && USER_BLOCK_TYPES.has(b.type as string)
          ? b
          : { type: "text", text: typeof b === "string" ? b : safeJson(b, 20_000) },
      )
    : undefined;
  const empty = blocks ? !blocks.length : typeof content !== "string" || isBlankText(content);
  return userText(empty ? "(the tool returned no output)" : (blocks ?? content), label, result.id, {
    synthetic: isMarkedSyntheticResult(result),
    reason,
    toolCallId,
    toolName,
  });
}

/**
 * A message as user text under `label`, keeping its content (blocks too) and id; marked, not synthetic (the words
 * are real): a system message the provider does not accept where it stands, a ChatMessage of a role it mis-sends.
 */
export const labeledUserText = (message: BaseMessage, label: string, reason: string) =>
  userText(message.content, label, message.id, { reason });

/**
 * A ChatMessage (or any message) as the typed message of `kind`, keeping its content (null content as ""), id,
 * name, kwargs and metadata: the same words, sent as the turn they were meant to be.
 */
export function typedMessageOf(message: BaseMessage, kind: "user" | "assistant" | "system") {
  const init = carried(message, { content: message.content ?? "" }, [], ["id", "name"]);
  // Explicit calls: without them the constructor would parse raw `additional_kwargs.tool_calls` (the call-locations
  // pass reads them).
  if (kind === "assistant") return new AIMessage({ ...init, tool_calls: [], invalid_tool_calls: [] } as never);
  return new (kind === "user" ? HumanMessage : SystemMessage)(init as never);
}

export const syntheticUserMessage = (text: string, reason: string, id: string) =>
  new HumanMessage({ content: text, id, additional_kwargs: marker({ synthetic: true, reason }) });

export const syntheticAssistantMessage = (text: string, reason: string, id: string) =>
  new AIMessage({ content: text, id, tool_calls: [], additional_kwargs: marker({ synthetic: true, reason }) });

/** The message with Google's placeholder thought signature for its first call (G6), its other signatures kept. */
export function withPlaceholderSignature(message: AIMessage) {
  const kwargs = fieldsOf(message.additional_kwargs);
  const signed = {
    ...fieldsOf(kwargs[GEMINI_SIGNATURES_KEY]),
    [message.tool_calls?.[0]?.id as string]: PLACEHOLDER_THOUGHT_SIGNATURE,
  };
  return rebuildMessage(message, { additional_kwargs: { ...kwargs, [GEMINI_SIGNATURES_KEY]: signed } });
}

/**
 * One call of a parallel step as its own assistant step (Gemini G3 through @langchain/google-genai): no text,
 * the call, its thought signature (the model signs only the first of parallel calls, so the others get Google's
 * placeholder, G6), marked synthetic. Its id derives from the message it came from.
 */
export const callStepOf = (message: AIMessage, call: Dict, signature: string, step: number) =>
  new AIMessage({
    content: "",
    ...(typeof message.id === "string" && { id: `${message.id}-step-${step}` }),
    tool_calls: [call as never],
    invalid_tool_calls: [],
    additional_kwargs: {
      ...marker({ synthetic: true, reason: "parallel_calls" }),
      [GEMINI_SIGNATURES_KEY]: { [call.id as string]: signature },
    },
  });

/**
 * An Anthropic server tool block (`server_tool_use` or its inline `*_tool_result`) as a text block that says what was
 * called and what came back: for a provider that does not take them, or a result its adapter does not re-send (A13).
 * A web search's results as lines a model can read; any other result as its JSON (cut at 20,000 characters).
 */
export function serverToolBlockAsText(block: Dict) {
  const { type, name, content } = block;
  const lines =
    type === "web_search_tool_result" && Array.isArray(content)
      ? content
          .filter(isDict)
          .map((r) => [r.title, r.url].filter(nonEmptyString).join(" — "))
          .filter(Boolean)
          .join("\n")
      : "";
  const text =
    type === "server_tool_use"
      ? `[Server tool "${typeof name === "string" ? name : "server tool"}" was called (id ${safeJson(block.id, 200)}) ` +
        `with input ${safeJson(block.input ?? {}, 2_000)}.]`
      : `[Result of the ${String(type).replace(/_tool_result$/, "")} server tool (call ${safeJson(block.tool_use_id, 200)}):]\n` +
        (lines || safeJson(content ?? null, 20_000));
  return { type: "text", text };
}

/** A reasoning block (Anthropic `thinking`, Bedrock `reasoning`) as a text block under `label`; undefined when it holds no text. */
export function reasoningAsText(block: Dict, label: string) {
  const text = reasoningTextOf(block);
  return text.trim() ? { type: "text", text: `[${label}:]\n${text}` } : undefined;
}

/** An assistant message with its client calls (every location) written out as text after its own content. */
export function clientCallsAsText(message: AIMessage, calls: DistinctCall[]) {
  const stripped = rewriteToolCalls(message, (ref) => (isClientCall(ref) ? "drop" : undefined));
  const text = calls
    .map(
      ({ id, name, args }) =>
        `[Called ${name ? `tool "${name}"` : "a tool"} (call ${id ?? "without an id"}) with arguments ${callArgsText(args)}]`,
    )
    .join("\n");
  const own = stripped.content;
  return rebuildMessage(stripped, {
    content:
      typeof own === "string" ? (isBlankText(own) ? text : `${own}\n\n${text}`) : [...own, { type: "text", text }],
  });
}
