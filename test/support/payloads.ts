/**
 * What the real adapters would send for a list of LangChain messages, without a network call, and the
 * provider rules that payload breaks. Gemini is not covered here: its converter is not exported, so it is tested
 * through the real ChatGoogleGenerativeAI against the Gemini stub (`stubs/gemini.ts`).
 *
 * Adapter behaviour that breaks a provider rule on histories that look fine in LangChain (observed with
 * @langchain/aws 1.4.5, @langchain/anthropic 1.5.11, @langchain/openai 1.5.8; each is asserted in
 * test/support/payloads.test.ts):
 * - Bedrock: a HumanMessage after ToolMessages is sent as a second user turn (B6). Only consecutive
 *   toolResult user turns are merged.
 * - Bedrock: `AIMessage("")` without calls is sent as `content: []` (B9); Anthropic sends it as "" (A9).
 * - Bedrock: an empty ToolMessage is sent as `toolResult.content: [{ text: "" }]` (B8).
 * - Bedrock throws locally ("LOCAL"): `HumanMessage("")`; an AIMessage content block `{type:"text", text:""}`
 *   ("Unsupported content block type: text"); any `tool_use` content block, e.g. an AIMessage produced by
 *   ChatAnthropic, even when `tool_calls` is set (switching a thread from Anthropic to Bedrock fails).
 * - Bedrock without tools bound sends no `toolConfig`, so any history with tool calls fails (B3).
 * - Bedrock and Anthropic drop `ToolMessage.status`: an error result is sent as a success (B10 never fires
 *   through the adapter; `is_error` is never set).
 * - ChatOpenAI: a call that only lives in `invalid_tool_calls` is not sent but its ToolMessage is (O2;
 *   Responses R2). When `additional_kwargs.tool_calls` holds the raw calls, they are re-sent as they are,
 *   malformed arguments included.
 * - ChatAnthropic: `tool_use` content blocks are sent even when `tool_calls` is empty (A1); a HumanMessage
 *   between a call and its results becomes a text turn the API merges before the results (A3); a
 *   SystemMessage that is not first is sent inside `messages` with role "system".
 * - Responses API: `response_metadata.output` function_call items are re-sent even when `tool_calls` is
 *   empty (R1).
 */
import { ChatBedrockConverse } from "@langchain/aws";
import { convertPromptToAnthropic } from "@langchain/anthropic";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { ChatPromptValue } from "@langchain/core/prompt_values";
import { convertMessagesToCompletionsMessageParams, convertMessagesToResponsesInput } from "@langchain/openai";
import { pinnedTo } from "./versions";
import {
  validateAnthropicMessages,
  validateBedrockConverse,
  validateOpenAIChatMessages,
  validateOpenAIResponsesInput,
  type PayloadViolation,
} from "./validate";
import { DEFAULT_BEDROCK_MODEL } from "./stubs/bedrock";
import { DEFAULT_OPENAI_MODEL } from "./stubs/openai";

/**
 * Why a test that checks what the real adapters send is skipped here, or undefined: the engine's provider
 * profiles and the adapter traps above are checked against these adapters (the lockfile's). Older ones send
 * differently (at the minimum peers: @langchain/anthropic 1.3.28 throws on a SystemMessage that is not first,
 * @langchain/openai 1.4.5 sends `tool_call` content blocks of an assistant message that also has `tool_calls`).
 */
export const ADAPTERS_PINNED: string | undefined =
  pinnedTo("@langchain/aws", "1.4.5", "ChatBedrockConverse's payload") ??
  pinnedTo("@langchain/openai", "1.5.8", "ChatOpenAI's payload") ??
  pinnedTo("@langchain/anthropic", "1.5.11", "ChatAnthropic's payload");

export type PayloadProvider = "openai" | "openai-responses" | "anthropic" | "bedrock";
export const PAYLOAD_PROVIDERS: readonly PayloadProvider[] = ["openai", "openai-responses", "anthropic", "bedrock"];

export interface PayloadOptions {
  /**
   * Bedrock only: the tools bound to the model (they become `toolConfig`). Default: one placeholder tool per
   * tool name in the history, as an agent would have bound them; `[]` binds nothing (a bare model call).
   */
  tools?: BindToolsInput[];
}

export interface ValidatePayloadOptions extends PayloadOptions {
  /** Bedrock B7 / Anthropic A8. Default true (the default models are Claude 4.6). */
  noPrefill?: boolean;
  /** Bedrock B6. Default true. */
  requireAlternation?: boolean;
  /** Anthropic A11: system messages inside `messages` accepted where Opus 4.8+ takes them, or none. Default "placed". */
  systemInMessages?: "placed" | "none";
  /** Anthropic A10 / Bedrock B11: extended thinking (reasoning) is on for the request. Default false. */
  thinking?: boolean;
}

