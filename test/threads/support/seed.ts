/**
 * Threads broken the way production threads break, by REAL agent runs: langchain `createAgent` (one `Send`
 * task per tool call) and `createReactAgent` (one ToolNode task), the real ChatOpenAI / ChatBedrockConverse
 * client against the strict local stubs. A run calls `fast` and `slow` in parallel and is aborted while `slow`
 * runs (after `fast` finished and, with `Send`, its result was stored as a pending write); then a new user
 * message goes into the same thread and the provider rejects it. Clean threads run to the end; an "open"
 * thread is aborted and never gets a new input (a resume would still run its tools).
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { z } from "zod";
import { toolCallRepairHook } from "../../../src/integrations/hook";
import { toolCallRepairMiddleware } from "../../../src/integrations/middleware";
import { isSyntheticResult } from "../../../src/messages/inspect";
import { endsOnUserText, until } from "../../integrations/support/checkpoint-scenarios";
import { bedrockModel, openAIModel, startBedrockStub, startOpenAIStub, type RunningStub } from "../../support/stubs";

export type SeedProvider = "openai" | "bedrock";

export interface SeedModel {
  provider: SeedProvider;
  stub: RunningStub;
  model: () => BaseChatModel;
}

/** A stub that calls `fast` and `slow` after a user message and answers in text after tool results. */
export async function startSeedModel(provider: SeedProvider): Promise<SeedModel> {
  let answers = 0;
  const script = (request: unknown) =>
    endsOnUserText(provider, request)
      ? {
          toolCalls: [
            { name: "fast", args: { q: "flights" } },
            { name: "slow", args: { q: "hotels" } },
          ],
        }
      : { text: `answer ${++answers}` };
  if (provider === "openai") {
    const stub = await startOpenAIStub({ script });
    return { provider, stub, model: () => openAIModel(stub) };
  }
  const stub = await startBedrockStub({ script });
  return { provider, stub, model: () => bedrockModel(stub) };
}

/** `fast` returns at once; `slow` can be held until the run is aborted. */
export class SeedTools {
  holdSlow = false;
  slowStarted?: () => void;

  readonly fast = tool(async ({ q }) => `fast result for ${q}`, {
    name: "fast",
    description: "Looks something up quickly.",
    schema: z.object({ q: z.string() }),
  });

  readonly slow = tool(
    async ({ q }, config) => {
      this.slowStarted?.();
      if (this.holdSlow) {
        await new Promise((_, reject) => {
          const signal = (config as RunnableConfig | undefined)?.signal;
          if (signal?.aborted) reject(new Error("aborted"));
          signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
        });
      }
      return `slow result for ${q}`;
    },
    { name: "slow", description: "Looks something up slowly.", schema: z.object({ q: z.string() }) },
  );

  get all() {
    return [this.fast, this.slow];
  }
}

export type AgentKind = "createAgent" | "createReactAgent";

/**
 * The agent a thread runs in. `shaping` adds the request-level repair the provider needs beyond what is stored
 * (toolCallRepairMiddleware / toolCallRepairHook, request only): on Bedrock a user message after tool results is
 * a second user turn (B6), which a stored structural repair does not change.
 */
export function buildSeedAgent(
  kind: AgentKind,
  model: SeedModel,
  tools: SeedTools,
  checkpointer: BaseCheckpointSaver,
  shaping = false,
) {
  if (kind === "createAgent")
    return createAgent({
      model: model.model(),
      tools: tools.all,
      checkpointer,
      middleware: shaping ? [toolCallRepairMiddleware({ provider: model.provider, repairOnInput: false })] : [],
    });
  return createReactAgent({
    llm: model.model(),
    tools: tools.all,
    checkpointSaver: checkpointer,
    ...(shaping ? { preModelHook: toolCallRepairHook({ provider: model.provider }) } : {}),
  });
}

export type SeedAgent = ReturnType<typeof buildSeedAgent>;

export const threadConfig = (thread: string): RunnableConfig => ({ configurable: { thread_id: thread } });
export const say = (text: string) => ({ messages: [new HumanMessage(text)] });

/**
 * Waits until the thread's latest checkpoint satisfies `holds`. LangGraph stores checkpoints in the background
 * (durability "async"): a run that was aborted or rejected returns before its last writes land, and on
 * PostgreSQL a next run started at once could read an older checkpoint.
 */
async function untilLatest(
  saver: BaseCheckpointSaver,
  thread: string,
  what: string,
  holds: (messages: BaseMessage[]) => boolean,
): Promise<void> {
  await until(async () => holds(await storedMessages(saver, thread)), `${thread}: ${what}`);
}

const endsOnCalls = (messages: BaseMessage[]) => {
  const last = messages[messages.length - 1];
  return AIMessage.isInstance(last) && (last.tool_calls?.length ?? 0) > 0;
};

/** Runs until `slow` is under way (and, with `Send`, `fast`'s result is stored), then aborts. */
export async function abortedRun(
  agent: SeedAgent,
  tools: SeedTools,
  saver: BaseCheckpointSaver,
  thread: string,
  waitForSibling: boolean,
): Promise<void> {
  const controller = new AbortController();
  tools.holdSlow = true;
  const started = new Promise<void>((resolve) => (tools.slowStarted = resolve));
  const outcome = (agent.invoke as (input: unknown, config: RunnableConfig) => Promise<unknown>)(
    say(`trip ${thread}`),
    { ...threadConfig(thread), signal: controller.signal },
  ).then(
    () => new Error("the run was expected to be aborted"),
    (error: Error) => error,
  );
  await started;
  if (waitForSibling) {
    await until(async () => {
      const tuple = await saver.getTuple(threadConfig(thread));
      return (tuple?.pendingWrites ?? []).some(
        ([, channel, value]) =>
          channel === "messages" && (Array.isArray(value) ? value : [value]).some((m) => ToolMessage.isInstance(m)),
      );
    }, "the finished sibling's pending write");
  }
  controller.abort();
  const error = await outcome;
  await untilLatest(saver, thread, "the aborted run's calls stored", endsOnCalls);
  tools.holdSlow = false;
  tools.slowStarted = undefined;
  if (!/abort/i.test(error.message)) throw new Error(`${thread}: expected an aborted run, got ${error.message}`);
}

