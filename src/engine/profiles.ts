/**
 * What each provider enforces, as switches for the passes (PROVIDER_RULES.md). "strict" is the union. At the
 * structural level every shaping switch is off: what is left is what all providers reject alike.
 */
import { ToolCallRepairInputError } from "../errors";
import { quoteValue } from "../values";
import { PROVIDERS, type Provider, type RepairLevel, type ToolCallProblemKind } from "../types";
import {
  callBlockFormatOf,
  isConverseAssistantBlock,
  isGeminiAssistantBlock,
  type CallBlockFormat,
} from "../messages/inspect";

export interface ProviderProfile {
  provider: Provider;
  level: RepairLevel;
  /** Tool call ids must match `^[a-zA-Z0-9_-]+$` (Anthropic A6, Bedrock B4). */
  idPattern: boolean;
  /** Longest accepted tool call id (OpenAI O4: 40, Responses R3 and Bedrock B4: 64). */
  maxIdLength: number;
  /** No empty messages, blank text blocks or empty tool results (Anthropic A9, Bedrock B8, B9, B10; Gemini). */
  nonEmptyContent: boolean;
  /** The first non-system message is a user message (Bedrock B5, Gemini G1). */
  leadingUser: boolean;
  /** User and assistant turns alternate as the adapter sends them (Bedrock B6, Gemini G1). */
  alternation: boolean;
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
  callBlockFormats: ReadonlySet<CallBlockFormat>;
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
  chatMessageRoles: ReadonlySet<string> | undefined;
  /**
   * Anthropic-only content blocks may be sent: `thinking`, `redacted_thinking`, `server_tool_use` and inline
   * `*_tool_result` blocks (A12). ChatBedrockConverse throws on them; OpenAI rejects them.
   */
  anthropicBlocks: boolean;
  /**
   * The inline server tool result types the adapter re-sends (undefined: every one). @langchain/anthropic 1.5.11
   * (`_formatContentBlocks`) leaves out `web_fetch_tool_result`, `code_execution_tool_result` and any type it does
   * not list, so their `server_tool_use` goes without its result (A13).
   */
  serverToolResults: ReadonlySet<string> | undefined;
  /**
   * Reasoning blocks are sent to Claude, which refuses them unsigned (A14, B12): a thinking block a cancelled
   * stream left without its signature must not travel as reasoning.
   */
  signedReasoning: boolean;
  /**
   * Assistant content blocks the adapter accepts: `"any"`, or `"converse"`: only what ChatBedrockConverse reads
   * in an assistant message (`text`, `reasoning` / `reasoning_content`, a `cachePoint`; calls travel as
   * `tool_calls`). It throws `Unsupported content block type: ...` on anything else, such as a block another
   * provider's adapter left or a block without a type. `"gemini"`: only what ChatGoogleGenerativeAI converts
   * (text, media, code execution parts); it throws `Unknown content type ...` on the rest (a Bedrock `reasoning` block).
   */
  assistantBlocks: "any" | "converse" | "gemini";
  /**
   * System messages inside the conversation (after the first non-system message): `"any"` place is fine
   * (OpenAI; @langchain/aws lifts every one into `system`), `"placed"` only where Anthropic accepts them
   * (A11), `"none"`: none at all (strict, and Claude before Opus 4.8).
   */
  systemInConversation: "any" | "placed" | "none";
  /**
   * Tool calls and results may only be sent in a request that carries tools (Bedrock B3: without `toolConfig`
   * any toolUse/toolResult block is refused). Acted on only when the caller says the request carries none
   * (`toolsInRequest: false`): then every call and result travels as text.
   */
  toolBlocksNeedTools: boolean;
  /**
   * Parallel calls travel as one call per step: @langchain/google-genai sends each ToolMessage as its own
   * content, so a model turn with n calls meets n response turns of one part each (G3).
   */
  oneCallPerStep: boolean;
  /**
   * The first call of each assistant step in the current turn carries a thought signature in the client's map
   * (Gemini 3 and later, G6; @langchain/google-genai writes its own placeholder only for model ids with
   * "gemini-3").
   */
  signedCalls: boolean;
  /** Rule ids broken by each problem kind. */
  rules: Partial<Record<ToolCallProblemKind, string[]>>;
}

const ID_PATTERN = /^[a-zA-Z0-9_-]+$/;

