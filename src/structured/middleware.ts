/**
 * langchain `createAgent` with `responseFormat` on Bedrock, with the strategy of each model (see strategy.ts):
 *
 * - `native`: every model call of the agent sends Converse `outputConfig.textFormat` (the model keeps its tools;
 *   its final answer is JSON constrained to the schema), read and validated by the same code as a prompted answer.
 *   createAgent's own `providerStrategy` cannot do this on Bedrock: ChatBedrockConverse declares no structured-output
 *   capability and ignores the call options that strategy binds.
 * - `tool`: createAgent's own tool strategy (the format as a tool, tool_choice "any"; its requests end on a user
 *   or tool turn). Never with extended thinking on.
 * - `prompted`: the format instructions in the system message, the strategy switched off for the call, the
 *   answer parsed from the final message.
 */
import { Command } from "@langchain/langgraph";
import { createMiddleware, toolStrategy } from "langchain";
import { boundary } from "../errors";
import { describeModels, envSelectsBedrock } from "../models/detect";
import { constrainedModel } from "./constrained";
import type { PromptedStructuredOutputOptions } from "./react-agent";
import { agentOutputFormat, formatInstructions, isToolStrategy, schemaOfStrategy, systemMessageWith } from "./format";
import { resolveStructuredAnswer, structuredUpdate } from "./parse";
import { nativeFallbacks, strategyChoiceFor, structuredOptions, type StructuredOutputStrategy } from "./strategy";

export interface PromptedStructuredOutputMiddlewareOptions
  extends Omit<PromptedStructuredOutputOptions, "strategy" | "onRepair"> {
  /**
   * Force one strategy on Bedrock models: "native", "tool" or "prompted" (default: the strategy table, decided per
   * call on `request.model`). The middleware acts on Bedrock models only (`LLM_PROVIDER=aws-bedrock` included):
   * createAgent's own strategies never send a prefill request, so other models keep them (give those
   * `providerStrategy(...)` or `toolStrategy(...)` as `responseFormat`), except that "prompted" prompts any model.
   */
  strategy?: StructuredOutputStrategy;
  /** Middleware name (createAgent requires unique names). Default "PromptedStructuredOutput". */
  name?: string;
}

/**
 * A createAgent middleware that gives Bedrock models a structured response without a prefill request and with
 * the constraint the model supports (see the module comment). The decision is made on every call, on
 * `request.model`, so a model chosen by an outer middleware (`modelFallbackMiddleware` included: each fallback
 * gets its own strategy) is seen: put this middleware after (inside) any that switch models.
 *
 * Native and prompted: a final answer (no tool calls) is parsed (lenient extraction, validation, one corrective
 * call ending with a user message, then
 * {@link "langgraph-tool-repair"!PromptedStructuredOutputError | PromptedStructuredOutputError}, wrapped by
 * langchain in a MiddlewareError: use `PromptedStructuredOutputError.find(error)`), and the middleware returns
 * `new Command({ update: { structuredResponse } })`.
 *
 * ```ts
 * createAgent({ model, tools, responseFormat: schema, middleware: [promptedStructuredOutputMiddleware()] })
 * ```
 */
export const promptedStructuredOutputMiddleware = boundary(
  "promptedStructuredOutputMiddleware",
  (options: PromptedStructuredOutputMiddlewareOptions = {}) => {
    const fn = "promptedStructuredOutputMiddleware";
    options = structuredOptions(options, fn, "strategy env onStructuredResponse onFallback name");
    // This middleware's memory of native requests that fell back (its lifetime is the middleware's).
    const withFallback = nativeFallbacks(options.onFallback);
    return createMiddleware({
      name: options.name ?? "PromptedStructuredOutput",
      wrapModelCall: async (request, handler) => {
        const format = agentOutputFormat(request.responseFormat);
        const [model] = describeModels(request.model);
        // Off Bedrock createAgent's own strategies never send a prefill request: only a forced "prompted" acts.
        const offBedrock = model?.provider !== "bedrock" && !envSelectsBedrock(options.env);
        if (!format || (offBedrock && options.strategy !== "prompted")) return handler(request);
        const strategy = model ? strategyChoiceFor(model, options).strategy : "prompted";
        // A schema outside the subset, or a model that refused native before: the next strategy at once.
        return withFallback(strategy, model!, format, async (decision) => {
          // "tool" is createAgent's own tool strategy.
          if (decision === "tool")
            return handler({ ...request, responseFormat: asToolStrategy(request.responseFormat) });
          const constrained = {
            ...request,
            responseFormat: { __responseFormatUndefined: true } as const,
            ...(decision === "native"
              ? { model: await constrainedModel("native", model!, format, []) }
              : { systemMessage: systemMessageWith(request.systemMessage, formatInstructions(format)) }),
          };
          const answer = await handler(constrained);
          if (answer.tool_calls?.length) return answer;
          const resolved = await resolveStructuredAnswer(answer, format, (followUp) =>
            handler({ ...constrained, messages: [...request.messages, ...followUp] }),
          );
          // The agent node stores the last answer the handler returned: the message (same id) replaces it.
          return new Command({ update: structuredUpdate(options, decision, resolved, model?.modelId) });
        });
      },
    });
  },
);

/** The agent's format as createAgent's tool strategy (a ProviderStrategy's schema, or the schemas themselves). */
function asToolStrategy<F>(responseFormat: F) {
  const items = [responseFormat].flat();
  if (items.every(isToolStrategy)) return responseFormat;
  const schemas = items.map(schemaOfStrategy);
  return toolStrategy((schemas.length === 1 ? schemas[0] : schemas) as never);
}
