/**
 * What each provider enforces (docs/provider-rules.md), one row per provider: its switches for the passes, and its
 * rules, each declared once with the problems that break it, the texts the provider rejects it with (read by
 * recovery/parse-error.ts) and, through their kind, what a forced repair does (recovery/force-repair.ts). "strict"
 * is the union. At the structural level every shaping switch is off: what is left is what all providers reject alike.
 */
import {
  PROVIDERS,
  type Provider,
  type RejectingProvider,
  type RejectionKind,
  type RepairLevel,
  type ToolCallProblemKind,
} from "../types";
import { callBlockFormatOf, type CallBlockFormat } from "../messages/inspect";

/** A provider's switches for the passes (documented at `STRUCTURAL`), with its rule ids by problem kind. */
export type ProviderProfile = Switches & {
  /** Rule ids broken by each problem kind. */
  rules: Partial<Record<ToolCallProblemKind, string[]>>;
};

/**
 * How a rejection text names the ids it is about (recovery/parse-error.ts reads each, bounded, next to the anchor):
 * - `"list"`: `a, b, c` (none when a position stands there instead: Qwen's `message[532].role`);
 * - `"one"`: one id;
 * - `"quoted"`: the text up to the anchor's own last character, its opening quote;
 * - `"item"`: the Responses item quoted in `Item '...'` before the anchor, then the one quoted after it, if any;
 * - `"calls"`: the `id` of each object of a JSON or Python list of calls (or a list of quoted ids).
 */
type IdReader = "list" | "one" | "quoted" | "item" | "calls";

/** One text a provider rejects a request with, found by any of its anchors (`indexOf`, never a regex over the text). */
interface RejectionText {
  kind: RejectionKind;
  anchors: string[];
  /** How the ids are read; none: the text names no id. */
  ids?: IdReader;
  /** The ids follow this marker (close after the anchor), not the anchor itself. */
  idsAfter?: string;
  /** The error must also contain this (the wrapper Bedrock sends a model's own error in); tried before the others. */
  within?: string;
  /**
   * The text names a request parameter's path, quoted after the anchor (or after `pathAfter`, close before it): this
   * text is the rule's only when the path matches (a path into the tools or another definition: no rejection at all).
   */
  path?: RegExp;
  pathAfter?: string;
  /**
   * Which position (`messages.2`, `input[95]`) names the payload entry: near the anchor, the first (default) or the
   * last; the one that opens the text; none.
   */
  position?: "last" | "start" | "none";
  /** Several providers send this text: the caller's `provider` decides when the error's shape does not. */
  shared?: boolean;
}

/**
 * What a forced repair does about a rejection, by its kind (its `fix`, and the `problem` it reports):
 * - `"answer-calls"`: the calls it names are answered afresh (reported as `problem`); none named: `"strict"`;
 * - `"answer-exchange"`: the exchange at the message named (its calls: the assistant message at or before it)
 *   repaired structurally, else its calls answered afresh (A3 names a position, not ids);
 * - `"strict"`: the strict profile on the turn around the message it names, then on the whole history when that
 *   changed nothing or left a `problem` elsewhere (calls it names are answered afresh first);
 * - `"response-items"`: the Responses items named go without their ids (R6, R7);
 * - `"thought-signature"`: each step's first unsigned call gets Google's placeholder signature (G6);
 * - `"close-open-loop"`: the open tool loop's calls and results go as text (A10, B11);
 * - `"reasoning-as-text"`: reasoning blocks (at the message named, or all) go as text (A14, B12);
 * - `"server-tools-as-text"`: the server tool use named goes as text with its result (A13);
 * - `"tools-as-text"`: every call and result goes as text, for a request without tools (B3).
 * A fix that finds nothing to change falls back to the strict profile around the message named.
 */
const fix = <F extends string>(fix: F, problem?: ToolCallProblemKind) => ({ fix, problem });
const answer = (problem: ToolCallProblemKind) => fix("answer-calls", problem);
const strict = (problem?: ToolCallProblemKind) => fix("strict", problem);

