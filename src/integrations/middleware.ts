/**
 * `toolCallRepairMiddleware`: for langchain's `createAgent({ middleware })`.
 *
 * - `beforeAgent` runs when a new input arrives (not on `invoke(null)` or `Command({ resume })`, where
 *   pending tool calls may still run): a structurally broken stored thread is healed and persisted there.
 * - `wrapModelCall` runs around every model call: whatever is still broken, and whatever the model's provider
 *   needs besides (turn alternation, id patterns, block conversions), is repaired in the request only. A call
 *   the provider still rejects for its history is force-repaired, retried once, and the fix persisted
 *   (rejection-recovery.ts).
 */
import { createMiddleware } from "langchain";
import { createRepairer } from "../engine";
import type { RepairOptions } from "../types";
import { orFallback, reportRepairs, type RepairReporting } from "./events";
import { callWithRejectionRecovery } from "./rejection-recovery";
import { RequestRepairers } from "./request-repairers";
import { replaceAllMessages } from "./state-update";

export const TOOL_CALL_REPAIR_MIDDLEWARE_NAME = "ToolCallRepairMiddleware";

export interface ToolCallRepairMiddlewareOptions extends Omit<RepairOptions, "level">, RepairReporting {
  /** Heal and persist the stored thread (structural repairs) when a new input arrives (`beforeAgent`). Default true. */
  healOnInput?: boolean;
  /** Hand each model call a repaired copy of its messages, without persisting it (`wrapModelCall`). Default true. */
  repairModelRequest?: boolean;
  /**
   * A call the provider rejects for its history is force-repaired from its error and retried once; on
   * success the fix is persisted (docs/recovery.md). Default true.
   */
  recoverRejections?: boolean;
  /** Middleware name; createAgent requires names to be unique. Default `"ToolCallRepairMiddleware"`. */
  name?: string;
}

/**
 * Middleware that heals the stored thread on new input and repairs every model request.
 * Defaults: both on, `trailing: "answer"` (both run right before a model call). Without `provider`, each
 * request is repaired for the provider of its model (`request.model`: ChatBedrockConverse means Bedrock, ...),
 * `"strict"` when the model is not one this package knows.
 * Every repair reaches `onRepair` and is dispatched as the custom event `"tool_call_repair"`.
 */
export function toolCallRepairMiddleware(options: ToolCallRepairMiddlewareOptions = {}) {
  const {
    healOnInput = true,
    repairModelRequest = true,
    recoverRejections = true,
    name = TOOL_CALL_REPAIR_MIDDLEWARE_NAME,
    onRepair,
    onError,
    ...repairOptions
  } = options;
  const reporting: RepairReporting = { onRepair, onError };
  const stored = createRepairer({ ...repairOptions, level: "structural" });
  const forRequest = new RequestRepairers(repairOptions);

  return createMiddleware({
    name,
    beforeAgent: healOnInput
      ? (state) =>
          orFallback(
            async () => {
              if (stored.isClean(state.messages)) return undefined;
              const { messages: repaired, repairs } = stored.repair(state.messages);
              if (repairs.length === 0) return undefined;
              await reportRepairs(repairs, reporting);
              return { messages: replaceAllMessages(repaired) };
            },
            undefined,
            reporting,
          )
      : undefined,
    wrapModelCall: repairModelRequest || recoverRejections
      ? async (request, handler) => {
          const repairer = forRequest.for(request.model);
          const send: typeof handler = recoverRejections
            ? (req) =>
                callWithRejectionRecovery(req, handler, {
                  ...repairOptions,
                  provider: repairer.options.provider,
                  systemMessages: repairer.options.systemMessages,
                  onRepair,
                }) as ReturnType<typeof handler>
            : handler;
          if (!repairModelRequest) return send(request);
          const fixed = await orFallback(
            async () => {
              if (repairer.isClean(request.messages)) return request;
              const { messages: repaired, repairs } = repairer.repair(request.messages);
              if (repairs.length === 0) return request;
              await reportRepairs(repairs, reporting);
              return { ...request, messages: repaired };
            },
            request,
            reporting,
          );
          return send(fixed);
        }
      : undefined,
  });
}