/** A new user message after the aborted run: LangGraph discards the pending tools, the provider rejects the thread. */
async function rejectedFollowUp(agent: SeedAgent, saver: BaseCheckpointSaver, thread: string): Promise<void> {
  const text = "never mind, just the flights";
  const error = await (agent.invoke as (input: unknown, config: RunnableConfig) => Promise<unknown>)(
    say(text),
    threadConfig(thread),
  ).then(
    () => undefined,
    (e: Error) => e,
  );
  if (!error) throw new Error(`${thread}: the follow-up was expected to be rejected by the provider`);
  await untilLatest(
    saver,
    thread,
    "the rejected follow-up stored",
    (messages) => messages[messages.length - 1]?.content === text,
  );
}

export interface SeedPlan {
  /** createAgent threads aborted mid-tool then given a new input (broken; `fast`'s result is salvageable). */
  brokenSend?: number;
  /** createReactAgent threads aborted mid-tool then given a new input (broken; nothing to salvage). */
  brokenReact?: number;
  /** createAgent threads that ran to the end. */
  clean?: number;
  /** createAgent threads aborted mid-tool with no new input (awaiting a resume). */
  open?: number;
  /** Prefix of the thread ids. */
  prefix?: string;
}

export interface SeededThreads {
  broken: string[];
  clean: string[];
  open: string[];
  /** Which agent made each thread (its next message must go through the same kind). */
  kinds: Map<string, AgentKind>;
  /** Broken threads whose finished `fast` result sits only in pending writes. */
  salvageable: string[];
}

/** Seeds threads into `saver` by real runs, one after another. */
export async function seedThreads(
  saver: BaseCheckpointSaver,
  model: SeedModel,
  plan: SeedPlan,
): Promise<SeededThreads> {
  const tools = new SeedTools();
  const prefix = plan.prefix ?? "";
  const seeded: SeededThreads = { broken: [], clean: [], open: [], kinds: new Map(), salvageable: [] };
  const agents = {
    createAgent: buildSeedAgent("createAgent", model, tools, saver),
    createReactAgent: buildSeedAgent("createReactAgent", model, tools, saver),
  };
  for (let i = 1; i <= (plan.brokenSend ?? 0); i++) {
    const thread = `${prefix}broken-send-${i}`;
    await abortedRun(agents.createAgent, tools, saver, thread, true);
    await rejectedFollowUp(agents.createAgent, saver, thread);
    seeded.broken.push(thread);
    seeded.salvageable.push(thread);
    seeded.kinds.set(thread, "createAgent");
  }
  for (let i = 1; i <= (plan.brokenReact ?? 0); i++) {
    const thread = `${prefix}broken-react-${i}`;
    await abortedRun(agents.createReactAgent, tools, saver, thread, false);
    await rejectedFollowUp(agents.createReactAgent, saver, thread);
    seeded.broken.push(thread);
    seeded.kinds.set(thread, "createReactAgent");
  }
  for (let i = 1; i <= (plan.clean ?? 0); i++) {
    const thread = `${prefix}clean-${i}`;
    await (agents.createAgent.invoke as (input: unknown, config: RunnableConfig) => Promise<unknown>)(
      say(`trip ${thread}`),
      threadConfig(thread),
    );
    seeded.clean.push(thread);
    seeded.kinds.set(thread, "createAgent");
  }
  for (let i = 1; i <= (plan.open ?? 0); i++) {
    const thread = `${prefix}open-${i}`;
    await abortedRun(agents.createAgent, tools, saver, thread, true);
    seeded.open.push(thread);
    seeded.kinds.set(thread, "createAgent");
  }
  return seeded;
}

export async function storedMessages(saver: BaseCheckpointSaver, thread: string): Promise<BaseMessage[]> {
  const tuple = await saver.getTuple(threadConfig(thread));
  return (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
}

/** The results stored for the calls of `fast` and `slow`: real or placeholder, and their text. */
export function resultsByTool(messages: BaseMessage[]): Record<string, { synthetic: boolean; content: string }[]> {
  const names = new Map<string, string>();
  for (const m of messages)
    if (AIMessage.isInstance(m)) for (const c of m.tool_calls ?? []) if (c.id) names.set(c.id, c.name);
  const out: Record<string, { synthetic: boolean; content: string }[]> = {};
  for (const m of messages) {
    if (!ToolMessage.isInstance(m)) continue;
    const name = names.get(m.tool_call_id) ?? "?";
    (out[name] ??= []).push({ synthetic: isSyntheticResult(m), content: String(m.content) });
  }
  return out;
}

/** Sends the next user message through the same kind of agent (real client, stub); returns the final answer. */
export async function nextMessage(
  kind: AgentKind,
  model: SeedModel,
  saver: BaseCheckpointSaver,
  thread: string,
  shaping: boolean,
): Promise<string> {
  const tools = new SeedTools();
  const agent = buildSeedAgent(kind, model, tools, saver, shaping);
  const result = (await (
    agent.invoke as (input: unknown, config: RunnableConfig) => Promise<{ messages: BaseMessage[] }>
  )(say("and a car, please"), threadConfig(thread))) as {
    messages: BaseMessage[];
  };
  return String(result.messages[result.messages.length - 1]?.content);
}
