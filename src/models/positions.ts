/**
 * Where each LangChain message lands in the payload an adapter sends, and back. A provider names positions in
 * its own payload (`messages.2.content`, `messages[7]`, `input[95]`); the adapters lift system messages out,
 * merge tool results into one user turn, or turn one assistant message into several Responses items, so the
 * provider's index is rarely the LangChain index.
 *
 * This is a model of what the adapters do, not a call to them (this package does not depend on them). It is
 * checked against the real converters (`convertMessagesToCompletionsMessageParams`,
 * `convertMessagesToResponsesInput`, `convertPromptToAnthropic`, ChatBedrockConverse's request) over generated
 * histories in test/models/positions.test.ts. Observed with @langchain/openai 1.5.8, @langchain/anthropic
 * 1.5.11, @langchain/aws 1.4.5. Gemini is a model of @langchain/google-genai, whose converter is not exported.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { ToolCallRepairInputError, assertArray, errorText, expectedInput, readingInput } from "../errors";
import { coerceMessage } from "../messages/coerce";
import { isDict, type Dict } from "../messages/inspect";

/** A wire format: one per adapter request shape. */
export type WireFormat = "openai" | "openai-responses" | "anthropic" | "bedrock" | "gemini";

export const WIRE_FORMATS: readonly WireFormat[] = ["openai", "openai-responses", "anthropic", "bedrock", "gemini"];

export interface PayloadPositions {
  format: WireFormat;
  /**
   * Per LangChain message: the index of the (first) payload entry it becomes (`messages[N]`, `input[N]`,
   * `contents[N]`), or -1 when it is not in that array (system messages lifted into `system`, or nothing sent).
   */
  payloadIndex: number[];
  /**
   * Per LangChain message: its first content block inside that entry. Non-zero only where several messages
   * share one entry (tool results merged into one user turn on Anthropic and Bedrock).
   */
  blockOffset: number[];
  /** Per payload entry: the LangChain messages it is built from, in order. */
  messagesAt: number[][];
}

type Kind = "human" | "ai" | "tool" | "system" | "other";

interface Read {
  kind: Kind;
  /** ChatMessage role, for the OpenAI formats that send it as is. */
  role?: string;
  m: Dict;
}

function read(message: unknown, index: number): Read {
  const m = coerceMessage(message, index) as BaseMessage;
  const type = m._getType();
  const fields = m as unknown as Dict;
  if (type === "human" || type === "ai" || type === "tool" || type === "system")
    return { kind: type as Kind, m: fields };
  return { kind: "other", role: typeof fields.role === "string" ? fields.role : undefined, m: fields };
}

const kwargsOf = (m: Dict): Dict => (isDict(m.additional_kwargs) ? m.additional_kwargs : {});
const metaOf = (m: Dict): Dict => (isDict(m.response_metadata) ? m.response_metadata : {});
const isV1 = (m: Dict): boolean => metaOf(m).output_version === "v1";
const toolCallCount = (m: Dict): number => (Array.isArray(m.tool_calls) ? m.tool_calls.length : 0);

/** Where each message of `messages` lands in the payload `format`'s adapter builds. Linear in the messages. */
export function payloadPositions(messages: readonly unknown[], format: WireFormat): PayloadPositions {
  const fn = "payloadPositions";
  assertArray(messages, fn);
  if (!(WIRE_FORMATS as readonly unknown[]).includes(format))
    throw expectedInput(fn, "format", `one of ${WIRE_FORMATS.join(", ")}`, format);
  const length = readingInput(() => messages.length, fn);
  const reads: Read[] = new Array(length);
  for (let i = 0; i < length; i++) {
    try {
      reads[i] = read(messages[i], i);
    } catch (error) {
      // coerceMessage names the message it cannot read; an index getter that throws is named here.
      if (ToolCallRepairInputError.isInstance(error)) throw error;
      throw ToolCallRepairInputError.atMessage(i, `could not be read (${errorText(error)})`, error);
    }
  }
  switch (format) {
    case "openai":
      return fromCounts(format, reads.map(completionsCount));
    case "openai-responses":
      return fromCounts(format, reads.map(responsesItemCount));
    case "gemini": {
      // A leading system message becomes `systemInstruction`; every other message is one content.
      let leading = 0;
      while (leading < reads.length && reads[leading].kind === "system") leading++;
      return fromCounts(
        format,
        reads.map((_, i) => (i < leading ? 0 : 1)),
      );
    }
    case "anthropic":
      return anthropicPositions(reads);
    case "bedrock":
      return bedrockPositions(reads);
    default:
      throw expectedInput(fn, "format", `one of ${WIRE_FORMATS.join(", ")}`, format);
  }
}

