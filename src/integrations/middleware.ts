/**
 * `toolCallRepairMiddleware`: for langchain's `createAgent({ middleware })`.
 *
 * - `beforeAgent` runs when a new input arrives (not on `invoke(null)` or `Command({ resume })`, where
 *   pending tool calls may still run): a broken stored thread is healed and persisted there.
 * - `wrapModelCall` runs around every model call: whatever is still broken (or broke during the run) is
 *   repaired in the request only, so the model call succeeds without rewriting state mid-run. A call the
 *   provider still rejects for its history is force-repaired, retried once, and the fix persisted
 *   (rejection-recovery.ts).
 */
import { createMiddleware } from "langchain";
import type { RepairOptions } from "../types";
import { reportRepairs } from "./events";
import { bindRepair, replaceAllMessages } from "./node";
import { callWithRejectionRecovery } from "./rejection-recovery";

export const TOOL_CALL_REPAIR_MIDDLEWARE_NAME = "ToolCallRepairMiddleware";

export interface ToolCallRepairMiddlewareOptions extends RepairOptions {
  /** Heal and persist the stored thread when a new input arrives (`beforeAgent`). Default true. */
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
 * Defaults: both on, `trailing: "answer"` (both run right before a model call), `provider: "strict"`.
 * Every repair reaches `onRepair` and is dispatched as the custom event `"tool_call_repair"`.
 */
export function toolCallRepairMiddleware(options: ToolCallRepairMiddlewareOptions = {}) {
  const { healOnInput = true, repairModelRequest = true, recoverRejections = true, name = TOOL_CALL_REPAIR_MIDDLEWARE_NAME, ...repairOptions } = options;
  const bound = bindRepair(repairOptions);

  return createMiddleware({
    name,
    beforeAgent: healOnInput
      ? async (state) => {
          if (bound.isClean(state.messages)) return undefined;
          const { messages: repaired, repairs } = bound.repair(state.messages);
          if (repairs.length === 0) return undefined;
          await reportRepairs(repairs, repairOptions);
          return { messages: replaceAllMessages(repaired) };
        }
      : undefined,
    wrapModelCall: repairModelRequest || recoverRejections
      ? async (request, handler) => {
          const send: typeof handler = recoverRejections
            ? (req) => callWithRejectionRecovery(req, handler, repairOptions) as ReturnType<typeof handler>
            : handler;
          if (!repairModelRequest || bound.isClean(request.messages)) return send(request);
          const { messages: repaired, repairs } = bound.repair(request.messages);
          if (repairs.length === 0) return send(request);
          await reportRepairs(repairs, repairOptions);
          return send({ ...request, messages: repaired });
        }
      : undefined,
  });
}