const RULES: Record<Exclude<Provider, "strict">, Partial<Record<ToolCallProblemKind, string[]>>> = {
  openai: {
    orphan_call: ["O1"],
    trailing_open_exchange: ["O1"],
    displaced_result: ["O1", "O2"],
    interleaved_message: ["O1"],
    orphan_result: ["O2"],
    duplicate_result: ["O3"],
    duplicate_call_id: ["O3"],
    missing_call_id: ["O1"],
    invalid_call_id: ["O4"],
    invalid_tool_call: ["O1", "O2"],
    missing_result_id: ["O2"],
    call_outside_tool_calls: ["O1", "O2"],
    call_block_in_content: ["O6"],
    unsupported_block: ["A12"],
    chat_message_role: ["LC-openai", "O2"],
  },
  "openai-responses": {
    orphan_call: ["R1"],
    trailing_open_exchange: ["R1"],
    displaced_result: ["R1"],
    interleaved_message: ["R1"],
    orphan_result: ["R2"],
    duplicate_result: ["R5"],
    duplicate_call_id: ["R5"],
    duplicate_response_item: ["R5", "R6", "R7"],
    missing_call_id: ["R1"],
    invalid_call_id: ["R3"],
    invalid_tool_call: ["R1", "R2"],
    missing_result_id: ["R2"],
    call_outside_tool_calls: ["R1", "R2"],
    unsupported_block: ["A12"],
    chat_message_role: ["LC-openai", "R2"],
  },
  anthropic: {
    orphan_call: ["A1"],
    trailing_open_exchange: ["A1"],
    displaced_result: ["A1", "A2"],
    interleaved_message: ["A1", "A3"],
    orphan_result: ["A2"],
    duplicate_result: ["A5"],
    duplicate_call_id: ["A4"],
    missing_call_id: ["A6"],
    invalid_call_id: ["A6"],
    invalid_tool_call: ["A1", "A2"],
    missing_result_id: ["A2"],
    call_outside_tool_calls: ["A1", "A2"],
    call_block_in_content: ["A1"],
    chat_message_role: ["LC-anthropic"],
    unsupported_block: ["A13", "A14"],
    empty_message: ["A9"],
    blank_text_block: ["A9"],
    empty_tool_result: ["A9"],
    misplaced_system_message: ["A11"],
    consecutive_same_role: ["A10"],
  },
  bedrock: {
    orphan_call: ["B1"],
    trailing_open_exchange: ["B1"],
    displaced_result: ["B1", "B2"],
    interleaved_message: ["B1", "B6"],
    orphan_result: ["B2"],
    duplicate_result: ["B2"],
    duplicate_call_id: ["B1"],
    missing_call_id: ["B4"],
    invalid_call_id: ["B4"],
    invalid_tool_call: ["B1", "B2"],
    missing_result_id: ["B2"],
    empty_message: ["B9"],
    blank_text_block: ["B8"],
    empty_tool_result: ["B8", "B10"],
    leading_non_user: ["B5"],
    consecutive_same_role: ["B6"],
    call_block_in_content: ["LC-bedrock"],
    chat_message_role: ["LC-bedrock", "B6"],
    call_outside_tool_calls: ["B1"],
    unsupported_block: ["A12", "B11", "B12"],
    tool_blocks_without_tools: ["B3"],
  },
  gemini: {
    orphan_call: ["G3"],
    trailing_open_exchange: ["G3"],
    displaced_result: ["G2", "G3"],
    interleaved_message: ["G2"],
    orphan_result: ["G2"],
    duplicate_result: ["G3"],
    duplicate_call_id: ["G3"],
    missing_call_id: ["G3"],
    invalid_tool_call: ["G3"],
    missing_result_id: ["G2"],
    call_outside_tool_calls: ["G3"],
    call_block_in_content: ["G3"],
    chat_message_role: ["LC-gemini"],
    empty_message: ["G5"],
    blank_text_block: ["G5"],
    leading_non_user: ["G1"],
    consecutive_same_role: ["G1"],
    unsupported_block: ["A12"],
    misplaced_system_message: ["LC-gemini"],
    parallel_calls: ["G3"],
    unsigned_call: ["G6"],
  },
};

function union(): Partial<Record<ToolCallProblemKind, string[]>> {
  const out: Partial<Record<ToolCallProblemKind, string[]>> = {};
  for (const rules of Object.values(RULES))
    for (const [kind, ids] of Object.entries(rules) as [ToolCallProblemKind, string[]][])
      out[kind] = [...(out[kind] ?? []), ...ids.filter((id) => !out[kind]?.includes(id))];
  return out;
}

