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
import { assertArray, boundary, expectedInput } from "../errors";
import { readMessage } from "../messages/coerce";
import { isDict, type Dict } from "../messages/inspect";

/** A wire format: one per adapter request shape. */
export type WireFormat = "openai" | "openai-responses" | "anthropic" | "bedrock" | "gemini";

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

const KINDS = new Set(["human", "ai", "tool", "system"]);

function read(message: unknown, index: number): Read {
  const m = readMessage(message, index) as unknown as Dict & { _getType(): string };
  const type = m._getType();
  if (KINDS.has(type)) return { kind: type as Kind, m };
  return { kind: "other", role: typeof m.role === "string" ? m.role : undefined, m };
}

const kwargsOf = (m: Dict): Dict => (isDict(m.additional_kwargs) ? m.additional_kwargs : {});
const isV1 = (m: Dict): boolean => isDict(m.response_metadata) && m.response_metadata.output_version === "v1";

/** How each format's adapter lays out the messages it reads. */
const LAYOUTS: Record<WireFormat, (reads: Read[]) => PayloadPositions> = {
  openai: (reads) => fromCounts("openai", reads.map(completionsCount)),
  "openai-responses": (reads) => fromCounts("openai-responses", reads.map(responsesItemCount)),
  anthropic: anthropicPositions,
  bedrock: (reads) =>
    entryPositions(
      "bedrock",
      reads.length,
      // Bedrock Converse (`convertToConverseMessages`): every SystemMessage goes to `system`; each other message is one
      // Converse message, and tool results join the tool results before them (even across a system message).
      reads.flatMap((r, i) =>
        r.kind === "system"
          ? []
          : [{ members: [i], blocks: [r.kind === "tool" ? 1 : blockCount(r.m.content)], merges: r.kind === "tool" }],
      ),
    ),
  // A leading system message becomes `systemInstruction`; every other message is one content.
  gemini: (reads) => {
    const leading = reads.findIndex((r) => r.kind !== "system");
    return fromCounts(
      "gemini",
      reads.map((_, i) => (leading === -1 || i < leading ? 0 : 1)),
    );
  },
};

/** Where each message of `messages` lands in the payload `format`'s adapter builds. Linear in the messages. */
export const payloadPositions = boundary(
  "payloadPositions",
  (messages: readonly unknown[], format: WireFormat): PayloadPositions => {
    const fn = "payloadPositions";
    assertArray(messages, fn);
    const formats: unknown[] = Object.keys(LAYOUTS);
    if (!formats.includes(format)) throw expectedInput(fn, "format", `one of ${formats.join(", ")}`, format);
    return LAYOUTS[format](Array.from(messages, read));
  },
);

/**
 * The LangChain message a provider position refers to: the message that built payload entry `payloadIndex`,
 * or, when several share it, the one holding content block `block`. Undefined when nothing built that entry.
 */
export const messageIndexAt = boundary(
  "messageIndexAt",
  (positions: PayloadPositions, payloadIndex: number, block?: number): number | undefined => {
    const fn = "messageIndexAt";
    if (!isDict(positions) || !Array.isArray(positions.messagesAt) || !Array.isArray(positions.blockOffset))
      throw expectedInput(
        fn,
        "positions",
        "what payloadPositions returned ({ messagesAt, blockOffset, ... })",
        positions,
      );
    if (!isIndex(payloadIndex)) throw expectedInput(fn, "payloadIndex", "a non-negative integer", payloadIndex);
    if (block !== undefined && !isIndex(block))
      throw expectedInput(fn, "block", "a non-negative integer or undefined", block);
    const members = positions.messagesAt[payloadIndex];
    if (!members || members.length === 0) return undefined;
    let found = members[0];
    if (block !== undefined) for (const member of members) if (positions.blockOffset[member] <= block) found = member;
    return found;
  },
);

const isIndex = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

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
  const audio = kwargsOf(r.m).audio;
  return !isV1(r.m) && isDict(audio) && "id" in audio ? 2 : 1;
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

const ROLES: Partial<Record<Kind, string>> = { human: "user", ai: "assistant", tool: "tool", system: "system" };

