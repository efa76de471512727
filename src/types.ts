/**
 * Public types of the repair engine. Every problem and every repair is plain data, so that callers can
 * log it, assert on it, or send it to a trace without this package printing anything.
 */
import type { BaseMessage } from "@langchain/core/messages";

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

/**
 * How far a repair goes.
 * - `"structural"`: only what every provider rejects (unanswered calls, results without calls, displaced and
 *   duplicate results, duplicate and missing ids, calls hiding outside `tool_calls`, malformed messages).
 *   What storage layers persist: the thread keeps every message as it was written otherwise.
 * - `"request"`: structural, plus the shaping one provider needs for one request (turn alternation, placeholder
 *   turns, id pattern and length, content rules, block conversions, system message placement). Never stored.
 */
export type RepairLevel = "structural" | "request";

export const REPAIR_LEVELS: readonly RepairLevel[] = ["structural", "request"];

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
  /**
   * An OpenAI Responses item id (`rs_`, `msg_`, `fc_`) an earlier message is already sent with (R5): a replayed
   * assistant message re-sends its stored output, reasoning item included. Also what a forced repair reports for
   * items a provider named as sent apart from their reasoning item (R6, R7).
   */
  | "duplicate_response_item"
  /** An entry of `invalid_tool_calls` (arguments that did not parse), which adapters send inconsistently. */
  | "invalid_tool_call"
  /** A tool result without a usable `tool_call_id`. */
  | "missing_result_id"
  /**
   * A tool call carried as a content block in a format the provider's adapter refuses or mis-sends (every
   * format on Bedrock, Gemini and strict; `toolUse` and `input_json_delta` on OpenAI; `input_json_delta` on
   * Anthropic). The call itself is in `tool_calls`.
   */
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
  | "consecutive_same_role"
  /**
   * A content block the provider's adapter refuses or the provider rejects: Anthropic `thinking`,
   * `redacted_thinking`, `server_tool_use` and inline `*_tool_result` blocks outside Anthropic.
   */
  | "unsupported_block"
  /** A system message inside the conversation where the provider does not accept one (Anthropic A11). */
  | "misplaced_system_message"
  /**
   * A tool call or tool result in a request that carries no tools (`toolsInRequest: false`), where the provider
   * refuses tool blocks without tool definitions (Bedrock B3: no `toolConfig`).
   */
  | "tool_blocks_without_tools"
  /**
   * A `ChatMessage` (free `role`) that the provider's adapter mis-sends: ChatAnthropic throws on any,
   * ChatBedrockConverse sends every one as a user turn, ChatOpenAI sends the role as it is (`human`, `ai` and
   * unknown roles are refused; `tool` goes without a call id). Request level only.
   */
  | "chat_message_role"
  /**
   * An assistant message with parallel calls where the adapter sends each result as its own turn
   * (@langchain/google-genai), so the call turn and the response turn differ in size (Gemini G3). Request level.
   */
  | "parallel_calls"
  /**
   * A call of the current turn (from the last user message on) that opens a model step without a thought
   * signature, where Gemini 3 and later require one (G6). Request level.
   */
  | "unsigned_call";

export interface ToolCallProblem {
  kind: ToolCallProblemKind;
  /** Index of the message concerned, in the array that was inspected. */
  index: number;
  toolCallId?: string;
  toolName?: string;
  /** Provider rule ids from PROVIDER_RULES.md that this problem breaks (for the chosen provider). */
  rules: string[];
  /**
   * Where the message lands in the request the provider's LangChain adapter builds: the `N` of `messages.N`
   * (`messages[N]`, `input[N]`) that the provider's error would name. Set for a named provider (not `"strict"`)
   * when the message is sent in that array (a system message lifted into `system` is not).
   */
  payloadIndex?: number;
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
  | "rebuilt_message"
  /** A content block turned into text the provider accepts (a server tool call and its result). */
  | "converted_block"
  /** A message turned into another kind that keeps its content (a misplaced system message into user text). */
  | "converted_message"
  /** A tool call turned into assistant text, or a tool result into user text (a request that carries no tools). */
  | "converted_to_text";

/**
 * What is known of a call answered with a synthetic result (its marker's and its repair's `toolRun`):
 * - `"never_started"`: no tool ran it (its arguments did not parse, so no tool could take it).
 * - `"outcome_unknown"`: no result was recorded, and nothing says why (a history alone cannot tell a stopped run
 *   from a trimmed or patched one); it may have started, finished or had effects. The engine's default.
 * - `"interrupted"`: a run is known to have stopped between the call and its result (the surface found the step it
 *   abandoned: a sibling call's result sat in that step's pending writes); it may have started or had effects.
 * - `"cancelled"`: it waited for a person's approval (human in the loop) and they sent a new message instead; it
 *   did not run.
 */
export type ToolRunState = "never_started" | "outcome_unknown" | "interrupted" | "cancelled";

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
  /** Set on repairs made because a provider rejected the request: the rejection, as parsed. */
  rejection?: ProviderRejection;
  /** Set on `synthesized_result`: what is known of the call the placeholder answers (as its text says). */
  toolRun?: ToolRunState;
}

