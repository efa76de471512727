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
import { ToolCallRepairInputError, boundary, errorText, expectedInput } from "../errors";
import { describeValue, isDict, quoteValue, type Dict } from "../values";

export { ToolCallRepairInputError };

export function isMessage(value: unknown): value is BaseMessage {
  return BaseMessage.isInstance(value as BaseMessage);
}

const ROLE_ALIASES: Record<string, "human" | "ai" | "tool" | "system"> = Object.assign(Object.create(null), {
  user: "human",
  human: "human",
  assistant: "ai",
  ai: "ai",
  model: "ai",
  tool: "tool",
  system: "system",
  developer: "system",
});

const LC_CLASS: Record<string, "human" | "ai" | "tool" | "system" | "chat"> = Object.assign(Object.create(null), {
  HumanMessage: "human",
  HumanMessageChunk: "human",
  AIMessage: "ai",
  AIMessageChunk: "ai",
  ToolMessage: "tool",
  ToolMessageChunk: "tool",
  SystemMessage: "system",
  SystemMessageChunk: "system",
  ChatMessage: "chat",
  ChatMessageChunk: "chat",
});

/** The stored-format types `mapStoredMessageToChatMessage` reads. */
const STORED_TYPES = new Set(["human", "ai", "system", "tool", "generic", "function"]);

/** OpenAI wire tool calls `{id, function:{name, arguments}}` to LangChain `{id, name, args}`. */
function toLangChainToolCall(call: Dict): Dict {
  if (isDict(call.function)) {
    const fn = call.function;
    let args: unknown = {};
    if (typeof fn.arguments === "string") {
      try {
        args = fn.arguments.trim() ? JSON.parse(fn.arguments) : {};
      } catch {
        args = { __raw_arguments: fn.arguments };
      }
    } else if (isDict(fn.arguments)) args = fn.arguments;
    return {
      id: call.id,
      name: typeof fn.name === "string" ? fn.name : "",
      args: isDict(args) ? args : { value: args },
      type: "tool_call",
    };
  }
  return { ...call, args: isDict(call.args) ? call.args : {}, type: "tool_call" };
}

/** Content as a message can hold it: a string or an array; a single block becomes a one-block array. */
function contentOf(value: unknown): unknown {
  if (value === undefined || value === null) return ""; // OpenAI-format assistant messages that only carry tool_calls
  if (typeof value === "string" || Array.isArray(value)) return value;
  if (isDict(value)) return [value];
  return String(value);
}

function build(kind: "human" | "ai" | "tool" | "system" | "chat", fields: Dict): BaseMessage {
  const common: Dict = { content: contentOf(fields.content) };
  for (const key of ["id", "name", "additional_kwargs", "response_metadata"])
    if (fields[key] !== undefined) common[key] = fields[key];
  switch (kind) {
    case "human":
      return new HumanMessage(common as never);
    case "system":
      return new SystemMessage(common as never);
    case "chat":
      return new ChatMessage({ ...common, role: typeof fields.role === "string" ? fields.role : "user" } as never);
    case "tool": {
      const id = fields.tool_call_id;
      return new ToolMessage({
        ...common,
        // A missing id is kept missing (the pairing pass reports it); numbers are stringified.
        tool_call_id: typeof id === "number" ? String(id) : (id as string),
        ...(fields.status !== undefined ? { status: fields.status } : {}),
        ...(fields.artifact !== undefined ? { artifact: fields.artifact } : {}),
      } as never);
    }
    case "ai": {
      const raw = fields.tool_calls;
      const list = raw === undefined || raw === null ? [] : Array.isArray(raw) ? raw : [raw];
      return new AIMessage({
        ...common,
        // Entries that are not objects carry no call to keep.
        tool_calls: list.filter(isDict).map(toLangChainToolCall),
        invalid_tool_calls: Array.isArray(fields.invalid_tool_calls) ? fields.invalid_tool_calls : [],
        ...(fields.usage_metadata !== undefined ? { usage_metadata: fields.usage_metadata } : {}),
      } as never);
    }
  }
}

