/**
 * Validators for the request payloads that providers receive, one per wire format. They check the tool-call
 * rules of PROVIDER_RULES.md and answer with the provider's own error text, so a test can lint the payload
 * its adapter would send (or did send) without a network call.
 *
 * Inputs are typed `unknown` on purpose: captured payloads are plain JSON and may be malformed; anything
 * that is not the expected shape is skipped rather than thrown on.
 */

export interface PayloadViolation {
  /** Rule id from PROVIDER_RULES.md, e.g. "B1". */
  rule: string;
  /** The provider's own error text, with ids and indexes filled in. */
  message: string;
  /** Where in the payload, e.g. "messages[2]" or "messages.2.content". */
  path?: string;
}

type Dict = Record<string, unknown>;

const isDict = (v: unknown): v is Dict => typeof v === "object" && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const asString = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const isBlank = (text: string): boolean => text.trim() === "";

/** The id / function name pattern shared by OpenAI, Anthropic and Bedrock. */
const NAME_PATTERN = /^[a-zA-Z0-9_-]+$/;

function missingFrom(expected: string[], present: Set<string>): string[] {
  return expected.filter((id) => !present.has(id));
}

// ---------------------------------------------------------------------------------------------------------
// OpenAI Chat Completions
// ---------------------------------------------------------------------------------------------------------

const OPENAI_ID_MAX = 40;

function openAIToolCalls(message: Dict): Dict[] {
  return asArray(message.tool_calls).filter(isDict);
}

/** Rules O1-O5 on a Chat Completions `messages` array. */
export function validateOpenAIChatMessages(messages: unknown): PayloadViolation[] {
  const list = asArray(messages);
  const violations: PayloadViolation[] = [];
  const answeredAt = new Map<string, number>();

  list.forEach((message, index) => {
    if (!isDict(message)) return;
    if (message.role === "assistant") {
      checkOpenAIToolCallShapes(message, index, violations);
      checkOpenAIAnswered(list, message, index, violations);
    } else if (message.role === "tool") {
      checkOpenAIToolMessage(list, message, index, answeredAt, violations);
    }
  });
  return violations;
}