/**
 * Which piece made a repair: `engine` (`repairToolCalls`, a `Repairer`), `middleware` (`toolCallRepairMiddleware`,
 * either hook), `hook` (`toolCallRepairHook`), `node` (`toolCallRepairNode`), `model` (`withRequestRepair`, the
 * kit's `model`), `checkpointer` (`withToolCallRepair`), `recovery` (a rejection's forced repair, retried),
 * `thread` (`repairThread`), `structured` (a structured-output call's own request).
 */
export type RepairSurface =
  | "engine"
  | "middleware"
  | "hook"
  | "node"
  | "model"
  | "checkpointer"
  | "recovery"
  | "thread"
  | "structured";

/** Where a repair was made, handed to `onRepair` with it (and carried by the custom event's payload). */
export interface RepairContext {
  surface: RepairSurface;
  /** The run's `configurable.thread_id` (as a string), where the surface had a config holding one. */
  threadId?: string;
  /**
   * The checkpoint namespace of the thread's graph: `""` for the top graph, the subgraph's for a subgraph (for a
   * graph step, its task's namespace without the task), where the config holds one.
   */
  checkpointNs?: string;
}

/** What to do with calls that have no result. */
export type OrphanCallStrategy = "answer" | "remove";

/** What to do with the trailing exchange when the history ends on unanswered calls. */
export type TrailingStrategy = "keep" | "answer" | "remove";

/** What to do with a tool result whose call is gone (or an extra, different result of one call). */
export type OrphanResultStrategy = "convert" | "drop";

/** What to do with `invalid_tool_calls`. */
export type InvalidCallStrategy = "answer" | "remove";

/** What to do with a system message inside the conversation (not one of the leading ones). */
export type SystemMessageStrategy = "placed" | "user-text";

export interface RepairOptions {
  /** Whose rules to satisfy. Default `"strict"` (all providers at once). */
  provider?: Provider;
  /**
   * `"request"` (default): everything the provider needs for one request. `"structural"`: only what every
   * provider rejects, for histories that are stored (see {@link RepairLevel}).
   */
  level?: RepairLevel;
  /**
   * System messages inside the conversation, where the provider's rules apply to them (Anthropic, strict):
   * `"placed"` (default) keeps those Anthropic accepts (A11: right after a user turn, not two in a row, last or
   * followed by an assistant turn) and turns the others into user text; `"user-text"` turns every one into user
   * text, for models that accept none (Claude before Opus 4.8).
   */
  systemMessages?: SystemMessageStrategy;
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
  /**
   * Whether the request this history is sent with carries tools (tool definitions: Bedrock's `toolConfig`).
   * Default true: unknown means tools are assumed to be there, and nothing changes. `false` (an unbound model: a
   * summarizer, a title generator, a final-answer node) makes providers that refuse tool blocks without tools
   * (Bedrock B3; `"strict"`) receive every call as assistant text and every result as user text.
   */
  toolsInRequest?: boolean;
  /**
   * Tools that only read (a search, a lookup): calling one again is safe, so the placeholder of such a call that
   * may have started says it can simply be called again if still needed (`readOnly` in `syntheticResultText`).
   * Every other tool's placeholder tells the model to check whether it already took effect first.
   */
  readOnlyTools?: string[];
  /**
   * Text of a synthetic result. The default names the tool and says what is known of it (`toolRun`): that it never
   * started, that no result was recorded or that its run stopped (it may have had effects: check before calling it
   * again, unless `readOnly`, one of `readOnlyTools`), or that the user cancelled it.
   */
  syntheticResultText?: (call: {
    id: string;
    name?: string;
    reason: ToolCallProblemKind;
    note?: string;
    toolRun: ToolRunState;
    readOnly?: boolean;
  }) => string;
  /** Called once per repair, in order, with where it was made. Nothing is logged by this package. */
  onRepair?: (repair: ToolCallRepair, context: RepairContext) => void;
}

/**
 * As in {@link RepairOptions}: `level: "structural"` reports only what every provider rejects; `trailing: "keep"`
 * means an open trailing exchange is not a problem; `toolsInRequest: false` reports every tool call and result
 * where the provider needs tools for them.
 */