/** Responses API: items per message (`convertMessagesToResponsesInput`, without zero data retention). */
function responsesItemCount(r: Read): number {
  const role = r.kind === "other" ? r.role : ROLES[r.kind];
  const content = r.m.content;
  const blocks = (Array.isArray(content) ? content : []).filter(isDict);
  if (role === "tool") return 1;
  // v1 messages (`output_version: "v1"`): a message item for text, then one item per tool call. Approximate.
  if (isV1(r.m)) {
    const text = (typeof content === "string" && content.length > 0) || blocks.some((b) => b.type === "text");
    return (text ? 1 : 0) + blocks.filter((b) => b.type === "tool_call").length;
  }
  if (role === "assistant") return responsesAssistantItemCount(r);
  if (role !== "user" && role !== "system" && role !== "developer") return 0;
  if (!Array.isArray(content)) return 1;
  const approvals = blocks.filter((b) => b.type === "mcp_approval_response").length;
  return approvals + (blocks.some((b) => RESPONSES_USER_BLOCK_TYPES.has(b.type as string)) ? 1 : 0);
}

function responsesAssistantItemCount(r: Read): number {
  const meta = isDict(r.m.response_metadata) ? r.m.response_metadata : {};
  const kwargs = kwargsOf(r.m);
  const output = Array.isArray(meta.output) && meta.output.length > 0 ? meta.output : undefined;
  // A Responses message is re-sent as its raw output items.
  if (output?.every((item) => isDict(item) && "type" in item)) return output.length;
  const content = r.m.content;
  let count = kwargs.reasoning ? 1 : 0;
  if (typeof content === "string" || (Array.isArray(content) && content.length > 0)) count++;
  const calls = r.kind === "ai" && Array.isArray(r.m.tool_calls) ? r.m.tool_calls.length : 0;
  count += calls > 0 ? calls : Array.isArray(kwargs.tool_calls) ? kwargs.tool_calls.length : 0;
  const toolOutputs = output ?? (Array.isArray(kwargs.tool_outputs) ? kwargs.tool_outputs : []);
  for (const item of toolOutputs) if (FALLTHROUGH_CALL_TYPES.has(pickType(item))) count++;
  return count;
}

const pickType = (item: unknown): string => (isDict(item) && typeof item.type === "string" ? item.type : "");

/** One payload entry: the messages it is built from, the content blocks each brings, and whether it merges. */
interface Entry {
  members: number[];
  blocks: number[];
  /** Whether it joins the entry before it when that one merges too (consecutive tool results, one user turn). */
  merges: boolean;
}

/** The positions of entries, each one a payload entry unless it merges into the one before it. */
function entryPositions(format: WireFormat, length: number, entries: Entry[]): PayloadPositions {
  const payloadIndex: number[] = new Array(length).fill(-1);
  const blockOffset: number[] = new Array(length).fill(0);
  const messagesAt: number[][] = [];
  let previous: Entry | undefined;
  let offset = 0;
  for (const entry of entries) {
    if (!(previous?.merges && entry.merges)) {
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
  return { format, payloadIndex, blockOffset, messagesAt };
}

const blockCount = (content: unknown): number => (Array.isArray(content) ? content.length : 1);

const isToolResultBlock = (block: unknown) => isDict(block) && block.type === "tool_result";

/**
 * Anthropic (`_convertMessagesToAnthropicPayload`): a ToolMessage becomes a user turn with one `tool_result`
 * block; one with string content joins the user turn before it when that turn starts with a `tool_result`.
 * Leading system messages go to `system`; a later one is sent in place. Consecutive user turns made only of
 * `tool_result` blocks are then merged into one.
 */
function anthropicPositions(reads: Read[]): PayloadPositions {
  const entries: (Entry & { role: string; joinable: boolean })[] = [];
  reads.forEach((r, i) => {
    const last = entries[entries.length - 1];
    const content = r.m.content;
    const tool = r.kind === "tool";
    if (tool && typeof content === "string" && last?.joinable) {
      last.members.push(i);
      last.blocks.push(1);
      return;
    }
    const role = tool || r.kind === "human" ? "user" : r.kind === "ai" ? "assistant" : r.kind;
    const results = role === "user" && Array.isArray(content);
    entries.push({
      role,
      members: [i],
      blocks: [tool ? 1 : blockCount(content)],
      merges: tool || (results && content.every(isToolResultBlock)),
      joinable: tool || (results && isToolResultBlock(content[0])),
    });
  });
  const start = entries.findIndex((entry) => entry.role !== "system");
  return entryPositions("anthropic", reads.length, start === -1 ? [] : entries.slice(start));
}