/** The one relation of rejection kinds to the engine's problems and to what a forced repair does (at `fix`). */
export const FORCED_REPAIRS = {
  missing_results: answer("orphan_call"),
  unexpected_results: answer("orphan_result"),
  results_not_first: fix("answer-exchange", "interleaved_message"),
  duplicate_results: answer("duplicate_result"),
  duplicate_ids: answer("duplicate_call_id"),
  invalid_id: answer("invalid_call_id"),
  result_count_mismatch: answer("orphan_call"),
  invalid_tool_name: strict(),
  misplaced_calls: strict(),
  must_end_with_user: strict(),
  must_start_with_user: strict("leading_non_user"),
  roles_must_alternate: strict("consecutive_same_role"),
  empty_content: strict("empty_message"),
  blank_text: strict("blank_text_block"),
  unsupported_content_block: strict("unsupported_block"),
  invalid_content_part: strict("malformed_message"),
  misplaced_system_message: strict("misplaced_system_message"),
  tool_config_missing: fix("tools-as-text"),
  thinking_block_required: fix("close-open-loop", "unsupported_block"),
  unsigned_reasoning: fix("reasoning-as-text", "unsupported_block"),
  server_tool_result_missing: fix("server-tools-as-text", "unsupported_block"),
  reasoning_item_unpaired: fix("response-items", "duplicate_response_item"),
  missing_thought_signature: fix("thought-signature", "unsigned_call"),
  invalid_tool_results: strict(),
} satisfies Record<RejectionKind, { fix: string }>;

const ID_PATTERN = /^[a-zA-Z0-9_-]+$/;

type Switches = typeof STRUCTURAL;

