/** Local provider stubs and the factories that point the real LangChain clients at them. */
export * from "./common";
export { startBedrockStub, bedrockModel, DEFAULT_BEDROCK_MODEL } from "./bedrock";
export { startOpenAIStub, openAIModel, DEFAULT_OPENAI_MODEL } from "./openai";
export { startAnthropicStub, anthropicModel, DEFAULT_ANTHROPIC_MODEL } from "./anthropic";
export { droppedLargeResults } from "./rules";
export { startGeminiStub, geminiModel, DEFAULT_GEMINI_MODEL, checksThoughtSignatures } from "./gemini";
