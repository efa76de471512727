import type { Provider } from "langgraph-tool-repair";
import type * as api from "langgraph-tool-repair";
import type { Same } from "./_types";

type BedrockDetectOptions = api.BedrockDetectOptions;
type ModelDescription = api.ModelDescription;

// #region docs
declare function describeModels(model: unknown): ModelDescription[]; // the primary, then every fallback
declare function providerOfModel(model: unknown): Provider | undefined; // the primary's
declare function isBedrockModel(
  model: unknown,
  options?: { bedrock?: boolean; env?: Record<string, string | undefined> },
): boolean;
declare function cannotPrefill(modelOrId: unknown): boolean;
declare function needsPromptedStructuredOutput(model: unknown, options?: BedrockDetectOptions): boolean; // isBedrockModel || cannotPrefill
declare function thinkingEnabled(model: unknown): boolean; // the primary's
declare function claudeVersionOf(modelId: string): { family: string; major: number; minor: number } | undefined;
declare function modelIdOf(model: unknown): string | undefined; // the first model id found in the chain
declare function isModelChooser(llm: unknown): llm is (...args: never[]) => unknown; // a plain function that picks the model
// #endregion docs

export const signatureMatches: [
  Same<typeof describeModels, typeof api.describeModels>,
  Same<typeof providerOfModel, typeof api.providerOfModel>,
  Same<typeof isBedrockModel, typeof api.isBedrockModel>,
  Same<typeof cannotPrefill, typeof api.cannotPrefill>,
  Same<typeof needsPromptedStructuredOutput, typeof api.needsPromptedStructuredOutput>,
  Same<typeof thinkingEnabled, typeof api.thinkingEnabled>,
  Same<typeof claudeVersionOf, typeof api.claudeVersionOf>,
  Same<typeof modelIdOf, typeof api.modelIdOf>,
  Same<typeof isModelChooser, typeof api.isModelChooser>,
] = [true, true, true, true, true, true, true, true, true];