/** Every shaping switch off: only what all providers reject alike is left. Each provider's row says what it adds. */
const STRUCTURAL = {
  /** Tool call ids must match `^[a-zA-Z0-9_-]+$` (Anthropic A6, Bedrock B4). */
  idPattern: false,
  /** Longest accepted tool call id (OpenAI O4: 40, Responses R3 and Bedrock B4: 64). */
  maxIdLength: Infinity,
  /** No empty messages, blank text blocks or empty tool results (Anthropic A9, Bedrock B8, B9, B10; Gemini). */
  nonEmptyContent: false,
  /** The first non-system message is a user message (Bedrock B5, Gemini G1). */
  leadingUser: false,
  /** User and assistant turns alternate as the adapter sends them (Bedrock B6, Gemini G1). */
  alternation: false,
  /**
   * The call content block formats that may stay in an assistant message's `content` (the call itself is in
   * `tool_calls` after the call-locations pass): those the adapter sends right or leaves out. The others
   * leave `content`. Read in the adapters (@langchain/openai 1.5.8, @langchain/anthropic 1.5.11,
   * @langchain/aws 1.4.5, @langchain/google-genai 2.3.2):
   * - ChatOpenAI Completions (`convertMessagesToCompletionsMessageParams`) drops `tool_use` and `tool_call`
   *   parts but sends `input_json_delta` and a Converse `{ toolUse }` (no `type`) as content parts (O6).
   * - Responses (`convertMessagesToResponsesInput`) keeps only text, `output_text` and `refusal` parts of an
   *   assistant message: every format is left out.
   * - ChatAnthropic (`_formatContentBlocks`) sends `tool_use`, leaves out `tool_call` and `{ toolUse }` (and
   *   re-adds the call from `tool_calls`), but skips `input_json_delta` while counting its id as sent, so the
   *   call it names is never sent (A1).
   * - ChatBedrockConverse throws on every one ("Unsupported content block type").
   * - ChatGoogleGenerativeAI (`_convertLangChainContentToPart`) sends `tool_use` / `tool_call` as a second
   *   `functionCall` beside `tool_calls` (G3) and throws on the other two.
   */
  callBlockFormats: new Set(["tool_use", "tool_call", "input_json_delta", "toolUse"]) as ReadonlySet<CallBlockFormat>,
  /**
   * The `ChatMessage` roles the adapter sends as the turn the role means (undefined: every role is kept, the
   * structural level). A ChatMessage with any other role becomes the typed message its role means (the
   * chat-messages pass). Read in the adapters:
   * - ChatOpenAI (`messageToOpenAIRole`, Completions and Responses) sends the role as it is: `user`,
   *   `assistant`, `system`, `developer` are right; `human` / `ai` / unknown roles are refused by the API (and
   *   dropped by the Responses converter), `tool` goes without `tool_call_id` (O2, R2).
   * - ChatAnthropic (`_convertMessagesToAnthropicPayload`) throws on any ChatMessage.
   * - ChatBedrockConverse (`convertToConverseMessages`) sends every ChatMessage as a user turn.
   * - ChatGoogleGenerativeAI (`convertAuthorToRole`) takes the role as the author: `human` and `ai` map;
   *   `user` and `assistant` throw.
   */
  chatMessageRoles: undefined as ReadonlySet<string> | undefined,
  /**
   * Anthropic-only content blocks may be sent: `thinking`, `redacted_thinking`, `server_tool_use` and inline
   * `*_tool_result` blocks (A12). ChatBedrockConverse throws on them; OpenAI rejects them.
   */
  anthropicBlocks: true,
  /**
   * The inline server tool result types the adapter re-sends (undefined: every one). @langchain/anthropic 1.5.11
   * (`_formatContentBlocks`) leaves out `web_fetch_tool_result`, `code_execution_tool_result` and any type it does
   * not list, so their `server_tool_use` goes without its result (A13).
   */
  serverToolResults: undefined as ReadonlySet<string> | undefined,
  /**
   * Reasoning blocks are sent to Claude, which refuses them unsigned (A14, B12): a thinking block a cancelled
   * stream left without its signature must not travel as reasoning.
   */
  signedReasoning: false,
  /**
   * Assistant content blocks the adapter accepts: `"any"`, or `"converse"`: only what ChatBedrockConverse reads
   * in an assistant message (`text`, `reasoning` / `reasoning_content`, a `cachePoint`; calls travel as
   * `tool_calls`). It throws `Unsupported content block type: ...` on anything else, such as a block another
   * provider's adapter left or a block without a type. `"gemini"`: only what ChatGoogleGenerativeAI converts
   * (text, media, code execution parts); it throws `Unknown content type ...` on the rest (a Bedrock `reasoning` block).
   */
  assistantBlocks: "any" as "any" | "converse" | "gemini",
  /**
   * System messages inside the conversation (after the first non-system message): `"any"` place is fine
   * (OpenAI; @langchain/aws lifts every one into `system`), `"placed"` only where Anthropic accepts them
   * (A11), `"none"`: none at all (strict, and Claude before Opus 4.8).
   */
  systemInConversation: "any" as "any" | "placed" | "none",
  /**
   * Tool calls and results may only be sent in a request that carries tools (Bedrock B3: without `toolConfig`
   * any toolUse/toolResult block is refused). Acted on only when the caller says the request carries none
   * (`toolsInRequest: false`): then every call and result travels as text.
   */
  // Storage never learns what a request carries.
  toolBlocksNeedTools: false,
  /**
   * Parallel calls travel as one call per step: @langchain/google-genai sends each ToolMessage as its own
   * content, so a model turn with n calls meets n response turns of one part each (G3).
   */
  oneCallPerStep: false,
  /**
   * The first call of each assistant step in the current turn carries a thought signature in the client's map
   * (Gemini 3 and later, G6; @langchain/google-genai writes its own placeholder only for model ids with
   * "gemini-3").
   */
  signedCalls: false,
  /**
   * A Responses reasoning item is sent only right before the item that followed it in its response, with its id
   * (R7): where ChatOpenAI, with no output to re-send, rebuilds the items and sends that item without its id, the
   * reasoning item does not go (the response-items pass). A v1 message, which it sends from its content blocks (the
   * reasoning with its id, the rest without), goes as `output_version: "v0"` when its output is stored (re-sent
   * verbatim), else without its reasoning blocks that carry an id.
   */
  reasoningFollowed: false,
};

