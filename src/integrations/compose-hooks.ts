/**
 * `composePreModelHooks`: several `preModelHook`s as the one createReactAgent takes, typically
 * `summarizationHook` then `toolCallRepairHook`.
 *
 * The two write different channels, and the order matters:
 * - the summarization hook rewrites `messages` (persisted: `RemoveMessage(REMOVE_ALL_MESSAGES)` then the new list);
 * - the repair hook writes `llmInputMessages` (what the model sees) on every call, from the messages it is given.
 * So the summary must be applied first and the repair hook handed the summarized list; otherwise the model is
 * shown a repaired copy of the history from before the summary. The composed hook runs its hooks in order,
 * hands each the state as the messages reducer will leave it after the previous hooks, and returns ONE update:
 * `messages` as a full replacement (`REMOVE_ALL_MESSAGES` first) when any hook rewrote them, and the model input
 * the last hook wrote.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { ToolCallRepairInputError, boundary } from "../errors";
import { applyMessagesUpdate, replaceAllMessages } from "./state-update";

/** What a preModelHook may return: `messages`, `llmInputMessages`, and any other state keys. */
export interface PreModelHookUpdate {
  messages?: BaseMessage[];
  llmInputMessages?: BaseMessage[];
  [key: string]: unknown;
}

export type PreModelHookFunction<S extends { messages?: BaseMessage[] } = { messages?: BaseMessage[] }> = (
  state: S,
  config?: RunnableConfig,
) => PreModelHookResult | Promise<PreModelHookResult>;

/** A state update object (`{}` for none), or nothing. */
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type
// biome-ignore lint/suspicious/noConfusingVoidType: a hook written as `() => {}` returns void
export type PreModelHookResult = object | undefined | void;

/**
 * What a hook of this package writes, so that the order can be checked when hooks are composed:
 * `"messages"` rewrites the history (summarization), `"llmInputMessages"` writes the model's input from the
 * history it is given (repair), and so must come after every hook that rewrites it.
 */
type HookRole = "messages" | "llmInputMessages";

const HOOK_ROLE = Symbol.for("langgraph-tool-repair.preModelHookRole");
const FIT = Symbol.for("langgraph-tool-repair.preModelHookFit");
type Fit = (messages: BaseMessage[], config?: RunnableConfig) => Promise<BaseMessage[]>;

/** Tags a hook with its role, and how it fits the model's request (read by {@link composePreModelHooks}). */
export function markHook<F extends (...args: never[]) => unknown>(role: HookRole, hook: F, fit?: Fit) {
  return Object.defineProperties(hook, { [HOOK_ROLE]: { value: role }, [FIT]: { value: fit } });
}

/**
 * One `preModelHook` that runs `hooks` in order. Each hook gets the state with the `messages` updates of the
 * hooks before it applied (as the messages reducer applies them) and the model input they wrote. The result is
 * one update:
 * - `messages`: `[RemoveMessage(REMOVE_ALL_MESSAGES), ...final list]` when any hook rewrote them, absent otherwise;
 * - `llmInputMessages`: the last one written, when any hook wrote one. When a later hook rewrote `messages`
 *   after it, that input is stale; the final messages are written instead (the channel keeps its last value,
 *   so writing nothing would leave an older input in place);
 * - any other key: the last value written.
 *
 * A hook of this package that writes the model input (`toolCallRepairHook`) placed before one that rewrites
 * the history (`summarizationHook`) is refused here, with a {@link ToolCallRepairInputError}.
 */
export const composePreModelHooks = boundary(
  "composePreModelHooks",
  <S extends { messages?: BaseMessage[] }>(...hooks: PreModelHookFunction<S>[]) => {
    // A hook of ours that writes the model input must come after every hook of ours that rewrites the history.
    const roles = hooks.map((hook) => (hook as { [HOOK_ROLE]?: HookRole })[HOOK_ROLE]);
    const writer = roles.indexOf("llmInputMessages");
    const rewriter = writer < 0 ? -1 : roles.indexOf("messages", writer);
    if (rewriter >= 0)
      throw new ToolCallRepairInputError(
        `composePreModelHooks: hooks[${writer}] writes the model input (llmInputMessages) ` +
          `before hooks[${rewriter}] rewrites the messages; ` +
          "put the summarization hook first and toolCallRepairHook last, so the model sees the repaired summarized history",
        { argument: `hooks[${rewriter}]` },
      );

    const fits = hooks.flatMap((hook) => (hook as { [FIT]?: Fit })[FIT] ?? []);
    return async function composedPreModelHook(state: S, config?: RunnableConfig): Promise<PreModelHookUpdate> {
      const given = state.messages ?? [];
      let messages = given;
      let modelInput: BaseMessage[] | undefined;
      let stale = false;
      const rest = {};
      for (const hook of hooks) {
        const input = { ...state, messages, ...(modelInput && { llmInputMessages: modelInput }) };
        const update = ((await hook(input, config)) ?? {}) as PreModelHookUpdate;
        const { messages: rewrite, llmInputMessages, ...others } = update;
        Object.assign(rest, others);
        if (rewrite !== undefined) {
          // A new list (the reducer's): one that differs from the state's was rewritten.
          messages = applyMessagesUpdate(messages, rewrite);
          stale = !!modelInput;
        }
        if (llmInputMessages !== undefined) {
          modelInput = llmInputMessages;
          stale = false;
        }
      }
      // A hook that fits the request (summarization's: oversized results cut) makes the input written on every call.
      let input = modelInput && (stale ? messages : modelInput);
      for (const fitRequest of fits) input = await fitRequest(input ?? messages, config);
      return {
        ...rest,
        ...(messages !== given && { messages: replaceAllMessages(messages) }),
        ...(input && { llmInputMessages: input }),
      };
    };
  },
);
