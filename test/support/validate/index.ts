/**
 * Validators for the request payloads that providers receive, one file per wire format. Each checks the
 * tool-call rules of PROVIDER_RULES.md and answers with the provider's own error text.
 */
export type { PayloadViolation } from "./common";
export { validateOpenAIChatMessages } from "./openai-chat";
export { validateOpenAIResponsesInput, type OpenAIResponsesValidationOptions } from "./openai-responses";
export { validateAnthropicMessages, type AnthropicValidationOptions } from "./anthropic";
export { validateBedrockConverse, type BedrockValidationOptions } from "./bedrock";
export { validateGeminiContents, type GeminiValidationOptions } from "./gemini";