/** The problems that leave a call without its result where the provider looks for it. */
/** The rest of G3's problems (its list is too long for one line). */
const G3_MORE = "missing_call_id invalid_tool_call call_outside_tool_calls call_block_in_content parallel_calls";
const UNANSWERED =
  "orphan_call trailing_open_exchange displaced_result interleaved_message invalid_tool_call call_outside_tool_calls";
/** The problems that send one result, or one call id, twice. */
const DUPLICATES = "duplicate_result duplicate_call_id";
/** The problems that leave a result without a call it can answer. */
const UNCALLED = "orphan_result invalid_tool_call missing_result_id call_outside_tool_calls";
/** Bedrock wraps a model's own error (Anthropic's texts) in this. */
const BEDROCK_WRAPPER = "The model returned the following errors";
const PREFILL = "does not support assistant message prefill";
const THINKING_FIRST = "must start with a thinking block";
const CONSTRAINT = "failed to satisfy constraint";
/** An Anthropic text with its names in backticks, and the same text without them (both are sent). */
const ticked = (text: string) => [text, text.replaceAll("`", "")];
const UNSIGNED_REASONING = [
  ".thinking.signature: Field required",
  ".redacted_thinking.data: Field required",
  ...ticked("`signature` in `thinking`"),
];

/** A rejection text of `kind`, found by `anchors`, read as `how` says. */
const says = (
  kind: RejectionKind,
  anchors: string | string[],
  how: IdReader | Omit<RejectionText, "kind" | "anchors"> = {},
) => ({
  kind,
  anchors: [anchors].flat(),
  ...(typeof how === "string" ? { ids: how } : how),
});
/**
 * A provider rule (docs/provider-rules.md): the problems that break it (space-separated;
 * test/engine/profiles-rows.test.ts holds each to a `ToolCallProblemKind`), then the texts the provider rejects it with
 * (`says`), or the arguments of `says` for its one text.
 */
const rule = (problems: string, ...rejected: RejectionText[] | Parameters<typeof says>) => ({
  problems: (problems.match(/\S+/g) ?? []) as ToolCallProblemKind[],
  rejected:
    typeof rejected[0] === "string" ? [says(...(rejected as Parameters<typeof says>))] : (rejected as RejectionText[]),
});
/** A Responses item's texts: the items quoted, no position. */
const ITEM = { ids: "item", position: "none" } as const;
const A12 = rule("unsupported_block");
const OPENAI_LC = { A12, "LC-openai": rule("chat_message_role") };
/** Both OpenAI APIs: the roles the API takes and ChatOpenAI sends as they are; no Anthropic blocks. */
const OPENAI = { chatMessageRoles: new Set(["user", "assistant", "system", "developer"]), anthropicBlocks: false };
/** Bedrock and Gemini: non-empty turns, the user's first, alternating; no call block in content, no Anthropic blocks. */
const TURNS = {
  nonEmptyContent: true,
  leadingUser: true,
  alternation: true,
  callBlockFormats: new Set<never>(),
  anthropicBlocks: false,
};

/**
 * One row per provider: the switches it turns on beyond the structural level, and its rules by id (docs/provider-rules.md),
 * each with the problems that break it and the texts the provider rejects it with. LangGraph's own history check has
 * texts only.
 */
const ROWS: Record<
  Exclude<RejectingProvider, "unknown">,
  Partial<Switches> & { rules: Record<string, ReturnType<typeof rule>> }
