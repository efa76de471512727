/**
 * Public types of the repair engine. Every problem and every repair is plain data, so that callers can
 * log it, assert on it, or send it to a trace without this package printing anything.
 */

/** Which provider's rules a history must satisfy. `"strict"` satisfies all of them at once. */
export type Provider = "openai" | "openai-responses" | "anthropic" | "bedrock" | "gemini" | "strict";

export const PROVIDERS: readonly Provider[] = [
  "openai",
  "openai-responses",
  "anthropic",
  "bedrock",
  "gemini",
  "strict",
];

/** What is wrong. One problem names one message (and one tool call where there is one). */
export type ToolCallProblemKind =
  /** A tool call with no result anywhere in the history (and not the trailing exchange). */
  | "orphan_call"
  /** The history ends on an assistant message whose calls are not all answered. */
  | "trailing_open_exchange"
  /** The result exists, but not in the block of tool results right after its call. */
  | "displaced_result"
  /** A non-tool message sits between a call and one of its results. */
  | "interleaved_message"
  /** A tool result whose call is nowhere in the history. */
  | "orphan_result"
  /** A second (third, ...) result for one call. */
  | "duplicate_result"
  /** The same tool call id used twice, within one message or across messages. */
  | "duplicate_call_id"
  /** A tool call with no usable id (missing, empty, not a string). */
  | "missing_call_id"
  /** A tool call id that breaks the provider's pattern or length. */
  | "invalid_call_id"
  /** An entry of `invalid_tool_calls` (arguments that did not parse), which adapters send inconsistently. */
  | "invalid_tool_call"
  /** A tool result without a usable `tool_call_id`. */
  | "missing_result_id"
  /** A tool call carried as a content block (`tool_use`, `tool_call`, `toolUse`), which ChatBedrockConverse refuses to send. */
  | "call_block_in_content"
  /**
   * A call that lives outside `tool_calls` (raw `additional_kwargs`, content blocks, Responses output). Each
   * adapter sends a different subset of these locations, and ToolNode only runs `tool_calls`.
   */
  | "call_outside_tool_calls"
  /** Malformed message shape: `tool_calls` not an array, null content, a malformed block. */
  | "malformed_message"
  /** An assistant message with no content and no calls, or a human message with no content. */
  | "empty_message"
  /** A text block that holds only white space. */
  | "blank_text_block"
  /** A tool result with empty content (sent as a blank text block). */
  | "empty_tool_result"
  /** The first non-system message is not a user message. */
  | "leading_non_user"
  /** Two user turns or two assistant turns in a row, as the provider receives them. */
  | "consecutive_same_role";

export interface ToolCallProblem {
  kind: ToolCallProblemKind;
  /** Index of the message concerned, in the array that was inspected. */
  index: number;
  toolCallId?: string;
  toolName?: string;
  /** Provider rule ids from PROVIDER_RULES.md that this problem breaks (for the chosen provider). */
  rules: string[];
  /** One sentence a person can read. */
  detail: string;
}

export type ToolCallRepairAction =
  | "synthesized_result"
  | "removed_call"
  | "removed_message"
  | "moved_result"
  /** A finished result that LangGraph was about to discard (pending writes of an abandoned step), put back. */
  | "salvaged_result"
  | "moved_message"
  | "converted_result"
  | "dropped_result"
  | "renamed_call_id"
  | "promoted_invalid_call"
  | "removed_block"
  | "moved_call_block"
  | "promoted_call"
  | "filled_empty_result"
  | "inserted_user_message"
  | "inserted_assistant_message"
  | "merged_messages"
  | "coerced_message"
  | "rebuilt_message";

export interface ToolCallRepair {
  /** The problem this repair resolves. */
  problem: ToolCallProblemKind;
  /** What was done. */
  action: ToolCallRepairAction;
  /** Index in the input array of the message concerned (for inserted messages: of the message they follow or precede). */
  index: number;
  toolCallId?: string;
  toolName?: string;
  /** The new id, for `renamed_call_id`. */
  newToolCallId?: string;
  /** One sentence a person can read. */
  detail: string;
}

/** What to do with calls that have no result. */
export type OrphanCallStrategy = "answer" | "remove";

/** What to do with the trailing exchange when the history ends on unanswered calls. */
export type TrailingStrategy = "keep" | "answer" | "remove";

/** What to do with a tool result whose call is gone (or an extra, different result of one call). */
export type OrphanResultStrategy = "convert" | "drop";

/** What to do with `invalid_tool_calls`. */
export type InvalidCallStrategy = "answer" | "remove";

export interface RepairOptions {
  /** Whose rules to satisfy. Default `"strict"` (all providers at once). */
  provider?: Provider;
  /** Orphaned calls (not the trailing exchange): answered with a synthetic error result (default) or removed. */
  orphanCalls?: OrphanCallStrategy;
  /**
   * The trailing exchange when the history ends on unanswered calls. Default `"answer"`: this function is
   * meant to run right before a model call, where an open exchange is always rejected. Storage layers, where a
   * resume may still run the tools, pass `"keep"`.
   */
  trailing?: TrailingStrategy;
  /** Orphan results: converted to a user message that keeps their content (default), or dropped. */
  orphanResults?: OrphanResultStrategy;
  /** `invalid_tool_calls`: turned into calls answered with an error result (default), or removed. */
  invalidCalls?: InvalidCallStrategy;
  /** Text of a synthetic result. Default names the tool and says it did not run. */
  syntheticResultText?: (call: { id: string; name?: string; reason: ToolCallProblemKind; note?: string }) => string;
  /** Called once per repair, in order. Nothing is logged by this package. */
  onRepair?: (repair: ToolCallRepair) => void;
}

export interface FindOptions {
  provider?: Provider;
  /** Whether an open trailing exchange counts as a problem. Default true (a model call would be rejected). */
  trailingIsProblem?: boolean;
}

export interface RepairResult<M = import("@langchain/core/messages").BaseMessage> {
  /** The input array itself when `repairs` is empty; otherwise a new array whose untouched messages are the input's objects. */
  messages: M[];
  repairs: ToolCallRepair[];
}