type Switches = Omit<ProviderProfile, "provider" | "level" | "rules">;

const ALL_CALL_BLOCKS: ReadonlySet<CallBlockFormat> = new Set(["tool_use", "tool_call", "input_json_delta", "toolUse"]);
const NO_CALL_BLOCKS: ReadonlySet<CallBlockFormat> = new Set();
/** The roles OpenAI's API takes and ChatOpenAI sends as they are. */
const OPENAI_ROLES: ReadonlySet<string> = new Set(["user", "assistant", "system", "developer"]);
const NO_ROLES: ReadonlySet<string> = new Set();

/** What ChatAnthropic re-sends of the inline server tool results (`toolTypes` of `_formatContentBlocks`, 1.5.11). */
const ANTHROPIC_SERVER_RESULTS: ReadonlySet<string> = new Set([
  "web_search_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "tool_search_tool_result",
  "tool_search_tool_bm25_tool_result",
  "tool_search_tool_regex_tool_result",
]);

const SWITCHES: Record<Provider, Switches> = {
  openai: {
    idPattern: false,
    maxIdLength: 40,
    nonEmptyContent: false,
    leadingUser: false,
    alternation: false,
    callBlockFormats: new Set(["tool_use", "tool_call"]),
    chatMessageRoles: OPENAI_ROLES,
    anthropicBlocks: false,
    assistantBlocks: "any",
    systemInConversation: "any",
    toolBlocksNeedTools: false,
    oneCallPerStep: false,
    signedCalls: false,
    serverToolResults: undefined,
    signedReasoning: false,
  },
  "openai-responses": {
    idPattern: false,
    maxIdLength: 64,
    nonEmptyContent: false,
    leadingUser: false,
    alternation: false,
    callBlockFormats: ALL_CALL_BLOCKS,
    chatMessageRoles: OPENAI_ROLES,
    anthropicBlocks: false,
    assistantBlocks: "any",
    systemInConversation: "any",
    toolBlocksNeedTools: false,
    oneCallPerStep: false,
    signedCalls: false,
    serverToolResults: undefined,
    signedReasoning: false,
  },
  anthropic: {
    idPattern: true,
    maxIdLength: Infinity,
    nonEmptyContent: true,
    leadingUser: false,
    alternation: false,
    callBlockFormats: new Set(["tool_use", "tool_call", "toolUse"]),
    chatMessageRoles: NO_ROLES,
    anthropicBlocks: true,
    assistantBlocks: "any",
    systemInConversation: "placed",
    toolBlocksNeedTools: false,
    oneCallPerStep: false,
    signedCalls: false,
    serverToolResults: ANTHROPIC_SERVER_RESULTS,
    signedReasoning: true,
  },
  // @langchain/aws lifts every SystemMessage into `system`, wherever it stands, and sends every ChatMessage as a user turn.
  bedrock: {
    idPattern: true,
    maxIdLength: 64,
    nonEmptyContent: true,
    leadingUser: true,
    alternation: true,
    callBlockFormats: NO_CALL_BLOCKS,
    chatMessageRoles: new Set(["user", "human"]),
    anthropicBlocks: false,
    assistantBlocks: "converse",
    systemInConversation: "any",
    toolBlocksNeedTools: true,
    oneCallPerStep: false,
    signedCalls: false,
    serverToolResults: undefined,
    signedReasoning: true,
  },
  // @langchain/google-genai refuses a system message that is not the first one.
  gemini: {
    idPattern: false,
    maxIdLength: Infinity,
    nonEmptyContent: true,
    leadingUser: true,
    alternation: true,
    callBlockFormats: NO_CALL_BLOCKS,
    chatMessageRoles: new Set(["human", "ai"]),
    anthropicBlocks: false,
    assistantBlocks: "gemini",
    systemInConversation: "none",
    toolBlocksNeedTools: false,
    oneCallPerStep: true,
    signedCalls: true,
    serverToolResults: undefined,
    signedReasoning: false,
  },
  // Strict is the union: a request without tools carries no tool blocks (B3).
  strict: {
    idPattern: true,
    maxIdLength: 40,
    nonEmptyContent: true,
    leadingUser: true,
    alternation: true,
    callBlockFormats: NO_CALL_BLOCKS,
    chatMessageRoles: NO_ROLES,
    anthropicBlocks: false,
    assistantBlocks: "converse",
    systemInConversation: "none",
    toolBlocksNeedTools: true,
    oneCallPerStep: false,
    signedCalls: false,
    serverToolResults: undefined,
    signedReasoning: true,
  },
};

