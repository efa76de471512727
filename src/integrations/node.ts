/**
 * `toolCallRepairNode`: a StateGraph node placed right before the model node. A structurally broken history is
 * replaced in state (persisted by the checkpointer); a clean one costs one read-only walk and returns no update.
 * Provider shaping (turn alternation, id patterns, block conversions) is never stored: it belongs to the
 * request, which a node cannot see. Put it on the model instead (see docs/integrations.md).
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { boundary } from "../errors";
import type { RepairOptions } from "../types";
import { reportedOnce, type RepairReporting } from "./events";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { CHECKPOINTER_OPTIONS, withToolCallRepair, type CheckpointerRepairOptions } from "./checkpointer";
import { toolCallRepairHook, type ToolCallRepairHookFunction } from "./hook";
import { REQUEST_REPAIR_OPTIONS, withRequestRepair, type RequestRepairOptions } from "./model-wrapper";
import { NO_UPDATE } from "./state-update";
import { persistingStep } from "./run-salvage";
import { only, repairersOf, SURFACE_OPTIONS } from "./surface-options";
import { option, readOptions, surface } from "../options";

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
export const toolCallRepairNode = boundary(
  "toolCallRepairNode",
  <K extends string = "messages">(options: ToolCallRepairNodeOptions<K> = {}): ToolCallRepairNodeFunction<K> => {
    const { messagesKey = "messages" as K, ...given } = readOptions<ToolCallRepairNodeOptions<K>>(
      options,
      "toolCallRepairNode",
      NODE_OPTIONS,
    );
    // What is persisted is structural only; `onRepair` is left to reportRepairs (each repair reaches it once).
    const step = persistingStep(repairersOf(given).structural(), messagesKey, given, "node", NO_UPDATE);
    // Not async: the clean path returns the shared constant without allocating a promise. A state or history the
    // node cannot read goes on unchanged (reported through onError): never fail the run.
    return (state, config) => step(state, config, config);
  },
);

/**
 * `toolCallRepairKit(options)`: the pieces a LangGraph agent needs, from one set of options.
 * - `model(llm)`: every request repaired for the model's provider, a rejection recovered once
 *   ({@link withRequestRepair}); put it wherever the model was (createReactAgent's `llm`, a model node).
 * - `preModelHook` (createReactAgent) or `node` (a StateGraph, before the model node): the thread's structural
 *   repairs persisted, so every later turn starts from a valid history.
 * - `checkpointer(saver)`: finished results of sibling tools that a new input would throw away are kept, and
 *   stored threads are repaired as they are read and written ({@link withToolCallRepair}).
 */
export interface ToolCallRepairKitOptions
  extends RequestRepairOptions,
    Pick<CheckpointerRepairOptions, "messagesKey"> {}

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

const KIT_OPTIONS = { ...REQUEST_REPAIR_OPTIONS, messagesKey: option.name };

/**
 * The recommended setup for createReactAgent and custom StateGraphs:
 *
 * ```ts
 * const repair = toolCallRepairKit();
 * createReactAgent({ llm: repair.model(llm), tools, preModelHook: repair.preModelHook, checkpointer: repair.checkpointer(saver) });
 * ```
 */
export const toolCallRepairKit = surface(
  "toolCallRepairKit",
  KIT_OPTIONS,
  (options: ToolCallRepairKitOptions): ToolCallRepairKit => {
    const all = reportedOnce(options);
    return {
      model: (llm) => withRequestRepair(llm, only(all, REQUEST_REPAIR_OPTIONS)),
      // The kit's model shapes each request for the provider it calls: the hook stores structural repairs only.
      preModelHook: toolCallRepairHook({ ...only(all, SURFACE_OPTIONS), persist: true, shapeRequests: false }),
      node: toolCallRepairNode(only(all, NODE_OPTIONS)),
      // The checkpointer takes the engine's options but `trailing` (it keeps the last exchange open for a resume)
      // and `toolsInRequest` (it shapes no request).
      checkpointer: (saver) => withToolCallRepair(saver, only(all, CHECKPOINTER_OPTIONS)),
    };
  },
);
