/** AWS Bedrock Converse: rules B1-B12 on the request body. */
import { readingInput } from "./common";
import {
  asArray,
  asString,
  isBlank,
  isDict,
  missingFrom,
  NAME_PATTERN,
  openLoopOpener,
  thinkingFirstText,
  type Dict,
  type PayloadViolation,
  validationOptions,
} from "./common";

export interface BedrockValidationOptions {
  /** The model rejects a conversation that ends on an assistant turn (Claude 4.6+, Llama). */
  noPrefill?: boolean;
  /** Reject two consecutive turns of one role (B6). Default true. */
  requireAlternation?: boolean;
  /** Reasoning is on (`additionalModelRequestFields.thinking`): the open tool loop's opening turn starts with it (B11). */
  reasoning?: boolean;
}

const BEDROCK_ID_MAX = 64;

const toolUseOf = (block: unknown): Dict | undefined =>
  isDict(block) && isDict(block.toolUse) ? block.toolUse : undefined;
const toolResultOf = (block: unknown): Dict | undefined =>
  isDict(block) && isDict(block.toolResult) ? block.toolResult : undefined;

function bedrockContent(message: unknown): unknown[] {
  return isDict(message) ? asArray(message.content) : [];
}

/**
 * Rules B1-B10 on a Converse request body `{ messages, system?, toolConfig? }`. Violations come in the order
 * a request is checked: request-wide rules (B3, B5), then message by message, then B7 (a model error,
 * raised after Bedrock's own checks).
 */
export function validateBedrockConverse(request: unknown, options: BedrockValidationOptions = {}): PayloadViolation[] {
  const fn = "validateBedrockConverse";
  const checked = validationOptions(options, fn, {
    noPrefill: [(v) => typeof v === "boolean", "a boolean"],
    requireAlternation: [(v) => typeof v === "boolean", "a boolean"],
    reasoning: [(v) => typeof v === "boolean", "a boolean"],
  }) as BedrockValidationOptions;
  return readingInput(() => bedrockViolations(request, checked), fn, "request");
}

function bedrockViolations(request: unknown, options: BedrockValidationOptions): PayloadViolation[] {
  const body = isDict(request) ? request : {};
  const list = asArray(body.messages);
  const violations: PayloadViolation[] = [];
  checkBedrockToolConfig(body, list, violations);
  const first = list[0];
  if (!isDict(first) || first.role !== "user") {
    violations.push({
      rule: "B5",
      path: "messages.0",
      payloadIndex: 0,
      message:
        "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
    });
  }
  list.forEach((message, index) => {
    checkBedrockBlocks(message, index, violations);
    if (options.requireAlternation !== false) checkBedrockAlternation(list, index, violations);
    checkBedrockToolResultsAfter(list, index, violations);
  });
  if (options.reasoning) checkBedrockReasoningFirst(list, violations);
  const last = list[list.length - 1];
  if (options.noPrefill && isDict(last) && last.role === "assistant") {
    violations.push({
      rule: "B7",
      path: `messages.${list.length - 1}`,
      payloadIndex: list.length - 1,
      message:
        "The model returned the following errors: This model does not support assistant message prefill. " +
        "The conversation must end with a user message.",
    });
  }
  return violations;
}

/** B3: any toolUse/toolResult block needs `toolConfig` with tools, even when no tool is meant to be called. */
function checkBedrockToolConfig(body: Dict, list: unknown[], out: PayloadViolation[]): void {
  const hasToolBlocks = list.some((message) =>
    bedrockContent(message).some((block) => toolUseOf(block) !== undefined || toolResultOf(block) !== undefined),
  );
  const toolConfig = body.toolConfig;
  const hasTools = isDict(toolConfig) && asArray(toolConfig.tools).length > 0;
  if (hasToolBlocks && !hasTools) {
    out.push({
      rule: "B3",
      path: "toolConfig",
      message: "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
    });
  }
}

/** B4 (id and name constraints), B8 (blank text), B9 (empty content), B10 (error result without content). */
function checkBedrockBlocks(message: unknown, index: number, out: PayloadViolation[]): void {
  const content = bedrockContent(message);
  if (content.length === 0) {
    out.push({
      rule: "B9",
      path: `messages.${index}`,
      payloadIndex: index,
      message:
        `The content field in the Message object at messages.${index} is empty. Add a ContentBlock ` +
        "object to the content field and try again.",
    });
    return;
  }
  checkBedrockBlankText(content, index, `messages.${index}.content`, out);
  content.forEach((block, position) => {
    const reasoning = isDict(block) && isDict(block.reasoningContent) ? block.reasoningContent : undefined;
    const text = reasoning && isDict(reasoning.reasoningText) ? reasoning.reasoningText : undefined;
    if (text && (typeof text.signature !== "string" || text.signature === "")) {
      // B12: Claude reads a reasoningText as a thinking block, and a thinking block is signed.
      const path = `messages.${index}.content.${position}.thinking.signature`;
      out.push({
        rule: "B12",
        path,
        payloadIndex: index,
        message: `The model returned the following errors: ${path}: Field required`,
      });
    }
    const member = `messages.${index}.member.content.${position}.member`;
    const at = `messages.${index}.content.${position}`;
    const use = toolUseOf(block);
    if (use) {
      checkBedrockName(use.toolUseId, index, `${member}.toolUse.toolUseId`, out);
      checkBedrockName(use.name, index, `${member}.toolUse.name`, out);
    }
    const result = toolResultOf(block);
    if (result) {
      checkBedrockName(result.toolUseId, index, `${member}.toolResult.toolUseId`, out);
      checkBedrockBlankText(result.content, index, `${at}.toolResult.content`, out);
      if (result.status === "error" && asArray(result.content).length === 0) {
        out.push({
          rule: "B10",
          path: `${at}.toolResult`,
          payloadIndex: index,
          message: `The content field at ${at}.toolResult cannot be empty when status value is error.`,
        });
      }
    }
  });
}

