/**
 * Shared plumbing of the multi-agent scenario tests (issue 30): one strict Bedrock Converse stub answering every
 * agent of a stack (the supervisor and its sub-agents tell themselves apart by a tag in their system prompt), the
 * sub-agents' tools (one held until the run is aborted, one that throws a timeout, ~60 KB results), a run aborted
 * once a delegation is under way (and, for parallel delegations, once the finished sibling's result is stored), and
 * what was sent, read back from the stub.
 */
import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { z } from "zod";
import { findToolCallProblems } from "../../src/engine";
import { asDict, bedrockModel, startBedrockStub, type ScriptedTurn } from "./stubs";
import { postgresSaverOrSkip, type SkippableContext } from "./services";

/** The tag an agent's system prompt carries, so the one stub knows which agent is asking. */
export const agentTag = (agent: string) => `[agent:${agent}]`;

/** A result of about `kb` KB (800 ArgoCD apps, a repository list): what pushes a thread towards its context limit. */
export const bigResult = (label: string, kb = 60) => {
  const items = Array.from({ length: Math.ceil((kb * 1024) / 40) }, (_, i) => `${label}-item-${i} status=Healthy`);
  return `${label}:\n${items.join("\n")}`;
};

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((part) => String(asDict(part).text ?? "")).join("")
      : "";

/** The Converse request's system text (every block). */
export const systemTextOf = (request: unknown): string =>
  ((asDict(request).system as unknown[] | undefined) ?? []).map((b) => String(asDict(b).text ?? "")).join("\n");

/** The Converse request's messages. */
const messagesOf = (request: unknown) => ((asDict(request).messages as unknown[] | undefined) ?? []).map(asDict);

/** Whether the request ends on tool results (the model answers them) rather than on the user's words. */
export const endsOnToolResults = (request: unknown): boolean => {
  const last = messagesOf(request).at(-1);
  return Array.isArray(last?.content) && last.content.some((block) => "toolResult" in asDict(block));
};

/** The text of the request's last user turn that holds words (not only tool results). */
export const lastUserText = (request: unknown): string => {
  for (const m of messagesOf(request).reverse())
    if (m.role === "user") {
      const words = (Array.isArray(m.content) ? m.content : []).filter((b) => typeof asDict(b).text === "string");
      if (words.length > 0) return textOf(words);
    }
  return "";
};

/** Every tool result the request carries, by tool use id: its text. */
export function sentResults(request: unknown): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of messagesOf(request))
    for (const block of Array.isArray(m.content) ? m.content : []) {
      const result = asDict(asDict(block).toolResult);
      if (typeof result.toolUseId === "string") out.set(result.toolUseId, textOf(result.content));
    }
  return out;
}

/** Per agent (by tag), what it answers: `decide(request)` for the agent's words, `fallback` for any other agent. */
export type AgentScripts = Record<string, (request: unknown) => ScriptedTurn>;

/** The one stub every agent of the stack talks to: strict Converse validation, prefill refused. */
export async function startMultiAgentStub(scripts: AgentScripts, fallback: (request: unknown) => ScriptedTurn) {
  const requestsOf = new Map<string, unknown[]>();
  const stub = await startBedrockStub({
    script: (request) => {
      const system = systemTextOf(request);
      const agent = Object.keys(scripts).find((name) => system.includes(agentTag(name)));
      const list = requestsOf.get(agent ?? "?") ?? [];
      requestsOf.set(agent ?? "?", [...list, request]);
      return agent ? scripts[agent](request) : fallback(request);
    },
  });
  return {
    stub,
    /** A ChatBedrockConverse (the default model id: Claude Sonnet 4.6, which refuses prefill) on the stub. */
    model: () => bedrockModel(stub),
    /** The accepted requests each agent sent, in order. */
    requestsOf: (agent: string) => requestsOf.get(agent) ?? [],
  };
}

/** A sub-agent's tools, recorded per call: `slow` ones are held until the run is aborted; `failing` ones time out. */
export class SubAgentTools {
  readonly started: string[] = [];
  readonly finished: string[] = [];
  /** Names of tools to hold until the run's signal aborts. */
  readonly held = new Set<string>();
  private waiting: { name: string; resolve: () => void }[] = [];

  /** Resolves when a tool named `name` next starts. */
  started$(name: string): Promise<void> {
    return new Promise((resolve) => this.waiting.push({ name, resolve }));
  }

  /** A tool of a sub-agent: answers `result` (about 60 KB unless given), held while its name is in `held`. */
  make(name: string, result = bigResult(name), failing = false) {
    return tool(
      async (_input: { query: string }, config: RunnableConfig) => {
        this.started.push(name);
        for (const w of this.waiting.filter((w) => w.name === name)) w.resolve();
        this.waiting = this.waiting.filter((w) => w.name !== name);
        if (failing) throw new Error(`${name} timed out after 30 s (ETIMEDOUT)`);
        if (this.held.has(name))
          await new Promise((_, reject) => {
            const signal = config?.signal;
            if (signal?.aborted) reject(new Error("aborted"));
            signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
          });
        this.finished.push(name);
        return result;
      },
      { name, description: `${name} for the sub-agent`, schema: z.object({ query: z.string() }) },
    );
  }
}

