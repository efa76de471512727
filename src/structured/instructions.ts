/**
 * The text that replaces `responseFormat`: format instructions for the system prompt, the corrective user
 * message, and the helpers that put the instructions into a system message without losing its fields.
 */
import {
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  coerceMessageLikeToMessage,
  type BaseMessageLike,
} from "@langchain/core/messages";
import { hasJsonSchema, outputFormatOf, type OutputFormat } from "./format";

/**
 * Instructions for the agent's system prompt: the format's own prompt first, then the schema. Takes a schema in
 * any form `outputFormatOf` takes (zod 3 or 4, Standard JSON Schema, JSON schema) or an OutputFormat; anything
 * else is a TypeError (never instructions without a schema).
 */
export function formatInstructions(schemaOrFormat: unknown): string {
  const { prompt, jsonSchema } = hasJsonSchema(schemaOrFormat)
    ? schemaOrFormat
    : outputFormatOf(schemaOrFormat, undefined, "format");
  return [
    prompt?.trim(),
    "When you give your final answer (after any tool calls you need), reply with exactly one JSON value that " +
      "matches the JSON Schema below, and nothing else: no text before or after it. If you wrap it in a code " +
      "fence, use ```json. Do not call a tool to give the final answer.",
    "JSON Schema of the final answer:",
    JSON.stringify(jsonSchema),
  ]
    .filter(Boolean)
    .join("\n\n");
}

/** The user message of a corrective call: what was wrong, and the schema again. */
export const correctionMessage = (issues: string[], format: Pick<OutputFormat, "jsonSchema">) =>
  new HumanMessage(
    [
      "Your last reply cannot be used as the final answer. Problems:",
      issues.length > 0 ? issues.map((issue) => `- ${issue}`).join("\n") : "- (no details)",
      "Reply again with only the corrected JSON value that matches this JSON Schema, and no other text:",
      JSON.stringify(format.jsonSchema),
    ].join("\n"),
  );

/** `text` appended to a system message, as a new SystemMessage with every other field kept. */
export function systemMessageWith(message: SystemMessage, text: string): SystemMessage {
  const { content, additional_kwargs, response_metadata, id, name } = message;
  return new SystemMessage({
    content: typeof content === "string" ? promptWith(content, text) : [...content, { type: "text", text }],
    additional_kwargs,
    response_metadata,
    id,
    name,
  });
}

/** `text` appended to a prompt string (or used alone when there is none). */
export const promptWith = (prompt: string | undefined, text: string): string =>
  prompt?.trim() ? `${prompt}\n\n${text}` : text;

/**
 * Model input with the instructions in its leading system message (added when there is none). Accepts what
 * a prompt function or runnable may produce: message-likes, a PromptValue (`toChatMessages`) or a string.
 */
export function withSystemInstructions(input: unknown, text: string): BaseMessage[] {
  const messages = toMessages(input);
  const [first, ...rest] = messages;
  return first && SystemMessage.isInstance(first)
    ? [systemMessageWith(first, text), ...rest]
    : [new SystemMessage(text), ...messages];
}

/** Messages from what a prompt produced: message-likes, a PromptValue or a string (a user message). */
export function toMessages(input: unknown): BaseMessage[] {
  if (typeof input === "string") return [new HumanMessage(input)];
  const value = input as { toChatMessages?(): BaseMessage[] };
  if (typeof value?.toChatMessages === "function") return value.toChatMessages();
  if (Array.isArray(input)) return input.map((m) => coerceMessageLikeToMessage(m as BaseMessageLike));
  throw new TypeError(`Expected the prompt to produce messages, got ${typeof input}`);
}