/**
 * B8: blank text blocks, in a message and (reported by users, same wording assumed) inside a toolResult,
 * where an empty ToolMessage ends up as `{ text: "" }`.
 */
function checkBedrockBlankText(blocks: unknown, index: number, at: string, out: PayloadViolation[]): void {
  asArray(blocks).forEach((block, position) => {
    if (!isDict(block) || typeof block.text !== "string" || !isBlank(block.text)) return;
    const path = `${at}.${position}`;
    out.push({
      rule: "B8",
      path,
      payloadIndex: index,
      message: `The text field in the ContentBlock object at ${path} is blank. Add text to the text field, and try again.`,
    });
  });
}

/** B4: 1 to 64 characters of `[a-zA-Z0-9_-]`, reported the way AWS request validation words it. */
function checkBedrockName(value: unknown, index: number, path: string, out: PayloadViolation[]): void {
  const text = asString(value) ?? "";
  let constraint: string | undefined;
  if (text.length < 1) constraint = "Member must have length greater than or equal to 1";
  else if (text.length > BEDROCK_ID_MAX) constraint = `Member must have length less than or equal to ${BEDROCK_ID_MAX}`;
  else if (!NAME_PATTERN.test(text)) constraint = "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+";
  if (constraint === undefined) return;
  out.push({
    rule: "B4",
    path,
    payloadIndex: index,
    message: `Value at '${path}' failed to satisfy constraint: ${constraint}`,
  });
}

/** B6: reported once, at the first repeated role. */
function checkBedrockAlternation(list: unknown[], index: number, out: PayloadViolation[]): void {
  if (index === 0 || out.some((v) => v.rule === "B6")) return;
  const previous = list[index - 1];
  const current = list[index];
  if (!isDict(previous) || !isDict(current) || previous.role !== current.role) return;
  out.push({
    rule: "B6",
    path: `messages.${index}`,
    payloadIndex: index,
    message:
      "A conversation must alternate between user and assistant roles. Make sure the conversation " +
      "alternates between user and assistant roles and try again.",
  });
}

/**
 * B1 and B2, checked at each message: the message after an assistant turn with toolUse blocks holds a
 * toolResult for each of their ids (a history that ends on such a turn is reported at the missing index),
 * and a message never holds more toolResult blocks than the previous turn has toolUse blocks.
 */
function checkBedrockToolResultsAfter(list: unknown[], index: number, out: PayloadViolation[]): void {
  const message = list[index];
  if (!isDict(message)) return;
  const results = bedrockContent(message)
    .map(toolResultOf)
    .filter((r): r is Dict => r !== undefined);
  const previous = index > 0 ? list[index - 1] : undefined;
  const previousUses = isDict(previous) && previous.role === "assistant" ? bedrockToolUseIds(previous) : [];
  if (results.length > previousUses.length) {
    out.push({
      rule: "B2",
      path: `messages.${index}.content`,
      payloadIndex: index,
      message: `The number of toolResult blocks at messages.${index}.content exceeds the number of toolUse blocks of previous turn.`,
    });
  }
  const ownUses = message.role === "assistant" ? bedrockToolUseIds(message) : [];
  if (ownUses.length === 0) return;
  const next = list[index + 1];
  const answered = new Set(
    (isDict(next) && next.role === "user" ? bedrockContent(next) : [])
      .map(toolResultOf)
      .map((r) => asString(r?.toolUseId))
      .filter((id): id is string => id !== undefined),
  );
  const missing = missingFrom(ownUses, answered);
  if (missing.length > 0) {
    out.push({
      rule: "B1",
      path: `messages.${index + 1}.content`,
      payloadIndex: index + 1,
      toolCallIds: missing,
      message: `Expected toolResult blocks at messages.${index + 1}.content for the following Ids: ${missing.join(", ")}`,
    });
  }
}

/** B11 (A10 through Converse): with reasoning on, the turn that opens the open tool loop starts with its reasoning. */
function checkBedrockReasoningFirst(list: unknown[], out: PayloadViolation[]): void {
  const opener = openLoopOpener(
    list,
    (m) => (isDict(m) ? String(m.role) : ""),
    (m) => bedrockContent(m).some((b) => toolResultOf(b) !== undefined),
  );
  if (opener === undefined) return;
  const first = bedrockContent(list[opener])[0];
  if (isDict(first) && isDict(first.reasoningContent)) return;
  const found = isDict(first) ? (toolUseOf(first) ? "tool_use" : (Object.keys(first)[0] ?? "text")) : "text";
  out.push({
    rule: "B11",
    path: `messages.${opener}.content.0`,
    payloadIndex: opener,
    message: `The model returned the following errors: ${thinkingFirstText(`messages.${opener}.content.0`, found)}`,
  });
}

function bedrockToolUseIds(message: Dict): string[] {
  return bedrockContent(message)
    .map(toolUseOf)
    .filter((u): u is Dict => u !== undefined)
    .map((u) => asString(u.toolUseId) ?? "");
}
