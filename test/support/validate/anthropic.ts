/** Anthropic Messages: rules A1-A6, A8-A11, A13, A14 on the `messages` array. */
import { readingInput } from "./common";
import {
  asArray,
  asString,
  isBlank,
  isDict,
  NAME_PATTERN,
  openLoopOpener,
  thinkingFirstText,
  type Dict,
  type PayloadViolation,
  validationOptions,
} from "./common";

export interface AnthropicValidationOptions {
  /** The model rejects a request that ends on an assistant message (Claude Opus/Sonnet 4.6 and later). */
  noPrefill?: boolean;
  /**
   * System messages inside `messages` (A11): `"placed"` (default; Opus 4.8 and later) accepts them where
   * Anthropic does, `"none"` (older models) accepts none.
   */
  systemInMessages?: "placed" | "none";
  /** Extended thinking is on (the request's `thinking`): the open tool loop's opening turn starts with thinking (A10). */
  thinking?: boolean;
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
  const fn = "validateAnthropicMessages";
  const checked = validationOptions(options, fn, {
    noPrefill: [(v) => typeof v === "boolean", "a boolean"],
    systemInMessages: [(v) => v === "placed" || v === "none", '"placed" or "none"'],
    thinking: [(v) => typeof v === "boolean", "a boolean"],
  }) as AnthropicValidationOptions;
  return readingInput(() => anthropicViolations(messages, checked), fn, "messages");
}

function anthropicViolations(messages: unknown, options: AnthropicValidationOptions): PayloadViolation[] {
  const list = asArray(messages);
  const violations: PayloadViolation[] = [];
  checkAnthropicContent(list, violations);
  checkAnthropicIds(list, violations);
  checkAnthropicSignatures(list, violations);
  checkAnthropicServerTools(list, violations);
  checkAnthropicSystemMessages(list, options.systemInMessages ?? "placed", violations);
  const turns = mergeAnthropicTurns(list);
  turns.forEach((turn, t) => {
    if (turn.role === "assistant") checkAnthropicToolUsesAnswered(turn, turns[t + 1], violations);
    if (turn.role === "user") checkAnthropicToolResults(turn, turns[t - 1], violations);
  });
  if (options.thinking) checkAnthropicThinkingFirst(turns, violations);
  const last = list[list.length - 1];
  if (options.noPrefill && isDict(last) && last.role === "assistant") {
    violations.push({
      rule: "A8",
      path: `messages.${list.length - 1}`,
      payloadIndex: list.length - 1,
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
      message.content === "" ||
      message.content === undefined ||
      (Array.isArray(message.content) && message.content.length === 0);
    if (empty) {
      if (!isFinalAssistant) {
        out.push({
          rule: "A9",
          path: `messages.${index}`,
          payloadIndex: index,
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
        payloadIndex: index,
        message:
          block.text === ""
            ? "text content blocks must be non-empty"
            : "text content blocks must contain non-whitespace text",
      });
    });
  });
}

/**
 * A11: a `system` message inside `messages` comes right after a user message (or an assistant message that ends
 * on `server_tool_use`), never first, never after another system message, and is last or followed by an
 * assistant message. With `"none"` (models before Opus 4.8) none is accepted. The wording is ours: the API's
 * own text names the message (PROVIDER_RULES.md, confidence M).
 */
function checkAnthropicSystemMessages(list: unknown[], mode: "placed" | "none", out: PayloadViolation[]): void {
  list.forEach((message, index) => {
    if (!isDict(message) || message.role !== "system") return;
    const previous = list[index - 1];
    const next = list[index + 1];
    const afterUser =
      isDict(previous) &&
      (previous.role === "user" ||
        (previous.role === "assistant" && anthropicBlocks(previous.content).at(-1)?.type === "server_tool_use"));
    const beforeAssistant = next === undefined || (isDict(next) && next.role === "assistant");
    if (mode === "placed" && afterUser && beforeAssistant) return;
    out.push({
      rule: "A11",
      path: `messages.${index}`,
      payloadIndex: index,
      message:
        mode === "none"
          ? `messages.${index}: system messages are not supported in \`messages\` by this model; use the top-level \`system\` parameter`
          : `messages.${index}: a \`system\` message must directly follow a \`user\` message (or an ` +
            `\`assistant\` message ending in \`server_tool_use\`), cannot follow another \`system\` message, ` +
            `and must be the last message or be followed by an \`assistant\` message`,
    });
  });
}

/** A4 (tool_use and server_tool_use ids unique in the request) and A6 (id pattern on tool_use and tool_result). */
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
            payloadIndex: index,
            message: `${at}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`,
          });
        }
        if (seen.has(id))
          out.push({ rule: "A4", path: at, payloadIndex: index, message: `${at}: \`tool_use\` ids must be unique` });
        seen.add(id);
      } else if (block.type === "server_tool_use") {
        const id = asString(block.id) ?? "";
        // Anthropic's text names the position, not the id: like a tool_use's, the violation names no id.
        if (seen.has(id))
          out.push({ rule: "A4", path: at, payloadIndex: index, message: `${at}: \`tool_use\` ids must be unique` });
        seen.add(id);
      } else if (block.type === "tool_result") {
        const id = asString(block.tool_use_id) ?? "";
        if (!NAME_PATTERN.test(id)) {
          out.push({
            rule: "A6",
            path: `${at}.tool_result.tool_use_id`,
            payloadIndex: index,
            message: `${at}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'`,
          });
        }
      }
    });
  });
}