/** LangChain's stored format: `{ type, data: { content, ... } }`, read with LangChain's own mapping. */
function isStoredMessage(value: Dict): boolean {
  return (
    typeof value.type === "string" &&
    STORED_TYPES.has(value.type) &&
    isDict(value.data) &&
    !("role" in value) &&
    !("content" in value)
  );
}

/**
 * Whether stored `data` has something to read: a content that is not null, or, for an assistant message, tool
 * calls (OpenAI-style assistant turns carry only calls).
 */
function hasStoredContent(type: string, data: Dict): boolean {
  if (data.content !== undefined && data.content !== null) return true;
  if (type !== "ai") return false;
  const kwargs = isDict(data.additional_kwargs) ? data.additional_kwargs : {};
  return [data.tool_calls, data.invalid_tool_calls, kwargs.tool_calls].some((calls) =>
    Array.isArray(calls) ? calls.length > 0 : isDict(calls),
  );
}

/**
 * The message at `index`, coerced. Returns the same object for real messages; throws
 * {@link ToolCallRepairInputError} for anything that is not a message in a known shape.
 */
export const coerceMessage = boundary("coerceMessage", (value: unknown, index: number): BaseMessage => {
  if (!Number.isSafeInteger(index) || index < 0)
    throw expectedInput("coerceMessage", "index", "the message's index in its list (a non-negative integer)", index);
  return readMessage(value, index);
});

/** {@link coerceMessage} for the package's own readers, behind their callers' boundary. */
export function readMessage(value: unknown, index: number): BaseMessage {
  if (isMessage(value)) return value;
  if (typeof value === "string") return new HumanMessage(value);
  if (Array.isArray(value) && value.length === 2 && typeof value[0] === "string") {
    const kind = ROLE_ALIASES[value[0]];
    if (!kind) throw ToolCallRepairInputError.atMessage(index, `is a tuple with unknown role ${quoteValue(value[0])}`);
    return build(kind, { content: value[1] });
  }
  if (!isDict(value)) throw ToolCallRepairInputError.atMessage(index, `is ${describeValue(value)}, not a message`);
  if (value.lc === 1 && value.type === "constructor" && Array.isArray(value.id)) {
    const className = value.id[value.id.length - 1];
    const kind = typeof className === "string" ? LC_CLASS[className] : undefined;
    if (!kind || !isDict(value.kwargs))
      throw ToolCallRepairInputError.atMessage(
        index,
        `is an lc-serialized ${quoteValue(className)}, not a known message class`,
      );
    return build(kind, value.kwargs);
  }
  if (
    isStoredMessage(value) ||
    (isDict(value) && "data" in value && !("content" in value) && typeof value.type === "string")
  ) {
    if (!isDict(value.data))
      throw ToolCallRepairInputError.atMessage(
        index,
        `is a stored message of type ${quoteValue(value.type)} whose data is ${describeValue(value.data)}`,
      );
    // As for plain objects: nothing to read would become an empty message, which a later pass would delete.
    if (!hasStoredContent(value.type as string, value.data))
      throw ToolCallRepairInputError.atMessage(
        index,
        `is a stored message of type ${quoteValue(value.type)} whose data has no content`,
      );
    try {
      return mapStoredMessageToChatMessage(value as never);
    } catch (error) {
      throw ToolCallRepairInputError.atMessage(
        index,
        `is a stored message of type ${quoteValue(value.type)} that LangChain cannot read (${errorText(error)})`,
        error,
      );
    }
  }
  const role = typeof value.role === "string" ? value.role : typeof value.type === "string" ? value.type : undefined;
  const kind = role === undefined ? undefined : ROLE_ALIASES[role];
  if (!kind) throw ToolCallRepairInputError.atMessage(index, `is ${describeValue(value)} with no known role or type`);
  // Nothing to read would become an empty message, which a later pass would delete: refuse it instead.
  if (!("content" in value) && !(kind === "ai" && value.tool_calls !== undefined))
    throw ToolCallRepairInputError.atMessage(index, `is a ${quoteValue(role)} message with no content`);
  return build(kind, value);
}
