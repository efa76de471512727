import type * as api from "langgraph-tool-repair";
import type { Same } from "./_types";

type BedrockDetectOptions = api.BedrockDetectOptions;

// #region docs
declare function isBedrockModel(model: unknown, options?: { bedrock?: boolean; env?: Record<string, string | undefined> }): boolean;
declare function cannotPrefill(modelOrId: unknown): boolean;
declare function needsPromptedStructuredOutput(model: unknown, options?: BedrockDetectOptions): boolean; // isBedrockModel || cannotPrefill
// #endregion docs

export const signatureMatches: [
  Same<typeof isBedrockModel, typeof api.isBedrockModel>,
  Same<typeof cannotPrefill, typeof api.cannotPrefill>,
  Same<typeof needsPromptedStructuredOutput, typeof api.needsPromptedStructuredOutput>,
] = [true, true, true];
