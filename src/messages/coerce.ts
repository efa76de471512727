/**
 * Turning what callers actually pass (plain `{role, content}` objects, lc-serialized constructor objects,
 * strings, `[role, content]` tuples) into real LangChain messages, or refusing with an error that names the
 * index. Real messages pass through untouched.
 */
import {
  AIMessage,
  BaseMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { isDict, type Dict } from "./inspect";


/** Thrown for input that cannot be read as a message. `index` is its position in the input. */
export class ToolCallRepairInputError extends TypeError {
  constructor(
    readonly index: number,
    detail: string,
  ) {
    super(`langgraph-tool-repair: messages[${index}] ${detail}`);
    this.name = "ToolCallRepairInputError";
  }
}

export function isMessage(value: unknown): value is BaseMessage {
  return BaseMessage.isInstance(value as BaseMessage);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value !== "object") return `a ${typeof value}`;
  const keys = Object.keys(value as object).slice(0, 6);
  return `an object with keys {${keys.join(", ")}}`;
}

const ROLE_ALIASES: Record<string, "human" | "ai" | "tool" | "system"> = {
  user: "human",
  human: "human",
  assistant: "ai",
  ai: "ai",
  model: "ai",
  tool: "tool",
  system: "system",
  developer: "system",
};

const LC_CLASS: Record<string, "human" | "ai" | "tool" | "system" | "chat"> = {
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
};

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
    return { id: call.id, name: typeof fn.name === "string" ? fn.name : "", args: isDict(args) ? args : { value: args }, type: "tool_call" };
  }
  return { ...call, args: isDict(call.args) ? call.args : {}, type: "tool_call" };
}

function build(kind: "human" | "ai" | "tool" | "system" | "chat", fields: Dict, index: number): BaseMessage {
  // null content is common in OpenAI-format assistant messages that only carry tool_calls.
  const content = fields.content ?? "";
  const common: Dict = { content };
  for (const key of ["id", "name", "additional_kwargs", "response_metadata"]) if (fields[key] !== undefined) common[key] = fields[key];
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
  throw new ToolCallRepairInputError(index, `has an unknown message kind ${kind}`);
}

/**
 * The message at `index`, coerced. Returns the same object for real messages; throws
 * {@link ToolCallRepairInputError} for anything that is not a message in a known shape.
 */
export function coerceMessage(value: unknown, index: number): BaseMessage {
  if (isMessage(value)) return value;
  if (typeof value === "string") return new HumanMessage(value);
  if (Array.isArray(value) && value.length === 2 && typeof value[0] === "string") {
    const kind = ROLE_ALIASES[value[0]];
    if (!kind) throw new ToolCallRepairInputError(index, `is a tuple with unknown role ${JSON.stringify(value[0])}`);
    return build(kind, { content: value[1] }, index);
  }
  if (!isDict(value)) throw new ToolCallRepairInputError(index, `is ${describe(value)}, not a message`);
  if (value.lc === 1 && value.type === "constructor" && Array.isArray(value.id)) {
    const className = value.id[value.id.length - 1];
    const kind = typeof className === "string" ? LC_CLASS[className] : undefined;
    if (!kind || !isDict(value.kwargs))
      throw new ToolCallRepairInputError(index, `is an lc-serialized ${JSON.stringify(className)}, not a known message class`);
    return build(kind, value.kwargs, index);
  }
  const role = typeof value.role === "string" ? value.role : typeof value.type === "string" ? value.type : undefined;
  const kind = role ? ROLE_ALIASES[role] : undefined;
  if (!kind) throw new ToolCallRepairInputError(index, `is ${describe(value)} with no known role or type`);
  return build(kind, value, index);
}
