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
import { boundary } from "../errors";
import { readMessage } from "../messages/coerce";
import { resentOutputOf } from "../messages/responses";
import { fieldsOf, isDict, type Dict } from "../values";

/** A wire format: one per adapter request shape. */
export type WireFormat = "openai" | "openai-responses" | "anthropic" | "bedrock" | "gemini";

/**
 * Where the messages land (`payloadPositions`): per LangChain message, the index of the (first) payload entry it becomes
 * (`payloadIndex`: `messages[N]`, `input[N]`, `contents[N]`; -1 when it is not in that array: system messages lifted
 * into `system`, or nothing sent) and its first content block inside that entry (`blockOffset`: non-zero only where
 * several messages share one entry, tool results merged into one user turn on Anthropic and Bedrock); per payload
 * entry, the LangChain messages it is built from, in order (`messagesAt`).
 */
export type PayloadPositions = ReturnType<typeof payloadPositions>;

/** A message as the layouts read it: its type (`human`, `ai`, `tool`, `system`, else its ChatMessage role) and fields. */
type Read = { kind: string; m: Dict };

const read = (message: unknown, index: number) => {
  const m = readMessage(message, index) as unknown as Dict & { _getType(): string };
  const kind = m._getType();
  return { kind: KINDS.has(kind) ? kind : `role:${m.role}`, m };
};
const KINDS = new Set("human ai tool system".split(" "));

const blockCount = (content: unknown) => (Array.isArray(content) ? content.length : 1);

/** How each format's adapter lays out the messages it reads. */
const LAYOUTS: Record<WireFormat, (reads: Read[]) => Piece[]> = {
  // Chat Completions: one message each; an assistant audio reference (`audio` with an id) adds a second one.
  openai: (reads) => counted(reads.map(({ m }) => ("id" in Object(fieldsOf(m.additional_kwargs).audio) ? 2 : 1))),
  "openai-responses": (reads) => counted(reads.map(responsesItemCount)),
  anthropic: anthropicPieces,
  // Bedrock Converse (`convertToConverseMessages`): every SystemMessage goes to `system`; each other message is one
  // Converse message, and tool results join the tool results before them (even across a system message).
  bedrock: (reads) => {
    let tools = false; // the last message sent is a tool result
    return reads.flatMap(({ kind, m }, member) => {
      if (kind === "system") return [];
      const opens = !(tools && kind === "tool");
      tools = kind === "tool";
      return [{ member, blocks: tools ? 1 : blockCount(m.content), opens }];
    });
  },
  // Leading system messages become `systemInstruction`; every other message is one content.
  gemini: (reads) => {
    let sent = false;
    return counted(reads.map((r) => +(sent ||= r.kind !== "system")));
  },
};

/**
 * Where each message of `messages` lands in the payload `format`'s adapter builds: the positions of its pieces, in
 * payload order (a message sent as several entries is found at its first). Linear in the messages.
 */
export const payloadPositions = boundary("payloadPositions", (messages: readonly unknown[], format: WireFormat) => {
  const reads = Array.from(messages, read);
  const payloadIndex = reads.map(() => -1);
  const blockOffset = reads.map(() => 0);
  const messagesAt: number[][] = [];
  let offset = 0;
  for (const { member, blocks, opens } of LAYOUTS[format](reads)) {
    if (opens) {
      messagesAt.push([]);
      offset = 0;
    }
    if (payloadIndex[member] === -1) payloadIndex[member] = messagesAt.length - 1;
    blockOffset[member] = offset;
    offset += blocks;
    messagesAt.at(-1)!.push(member);
  }
  return { format, payloadIndex, blockOffset, messagesAt };
});

/**
 * The LangChain message a provider position refers to: the message that built payload entry `payloadIndex`,
 * or, when several share it, the one holding content block `block`. Undefined when nothing built that entry.
 */
export const messageIndexAt = boundary(
  "messageIndexAt",
  ({ messagesAt, blockOffset }: PayloadPositions, payloadIndex: number, block?: number) => {
    let found: number | undefined;
    for (const member of messagesAt[payloadIndex] ?? [])
      if (found === undefined || blockOffset[member] <= block!) found = member;
    return found;
  },
);

/** One-to-many formats: message i becomes `counts[i]` consecutive entries (0: not sent). */
const counted = (counts: number[]) =>
  counts.flatMap((count, member) => Array.from({ length: count }, () => ({ member, blocks: 1, opens: true })));

/** Responses API: items per message (`convertMessagesToResponsesInput`, without zero data retention). */
function responsesItemCount({ kind, m }: Read) {
  const role = { human: "user", ai: "assistant" }[kind] ?? kind.replace(/^role:/, "");
  const { content } = m;
  const list = (v: unknown) => (Array.isArray(v) ? v : []);
  const says = +(typeof content === "string" || list(content).length > 0);
  if (role === "tool") return 1;
  if (role !== "assistant") return /^(user|system|developer)$/.test(role) ? says : 0;
  // A Responses message is re-sent as its raw output items.
  const output = resentOutputOf(m);
  if (output) return output.length;
  const kwargs = fieldsOf(m.additional_kwargs);
  const calls = kind === "ai" && Array.isArray(m.tool_calls) ? m.tool_calls.length : 0;
  return (kwargs.reasoning ? 1 : 0) + says + (calls || list(kwargs.tool_calls).length);
}

/** One message's part of a payload entry: the content blocks it brings, and whether it opens a new entry. */
type Piece = { member: number; blocks: number; opens: boolean };

const isToolResultBlock = (block: unknown) => isDict(block) && block.type === "tool_result";

/**
 * Anthropic (`_convertMessagesToAnthropicPayload`): a ToolMessage becomes a user turn with one `tool_result`
 * block; one with string content joins the user turn before it when that turn starts with a `tool_result`.
 * Leading system messages go to `system`; a later one is sent in place. Consecutive user turns made only of
 * `tool_result` blocks are then merged into one.
 */
function anthropicPieces(reads: Read[]) {
  const pieces: Piece[] = [];
  let last: { merges: boolean; joinable: boolean } | undefined; // the last message that is not joined
  reads.forEach(({ kind, m: { content } }, member) => {
    const tool = kind === "tool";
    // Leading system messages (before any entry) are lifted into `system`.
    if (kind === "system" && !last) return;
    if (tool && typeof content === "string" && last?.joinable) return pieces.push({ member, blocks: 1, opens: false });
    const results = (tool || kind === "human") && Array.isArray(content);
    const merges = tool || (results && content.every(isToolResultBlock));
    pieces.push({ member, blocks: tool ? 1 : blockCount(content), opens: !(merges && last?.merges) });
    last = { merges, joinable: tool || (results && isToolResultBlock(content[0])) };
  });
  return pieces;
}