/**
 * The LangChain message a provider position refers to: the message that built payload entry `payloadIndex`,
 * or, when several share it, the one holding content block `block`. Undefined when nothing built that entry.
 */
export function messageIndexAt(positions: PayloadPositions, payloadIndex: number, block?: number): number | undefined {
  const fn = "messageIndexAt";
  const read = readingInput(
    () =>
      isDict(positions) && Array.isArray(positions.messagesAt) && Array.isArray(positions.blockOffset)
        ? positions
        : undefined,
    fn,
    "positions",
  );
  if (read === undefined)
    throw expectedInput(
      fn,
      "positions",
      "what payloadPositions returned ({ messagesAt, blockOffset, ... })",
      positions,
    );
  if (!isIndex(payloadIndex)) throw expectedInput(fn, "payloadIndex", "a non-negative integer", payloadIndex);
  if (block !== undefined && !isIndex(block))
    throw expectedInput(fn, "block", "a non-negative integer or undefined", block);
  return readingInput(() => indexAt(read, payloadIndex, block), fn, "positions");
}

const isIndex = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

function indexAt(positions: PayloadPositions, payloadIndex: number, block?: number): number | undefined {
  const members = positions.messagesAt[payloadIndex];
  if (!members || members.length === 0) return undefined;
  if (block === undefined || members.length === 1) return members[0];
  let found = members[0];
  for (const member of members) if (positions.blockOffset[member] <= block) found = member;
  return found;
}

/** One-to-many formats: message i becomes `counts[i]` consecutive entries (0: not sent). */
function fromCounts(format: WireFormat, counts: number[]): PayloadPositions {
  const payloadIndex: number[] = [];
  const messagesAt: number[][] = [];
  counts.forEach((count, i) => {
    payloadIndex.push(count > 0 ? messagesAt.length : -1);
    for (let k = 0; k < count; k++) messagesAt.push([i]);
  });
  return { format, payloadIndex, blockOffset: counts.map(() => 0), messagesAt };
}

/** Chat Completions: one message each; an assistant audio reference adds a second one. */
function completionsCount(r: Read): number {
  if (isV1(r.m)) return 1;
  const audio = kwargsOf(r.m).audio;
  return isDict(audio) && "id" in audio ? 2 : 1;
}

const FALLTHROUGH_CALL_TYPES = new Set([
  "computer_call",
  "mcp_call",
  "code_interpreter_call",
  "image_generation_call",
  "shell_call",
  "local_shell_call",
]);
const RESPONSES_USER_BLOCK_TYPES = new Set([
  "text",
  "image_url",
  "input_text",
  "input_image",
  "input_file",
  "image",
  "audio",
  "file",
  "video",
]);

/** Responses API: items per message (`convertMessagesToResponsesInput`, without zero data retention). */
function responsesItemCount(r: Read): number {
  const role = r.kind === "other" ? r.role : r.kind === "human" ? "user" : r.kind === "ai" ? "assistant" : r.kind;
  if (isV1(r.m)) return v1ResponsesItemCount(r, role);
  if (role === "tool") return 1;
  if (role === "assistant") return responsesAssistantItemCount(r);
  if (role === "user" || role === "system" || role === "developer") {
    const content = r.m.content;
    if (!Array.isArray(content)) return 1;
    let approvals = 0;
    let kept = 0;
    for (const block of content) {
      if (!isDict(block)) continue;
      if (block.type === "mcp_approval_response") approvals++;
      else if (typeof block.type === "string" && RESPONSES_USER_BLOCK_TYPES.has(block.type)) kept++;
    }
    return approvals + (kept > 0 ? 1 : 0);
  }
  return 0;
}

function responsesAssistantItemCount(r: Read): number {
  const meta = metaOf(r.m);
  const kwargs = kwargsOf(r.m);
  const output = Array.isArray(meta.output) ? meta.output : undefined;
  // A Responses message is re-sent as its raw output items.
  if (output && output.length > 0 && output.every((item) => isDict(item) && "type" in item)) return output.length;
  const content = r.m.content;
  let count = kwargs.reasoning ? 1 : 0;
  if (typeof content === "string" || (Array.isArray(content) && content.length > 0)) count++;
  const calls = r.kind === "ai" ? toolCallCount(r.m) : 0;
  if (calls > 0) count += calls;
  else if (Array.isArray(kwargs.tool_calls)) count += kwargs.tool_calls.length;
  const toolOutputs =
    output && output.length > 0 ? output : Array.isArray(kwargs.tool_outputs) ? kwargs.tool_outputs : [];
  for (const item of toolOutputs)
    if (isDict(item) && typeof item.type === "string" && FALLTHROUGH_CALL_TYPES.has(item.type)) count++;
  return count;
}

