/**
 * `toolCallRepairMiddleware`: for langchain's `createAgent({ middleware })`.
 *
 * - `beforeAgent` runs when a new input arrives (not on `invoke(null)` or `Command({ resume })`, where
 *   pending tool calls may still run): a structurally broken stored thread is repaired and persisted there.
 * - `wrapModelCall` runs around every model call: whatever is still broken, and whatever the model's provider
 *   needs besides (turn alternation, id patterns, block conversions), is repaired in the request only. A call
 *   the provider still rejects for its history is force-repaired, retried once, and the fix persisted
 *   (rejection-recovery.ts).
 * - A request with no tools (an agent without tools, on a thread that used some) is repaired with
 *   `toolsInRequest: false`: where the provider refuses tool blocks then (Bedrock B3), calls and results are
 *   sent as text.
 */
import { createMiddleware, ProviderStrategy } from "langchain";
import { describeModels } from "../models/detect";
import type { RepairOptions } from "../types";
import { repairedRequest, reportedOnce, type RepairReporting } from "./events";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { CHECKPOINTER_OPTIONS, withToolCallRepair } from "./checkpointer";
import { callWithRejectionRecovery } from "./rejection-recovery";
import type { Dict } from "../values";
import { only, repairersOf, SURFACE_OPTIONS } from "./surface-options";
import { option, surface } from "../options";
import { persistingStep } from "./run-salvage";

export interface ToolCallRepairMiddlewareOptions extends Omit<RepairOptions, "level">, RepairReporting {
  /** Repair and persist the stored thread (structural repairs) when a new input arrives (`beforeAgent`). Default true. */
  repairOnInput?: boolean;
  /** Hand each model call a repaired copy of its messages, without persisting it (`wrapModelCall`). Default true. */
  repairModelRequest?: boolean;
  /**
   * A call the provider rejects for its history is force-repaired from its error and retried once; on
   * success the fix is persisted (docs/recovery.md). Default true.
   */
  recoverRejections?: boolean;
}

/** The middleware's options (the setup `toolCallRepair` takes them too). */
const MIDDLEWARE_OPTIONS = {
  ...SURFACE_OPTIONS,
  repairOnInput: option.flag,
  repairModelRequest: option.flag,
  recoverRejections: option.flag,
};

/**
 * Middleware that repairs the stored thread on new input and repairs every model request.
 * Defaults: both on, `trailing: "answer"` (both run right before a model call). Without `provider`, each
 * request is repaired for the provider of its model (`request.model`: ChatBedrockConverse means Bedrock, ...),
 * `"strict"` when the model is not one this package knows.
 * Every repair reaches `onRepair` and is dispatched as the custom event `"tool_call_repair"`.
 */
export const toolCallRepairMiddleware = surface(
  "toolCallRepairMiddleware",
  MIDDLEWARE_OPTIONS,
  ({
    repairOnInput = true,
    repairModelRequest = true,
    recoverRejections = true,
    ...given
  }: ToolCallRepairMiddlewareOptions) => {
    const forRequest = repairersOf(given);

    return createMiddleware({
      name: "ToolCallRepairMiddleware",
      ...(repairOnInput && {
        beforeAgent: persistingStep(forRequest.structural(), "messages", given, "middleware", undefined),
      }),
      ...((repairModelRequest || recoverRejections) && {
        wrapModelCall: async (request, handler) => {
          const repairer = forRequest.for(request.model, given.toolsInRequest === undefined && carriesNoTools(request));
          const messages = repairModelRequest
            ? await repairedRequest(repairer, request.messages, given, "middleware")
            : request.messages;
          const fixed = messages === request.messages ? request : { ...request, messages };
          return recoverRejections
            ? callWithRejectionRecovery(
                fixed,
                handler,
                { ...forRequest.recovery(repairer), onRepair: given.onRepair },
                (rejection) => forRequest.learn(rejection, repairer),
              )
            : handler(fixed);
        },
      }),
    });
  },
);

/**
 * Whether createAgent will call the model without tools: it binds `request.tools` plus one tool per tool-strategy
 * response format (langchain 1.5 `AgentNode#bindTools`), with `modelSettings` as call options. Sure only when
 * there are no tools, no tools in the settings or already bound to the model, and no response format or only
 * provider (native) strategies; a bare schema may become a tool strategy, so it counts as tools.
 */
function carriesNoTools(request: { model: unknown; tools?: unknown; responseFormat?: unknown; modelSettings?: Dict }) {
  const none = (value: unknown) => Array.isArray(value) && !value.length;
  const noneOrUnset = (value: unknown) => value === undefined || none(value);
  if (!none(request.tools) || !noneOrUnset(request.modelSettings?.tools)) return false;
  if (!noneOrUnset(describeModels(request.model)[0]?.callOptions.tools)) return false;
  const format = request.responseFormat;
  if (format == null || (typeof format === "object" && "__responseFormatUndefined" in format)) return true;
  const strategies = [format].flat();
  return strategies.length > 0 && strategies.every((strategy) => strategy instanceof ProviderStrategy);
}

/**
 * `toolCallRepair(options)`: what a langchain `createAgent` agent needs, from one set of options. The middleware
 * repairs every model request for the model's provider, repairs the stored thread (structurally) when a new input
 * arrives and recovers from a provider's rejection; the checkpointer wrapper keeps the finished results of
 * sibling tools that a new input would throw away, which no middleware can see.
 */
export type ToolCallRepairOptions = ToolCallRepairMiddlewareOptions;

export interface ToolCallRepairSetup {
  /** For `createAgent({ middleware: [...] })`. */
  middleware: ReturnType<typeof toolCallRepairMiddleware>;
  /** Wraps the agent's checkpointer (`createAgent({ checkpointer: repair.checkpointer(saver) })`). */
  checkpointer<T extends BaseCheckpointSaver>(saver: T): T;
}

/**
 * The recommended setup for `createAgent`:
 *
 * ```ts
 * const repair = toolCallRepair({ onRepair: (r) => log.info(r) });
 * const agent = createAgent({ model, tools, middleware: [repair.middleware], checkpointer: repair.checkpointer(saver) });
 * ```
 * Options are validated here; a repair of a call reaches `onRepair` once per thread, whichever piece made it (the
 * request's placeholder and the stored one are one repair).
 */
export const toolCallRepair = surface(
  "toolCallRepair",
  MIDDLEWARE_OPTIONS,
  (options: ToolCallRepairOptions): ToolCallRepairSetup => {
    const all = reportedOnce(options);
    return {
      middleware: toolCallRepairMiddleware(all),
      // The checkpointer takes the engine's options but `trailing` (it keeps the last exchange open for a resume) and
      // `toolsInRequest` (it shapes no request).
      checkpointer: (saver) => withToolCallRepair(saver, only(all, CHECKPOINTER_OPTIONS)),
    };
  },
);