/** A14: a `thinking` block carries its `signature`, a `redacted_thinking` block its `data` (a cancelled stream leaves neither). */
function checkAnthropicSignatures(list: unknown[], out: PayloadViolation[]): void {
  list.forEach((message, index) => {
    if (!isDict(message)) return;
    anthropicBlocks(message.content).forEach((block, position) => {
      const field = block.type === "thinking" ? "signature" : block.type === "redacted_thinking" ? "data" : undefined;
      if (field === undefined || (typeof block[field] === "string" && block[field] !== "")) return;
      const path = `messages.${index}.content.${position}.${block.type}.${field}`;
      out.push({ rule: "A14", path, payloadIndex: index, message: `${path}: Field required` });
    });
  });
}

/**
 * A13: a `server_tool_use` block has its `*_tool_result` block in the same message. Only the last block of a
 * request that ends on the assistant (a `pause_turn` continued) may wait for its result.
 */
function checkAnthropicServerTools(list: unknown[], out: PayloadViolation[]): void {
  list.forEach((message, index) => {
    if (!isDict(message) || message.role !== "assistant") return;
    const blocks = anthropicBlocks(message.content);
    const answered = new Set(
      blocks.filter((b) => typeof b.type === "string" && b.type.endsWith("_tool_result")).map((b) => b.tool_use_id),
    );
    blocks.forEach((block, position) => {
      if (block.type !== "server_tool_use" || answered.has(block.id)) return;
      if (index === list.length - 1 && position === blocks.length - 1) return;
      const id = asString(block.id) ?? "";
      const name = asString(block.name) ?? "server";
      out.push({
        rule: "A13",
        path: `messages.${index}`,
        payloadIndex: index,
        toolCallIds: [id],
        message:
          `messages.${index}: \`${name}\` tool use with id \`${id}\` ` +
          `was found without a corresponding \`${name}_tool_result\` block`,
      });
    });
  });
}

/** A10: with thinking on, the turn that opens the open tool loop starts with a thinking block. */
function checkAnthropicThinkingFirst(turns: MergedTurn[], out: PayloadViolation[]): void {
  const opener = openLoopOpener(
    turns,
    (t) => t.role,
    (t) => t.blocks.some((b) => b.block.type === "tool_result"),
  );
  if (opener === undefined) return;
  const first = turns[opener].blocks[0];
  if (first === undefined || first.block.type === "thinking" || first.block.type === "redacted_thinking") return;
  out.push({
    rule: "A10",
    path: blockPath(first),
    payloadIndex: first.message,
    message: thinkingFirstText(blockPath(first), String(first.block.type)),
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
      payloadIndex: index,
      toolCallIds: missing.map(toolUseIdOf),
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
        payloadIndex: next.messages[0],
        // As the API words it in 2026 (the older text had no backticks and no position).
        message:
          `messages.${next.messages[0]}: Did not find ${uses.length} \`tool_result\` block(s) at the beginning of ` +
          "this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
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
        payloadIndex: result.message,
        toolCallIds: [id],
        message:
          `${blockPath(result)}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each ` +
          `\`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
      });
    } else if (seen.has(id)) {
      out.push({
        rule: "A5",
        path: blockPath(result),
        payloadIndex: result.message,
        toolCallIds: [id],
        message: `each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`,
      });
    }
    seen.add(id);
  }
}