export type FindOptions = Pick<
  RepairOptions,
  "provider" | "level" | "trailing" | "systemMessages" | "toolsInRequest"
> & {
  /** Whether an open trailing exchange counts as a problem. Default true (a model call would be rejected). */
  trailingIsProblem?: boolean;
};

export interface RepairResult<M = BaseMessage> {
  /** The input array itself when `repairs` is empty; otherwise a new array whose untouched messages are the input's objects. */
  messages: M[];
  repairs: ToolCallRepair[];
}

/**
 * Who rejected a request, as told by the error: a provider's wire format, LangGraph's own history check
 * (`INVALID_CHAT_HISTORY`), or `"unknown"` when the text is recognised but its sender is not.
 */
export type RejectingProvider = Exclude<Provider, "strict"> | "langgraph" | "unknown";

/**
 * What a provider's error says is wrong with the history. Rule ids are those of docs/provider-rules.md.
 */
export type RejectionKind =
  /** Tool calls without their results right after them (O1, R1, A1, B1, LangGraph `INVALID_CHAT_HISTORY`). */
  | "missing_results"
  /** Tool results without their call in the message before (O2, R2, A2, B2, G2). */
  | "unexpected_results"
  /** Tool results not at the start of the user turn that follows the calls (A3). */
  | "results_not_first"
  /** LangChain's `INVALID_TOOL_RESULTS` code on a text no rule knows: some pairing rule, unnamed. */
  | "invalid_tool_results"
  /** A call answered more than once (O3, A5). */
  | "duplicate_results"
  /** A tool call id (or Responses item id) used twice (A4, R5). */
  | "duplicate_ids"
  /** A tool call id breaking the provider's pattern or length (O4, R3, A6, B4). */
  | "invalid_id"
  /** A tool name breaking the provider's pattern (O5, B4). */
  | "invalid_tool_name"
  /** Fewer or more function responses than function calls (G3). */
  | "result_count_mismatch"
  /** A function call turn not right after a user or function response turn (G1). */
  | "misplaced_calls"
  /** The first message is not a user message (B5). */
  | "must_start_with_user"
  /** Two user or two assistant turns in a row (B6). */
  | "roles_must_alternate"
  /** The request ends on an assistant turn for a model without prefill (A8, B7, G5). */
  | "must_end_with_user"
  /** A message with empty content, or an error result without content (A9, B9, B10). */
  | "empty_content"
  /** A text block that is empty or white space (A9, B8). */
  | "blank_text"
  /** Tool blocks in the history but no tools in the request (B3). */
  | "tool_config_missing"
  /** With extended thinking, the turn that opens the open tool loop does not start with its thinking block (A10, B11). */
  | "thinking_block_required"
  /** A thinking / reasoning block without its signature, or with one that does not verify (A14, B12). */
  | "unsigned_reasoning"
  /** An Anthropic server tool use without its inline `*_tool_result` block (A13). */
  | "server_tool_result_missing"
  /** A content block the adapter cannot send, e.g. Anthropic blocks on ChatBedrockConverse (A12, thrown locally). */
  | "unsupported_content_block"
  /** A content part that is not an object, or of a type the role does not take (O6). */
  | "invalid_content_part"
  /** A system message inside the conversation where the model does not take one (A11). */
  | "misplaced_system_message"
  /**
   * A Responses reasoning item sent apart from the item that followed it (R6: the item without its reasoning
   * item; R7: the reasoning item without its following item). The ids are Responses item ids (`fc_`, `rs_`).
   */
  | "reasoning_item_unpaired"
  /** A function call of the current turn without its thought signature (Gemini 3 and later, G6). */
  | "missing_thought_signature";

/** A provider's rejection of a request's history, read out of the error it threw (`parseToolPairingError`). */
export interface ProviderRejection {
  provider: RejectingProvider;
  kind: RejectionKind;
  /** Rule id of docs/provider-rules.md the text belongs to (e.g. `"B1"`), or `"INVALID_CHAT_HISTORY"`. */
  rule: string;
  /**
   * Every id the text names, in order. These are tool call ids, except for R5, R6 and R7 (Responses item ids,
   * `fc_...`, `rs_...`) and A13 (a server tool use id, `srvtoolu_...`).
   * Empty when the text names none (it may name a position instead).
   */
  toolCallIds: string[];
  /** The LangChain message the position refers to, when the text names one and the sent messages were given. */
  messageIndex?: number;
  /** The position the text names in the provider's payload (`messages.2`, `messages[7]`, `input[95]`). */
  payloadIndex?: number;
  /** The provider's error text (at most 4,096 characters). */
  text: string;
}