function checkOpenAIToolCallShapes(message: Dict, index: number, out: PayloadViolation[]): void {
  openAIToolCalls(message).forEach((call, position) => {
    const id = asString(call.id);
    if (id !== undefined && id.length > OPENAI_ID_MAX) {
      const path = `messages[${index}].tool_calls[${position}].id`;
      out.push({
        rule: "O4",
        path,
        message: `Invalid '${path}': string too long. Expected a string with maximum length ${OPENAI_ID_MAX}, but got a string with length ${id.length} instead.`,
      });
    }
    const name = isDict(call.function) ? asString(call.function.name) : undefined;
    if (name === undefined || !NAME_PATTERN.test(name)) {
      const path = `messages[${index}].tool_calls[${position}].function.name`;
      out.push({
        rule: "O5",
        path,
        message: `Invalid '${path}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
      });
    }
  });
}

/** O1: every call id answered by the run of tool messages that directly follows the assistant message. */
function checkOpenAIAnswered(list: unknown[], message: Dict, index: number, out: PayloadViolation[]): void {
  const ids = openAIToolCalls(message)
    .map((call) => asString(call.id))
    .filter((id): id is string => id !== undefined);
  if (ids.length === 0) return;
  const answered = new Set<string>();
  for (let next = index + 1; next < list.length; next++) {
    const following = list[next];
    if (!isDict(following) || following.role !== "tool") break;
    const id = asString(following.tool_call_id);
    if (id !== undefined) answered.add(id);
  }
  const missing = missingFrom(ids, answered);
  if (missing.length > 0) {
    out.push({
      rule: "O1",
      path: `messages[${index}]`,
      message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(", ")}`,
    });
  }
}

/** The assistant message a tool message answers: the one right before its run of tool messages. */
function owningAssistant(list: unknown[], index: number): Dict | undefined {
  for (let previous = index - 1; previous >= 0; previous--) {
    const candidate = list[previous];
    if (isDict(candidate) && candidate.role === "tool") continue;
    return isDict(candidate) && candidate.role === "assistant" ? candidate : undefined;
  }
  return undefined;
}

function checkOpenAIToolMessage(
  list: unknown[],
  message: Dict,
  index: number,
  answeredAt: Map<string, number>,
  out: PayloadViolation[],
): void {
  const id = asString(message.tool_call_id);
  const owner = owningAssistant(list, index);
  const ownerIds = owner ? openAIToolCalls(owner).map((call) => asString(call.id)) : [];
  if (id === undefined || !ownerIds.includes(id)) {
    out.push({
      rule: "O2",
      path: `messages[${index}]`,
      message:
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    });
  }
  if (id === undefined) return;
  const earlier = answeredAt.get(id);
  if (earlier !== undefined) {
    out.push({
      rule: "O3",
      path: `messages[${index}]`,
      message: `Invalid parameter: Duplicate value for 'tool_call_id' of '${id}', in messages[${earlier}] and messages[${index}].`,
    });
  } else {
    answeredAt.set(id, index);
  }
}

// ---------------------------------------------------------------------------------------------------------
// OpenAI Responses API
// ---------------------------------------------------------------------------------------------------------

const RESPONSES_CALL_ID_MAX = 64;

/**
 * Rules R1, R2, R3, R5 on a Responses API `input` (a string input has nothing to check). Calls stored
 * server-side through `previous_response_id` are not visible here: R2 assumes the input holds every call.
 */
export function validateOpenAIResponsesInput(input: unknown): PayloadViolation[] {
  const items = asArray(input);
  const violations: PayloadViolation[] = [];
  const outputIds = new Set<string>();
  for (const item of items) {
    if (isDict(item) && item.type === "function_call_output") {
      const callId = asString(item.call_id);
      if (callId !== undefined) outputIds.add(callId);
    }
  }
  const callIdsSoFar = new Set<string>();
  const itemIdsSoFar = new Set<string>();

  items.forEach((item, index) => {
    if (!isDict(item)) return;
    checkResponsesItemId(item, itemIdsSoFar, violations);
    const callId = asString(item.call_id);
    if (item.type === "function_call" || item.type === "function_call_output") {
      checkResponsesCallIdLength(callId, index, violations);
    }
    if (item.type === "function_call" && callId !== undefined) {
      callIdsSoFar.add(callId);
      if (!outputIds.has(callId)) {
        violations.push({
          rule: "R1",
          path: `input[${index}]`,
          message: `No tool output found for function call ${callId}.`,
        });
      }
    }
    if (item.type === "function_call_output" && (callId === undefined || !callIdsSoFar.has(callId))) {
      violations.push({
        rule: "R2",
        path: `input[${index}]`,
        message: `No tool call found for function call output with call_id ${callId ?? ""}.`,
      });
    }
  });
  return violations;
}

function checkResponsesItemId(item: Dict, seen: Set<string>, out: PayloadViolation[]): void {
  const id = asString(item.id);
  if (id === undefined) return;
  if (seen.has(id)) {
    out.push({
      rule: "R5",
      message: `Duplicate item found with id ${id}. Remove duplicate items from your input and try again.`,
    });
  }
  seen.add(id);
}

function checkResponsesCallIdLength(callId: string | undefined, index: number, out: PayloadViolation[]): void {
  if (callId === undefined || callId.length <= RESPONSES_CALL_ID_MAX) return;
  const path = `input[${index}].call_id`;
  out.push({
    rule: "R3",
    path,
    message: `Invalid '${path}': string too long. Expected a string with maximum length ${RESPONSES_CALL_ID_MAX}, but got a string with length ${callId.length} instead.`,
  });
}

// ---------------------------------------------------------------------------------------------------------
// Anthropic Messages
// ---------------------------------------------------------------------------------------------------------

export interface AnthropicValidationOptions {
  /** The model rejects a request that ends on an assistant message (Claude Opus/Sonnet 4.6 and later). */
  noPrefill?: boolean;
}

/** One content block with the index of its original message and its position there. */
interface LocatedBlock {
  block: Dict;
  message: number;
  position: number;
}

/** A turn as the API sees it: consecutive messages of one role merged. */
interface MergedTurn {
  role: string;
  blocks: LocatedBlock[];
  messages: number[];
}

function anthropicBlocks(content: unknown): Dict[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return asArray(content).filter(isDict);
}

function mergeAnthropicTurns(list: unknown[]): MergedTurn[] {
  const turns: MergedTurn[] = [];
  list.forEach((message, index) => {
    if (!isDict(message)) return;
    const role = asString(message.role) ?? "";
    const blocks = anthropicBlocks(message.content).map((block, position) => ({ block, message: index, position }));
    const last = turns[turns.length - 1];
    if (last && last.role === role) {
      last.blocks.push(...blocks);
      last.messages.push(index);
    } else {
      turns.push({ role, blocks, messages: [index] });
    }
  });
  return turns;
}

const blockPath = (b: LocatedBlock): string => `messages.${b.message}.content.${b.position}`;

/** Rules A1-A6, A8 (with `noPrefill`) and A9 on a Messages API `messages` array. */
export function validateAnthropicMessages(
  messages: unknown,
  options: AnthropicValidationOptions = {},
): PayloadViolation[] {
  const list = asArray(messages);
  const violations: PayloadViolation[] = [];
  checkAnthropicContent(list, violations);
  checkAnthropicIds(list, violations);
  const turns = mergeAnthropicTurns(list);
  turns.forEach((turn, t) => {
    if (turn.role === "assistant") checkAnthropicToolUsesAnswered(turn, turns[t + 1], violations);
    if (turn.role === "user") checkAnthropicToolResults(turn, turns[t - 1], violations);
  });
  const last = list[list.length - 1];
  if (options.noPrefill && isDict(last) && last.role === "assistant") {
    violations.push({
      rule: "A8",
      path: `messages.${list.length - 1}`,
      message: "This model does not support assistant message prefill. The conversation must end with a user message.",
    });
  }
  return violations;
}

/** A9: empty messages (the final assistant message may be empty) and blank text blocks. */
function checkAnthropicContent(list: unknown[], out: PayloadViolation[]): void {
  list.forEach((message, index) => {
    if (!isDict(message)) return;
    const isFinalAssistant = index === list.length - 1 && message.role === "assistant";
    const empty =
      message.content === "" || message.content === undefined || (Array.isArray(message.content) && message.content.length === 0);
    if (empty) {
      if (!isFinalAssistant) {
        out.push({
          rule: "A9",
          path: `messages.${index}`,
          message: `messages.${index}: all messages must have non-empty content except for the optional final assistant message`,
        });
      }
      return;
    }
    anthropicBlocks(message.content).forEach((block, position) => {
      if (block.type !== "text" || typeof block.text !== "string" || !isBlank(block.text)) return;
      if (isFinalAssistant && typeof message.content === "string") return;
      out.push({
        rule: "A9",
        path: `messages.${index}.content.${position}`,
        message:
          block.text === "" ? "text content blocks must be non-empty" : "text content blocks must contain non-whitespace text",
      });
    });
  });
}

/** A4 (tool_use ids unique in the request) and A6 (id pattern on tool_use and tool_result). */
function checkAnthropicIds(list: unknown[], out: PayloadViolation[]): void {
  const seen = new Set<string>();
  list.forEach((message, index) => {
    if (!isDict(message)) return;
    anthropicBlocks(message.content).forEach((block, position) => {
      const at = `messages.${index}.content.${position}`;
      if (block.type === "tool_use") {
        const id = asString(block.id) ?? "";
        if (!NAME_PATTERN.test(id)) {
          out.push({
            rule: "A6",
            path: `${at}.tool_use.id`,
            message: `${at}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`,
          });
        }
        if (seen.has(id)) out.push({ rule: "A4", path: at, message: `${at}: \`tool_use\` ids must be unique` });
        seen.add(id);
      } else if (block.type === "tool_result") {
        const id = asString(block.tool_use_id) ?? "";
        if (!NAME_PATTERN.test(id)) {
          out.push({
            rule: "A6",
            path: `${at}.tool_result.tool_use_id`,
            message: `${at}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'`,
          });
        }
      }
    });
  });
}

const toolUses = (turn: MergedTurn | undefined): LocatedBlock[] =>
  turn && turn.role === "assistant" ? turn.blocks.filter((b) => b.block.type === "tool_use") : [];
const toolResults = (turn: MergedTurn | undefined): LocatedBlock[] =>
  turn && turn.role === "user" ? turn.blocks.filter((b) => b.block.type === "tool_result") : [];
const toolUseIdOf = (b: LocatedBlock): string => asString(b.block.id) ?? "";
const toolResultIdOf = (b: LocatedBlock): string => asString(b.block.tool_use_id) ?? "";

/** A1 and A3: the turn after tool_use blocks is a user turn that begins with their tool_result blocks. */
function checkAnthropicToolUsesAnswered(turn: MergedTurn, next: MergedTurn | undefined, out: PayloadViolation[]): void {
  const uses = toolUses(turn);
  if (uses.length === 0) return;
  const results = toolResults(next);
  const answered = new Set(results.map(toolResultIdOf));
  const missing = uses.filter((use) => !answered.has(toolUseIdOf(use)));
  if (missing.length > 0) {
    const index = missing[0].message;
    out.push({
      rule: "A1",
      path: `messages.${index}`,
      message: `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing
        .map(toolUseIdOf)
        .join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
    });
  }
  if (next && results.length > 0) {
    const leading = next.blocks.findIndex((b) => b.block.type !== "tool_result");
    const lastResult = next.blocks.reduce((at, b, i) => (b.block.type === "tool_result" ? i : at), -1);
    if (leading !== -1 && leading < lastResult) {
      out.push({
        rule: "A3",
        path: `messages.${next.messages[0]}`,
        message: `Did not find ${uses.length} tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.`,
      });
    }
  }
}

/** A2 (a result matches a tool_use of the previous assistant turn) and A5 (one result per tool_use). */
function checkAnthropicToolResults(turn: MergedTurn, previous: MergedTurn | undefined, out: PayloadViolation[]): void {
  const known = new Set(toolUses(previous).map(toolUseIdOf));
  const seen = new Set<string>();
  for (const result of toolResults(turn)) {
    const id = toolResultIdOf(result);
    if (!known.has(id)) {
      out.push({
        rule: "A2",
        path: blockPath(result),
        message: `${blockPath(result)}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
      });
    } else if (seen.has(id)) {
      out.push({
        rule: "A5",
        path: blockPath(result),
        message: `each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`,
      });
    }
    seen.add(id);
  }
}

// ---------------------------------------------------------------------------------------------------------
// AWS Bedrock Converse
// ---------------------------------------------------------------------------------------------------------

export interface BedrockValidationOptions {
  /** The model rejects a conversation that ends on an assistant turn (Claude 4.6+, Llama). */
  noPrefill?: boolean;
  /** Reject two consecutive turns of one role (B6). Default true. */
  requireAlternation?: boolean;
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
export function validateBedrockConverse(
  request: unknown,
  options: BedrockValidationOptions = {},
): PayloadViolation[] {
  const body = isDict(request) ? request : {};
  const list = asArray(body.messages);
  const violations: PayloadViolation[] = [];
  checkBedrockToolConfig(body, list, violations);
  const first = list[0];
  if (!isDict(first) || first.role !== "user") {
    violations.push({
      rule: "B5",
      path: "messages.0",
      message:
        "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
    });
  }
  list.forEach((message, index) => {
    checkBedrockBlocks(message, index, violations);
    if (options.requireAlternation !== false) checkBedrockAlternation(list, index, violations);
    checkBedrockToolResultsAfter(list, index, violations);
  });
  const last = list[list.length - 1];
  if (options.noPrefill && isDict(last) && last.role === "assistant") {
    violations.push({
      rule: "B7",
      path: `messages.${list.length - 1}`,
      message:
        "The model returned the following errors: This model does not support assistant message prefill. The conversation must end with a user message.",
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
      message: `The content field in the Message object at messages.${index} is empty. Add a ContentBlock object to the content field and try again.`,
    });
    return;
  }
  checkBedrockBlankText(content, `messages.${index}.content`, out);
  content.forEach((block, position) => {
    const member = `messages.${index}.member.content.${position}.member`;
    const at = `messages.${index}.content.${position}`;
    const use = toolUseOf(block);
    if (use) {
      checkBedrockName(use.toolUseId, `${member}.toolUse.toolUseId`, out);
      checkBedrockName(use.name, `${member}.toolUse.name`, out);
    }
    const result = toolResultOf(block);
    if (result) {
      checkBedrockName(result.toolUseId, `${member}.toolResult.toolUseId`, out);
      checkBedrockBlankText(result.content, `${at}.toolResult.content`, out);
      if (result.status === "error" && asArray(result.content).length === 0) {
        out.push({
          rule: "B10",
          path: `${at}.toolResult`,
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
function checkBedrockBlankText(blocks: unknown, at: string, out: PayloadViolation[]): void {
  asArray(blocks).forEach((block, position) => {
    if (!isDict(block) || typeof block.text !== "string" || !isBlank(block.text)) return;
    const path = `${at}.${position}`;
    out.push({
      rule: "B8",
      path,
      message: `The text field in the ContentBlock object at ${path} is blank. Add text to the text field, and try again.`,
    });
  });
}

/** B4: 1 to 64 characters of `[a-zA-Z0-9_-]`, reported the way AWS request validation words it. */
function checkBedrockName(value: unknown, path: string, out: PayloadViolation[]): void {
  const text = asString(value) ?? "";
  let constraint: string | undefined;
  if (text.length < 1) constraint = "Member must have length greater than or equal to 1";
  else if (text.length > BEDROCK_ID_MAX) constraint = `Member must have length less than or equal to ${BEDROCK_ID_MAX}`;
  else if (!NAME_PATTERN.test(text)) constraint = "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+";
  if (constraint === undefined) return;
  out.push({ rule: "B4", path, message: `Value at '${path}' failed to satisfy constraint: ${constraint}` });
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
    message:
      "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.",
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
  const results = bedrockContent(message).map(toolResultOf).filter((r): r is Dict => r !== undefined);
  const previous = index > 0 ? list[index - 1] : undefined;
  const previousUses = isDict(previous) && previous.role === "assistant" ? bedrockToolUseIds(previous) : [];
  if (results.length > previousUses.length) {
    out.push({
      rule: "B2",
      path: `messages.${index}.content`,
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
      message: `Expected toolResult blocks at messages.${index + 1}.content for the following Ids: ${missing.join(", ")}`,
    });
  }
}

function bedrockToolUseIds(message: Dict): string[] {
  return bedrockContent(message)
    .map(toolUseOf)
    .filter((u): u is Dict => u !== undefined)
    .map((u) => asString(u.toolUseId) ?? "");
}

// ---------------------------------------------------------------------------------------------------------
// Google Gemini
// ---------------------------------------------------------------------------------------------------------

type GeminiTurnKind = "call" | "response" | "user" | "model";

function geminiTurnKind(content: unknown): GeminiTurnKind {
  if (!isDict(content)) return "user";
  const parts = asArray(content.parts).filter(isDict);
  if (parts.some((p) => p.functionCall !== undefined)) return "call";
  if (parts.some((p) => p.functionResponse !== undefined)) return "response";
  return content.role === "model" ? "model" : "user";
}

function countParts(content: unknown, key: "functionCall" | "functionResponse"): number {
  return isDict(content) ? asArray(content.parts).filter((p) => isDict(p) && p[key] !== undefined).length : 0;
}

/** Rules G1, G2, G3, G5 on a `generateContent` `contents` array. */
export function validateGeminiContents(contents: unknown): PayloadViolation[] {
  const list = asArray(contents);
  const kinds = list.map(geminiTurnKind);
  const violations: PayloadViolation[] = [];
  kinds.forEach((kind, index) => {
    const previous = index > 0 ? kinds[index - 1] : undefined;
    const path = `contents[${index}]`;
    if (kind === "call" && previous !== "user" && previous !== "response") {
      violations.push({
        rule: "G1",
        path,
        message:
          "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
      });
    }
    if (kind === "response" && previous !== "call") {
      violations.push({
        rule: "G2",
        path,
        message: "Please ensure that function response turn comes immediately after a function call turn.",
      });
    }
    const callCount = countParts(list[index], "functionCall");
    const answersNext = index + 1 < list.length;
    if (kind === "call" && answersNext && countParts(list[index + 1], "functionResponse") !== callCount) {
      violations.push({
        rule: "G3",
        path: `contents[${index + 1}]`,
        message:
          "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
      });
    }
  });
  const last = list[list.length - 1];
  const lastRole = isDict(last) ? last.role : undefined;
  if (list.length > 0 && lastRole !== undefined && lastRole !== "" && lastRole !== "user" && lastRole !== "function") {
    violations.push({
      rule: "G5",
      path: `contents[${list.length - 1}]`,
      message: "Please ensure that single turn requests end with a user role or the role field is empty.",
    });
  }
  return violations;
}
