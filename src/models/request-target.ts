/**
 * Whose rules a request must satisfy, read from the model it goes to: the provider (ChatBedrockConverse means
 * Bedrock, ChatOpenAI OpenAI or its Responses API, ChatAnthropic Anthropic, the Google models Gemini), and
 * whether system messages may stay inside the conversation (Anthropic accepts them only from Opus 4.8 on).
 */
import type { Provider, SystemMessageStrategy } from "../types";
import { claudeAtLeast, claudeVersionOf, describeModels } from "./detect";

export interface RequestTarget {
  /** Undefined when the model is not one this package knows (the caller falls back to `"strict"`). */
  provider?: Provider;
  systemMessages?: SystemMessageStrategy;
}

/** Anthropic models that accept a system message inside the conversation (A11: Opus 4.8 and later). */
export function acceptsSystemInConversation(modelId: string | undefined): boolean {
  const claude = modelId === undefined ? undefined : claudeVersionOf(modelId);
  return claude !== undefined && claude.family === "opus" && claudeAtLeast(claude, 4, 8);
}

/** The request rules of the model a request goes to first (the primary of a fallback chain). */
export function requestTargetOf(model: unknown): RequestTarget {
  const primary = describeModels(model)[0];
  if (!primary?.provider) return {};
  if (primary.provider !== "anthropic") return { provider: primary.provider };
  return { provider: "anthropic", systemMessages: acceptsSystemInConversation(primary.modelId) ? "placed" : "user-text" };
}
