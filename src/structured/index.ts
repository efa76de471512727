/** Structured output without prefill: responseFormat swapped for instructions in the prompt (issue 4). */
export {
  isBedrockModel,
  cannotPrefill,
  needsPromptedStructuredOutput,
  envSelectsBedrock,
  isModelChooser,
  claudeVersionOf,
  modelIdOf,
  type BedrockDetectOptions,
  type ClaudeVersion,
  type Env,
} from "./detect";
export {
  outputFormatOf,
  reactOutputFormat,
  agentOutputFormat,
  type OutputFormat,
  type JsonSchema,
  type Validation,
} from "./format";
export { formatInstructions, correctionMessage } from "./instructions";
export {
  jsonCandidates,
  parseStructuredAnswer,
  resolveStructuredAnswer,
  answerText,
  PromptedStructuredOutputError,
  type StructuredAttempt,
  type ResolveOptions,
  type Resolved,
} from "./parse";
export { withPromptedStructuredOutput, type PromptedStructuredOutputOptions } from "./react-agent";
export { promptedStructuredOutputMiddleware, type PromptedStructuredOutputMiddlewareOptions } from "./middleware";