> = {
  openai: {
    maxIdLength: 40,
    callBlockFormats: new Set(["tool_use", "tool_call"]),
    ...OPENAI,
    rules: {
      O1: rule(
        `${UNANSWERED} missing_call_id`,
        says("missing_results", "did not have response messages: ", "list"),
        says("missing_results", ["tool messages responding to each", "insufficient tool messages"]),
      ),
      // OpenAI spells it "preceeding"; compatible backends "preceding": the common prefix is "prece".
      O2: rule(
        `displaced_result ${UNCALLED} chat_message_role`,
        says("unexpected_results", "must be a response to a prece"),
        // Moonshot (Kimi): `tool_call_id  is not found` (two spaces: the id is empty), read up to the space.
        says("unexpected_results", "tool_call_id ", { within: " is not found", ids: "quoted" }),
      ),
      O3: rule(DUPLICATES, "duplicate_results", "tool_call_id' of '", { ids: "quoted", position: "last" }),
      O4: rule("invalid_call_id", "invalid_id", "Invalid '", {
        path: /^messages\[\d{1,7}\]\.tool_calls\[\d{1,5}\]\.id$/,
      }),
      O5: rule(
        "",
        says("invalid_tool_name", "Invalid '", {
          path: /^messages\[\d{1,7}\]\.tool_calls\[\d{1,5}\]\.function\.name$/,
        }),
        // The same text without its path (OpenAI call ids have no pattern, so a pattern error is about a name).
        says("invalid_tool_name", "matches the pattern '^[a-zA-Z0-9_-]+$'"),
      ),
      O6: rule("call_block_in_content", "invalid_content_part", [
        "Invalid type for 'messages[",
        "Supported values are: 'text'",
      ]),
      ...OPENAI_LC,
    },
  },
  "openai-responses": {
    maxIdLength: 64,
    reasoningFollowed: true,
    ...OPENAI,
    rules: {
      R1: rule(
        `${UNANSWERED} missing_call_id`,
        "missing_results",
        ["output found for function call ", "output found for custom tool call "],
        "one",
      ),
      R2: rule(`${UNCALLED} chat_message_role`, "unexpected_results", "call output with call_id ", "one"),
      R3: rule(
        "invalid_call_id",
        says("invalid_id", "Invalid '", { path: /^input\[\d{1,7}\]\.call_id$/ }),
        says("invalid_tool_name", "Invalid '", { path: /^input\[\d{1,7}\]\.name$/ }),
      ),
      R5: rule(`${DUPLICATES} duplicate_response_item`, "duplicate_ids", "Duplicate item found with id ", "one"),
      R6: rule("duplicate_response_item", "reasoning_item_unpaired", "its required 'reasoning' item: '", ITEM),
      R7: rule("duplicate_response_item", "reasoning_item_unpaired", "without its required following item", ITEM),
      ...OPENAI_LC,
    },
  },
  anthropic: {
    idPattern: true,
    nonEmptyContent: true,
    callBlockFormats: new Set(["tool_use", "tool_call", "toolUse"]),
    chatMessageRoles: new Set(),
    systemInConversation: "placed",
    /** What ChatAnthropic re-sends of the inline server tool results (`toolTypes` of `_formatContentBlocks`, 1.5.11). */
    serverToolResults: new Set([
      "web_search_tool_result",
      "bash_code_execution_tool_result",
      "text_editor_code_execution_tool_result",
      "tool_search_tool_result",
      "tool_search_tool_bm25_tool_result",
      "tool_search_tool_regex_tool_result",
    ]),
    signedReasoning: true,
    rules: {
      A1: rule(`${UNANSWERED} call_block_in_content`, "missing_results", "blocks immediately after: ", "list"),
      A2: rule(`displaced_result ${UNCALLED}`, "unexpected_results", ticked("`tool_result` blocks: "), "list"),
      A3: rule("interleaved_message", "results_not_first", "block(s) at the beginning of this message"),
      A4: rule("duplicate_call_id", "duplicate_ids", "ids must be unique"),
      A5: rule("duplicate_result", "duplicate_results", " blocks with id: ", "one"),
      A6: rule("missing_call_id invalid_call_id", "invalid_id", "String should match pattern '^[a-zA-Z0-9_-]+$'"),
      A8: rule("", "must_end_with_user", PREFILL, { shared: true }),
      A9: rule(
        "empty_message blank_text_block empty_tool_result",
        says("empty_content", "all messages must have non-empty content"),
        says("blank_text", ["must contain non-whitespace text", "text content blocks must be non-empty"]),
      ),
      // The position opens the text, further from the anchor than positions are looked for.
      A10: rule("consecutive_same_role", "thinking_block_required", THINKING_FIRST, { position: "start" }),
      A11: rule("misplaced_system_message", "misplaced_system_message", [
        "message must directly follow",
        "system messages are not supported in",
      ]),
      A13: rule("unsupported_block", "server_tool_result_missing", "` tool use with id `", {
        within: "found without a corresponding",
        ids: "quoted",
      }),
      // A thinking block without its signature, or with one that does not verify.
      A14: rule("unsupported_block", "unsigned_reasoning", UNSIGNED_REASONING),
      "LC-anthropic": rule("chat_message_role"),
    },
  },
  // @langchain/aws lifts every SystemMessage into `system`, wherever it stands, and sends every ChatMessage as a user turn.
  bedrock: {
    idPattern: true,
    maxIdLength: 64,
    ...TURNS,
    chatMessageRoles: new Set(["user", "human"]),
    assistantBlocks: "converse",
    toolBlocksNeedTools: true,
    signedReasoning: true,
    rules: {
      B1: rule(`${UNANSWERED} duplicate_call_id`, "missing_results", "Expected toolResult blocks at ", {
        ids: "list",
        idsAfter: "Ids:",
      }),
      B2: rule(
        "displaced_result orphan_result duplicate_result invalid_tool_call missing_result_id",
        "unexpected_results",
        "exceeds the number of toolUse blocks",
      ),
      B3: rule("tool_blocks_without_tools", "tool_config_missing", "The toolConfig field must be defined"),
      // Only a tool call's id or name: other constraints inside a tool block (a result's length) are no diagnosis.
      B4: rule(
        "missing_call_id invalid_call_id",
        says("invalid_id", CONSTRAINT, { pathAfter: "Value at '", path: /\.(toolUse|toolResult)\.toolUseId$/ }),
        says("invalid_tool_name", CONSTRAINT, { pathAfter: "Value at '", path: /\.toolUse\.name$/ }),
      ),
      B5: rule("leading_non_user", "must_start_with_user", "must start with a user message"),
      B6: rule(
        "interleaved_message consecutive_same_role chat_message_role",
        "roles_must_alternate",
        "must alternate between user and assistant",
      ),
      B7: rule(
        "",
        says("must_end_with_user", PREFILL, { within: BEDROCK_WRAPPER }),
        says("must_end_with_user", "requires the last turn in the conversation"),
      ),
      B8: rule("blank_text_block empty_tool_result", "blank_text", "The text field in the ContentBlock"),
      B9: rule("empty_message", "empty_content", "The content field in the Message"),
      B10: rule("empty_tool_result", "empty_content", "when status value is error"),
      // A10 and A14 inside Bedrock's wrapper of model errors.
      B11: rule("unsupported_block", "thinking_block_required", THINKING_FIRST, {
        within: BEDROCK_WRAPPER,
        position: "start",
      }),
      B12: rule("unsupported_block", "unsigned_reasoning", UNSIGNED_REASONING, { within: BEDROCK_WRAPPER }),
      // Thrown by ChatBedrockConverse before sending.
      A12: rule("unsupported_block", "unsupported_content_block", "Unsupported content block type: ", {
        position: "none",
      }),
      "LC-bedrock": rule("call_block_in_content chat_message_role"),
    },
  },
  // @langchain/google-genai refuses a system message that is not the first one.
  gemini: {
    ...TURNS,
    chatMessageRoles: new Set(["human", "ai"]),
    assistantBlocks: "gemini",
    systemInConversation: "none",
    oneCallPerStep: true,
    signedCalls: true,
    rules: {
      G1: rule(
        "leading_non_user consecutive_same_role",
        "misplaced_calls",
        "function call turn comes immediately after",
      ),
      G2: rule(
        "displaced_result interleaved_message orphan_result missing_result_id",
        "unexpected_results",
        "function response turn comes immediately after",
      ),
      G3: rule(
        `orphan_call trailing_open_exchange displaced_result ${DUPLICATES} ${G3_MORE}`,
        "result_count_mismatch",
        "number of function response parts is equal",
      ),
      G5: rule("empty_message blank_text_block", "must_end_with_user", "single turn requests end with a user role"),
      G6: rule("unsigned_call", "missing_thought_signature", "missing a thought_signature", { position: "none" }),
      A12,
      "LC-gemini": rule("chat_message_role misplaced_system_message"),
    },
  },
  // LangGraph's own check (Python createReactAgent, older LangGraph.js): a JSON or repr list of the calls, or of their ids.
  langgraph: {
    rules: {
      INVALID_CHAT_HISTORY: rule("", "missing_results", "that do not have a corresponding ToolMessage", {
        ids: "calls",
        idsAfter: "[",
        position: "none",
      }),
      // The code @langchain/anthropic and @langchain/openai give a 400 about tools (in `lc_error_code` and in the
      // message's troubleshooting URL): a pairing rejection whose text no row knows. Last: any known text wins.
      INVALID_TOOL_RESULTS: rule("", "invalid_tool_results", "INVALID_TOOL_RESULTS", { shared: true }),
    },
  },
};

