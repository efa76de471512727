/**
 * The ONE place that decides how a stored thread is judged and what an offline repair of it changes.
 * Everything the thread tools (`scanThreads`, `repairThreads`, the CLI) judge or write goes through these
 * functions.
 *
 * What is stored is structural only (the engine's `"structural"` level): calls without results, results
 * without calls or in the wrong place, duplicate or missing ids, calls outside `tool_calls`. How a request is
 * shaped for one provider (merging user turns, placeholder turns, id pattern rewrites) stays a request-time
 * concern (toolCallRepairMiddleware, toolCallRepairHook, withRequestRepair): storing it would bind the thread
 * to one provider.
 */
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { createRepairer, type Repairer } from "../engine";
import {
  ToolCallRepairInputError,
  assertArray,
  describeInput,
  expectedInput,
  optionsInput,
  ownInput,
  readingInput,
} from "../errors";
import { createStoredHealer, type HealResult } from "../integrations/heal";
import { isMessage } from "../messages/coerce";
import { trailingOpenExchange } from "../messages/exchanges";
import { PROVIDERS, type Provider, type RepairLevel, type ToolCallProblem } from "../types";

/**
 * A repairer for one judgement (an open trailing exchange is never a problem here). Made per call, so no
 * walk state is shared through the module: creating one costs about a microsecond, reading a thread from a
 * saver about a millisecond.
 */
function judge(provider: Provider, level: RepairLevel): Repairer {
  return createRepairer({ provider, level, trailing: "keep" });
}

/** `provider` is one of {@link PROVIDERS}, or an error naming the function's `provider` argument. */
function assertProvider(provider: unknown, fn: string): asserts provider is Provider {
  if (!(PROVIDERS as readonly unknown[]).includes(provider))
    throw expectedInput(fn, "provider", `one of ${PROVIDERS.join(", ")}`, provider);
}

/** The problems `fn` reports: one walk when clean (most threads), then every problem. */
function problemsOf(
  messages: readonly BaseMessage[],
  provider: Provider,
  level: RepairLevel,
  fn: string,
): ToolCallProblem[] {
  assertArray(messages, fn);
  assertProvider(provider, fn);
  const repairer = judge(provider, level);
  return repairer.isClean(messages) ? [] : repairer.find(messages);
}

/** What a stored repair fixes: the structural problems of a thread. Most threads are clean: one walk. */
export function structuralProblems(messages: readonly BaseMessage[], provider: Provider = "strict"): ToolCallProblem[] {
  return problemsOf(messages, provider, "structural", "structuralProblems");
}

/** Every problem of a stored thread for `provider`, request shaping included. */
export function storedThreadProblems(
  messages: readonly BaseMessage[],
  provider: Provider = "strict",
): ToolCallProblem[] {
  return problemsOf(messages, provider, "request", "storedThreadProblems");
}

/**
 * True when the history ends on an assistant message whose calls are not all answered and nothing but its
 * own results follows (the provider's view of an open exchange): the tools may still be pending, and a
 * resume runs them. Such an exchange is left open. One that a user message follows was abandoned by a new
 * input and is closed.
 */
export function awaitsResume(messages: readonly BaseMessage[]): boolean {
  assertArray(messages, "awaitsResume");
  return trailingOpenExchange(messages) !== undefined;
}

export interface HealStoredThreadOptions {
  /** Real results of calls that have none (pending writes of a discarded step), put back instead of placeholders. */
  salvage?: ReadonlyMap<string, ToolMessage>;
}

/**
 * Heals a stored thread structurally. An exchange that awaits a resume is kept; one that a new input
 * abandoned is closed, with the real results from `salvage` where the tools had finished.
 */
export function healStoredThread(messages: BaseMessage[], options: HealStoredThreadOptions = {}): HealResult {
  assertStoredMessages(messages, "healStoredThread");
  const salvage = ownInput(optionsInput(options, "healStoredThread"), "salvage", "healStoredThread");
  if (salvage !== undefined && !(salvage instanceof Map))
    throw expectedInput("healStoredThread", "options.salvage", "a Map of call ids to their ToolMessages", salvage);
  return readingInput(
    () =>
      createStoredHealer().heal(messages, {
        closeOpen: !awaitsResume(messages),
        salvage: salvage as ReadonlyMap<string, ToolMessage> | undefined,
      }),
    "healStoredThread",
  );
}

/**
 * A stored thread is a list of LangChain messages (as the saver revives them): anything else (a hole, `null`,
 * a plain object) is an input error naming its index, never a list silently returned unchanged.
 */
function assertStoredMessages(messages: unknown, fn: string): asserts messages is BaseMessage[] {
  assertArray(messages, fn);
  readingInput(() => {
    for (let i = 0; i < messages.length; i++) {
      if (!(i in messages)) throw ToolCallRepairInputError.atMessage(i, "is a hole in a sparse array, not a message");
      const message = messages[i];
      if (!isMessage(message))
        throw ToolCallRepairInputError.atMessage(
          i,
          `is ${describeInput(message)}, not a LangChain message (${fn} heals threads as the saver revives them)`,
        );
    }
  }, fn);
}
