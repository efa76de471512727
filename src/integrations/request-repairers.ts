/**
 * The request-level repairer for whichever model a surface sees: an explicit `provider` option wins, otherwise
 * the model tells (ChatBedrockConverse means Bedrock, and so on), and `"strict"` when it cannot. One repairer
 * per target, built once and reused.
 */
import { createRepairer, type Repairer } from "../engine";
import { requestTargetOf } from "../models/request-target";
import type { RepairOptions } from "../types";

export class RequestRepairers {
  private readonly byTarget = new Map<string, Repairer>();
  private readonly fixed: Repairer | undefined;
  private readonly options: Omit<RepairOptions, "level" | "onRepair">;

  /** `options.onRepair` is not passed on: surfaces report what these repairers return (each repair once). */
  constructor(input: Omit<RepairOptions, "level"> & { onError?: unknown }) {
    const { onRepair: _reportedBySurface, onError: _handledBySurface, ...options } = input;
    this.options = options;
    // Validate the options now (a bad value fails when the surface is built, not at the first model call).
    const validated = createRepairer({ ...options, level: "request" });
    this.fixed = options.provider !== undefined ? validated : undefined;
  }

  /** The repairer for requests to `model` (any wrapper of a chat model, or undefined). */
  for(model: unknown): Repairer {
    if (this.fixed) return this.fixed;
    const target = requestTargetOf(model);
    const key = `${target.provider ?? "strict"}\u0000${this.options.systemMessages ?? target.systemMessages ?? "placed"}`;
    let repairer = this.byTarget.get(key);
    if (!repairer) {
      repairer = createRepairer({
        ...this.options,
        level: "request",
        provider: target.provider ?? "strict",
        systemMessages: this.options.systemMessages ?? target.systemMessages,
      });
      this.byTarget.set(key, repairer);
    }
    return repairer;
  }
}