// Strict is the union: Bedrock's switches (a request without tools carries no tool blocks, B3), OpenAI's id length,
// no ChatMessage kept and no system message inside the conversation.
const STRICT = {
  ...ROWS.bedrock,
  maxIdLength: 40,
  chatMessageRoles: new Set(),
  systemInConversation: "none",
};

/** Every rejection text, with its rule and sender: those found `within` a wrapper first, then in the rows' order. */
export const REJECTION_TEXTS = Object.entries(ROWS)
  .flatMap(([provider, row]) =>
    Object.entries(row.rules).flatMap(([rule, { rejected }]) =>
      rejected.map((text) => ({ ...text, rule, provider: provider as RejectingProvider })),
    ),
  )
  .sort((a, b) => Number(!a.within) - Number(!b.within));

/** A provider's profiles: its row's switches (strict: the union's) at the request level, none at the structural level. */
function makeProfiles(provider: Provider) {
  const strict = provider === "strict";
  // Problem kind -> the ids of the rules it breaks; strict: every row's (LangGraph's rule breaks no problem).
  const ids: ProviderProfile["rules"] = {};
  for (const { rules } of strict ? Object.values(ROWS) : [ROWS[provider]])
    for (const [rule, { problems }] of Object.entries(rules))
      for (const kind of problems) if (!ids[kind]?.includes(rule)) (ids[kind] ??= []).push(rule);
  // A row's own `rules` is replaced by `ids`, in the same place.
  const profile = (row?: object) => Object.freeze({ ...STRUCTURAL, ...row, rules: ids });
  return { request: profile(strict ? STRICT : ROWS[provider]), structural: profile() };
}

