/**
 * `toolCallRepairHook`: a `preModelHook` for createReactAgent (@langchain/langgraph/prebuilt).
 *
 * The model gets a list repaired for its provider through `llmInputMessages` (request shaping included);
 * with `persist: true` the structural repairs are also written to `messages` (never the shaping).
 * `llmInputMessages` is a stored channel that keeps its last value: the agent node uses it whenever it is
 * non-empty, so a hook that returned it once and `{}` later would feed the model a stale list (an older turn,
 * without the new question). This hook therefore writes it on every call, the current messages themselves
 * when they are clean.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { RepairOptions } from "../types";
import { markHook } from "./compose-hooks";
import { orFallback, reportRepairs, unlessClean, type RepairReporting } from "./events";
import { repairersOf, SURFACE_OPTIONS } from "./surface-options";
import { kind, option, surface } from "../options";
import { withUniqueIds } from "./state-update";
import { persistedRepair, withRunSalvage } from "./run-salvage";

export interface ToolCallRepairHookOptions extends Omit<RepairOptions, "level">, RepairReporting {
  /**
   * The agent's model (what you pass as createReactAgent's `llm`): without `provider`, requests are repaired for
   * its provider (ChatBedrockConverse means Bedrock, ...). Neither given: `"strict"`.
   */
  model?: unknown;
  /**
   * Also write the structural repairs to `messages` in state (persisted), not only to the model's input.
   * Default false. Provider shaping is never persisted.
   */
  persist?: boolean;
  /**
   * Shape the model's input for its provider (default true). False when the model repairs its own requests
   * (`withRequestRepair`, the kit's `model`): the model then gets the structurally repaired messages, and the
   * provider's shaping happens once, in the model, for the provider it really calls.
   */
  shapeRequests?: boolean;
}

export interface ToolCallRepairHookUpdate {
  messages?: BaseMessage[];
  llmInputMessages?: BaseMessage[];
}

export type ToolCallRepairHookFunction = (
  state: { messages?: BaseMessage[] },
  config?: RunnableConfig,
) => ToolCallRepairHookUpdate | Promise<ToolCallRepairHookUpdate>;

const HOOK_OPTIONS = {
  ...SURFACE_OPTIONS,
  model: kind("a chat model", () => true),
  persist: option.flag,
  shapeRequests: option.flag,
};

/**
 * A preModelHook that repairs the tool-call history before each model call of createReactAgent.
 * Defaults: request-only, `trailing: "answer"` (the hook runs right before the model), the provider of
 * `options.model` (else `"strict"`).
 * Every repair reaches `onRepair` and is dispatched as the custom event `"tool_call_repair"`.
 */
export const toolCallRepairHook = surface("toolCallRepairHook", HOOK_OPTIONS, (options: ToolCallRepairHookOptions) => {
  const { persist, shapeRequests = true, model, ...given } = options;
  const repairers = repairersOf(given);
  const structural = repairers.structural();
  const request = shapeRequests ? repairers.for(model) : structural;

  const repairAndReport = async (messages: BaseMessage[], config?: RunnableConfig) => {
    // Finished results the run discarded go in first: the model sees them, not placeholders, in this very turn.
    const stored = persist && (await persistedRepair(messages, config, "messages", given, structural, "hook", config));
    // After the structural repair, only the provider's shaping is left for the request (the stored list carries
    // the ids the state will hold).
    const salvaged = persist
      ? { messages: stored ? stored.slice(1) : messages, repairs: [] }
      : await withRunSalvage(messages, config, "messages", given, structural);
    const shaped = request.repair(salvaged.messages);
    await reportRepairs([...salvaged.repairs, ...shaped.repairs], given, {
      surface: "hook",
      provider: request.options.provider,
      config,
      request: true,
    });
    // The channel's reducer merges by id too: a repeated id would drop a message from the request.
    const llmInputMessages = shaped.repairs.length ? withUniqueIds(shaped.messages) : shaped.messages;
    return { ...(stored && { messages: stored }), llmInputMessages };
  };

  // Tagged so that composePreModelHooks can check it runs after any hook that rewrites the messages. A state the
  // hook cannot read goes on unchanged, reported: never fail the run.
  return markHook<ToolCallRepairHookFunction>("llmInputMessages", (state, config) =>
    unlessClean<ToolCallRepairHookUpdate>({}, given, config, () => {
      const messages = state?.messages ?? [];
      const fallback = { llmInputMessages: messages };
      return request.isClean(messages)
        ? fallback
        : orFallback(fallback, given, config, () => repairAndReport(messages, config));
    }),
  );
});
