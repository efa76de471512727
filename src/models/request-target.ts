/**
 * Whose rules a request must satisfy, read from the model it goes to: the provider (ChatBedrockConverse means
 * Bedrock, ChatOpenAI OpenAI or its Responses API, ChatAnthropic Anthropic, the Google models Gemini), and
 * whether system messages may stay inside the conversation (Anthropic accepts them only from Opus 4.8 on).
 */
import { claudeAtLeast, claudeVersionOf, describeModels } from "./detect";

/** Anthropic models that accept a system message inside the conversation (A11: Opus 4.8 and later). */
export function acceptsSystemInConversation(modelId?: string) {
  const claude = claudeVersionOf(modelId);
  return claude?.family === "opus" && claudeAtLeast(claude, 4, 8);
}

/**
 * The request rules of the model a request goes to first (the primary of a fallback chain): no provider when the
 * model is not one this package knows (the caller falls back to `"strict"`).
 */
export function requestTargetOf(model: unknown) {
  const { provider, modelId } = describeModels(model)[0] ?? {};
  if (provider !== "anthropic") return provider ? { provider } : {};
  return { provider, systemMessages: acceptsSystemInConversation(modelId) ? "placed" : "user-text" } as const;
}

/**
 * Whether `model` (any wrapper of a chat model) decides its tools from the call options alone: ChatBedrockConverse
 * (`invocationParams` builds `toolConfig` from `options.tools` alone; `bindTools`, `withConfig({ tools })` and
 * `withStructuredOutput` all put their tools there; `tool_choice` without tools sends no `toolConfig`).
 */
export const toolsComeFromCallOptions = (model: unknown) =>
  describeModels(model)[0]?.llmType === "chat_bedrock_converse";

/** Whether call options carry no tools, by ChatBedrockConverse's own test (`options?.tools && options.tools.length`). */
export const callOptionsCarryNoTools = (callOptions: unknown) =>
  !(callOptions as { tools?: { length?: unknown } } | null)?.tools?.length;