/** Every profile, built once. */
const PROFILES = Object.fromEntries(PROVIDERS.map((p) => [p, makeProfiles(p)])) as Record<
  Provider,
  Record<RepairLevel, ProviderProfile>
>;

/** The profile for a provider and level. */
export function profileFor(provider: Provider, level: RepairLevel = "request") {
  return PROFILES[provider][level];
}

/**
 * Whether tool calls and results travel as text in this request: the caller says it carries no tools and the
 * provider refuses tool blocks then. Off at the structural level (the profile's switch is off there).
 */
export function toolBlocksAsText(profile: ProviderProfile, options: { toolsInRequest: boolean }) {
  return profile.toolBlocksNeedTools && !options.toolsInRequest;
}

/**
 * Whether the adapter keeps a value as it is, by a profile's set of them (undefined: every one): whether it sends a
 * ChatMessage of a role (`chatMessageRoles`) as the turn the role means, whether it re-sends an inline server tool
 * result block of a type (`serverToolResults`).
 */
export function keeps(kept: ReadonlySet<string> | undefined, value: unknown) {
  return kept?.has(value as string) ?? true;
}

/** Whether a call content block may stay in `content` for the provider (any other block leaves it). */
export function keepsCallBlock(profile: ProviderProfile, block: unknown) {
  const format = callBlockFormatOf(block);
  return format === undefined || profile.callBlockFormats.has(format);
}

/** Whether a tool call id is accepted by the provider as it is. */
export function isAcceptedId(id: string, profile: ProviderProfile) {
  return id.length <= profile.maxIdLength && (!profile.idPattern || ID_PATTERN.test(id));
}
