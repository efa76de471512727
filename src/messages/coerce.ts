/**
 * Turning what callers actually pass into real LangChain messages, or refusing with an error that names the
 * index: plain `{role, content}` objects (OpenAI wire format included), lc-serialized constructor objects,
 * LangChain's stored format (`{ type, data }`, from `mapChatMessagesToStoredMessages` and chat-history stores,
 * read with LangChain's own mapping), strings and `[role, content]` tuples. Real messages pass through
 * untouched. Nothing readable is ever turned into an empty message.
 */
import {
  AIMessage,
  BaseMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  mapStoredMessageToChatMessage,
} from "@langchain/core/messages";
import { atMessage, errorText } from "../errors";
import { describeValue, fieldsOf, isDict, lookupOf, quoteValue, type Dict } from "../values";

export const isMessage = (value: unknown) => BaseMessage.isInstance(value);

/** The roles (and types) a plain message or a tuple may name, by the kind of message each is. */
const ROLE_ALIASES = lookupOf<Kind>(
  "user:human human:human assistant:ai ai:ai model:ai tool:tool system:system developer:system",
);

/** The message classes an lc-serialized constructor names (their `...Chunk` classes too). */
const LC_CLASS = lookupOf<Kind>(
  "HumanMessage:human AIMessage:ai ToolMessage:tool SystemMessage:system ChatMessage:chat",
);

type Kind = keyof typeof CLASSES;

const CLASSES = { human: HumanMessage, ai: AIMessage, tool: ToolMessage, system: SystemMessage, chat: ChatMessage };

/** OpenAI wire tool calls `{id, function:{name, arguments}}` to LangChain `{id, name, args}`. */
function toLangChainToolCall(call: Dict) {
  const fn = call.function;
  if (!isDict(fn)) return { ...call, args: isDict(call.args) ? call.args : {}, type: "tool_call" };
  let args = fn.arguments;
  if (typeof args === "string")
    try {
      args = args.trim() ? JSON.parse(args) : {};
    } catch {
      args = { __raw_arguments: fn.arguments };
    }
  else if (!isDict(args)) args = {};
  const name = typeof fn.name === "string" ? fn.name : "";
  return { id: call.id, name, args: isDict(args) ? args : { value: args }, type: "tool_call" };
}

/** Content as a message can hold it: a string or an array; a single block becomes a one-block array. */
function contentOf(value: unknown) {
  if (value == null) return ""; // OpenAI-format assistant messages that only carry tool_calls
  if (typeof value === "string" || Array.isArray(value)) return value;
  return isDict(value) ? [value] : String(value);
}

/** The message of `kind` with the fields it takes from `fields`. */
function build(kind: Kind, fields: Dict) {
  const init: Dict = { content: contentOf(fields.content) };
  const copy = (...keys: string[]) => {
    for (const key of keys) if (fields[key] !== undefined) init[key] = fields[key];
  };
  copy("id", "name", "additional_kwargs", "response_metadata");
  if (kind === "chat") init.role = typeof fields.role === "string" ? fields.role : "user";
  if (kind === "tool") {
    // A missing id is kept missing (the pairing pass reports it); numbers are stringified.
    init.tool_call_id = typeof fields.tool_call_id === "number" ? String(fields.tool_call_id) : fields.tool_call_id;
    copy("status", "artifact");
  }
  if (kind === "ai") {
    // Entries that are not objects carry no call to keep.
    init.tool_calls = [fields.tool_calls ?? []].flat().filter(isDict).map(toLangChainToolCall);
    init.invalid_tool_calls = Array.isArray(fields.invalid_tool_calls) ? fields.invalid_tool_calls : [];
    copy("usage_metadata");
  }
  return new (CLASSES[kind] as new (fields: Dict) => BaseMessage)(init);
}

/**
 * The message at `index`, coerced. Returns the same object for real messages; throws
 * {@link ToolCallRepairInputError} for anything that is not a message in a known shape.
 */
export function readMessage(value: unknown, index: number) {
  if (isMessage(value)) return value;
  if (typeof value === "string") return new HumanMessage(value);
  if (Array.isArray(value) && value.length === 2 && typeof value[0] === "string") {
    const kind = ROLE_ALIASES.get(value[0]);
    if (!kind) throw atMessage(index, `is a tuple with unknown role ${quoteValue(value[0])}`);
    return build(kind, { content: value[1] });
  }
  if (!isDict(value)) throw atMessage(index, `is ${describeValue(value)}, not a message`);
  const { type, data } = value;
  if (value.lc === 1 && type === "constructor" && Array.isArray(value.id)) {
    const className = value.id.at(-1);
    const kind = typeof className === "string" ? LC_CLASS.get(className.replace(/Chunk$/, "")) : undefined;
    if (!kind || !isDict(value.kwargs))
      throw atMessage(index, `is an lc-serialized ${quoteValue(className)}, not a known message class`);
    return build(kind, value.kwargs);
  }
  // LangChain's stored format: `{ type, data: { content, ... } }`, read with LangChain's own mapping.
  if ("data" in value && !("content" in value) && typeof type === "string") {
    const stored = `is a stored message of type ${quoteValue(type)}`;
    if (!isDict(data)) throw atMessage(index, `${stored} whose data is ${describeValue(data)}`);
    // As for plain objects: nothing to read would become an empty message, which a later pass would delete. An
    // assistant message may carry only calls (OpenAI-style turns).
    const calls = [data.tool_calls, data.invalid_tool_calls, fieldsOf(data.additional_kwargs).tool_calls];
    if (data.content == null && !(type === "ai" && calls.some((c) => (Array.isArray(c) ? c.length : isDict(c)))))
      throw atMessage(index, `${stored} whose data has no content`);
    try {
      return mapStoredMessageToChatMessage(value as never);
    } catch (error) {
      throw atMessage(index, `${stored} that LangChain cannot read (${errorText(error)})`, error);
    }
  }
  const role = typeof value.role === "string" ? value.role : type;
  const kind = ROLE_ALIASES.get(role); // a lookup of strings: "constructor" or a number names no role
  if (!kind) throw atMessage(index, `is ${describeValue(value)} with no known role or type`);
  // Nothing to read would become an empty message, which a later pass would delete: refuse it instead.
  if (!("content" in value) && !(kind === "ai" && value.tool_calls !== undefined))
    throw atMessage(index, `is a ${quoteValue(role)} message with no content`);
  return build(kind, value);
}
