/**
 * langchain `createAgent` with `responseFormat` on a model that cannot take it.
 *
 * createAgent's tool strategy binds the format as a tool with `tool_choice: "any"`; ChatBedrockConverse
 * throws locally on models that do not support `tool_choice` (Llama, Nova, custom ids, inference-profile
 * ARNs). This middleware keeps the user's `responseFormat` (so the agent's `structuredResponse` type is the
 * one createAgent infers) and, on such a model, switches the strategy off for the call, puts the format
 * instructions in the system message, and reads `structuredResponse` from the final answer.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { AIMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { isBedrockModel, type Env } from "./detect";
import { agentOutputFormat } from "./format";
import { formatInstructions, systemMessageWith } from "./instructions";
import { resolveStructuredAnswer } from "./parse";

export interface PromptedStructuredOutputMiddlewareOptions {
  /**
   * true: always prompt for the format; false: never (the middleware passes every call through). Default:
   * decided per call from the request's model: `isBedrockModel` (options and `LLM_PROVIDER` included).
   * No-prefill models elsewhere keep createAgent's own strategies: they never send a prefill request.
   */
  prompted?: boolean;
  /** Where to read `LLM_PROVIDER` from (default `process.env`); `aws-bedrock` selects the prompted strategy. */
  env?: Env;
  /** Corrective calls allowed when the final answer does not validate (default 1). */
  maxCorrections?: number;
  /** Middleware name (createAgent requires unique names). Default "PromptedStructuredOutput". */
  name?: string;
}

/** createAgent's marker for "no structured output on this call" (`ResponseFormatUndefined`). */
const NO_RESPONSE_FORMAT = { __responseFormatUndefined: true } as const;

/**
 * A createAgent middleware that, on a Bedrock model, swaps the agent's `responseFormat` for format
 * instructions in the system message and sets `structuredResponse` from the final answer (lenient JSON
 * extraction, validation, one corrective call ending with a user message, then
 * {@link PromptedStructuredOutputError}, wrapped by langchain in a MiddlewareError: use
 * `PromptedStructuredOutputError.find(error)`). The model is checked on every call, on `request.model`, so a
 * model chosen by an outer middleware is seen: put this middleware after (inside) any that switch models.
 * On other models (Claude 4.6+ on the Anthropic API included: createAgent's strategies never prefill), and on
 * calls without a response format, it passes the request through untouched.
 *
 * ```ts
 * createAgent({ model, tools, responseFormat: schema, middleware: [promptedStructuredOutputMiddleware()] })
 * ```
 */
export function promptedStructuredOutputMiddleware(options: PromptedStructuredOutputMiddlewareOptions = {}) {
  return createMiddleware({
    name: options.name ?? "PromptedStructuredOutput",
    wrapModelCall: async (request, handler) => {
      const format = agentOutputFormat(request.responseFormat);
      const prompted = options.prompted ?? isBedrockModel(request.model, { env: options.env });
      if (format === undefined || !prompted) return handler(request);

      const promptedRequest = {
        ...request,
        systemMessage: systemMessageWith(request.systemMessage, formatInstructions(format)),
        responseFormat: NO_RESPONSE_FORMAT,
      };
      const answer = await handler(promptedRequest);
      if (answer.tool_calls?.length) return answer;

      const resolved = await resolveStructuredAnswer(answer, format, {
        maxCorrections: options.maxCorrections,
        askAgain: (followUp: BaseMessage[]) =>
          handler({ ...promptedRequest, messages: [...request.messages, ...followUp] }) as Promise<AIMessage>,
      });
      // The agent node stores the last answer the handler returned next to this update.
      return new Command({ update: { structuredResponse: resolved.value } });
    },
  });
}
