/**
 * `toolCallRepairKit(options)`: the pieces a LangGraph agent needs, from one set of options.
 * - `model(llm)`: every request repaired for the model's provider, a rejection recovered once
 *   ({@link withRequestRepair}); put it wherever the model was (createReactAgent's `llm`, a model node).
 * - `preModelHook` (createReactAgent) or `node` (a StateGraph, before the model node): the thread's structural
 *   repairs persisted, so every later turn starts from a valid history.
 * - `checkpointer(saver)`: finished results of sibling tools that a new input would throw away are kept, and
 *   stored threads are repaired as they are read and written ({@link withToolCallRepair}).
 */
import { boundary } from "../errors";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { withToolCallRepair, type CheckpointerRepairOptions } from "./checkpointer";
import { reportedOnce } from "./events";
import { toolCallRepairHook, type ToolCallRepairHookFunction } from "./hook";
import { REQUEST_REPAIR_OPTION_KINDS, withRequestRepair, type RequestRepairOptions } from "./model-wrapper";
import { checkSurfaceOptions } from "./surface-options";
import { toolCallRepairNode, type ToolCallRepairNodeFunction } from "./node";

export interface ToolCallRepairKitOptions
  extends RequestRepairOptions,
    Pick<CheckpointerRepairOptions, "list" | "messagesKey"> {}

export interface ToolCallRepairKit {
  /** The model with every request repaired and rejections recovered. */
  model<M>(llm: M): M;
  /** createReactAgent's `preModelHook`: structural repairs persisted to `messages`. */
  preModelHook: ToolCallRepairHookFunction;
  /** A StateGraph node for before the model node: structural repairs persisted. */
  node: ToolCallRepairNodeFunction;
  /** Wraps the graph's checkpointer. */
  checkpointer<T extends BaseCheckpointSaver>(saver: T): T;
}

/**
 * The recommended setup for createReactAgent and custom StateGraphs:
 *
 * ```ts
 * const repair = toolCallRepairKit();
 * createReactAgent({ llm: repair.model(llm), tools, preModelHook: repair.preModelHook, checkpointer: repair.checkpointer(saver) });
 * ```
 */
export const toolCallRepairKit = boundary(
  "toolCallRepairKit",
  function toolCallRepairKit(options: ToolCallRepairKitOptions = {}): ToolCallRepairKit {
    const { list, messagesKey, repairRequests, recoverRejections, onRecovery, onRepair, ...rest } =
      checkSurfaceOptions<ToolCallRepairKitOptions>("toolCallRepairKit", options, REQUEST_REPAIR_OPTION_KINDS);
    const shared = { ...rest, onRepair: reportedOnce(onRepair) };
    const model = <M>(llm: M): M =>
      withRequestRepair(llm, { ...shared, repairRequests, recoverRejections, onRecovery });
    return {
      model,
      // The kit's model shapes each request for the provider it calls: the hook stores structural repairs only.
      preModelHook: toolCallRepairHook({ ...shared, persist: true, shapeRequests: false }),
      node: toolCallRepairNode({ ...shared, messagesKey }) as ToolCallRepairNodeFunction,
      checkpointer: (saver) => withToolCallRepair(saver, { ...shared, list, messagesKey }),
    };
  },
);