/** Every shaping switch off: only what all providers reject alike is left. */
const STRUCTURAL: Switches = {
  idPattern: false,
  maxIdLength: Infinity,
  nonEmptyContent: false,
  leadingUser: false,
  alternation: false,
  callBlockFormats: ALL_CALL_BLOCKS,
  chatMessageRoles: undefined,
  anthropicBlocks: true,
  serverToolResults: undefined,
  signedReasoning: false,
  assistantBlocks: "any",
  systemInConversation: "any",
  // Storage never learns what a request carries.
  toolBlocksNeedTools: false,
  oneCallPerStep: false,
  signedCalls: false,
};

const STRICT_RULES = union();

function makeProfile(provider: Provider, level: RepairLevel): ProviderProfile {
  const rules = provider === "strict" ? STRICT_RULES : RULES[provider];
  return Object.freeze({ provider, level, ...(level === "structural" ? STRUCTURAL : SWITCHES[provider]), rules });
}

/** Every profile, built once: `PROFILES.get(provider)[level]`. A Map, so no key reaches Object.prototype. */
const PROFILES = new Map<string, Record<RepairLevel, ProviderProfile>>(
  PROVIDERS.map((p) => [p, { request: makeProfile(p, "request"), structural: makeProfile(p, "structural") }]),
);

/** The profile for a provider and level; a clear error for anything that is not a known provider name. */
export function profileFor(provider: unknown = "strict", level: RepairLevel = "request"): ProviderProfile {
  const profiles = typeof provider === "string" ? PROFILES.get(provider) : undefined;
  if (!profiles)
    throw new ToolCallRepairInputError(
      `unknown provider ${quoteValue(provider)}; expected one of ${PROVIDERS.join(", ")}`,
      { argument: "options.provider" },
    );
  return profiles[level];
}

/** The profile resolved options ask for: `systemMessages: "user-text"` allows no system message inside the conversation. */
export function profileForOptions(options: {
  provider: Provider;
  level: RepairLevel;
  systemMessages: "placed" | "user-text";
}): ProviderProfile {
  const profile = profileFor(options.provider, options.level);
  if (options.systemMessages === "user-text" && profile.systemInConversation === "placed")
    return Object.freeze({ ...profile, systemInConversation: "none" });
  return profile;
}

/**
 * Whether tool calls and results travel as text in this request: the caller says it carries no tools and the
 * provider refuses tool blocks then. Off at the structural level (the profile's switch is off there).
 */
export function toolBlocksAsText(profile: ProviderProfile, options: { toolsInRequest: boolean }): boolean {
  return profile.toolBlocksNeedTools && !options.toolsInRequest;
}

/** Whether the provider's adapter sends a ChatMessage of this role as the turn the role means. */
export function keepsChatRole(profile: ProviderProfile, role: unknown): boolean {
  const roles = profile.chatMessageRoles;
  return roles === undefined || (typeof role === "string" && roles.has(role));
}

/** Whether a call content block may stay in `content` for the provider (any other block leaves it). */
/** Whether the adapter re-sends an inline server tool result block of this type. */
export function keepsServerResult(profile: ProviderProfile, type: unknown): boolean {
  return profile.serverToolResults === undefined || (typeof type === "string" && profile.serverToolResults.has(type));
}

/** Whether the provider's adapter reads this assistant block (`assistantBlocks`). */
export function readsAssistantBlock(profile: ProviderProfile, block: unknown): boolean {
  if (profile.assistantBlocks === "any") return true;
  return profile.assistantBlocks === "converse" ? isConverseAssistantBlock(block) : isGeminiAssistantBlock(block);
}

export function keepsCallBlock(profile: ProviderProfile, block: unknown): boolean {
  const format = callBlockFormatOf(block);
  return format === undefined || profile.callBlockFormats.has(format);
}

/** Whether a tool call id is accepted by the provider as it is. */
export function isAcceptedId(id: string, profile: ProviderProfile): boolean {
  return id.length <= profile.maxIdLength && (!profile.idPattern || ID_PATTERN.test(id));
}
