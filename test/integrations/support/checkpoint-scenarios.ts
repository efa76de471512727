/**
 * The pieces of the checkpointer end-to-end scenarios: a small agent graph (model node + tools, one tools
 * task or one `Send` task per call) driven by the real ChatBedrockConverse / ChatOpenAI client against the
 * strict local stubs, tools whose runs are counted, a deterministic way to abort a run mid-tool, and savers.
 */
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { END, interrupt, MemorySaver, MessagesAnnotation, Send, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { findToolCallProblems } from "../../../src/engine";
import { repairToolCalls } from "../../../src/engine";
import { isSyntheticResult } from "../../../src/messages/inspect";
import type { Provider } from "../../../src/types";
import { createPostgresSaver, postgresSkipReason } from "../../support/services";
import { tapSaver } from "./abort-sweep";
import {
  bedrockModel,
  openAIModel,
  startBedrockStub,
  startOpenAIStub,
  type RunningStub,
  type Script,
  type ScriptedToolCall,
} from "../../support/stubs";

/**
 * A stub script: the first request calls both of {@link ToolBench}'s tools (`lookup` with `q: first`, then
 * `slow_lookup` with `q: second`), every later one answers `text`.
 */
export const bothToolsThenAnswer =
  (text = "answer", [first, second] = ["alpha", "beta"]): Script =>
  (_request, callIndex) =>
    callIndex === 0
      ? {
          toolCalls: [
            { name: "lookup", args: { q: first } },
            { name: "slow_lookup", args: { q: second } },
          ],
        }
      : { text };

export type ProviderName = "bedrock" | "openai";
export const PROVIDER_NAMES: readonly ProviderName[] = ["bedrock", "openai"];

type Dict = Record<string, unknown>;
const asDict = (v: unknown): Dict => (typeof v === "object" && v !== null ? (v as Dict) : {});

/** Whether the request ends on something the user said (not on tool results): then the model calls tools. */
export function endsOnUserText(provider: ProviderName, body: unknown): boolean {
  const messages = asDict(body).messages;
  if (!Array.isArray(messages) || messages.length === 0) return false;
  const last = asDict(messages[messages.length - 1]);
  if (provider === "openai") return last.role === "user";
  const content = Array.isArray(last.content) ? last.content : [];
  return last.role === "user" && !content.some((block) => "toolResult" in asDict(block));
}

export interface StubbedModel {
  stub: RunningStub;
  model: BaseChatModel;
  provider: Provider;
}

/**
 * A stub answering like an agent's model: the scripted calls after a user message, a text answer after tool
 * results. The strict validation of the stub rejects whatever the provider would.
 */
export async function startStubbedModel(provider: ProviderName, calls: ScriptedToolCall[]): Promise<StubbedModel> {
  let answers = 0;
  const script = (request: unknown) =>
    endsOnUserText(provider, request) ? { toolCalls: calls } : { text: `answer ${++answers}` };
  if (provider === "bedrock") {
    const stub = await startBedrockStub({ script });
    return { stub, model: bedrockModel(stub), provider: "bedrock" };
  }
  const stub = await startOpenAIStub({ script });
  return { stub, model: openAIModel(stub), provider: "openai" };
}

/** Tools whose runs are recorded per call id. `slow_lookup` can be held until the run is aborted. */
export class ToolBench {
  readonly started = new Map<string, number>();
  readonly completed = new Map<string, number>();
  holdSlow = false;
  private slowStarted?: () => void;

  private count(map: Map<string, number>, config: unknown) {
    const id = (config as { toolCall?: { id?: string } } | undefined)?.toolCall?.id ?? "?";
    map.set(id, (map.get(id) ?? 0) + 1);
  }

  /** Resolves when `slow_lookup` next starts. */
  nextSlowStart(): Promise<void> {
    return new Promise((resolve) => (this.slowStarted = resolve));
  }

  readonly lookup = tool(
    async ({ q }, config) => {
      this.count(this.started, config);
      this.count(this.completed, config);
      return `lookup result for ${q}`;
    },
    { name: "lookup", description: "Looks something up.", schema: z.object({ q: z.string() }) },
  );

  readonly slowLookup = tool(
    async ({ q }, config) => {
      this.count(this.started, config);
      this.slowStarted?.();
      if (this.holdSlow) {
        // Held until the run is aborted: the abort is what ends it.
        await new Promise((_, reject) => {
          const signal = (config as RunnableConfig | undefined)?.signal;
          if (signal?.aborted) reject(new Error("aborted"));
          signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
        });
      }
      this.count(this.completed, config);
      return `slow result for ${q}`;
    },
    { name: "slow_lookup", description: "Looks something up, slowly.", schema: z.object({ q: z.string() }) },
  );

  readonly askHuman = tool(
    async ({ q }, config) => {
      this.count(this.started, config);
      const answer = interrupt({ question: q });
      this.count(this.completed, config);
      return `the human said ${String(answer)}`;
    },
    { name: "ask_human", description: "Asks the human.", schema: z.object({ q: z.string() }) },
  );

  get all(): StructuredToolInterface[] {
    return [this.lookup, this.slowLookup, this.askHuman];
  }

  /** How often each call ran to completion, for the given ids. */
  completions(ids: string[]): number[] {
    return ids.map((id) => this.completed.get(id) ?? 0);
  }
}

export type ToolsMode = "single" | "send";

export interface AgentOptions {
  model: StubbedModel;
  bench: ToolBench;
  checkpointer: BaseCheckpointSaver;
  /** One tools task for all calls, or one `Send` task per call (as createAgent's default v2). */
  mode: ToolsMode;
  /** Repair each request before the model call, without persisting (what a wrapModelCall middleware does). */
  requestNet?: boolean;
}

export interface Agent {
  graph: ReturnType<typeof buildAgentGraph>;
  /** Requests the net had to repair. */
  netRepairs: number;
}

function buildAgentGraph(options: AgentOptions, onNetRepair: () => void) {
  const bound = options.model.model.bindTools!(options.bench.all);
  const callModel = async (state: typeof MessagesAnnotation.State, config: RunnableConfig) => {
    let request = state.messages;
    if (options.requestNet) {
      const repaired = repairToolCalls(state.messages, { provider: options.model.provider });
      if (repaired.repairs.length > 0) onNetRepair();
      request = repaired.messages;
    }
    return { messages: [await bound.invoke(request, config)] };
  };
  const builder = new StateGraph(MessagesAnnotation)
    .addNode("model", callModel)
    .addNode("tools", new ToolNode(options.bench.all))
    .addEdge(START, "model")
    .addEdge("tools", "model");
  const route = (state: typeof MessagesAnnotation.State) => {
    const last = state.messages[state.messages.length - 1] as AIMessage;
    const calls = last.tool_calls ?? [];
    if (calls.length === 0) return END;
    return options.mode === "single"
      ? "tools"
      : calls.map((call) => new Send("tools", { ...state, lg_tool_call: call }));
  };
  return builder.addConditionalEdges("model", route, ["tools", END]).compile({ checkpointer: options.checkpointer });
}

export function buildAgent(options: AgentOptions): Agent {
  const agent = { netRepairs: 0 } as Agent;
  agent.graph = buildAgentGraph(options, () => agent.netRepairs++);
  return agent;
}

export const threadConfig = (thread: string): RunnableConfig => ({ configurable: { thread_id: thread } });

/** Waits (without timers) until `condition` holds; throws after many turns of the event loop. */
export async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  // Bounded by time, not by turns: on a loaded machine a saver's write can take longer than many turns.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/**
 * Starts a run, waits until `slow_lookup` has started (and, with `siblingStored`, until the finished sibling's
 * result is stored as a pending write), then aborts it. Returns the error the run rejected with.
 */
export async function runAbortedMidTool(
  agent: Agent,
  bench: ToolBench,
  input: unknown,
  thread: string,
  siblingStored?: BaseCheckpointSaver,
): Promise<Error> {
  const controller = new AbortController();
  bench.holdSlow = true;
  const slowStarted = bench.nextSlowStart();
  const outcome = agent.graph.invoke(input as never, { ...threadConfig(thread), signal: controller.signal }).then(
    () => new Error("the run was expected to be aborted"),
    (error: Error) => error,
  );
  await slowStarted;
  if (siblingStored) {
    await until(async () => {
      const tuple = await siblingStored.getTuple(threadConfig(thread));
      return (tuple?.pendingWrites ?? []).some(
        ([, channel, value]) =>
          channel === "messages" && Array.isArray(value) && value.some((m) => ToolMessage.isInstance(m)),
      );
    }, "the finished sibling's pending write");
  }
  controller.abort();
  const error = await outcome;
  bench.holdSlow = false;
  return error;
}

/** The thread as the inner saver stores it (not through the wrapper). */
export async function storedThread(saver: BaseCheckpointSaver, thread: string): Promise<BaseMessage[]> {
  const tuple = await saver.getTuple(threadConfig(thread));
  return (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
}

/** What is wrong with a STORED thread: structural problems only (request shaping is never stored). */
export function problemsOf(messages: BaseMessage[], provider: Provider) {
  return findToolCallProblems(messages, { provider, level: "structural" });
}

export const toolResults = (messages: BaseMessage[]) =>
  messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
export const syntheticResults = (messages: BaseMessage[]) => toolResults(messages).filter(isSyntheticResult);

/** Ids of the calls of the first assistant message that has calls. */
export function firstCallIds(messages: BaseMessage[]): string[] {
  const call = messages.find((m) => AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0) as
    | AIMessage
    | undefined;
  return (call?.tool_calls ?? []).map((c) => c.id!);
}

export interface SaverKind {
  name: "MemorySaver" | "SqliteSaver";
  /** A fresh saver; `reopen` (SQLite only) opens another saver on the same file, as a new process would. */
  create(): { saver: BaseCheckpointSaver; reopen?: () => BaseCheckpointSaver; dispose(): void };
}

/** A saver kind that may need a server: created asynchronously, skipped (with the reason) when unreachable. */
export interface ServerSaverKind {
  name: "MemorySaver" | "SqliteSaver" | "PostgresSaver";
  /** Why this saver cannot be used here (PostgreSQL unreachable), or undefined. */
  skip?: string;
  /** A fresh saver; `reopen` opens another saver on the same storage, as a new process would. */
  create(): Promise<{
    saver: BaseCheckpointSaver;
    reopen?: () => BaseCheckpointSaver;
    dispose(): void | Promise<void>;
  }>;
}

/**
 * PostgresSaver for the scenarios, on a schema of its own. An aborted run's invoke() rejects before its last
 * writes land (checkpointer-known-failures.test.ts, "(R)"); with PostgreSQL they take a round trip, so each
 * read here first waits until no write is under way, as an application must after an abort.
 */
async function postgresKind() {
  const handle = await createPostgresSaver("scenarios");
  const settled = (saver: BaseCheckpointSaver) => {
    const tap = tapSaver(saver);
    const read = tap.saver.getTuple.bind(tap.saver);
    return new Proxy(tap.saver, {
      get(target, property) {
        if (property === "getTuple") return async (config: RunnableConfig) => (await tap.quiet(), read(config));
        return Reflect.get(target, property, target);
      },
    });
  };
  return { saver: settled(handle.saver), reopen: () => settled(handle.reopen()), dispose: handle.dispose };
}

const postgresSkip = await postgresSkipReason();

export const SAVER_KINDS: readonly SaverKind[] = [
  { name: "MemorySaver", create: () => ({ saver: new MemorySaver(), dispose: () => {} }) },
  {
    name: "SqliteSaver",
    create: () => {
      const dir = mkdtempSync(join(tmpdir(), "tool-repair-"));
      const file = join(dir, "checkpoints.db");
      const opened: SqliteSaver[] = [];
      const open = () => {
        const saver = SqliteSaver.fromConnString(file);
        opened.push(saver);
        return saver;
      };
      return {
        saver: open(),
        reopen: open,
        dispose: () => {
          for (const saver of opened) if (saver.db.open) saver.db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

/** MemorySaver, SqliteSaver and PostgresSaver (skipped with the reason when PostgreSQL is unreachable). */
export const SERVER_SAVER_KINDS: readonly ServerSaverKind[] = [
  ...SAVER_KINDS.map((kind) => ({ name: kind.name, create: async () => kind.create() })),
  { name: "PostgresSaver", skip: postgresSkip, create: postgresKind },
];

/** A small seeded PRNG (mulberry32), so "random" abort turns are the same on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