/** Whether the saver holds, as a pending write of `thread`'s latest checkpoint, a tool result for a call to `name`. */
export async function pendingResultOf(saver: BaseCheckpointSaver, thread: string, name: string): Promise<boolean> {
  const tuple = await saver.getTuple({ configurable: { thread_id: thread, checkpoint_ns: "" } });
  return (tuple?.pendingWrites ?? []).some(
    ([, channel, value]) =>
      channel === "messages" && [value].flat().some((m) => ToolMessage.isInstance(m) && m.name === name),
  );
}

/** Waits until `condition` holds (30 s at most, on a loaded machine). */
export async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Runs `invoke(signal)` and aborts it once `ready()` resolves; resolves to the error the run ended with. */
export async function abortedRun(invoke: (signal: AbortSignal) => Promise<unknown>, ready: () => Promise<void>) {
  const controller = new AbortController();
  const outcome = invoke(controller.signal).then(
    () => new Error("the run was expected to be aborted"),
    (error: Error) => error,
  );
  await ready();
  controller.abort();
  return outcome;
}

/** The stores the scenarios run on: SQLite (a file-less database) and PostgreSQL (skipped when unreachable). */
export const SCENARIO_STORES = [
  { name: "SqliteSaver", open: async (): Promise<BaseCheckpointSaver> => SqliteSaver.fromConnString(":memory:") },
  {
    name: "PostgresSaver",
    open: async (context: SkippableContext): Promise<BaseCheckpointSaver> =>
      (await postgresSaverOrSkip(context, "multiagent")).saver,
  },
] as const;

/** Structural problems of a stored thread (what a stored repair fixes; request shaping is never stored). */
export const storedProblems = (messages: BaseMessage[]) => findToolCallProblems(messages, { level: "structural" });

/** Whether a Converse request carries a split pair: a toolUse without its toolResult in the next turn, or the reverse. */
export function splitPairs(request: unknown): string[] {
  const messages = messagesOf(request);
  const out: string[] = [];
  messages.forEach((m, i) => {
    const uses = (Array.isArray(m.content) ? m.content : []).map((b) => asDict(asDict(b).toolUse).toolUseId);
    const answered = new Set(sentResults({ messages: [messages[i + 1] ?? {}] }).keys());
    for (const id of uses) if (typeof id === "string" && !answered.has(id)) out.push(`toolUse ${id} unanswered`);
    if (m.role === "user" && i > 0) {
      const before = new Set(
        (Array.isArray(messages[i - 1].content) ? (messages[i - 1].content as unknown[]) : []).map(
          (b) => asDict(asDict(b).toolUse).toolUseId,
        ),
      );
      for (const id of sentResults({ messages: [m] }).keys())
        if (!before.has(id)) out.push(`toolResult ${id} orphaned`);
    }
  });
  return out;
}

/** A compiled graph or agent, as these scenarios drive it (the stacks' own types are too deep to spell out). */
export type Driven = {
  invoke(input: unknown, config?: unknown): Promise<unknown>;
  getState(config: unknown): Promise<{ values: { messages?: BaseMessage[] } }>;
};
export const driven = (graph: unknown) => graph as Driven;

/** The messages of a thread, as the graph's state holds them. */
export const stateMessages = async (graph: unknown, config: unknown): Promise<BaseMessage[]> =>
  (await driven(graph).getState(config)).values.messages ?? [];

/** The incident's script (issue 30), shared by the scenario tests: each sub-agent's one tool, and the user's ten turns. */
export const SUB_TOOL: Record<string, string> = {
  github: "list_repos",
  argocd: "sync_apps",
  jira: "create_ticket",
  aws: "get_costs",
};

export const TURNS = [
  "list the repos",
  "sync the apps", // aborted while argocd's sync runs
  "what is the sync status?",
  "check both repos and apps", // aborted: github finished, argocd still syncing
  "go on",
  "open a ticket for the outage", // jira's tool times out
  "what does our AWS account cost?", // structured sub-agent
  "list the repos again",
  "sync the apps now",
  "thanks",
];

/** Each sub-agent's model: it calls its one tool with the task, then reports (the AWS one as structured JSON). */
export const SUB_AGENT_SCRIPTS: AgentScripts = Object.fromEntries(
  Object.entries(SUB_TOOL).map(([agent, name]) => [
    agent,
    (request: unknown) =>
      endsOnToolResults(request)
        ? { text: agent === "aws" ? '{"service":"EC2","monthlyUsd":1234}' : `${agent} done` }
        : { toolCalls: [{ name, args: { query: lastUserText(request) } }] },
  ]),
);