/** v1 messages (`output_version: "v1"`): a message item for text, then one item per tool call. Approximate. */
function v1ResponsesItemCount(r: Read, role: string | undefined): number {
  if (role === "tool") return 1;
  const content = Array.isArray(r.m.content) ? r.m.content : [];
  let text = typeof r.m.content === "string" && r.m.content.length > 0;
  let calls = 0;
  for (const block of content) {
    if (!isDict(block)) continue;
    if (block.type === "tool_call") calls++;
    else if (block.type === "text") text = true;
  }
  return (text ? 1 : 0) + calls;
}

interface Entry {
  /** Role as the API sees it. */
  role: string;
  members: number[];
  /** Content blocks each member contributes, in member order. */
  blocks: number[];
  /** Every block is a tool result (the condition for merging with the next one). */
  allToolResults: boolean;
}

function blockCount(content: unknown): number {
  return Array.isArray(content) ? content.length : 1;
}

const isToolResultBlock = (block: unknown) => isDict(block) && block.type === "tool_result";

/**
 * Anthropic (`_convertMessagesToAnthropicPayload`): a ToolMessage becomes a user turn with one `tool_result`
 * block; one with string content joins the user turn before it when that turn starts with a `tool_result`.
 * Leading system messages go to `system`; a later one is sent in place. Consecutive user turns made only of
 * `tool_result` blocks are then merged into one.
 */
function anthropicPositions(reads: Read[]): PayloadPositions {
  const entries: (Entry & { firstIsToolResult: boolean; array: boolean })[] = [];
  reads.forEach((r, i) => {
    const last = entries[entries.length - 1];
    if (r.kind === "tool") {
      if (typeof r.m.content === "string" && last && last.role === "user" && last.array && last.firstIsToolResult) {
        last.members.push(i);
        last.blocks.push(1);
        return;
      }
      entries.push({
        role: "user",
        members: [i],
        blocks: [1],
        allToolResults: true,
        firstIsToolResult: true,
        array: true,
      });
      return;
    }
    const content = r.m.content;
    const array = Array.isArray(content);
    const role = r.kind === "human" ? "user" : r.kind === "ai" ? "assistant" : r.kind === "system" ? "system" : "other";
    entries.push({
      role,
      members: [i],
      blocks: [blockCount(content)],
      allToolResults: role === "user" && array && content.every(isToolResultBlock),
      firstIsToolResult: array && isToolResultBlock(content[0]),
      array,
    });
  });
  const payloadIndex = reads.map(() => -1);
  const blockOffset = reads.map(() => 0);
  const messagesAt: number[][] = [];
  let start = 0;
  while (start < entries.length && entries[start].role === "system") start++;
  let previous: Entry | undefined;
  let offset = 0;
  for (let e = start; e < entries.length; e++) {
    const entry = entries[e];
    const merges = previous?.allToolResults && entry.allToolResults;
    if (!merges) {
      messagesAt.push([]);
      offset = 0;
    }
    const at = messagesAt.length - 1;
    entry.members.forEach((member, k) => {
      payloadIndex[member] = at;
      blockOffset[member] = offset;
      offset += entry.blocks[k];
      messagesAt[at].push(member);
    });
    previous = entry;
  }
  return { format: "anthropic", payloadIndex, blockOffset, messagesAt };
}

/**
 * Bedrock Converse (`convertToConverseMessages`): every SystemMessage goes to `system`; each other message is
 * one Converse message, and a user message with tool results joins the user message with tool results before
 * it (consecutive ToolMessages become one user turn, even across a system message).
 */
function bedrockPositions(reads: Read[]): PayloadPositions {
  const payloadIndex = reads.map(() => -1);
  const blockOffset = reads.map(() => 0);
  const messagesAt: number[][] = [];
  let previousIsToolResults = false;
  let offset = 0;
  reads.forEach((r, i) => {
    if (r.kind === "system") return;
    const isToolResults = r.kind === "tool";
    if (!(isToolResults && previousIsToolResults)) {
      messagesAt.push([]);
      offset = 0;
    }
    const at = messagesAt.length - 1;
    payloadIndex[i] = at;
    blockOffset[i] = offset;
    offset += isToolResults ? 1 : blockCount(r.m.content);
    messagesAt[at].push(i);
    previousIsToolResults = isToolResults;
  });
  return { format: "bedrock", payloadIndex, blockOffset, messagesAt };
}
