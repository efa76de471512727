/**
 * The request-level repairer for whichever model a surface sees: an explicit `provider` option wins, otherwise
 * the model tells (ChatBedrockConverse means Bedrock, and so on), and `"strict"` when it cannot. One repairer
 * per target and per answer to "does this request carry tools", built once and reused.
 */
import { createRepairer, type Repairer } from "../engine";
import { requestTargetOf } from "../models/request-target";
import type { RepairOptions } from "../types";

/** What a surface knows about one request beyond its model. */
export interface RequestFacts {
  /**
   * False when the surface is sure the request carries no tools (`toolsInRequest: false` for the engine).
   * An explicit `toolsInRequest` option of the surface wins over it.
   */
  toolsInRequest?: boolean;
}

export class RequestRepairers {
  private readonly byKey = new Map<string, Repairer>();
  private readonly options: Omit<RepairOptions, "level" | "onRepair">;

  /** `options` as the surface checked them; `onRepair` is not passed on: surfaces report what these repairers return. */
  constructor(input: Omit<RepairOptions, "level"> & { onError?: unknown }) {
    const { onRepair: _reportedBySurface, onError: _handledBySurface, ...options } = input;
    this.options = options;
  }

  /** Options of a retry: shaped for the same target as `repairer`'s requests (provider, system messages, tools). */
  recovery({ options: { provider, systemMessages, toolsInRequest } }: Repairer) {
    return { ...this.options, provider, systemMessages, toolsInRequest };
  }

  /** The repairer for requests to `model` (any wrapper of a chat model, or undefined). */
  for(model: unknown, facts: RequestFacts = {}): Repairer {
    const target = this.options.provider !== undefined ? {} : requestTargetOf(model);
    const provider = this.options.provider ?? target.provider ?? "strict";
    const systemMessages = this.options.systemMessages ?? target.systemMessages;
    const toolsInRequest = this.options.toolsInRequest ?? facts.toolsInRequest;
    const key = `${provider}\u0000${systemMessages}\u0000${toolsInRequest}`;
    let repairer = this.byKey.get(key);
    if (!repairer)
      this.byKey.set(
        key,
        (repairer = createRepairer({ ...this.options, level: "request", provider, systemMessages, toolsInRequest })),
      );
    return repairer;
  }
}
