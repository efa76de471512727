/**
 * `toolCallRepairNode`: a StateGraph node placed right before the model node. A structurally broken history is
 * replaced in state (persisted by the checkpointer); a clean one costs one read-only walk and returns no update.
 * Provider shaping (turn alternation, id patterns, block conversions) is never stored: it belongs to the
 * request, which a node cannot see. Put it on the model instead (see docs/integrations.md).
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { createRepairer } from "../engine";
import { boundary } from "../errors";
import type { RepairOptions } from "../types";
import type { Dict } from "../values";
import { unlessClean, type RepairReporting } from "./events";
import { NO_UPDATE } from "./state-update";
import { persistedRepair } from "./run-salvage";
import { SURFACE_OPTIONS } from "./surface-options";
import { option, readOptions } from "../options";

export { NO_UPDATE };

export interface ToolCallRepairNodeOptions<K extends string = "messages">
  extends Omit<RepairOptions, "level">,
    RepairReporting {
  /** The state key holding the messages. Default `"messages"`. Its channel must use the messages reducer. */
  messagesKey?: K;
}

/** The node's update: the messages key, or nothing. */
export type ToolCallRepairNodeUpdate<K extends string = "messages"> = { [P in K]?: BaseMessage[] };

export type ToolCallRepairNodeFunction<K extends string = "messages"> = (
  state: { [P in K]?: BaseMessage[] },
  config?: RunnableConfig,
) => ToolCallRepairNodeUpdate<K> | Promise<ToolCallRepairNodeUpdate<K>>;

const NODE_OPTIONS = { ...SURFACE_OPTIONS, messagesKey: option.name };

/**
 * A node that repairs the tool-call history in state before the model sees it (structural repairs only).
 *
 * Defaults: `trailing: "answer"` (the node runs before a model call, where a history ending on unanswered
 * calls is always rejected; do not place it between the model node and the tools node).
 * Every repair reaches `onRepair` and is dispatched as the custom event `"tool_call_repair"`.
 */
export const toolCallRepairNode = boundary("toolCallRepairNode", function toolCallRepairNode<
  K extends string = "messages",
>(options: ToolCallRepairNodeOptions<K> = {}): ToolCallRepairNodeFunction<K> {
  const {
    messagesKey = "messages" as K,
    onRepair,
    onError,
    ...repairOptions
  } = readOptions<ToolCallRepairNodeOptions<K>>(options, "toolCallRepairNode", NODE_OPTIONS);
  const reporting: RepairReporting = { onRepair, onError };
  // What is persisted is structural only; `onRepair` is left to reportRepairs (each repair reaches it once).
  const repairer = createRepairer({ ...repairOptions, level: "structural" });
  const noUpdate = NO_UPDATE as ToolCallRepairNodeUpdate<K>;

  // Not async: the clean path returns the shared constant without allocating a promise. A state or history the
  // node cannot read goes on unchanged (reported through onError): never fail the run.
  return (state, config) =>
    unlessClean(
      () => {
        const messages: unknown = (state as Dict | undefined)?.[messagesKey];
        if (!Array.isArray(messages) || repairer.isClean(messages)) return noUpdate;
        // Finished results the run discarded go in first: the model sees them, not placeholders, in this very turn.
        return persistedRepair(messages, config, messagesKey, reporting, repairer, config).then((stored) =>
          stored ? ({ [messagesKey]: stored } as ToolCallRepairNodeUpdate<K>) : noUpdate,
        );
      },
      noUpdate,
      reporting,
      config,
    );
});
