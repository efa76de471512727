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
import { REQUEST_REPAIR_OPTIONS, withRequestRepair, type RequestRepairOptions } from "./model-wrapper";
import { option, readOptions } from "../options";
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

const KIT_OPTIONS = { ...REQUEST_REPAIR_OPTIONS, list: option.flag, messagesKey: option.name };

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
    const { list, messagesKey, repairRequests, recoverRejections, onRecovery, onRepair, trailing, ...rest } =
      readOptions<ToolCallRepairKitOptions>(options, "toolCallRepairKit", KIT_OPTIONS);
    const shared = { ...rest, onRepair: reportedOnce(onRepair) };
    const beforeModel = { ...shared, trailing };
    const model = <M>(llm: M): M =>
      withRequestRepair(llm, { ...beforeModel, repairRequests, recoverRejections, onRecovery });
    return {
      model,
      // The kit's model shapes each request for the provider it calls: the hook stores structural repairs only.
      preModelHook: toolCallRepairHook({ ...beforeModel, persist: true, shapeRequests: false }),
      node: toolCallRepairNode({ ...beforeModel, messagesKey }) as ToolCallRepairNodeFunction,
      checkpointer: (saver) => withToolCallRepair(saver, { ...shared, list, messagesKey }),
    };
  },
);