export type ProviderPayload =
  | { provider: "openai"; messages: unknown[] }
  | { provider: "openai-responses"; input: unknown[] }
  | { provider: "anthropic"; messages: unknown[]; system?: unknown }
  | { provider: "bedrock"; request: Record<string, unknown> };

export interface ProviderViolation extends PayloadViolation {
  provider: PayloadProvider;
}

/** The payload the real adapter builds for `messages`. Throws whatever the adapter throws locally. */
export async function payloadFor(
  provider: PayloadProvider,
  messages: BaseMessage[],
  options: PayloadOptions = {},
): Promise<ProviderPayload> {
  switch (provider) {
    case "openai":
      return {
        provider,
        messages: convertMessagesToCompletionsMessageParams({ messages, model: DEFAULT_OPENAI_MODEL }),
      };
    case "openai-responses":
      return {
        provider,
        input: convertMessagesToResponsesInput({ messages, zdrEnabled: false, model: DEFAULT_OPENAI_MODEL }),
      };
    case "anthropic": {
      const { messages: converted, system } = convertPromptToAnthropic(new ChatPromptValue(messages));
      return { provider, messages: converted, ...(system !== undefined ? { system } : {}) };
    }
    case "bedrock":
      return { provider, request: await bedrockRequestFor(messages, options.tools ?? placeholderTools(messages)) };
  }
}

/** Thrown by the fake Bedrock client so the command input comes back without a network call. */
class CapturedBedrockRequest extends Error {
  constructor(readonly input: Record<string, unknown>) {
    super("captured");
  }
}

async function bedrockRequestFor(messages: BaseMessage[], tools: BindToolsInput[]): Promise<Record<string, unknown>> {
  const client = {
    send: async (command: { input: Record<string, unknown> }) => {
      throw new CapturedBedrockRequest(command.input);
    },
  };
  const model = new ChatBedrockConverse({
    model: DEFAULT_BEDROCK_MODEL,
    region: "us-east-1",
    credentials: { accessKeyId: "x", secretAccessKey: "x" },
    maxRetries: 0,
    client: client as unknown as ChatBedrockConverse["client"],
  });
  const runnable = tools.length > 0 ? model.bindTools(tools) : model;
  try {
    await runnable.invoke(messages);
  } catch (error) {
    if (error instanceof CapturedBedrockRequest) return error.input;
    throw error;
  }
  throw new Error("ChatBedrockConverse returned without calling its client");
}

/** One tool per name called in the history (at least one: an agent always has tools bound). */
function placeholderTools(messages: BaseMessage[]): BindToolsInput[] {
  const names = new Set<string>();
  for (const message of messages) {
    if (!AIMessage.isInstance(message)) continue;
    for (const call of [...(message.tool_calls ?? []), ...(message.invalid_tool_calls ?? [])]) {
      if (call.name && /^[a-zA-Z0-9_-]{1,64}$/.test(call.name)) names.add(call.name);
    }
  }
  if (names.size === 0) names.add("placeholder_tool");
  return [...names].map((name) => ({
    type: "function",
    function: { name, description: `placeholder for ${name}`, parameters: { type: "object", properties: {} } },
  }));
}

function violationsOf(payload: ProviderPayload, options: ValidatePayloadOptions): PayloadViolation[] {
  const noPrefill = options.noPrefill ?? true;
  switch (payload.provider) {
    case "openai":
      return validateOpenAIChatMessages(payload.messages);
    case "openai-responses":
      return validateOpenAIResponsesInput(payload.input);
    case "anthropic":
      return validateAnthropicMessages(payload.messages, {
        noPrefill,
        systemInMessages: options.systemInMessages,
        thinking: options.thinking ?? false,
      });
    case "bedrock":
      return validateBedrockConverse(payload.request, {
        noPrefill,
        requireAlternation: options.requireAlternation ?? true,
        reasoning: options.thinking ?? false,
      });
  }
}

/**
 * The rules the real adapter's payload for `messages` breaks. `"strict"` checks every provider above. An
 * adapter that throws locally on the history counts as a violation with rule "LOCAL" and the thrown message.
 */
export async function validatePayloadFor(
  provider: PayloadProvider | "strict",
  messages: BaseMessage[],
  options: ValidatePayloadOptions = {},
): Promise<ProviderViolation[]> {
  const providers = provider === "strict" ? PAYLOAD_PROVIDERS : [provider];
  const results: ProviderViolation[] = [];
  for (const each of providers) {
    let payload: ProviderPayload;
    try {
      payload = await payloadFor(each, messages, options);
    } catch (error) {
      results.push({ provider: each, rule: "LOCAL", message: error instanceof Error ? error.message : String(error) });
      continue;
    }
    for (const violation of violationsOf(payload, options)) results.push({ provider: each, ...violation });
  }
  return results;
}
