/**
 * Issue 30's scenario, for a langchain createAgent supervisor whose tools invoke sub-agents (the incident's
 * "platform engineer"): the real ChatBedrockConverse against the strict Converse stub, on SQLite and PostgreSQL, a
 * 10-turn script with an aborted delegation, two parallel delegations of which one finished and one was aborted, a
 * sub-agent tool that times out, a structured sub-agent on a model that refuses prefill, ~60 KB results.
 */
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toolCallRepair, toolCallRepairMiddleware } from "../../src/integrations/middleware";
import { promptedStructuredOutputMiddleware } from "../../src/structured/middleware";
import { isSyntheticResult, repairMarkerOf } from "../../src/messages/inspect";
import type { ToolCallRepair } from "../../src/types";
import {
  abortedRun,
  agentTag,
  bigResult,
  endsOnToolResults,
  lastUserText,
  pendingResultOf,
  SCENARIO_STORES,
  sentResults,
  splitPairs,
  startMultiAgentStub,
  storedProblems,
  stateMessages,
  SubAgentTools,
  SUB_AGENT_SCRIPTS,
  SUB_TOOL,
  TURNS,
  until,
} from "../support/multi-agent";

/** What the supervisor delegates for each of the user's words (the first match). */
const PLAN: [string, string[]][] = [
  ["both", ["github_agent", "argocd_agent"]],
  ["repos", ["github_agent"]],
  ["sync", ["argocd_agent"]],
  ["ticket", ["jira_agent"]],
  ["cost", ["aws_agent"]],
];

const ABORTED = new Set([1, 3]);

const Costs = z.object({ service: z.string(), monthlyUsd: z.number() });

async function buildStack(saver: BaseCheckpointSaver, onRepair?: (repair: ToolCallRepair) => void) {
  const brain = await startMultiAgentStub(
    {
      supervisor: (request) => {
        if (endsOnToolResults(request)) return { text: "Here is what the agents reported." };
        const said = lastUserText(request);
        const calls = PLAN.find(([word]) => said.includes(word))?.[1] ?? [];
        return calls.length > 0
          ? { toolCalls: calls.map((name) => ({ name, args: { task: said } })) }
          : { text: `Answer to: ${said}` };
      },
      ...SUB_AGENT_SCRIPTS,
    },
    () => ({ text: "?" }),
  );
  const tools = new SubAgentTools();
  const repair = toolCallRepair({ onRepair });
  const subAgent = (
    agent: string,
    extra: Parameters<typeof createAgent>[0] extends infer P ? Partial<P & object> : never,
  ) =>
    createAgent({
      model: brain.model(),
      tools: [tools.make(SUB_TOOL[agent], bigResult(agent), agent === "jira")],
      systemPrompt: `You are the ${agent} agent. ${agentTag(agent)}`,
      middleware: [toolCallRepairMiddleware()],
      ...(extra as object),
    });
  // github runs in the supervisor's namespace (no checkpointer of its own); argocd keeps its own thread.
  const github = subAgent("github", {});
  const argocd = subAgent("argocd", { checkpointer: repair.checkpointer(saver) });
  const jira = subAgent("jira", {});
  const aws = createAgent({
    model: brain.model(),
    tools: [tools.make("get_costs", bigResult("aws"))],
    systemPrompt: `You are the aws agent. ${agentTag("aws")}`,
    responseFormat: Costs,
    middleware: [toolCallRepairMiddleware(), promptedStructuredOutputMiddleware()],
  });
  const last = (messages: BaseMessage[]) => String(messages.at(-1)?.content ?? "");
  const delegate = (name: string, run: (task: string, config: RunnableConfig) => Promise<string>) =>
    tool(async ({ task }: { task: string }, config: RunnableConfig) => run(task, config), {
      name,
      description: `Delegates to the ${name.replace("_agent", "")} agent.`,
      schema: z.object({ task: z.string() }),
    });
  const supervisor = createAgent({
    model: brain.model(),
    tools: [
      delegate("github_agent", async (task, config) =>
        last((await github.invoke({ messages: [new HumanMessage(task)] }, config)).messages),
      ),
      delegate("argocd_agent", async (task, config) =>
        last(
          (
            await argocd.invoke(
              { messages: [new HumanMessage(task)] },
              {
                configurable: { thread_id: `${config.configurable?.thread_id}-argocd`, checkpoint_ns: "" },
                signal: config.signal,
              },
            )
          ).messages,
        ),
      ),
      delegate("jira_agent", async (task, config) => {
        try {
          return last((await jira.invoke({ messages: [new HumanMessage(task)] }, config)).messages);
        } catch (error) {
          return `The jira agent failed: ${(error as Error).message}`;
        }
      }),
      delegate("aws_agent", async (task, config) =>
        JSON.stringify((await aws.invoke({ messages: [new HumanMessage(task)] }, config)).structuredResponse),
      ),
    ],
    systemPrompt: `You are the platform engineer supervisor. ${agentTag("supervisor")}`,
    middleware: [repair.middleware],
    checkpointer: repair.checkpointer(saver),
  });
  return { brain, tools, supervisor, argocd };
}

describe("createAgent supervisor with sub-agents as tools, on ChatBedrockConverse (issue 30)", () => {
  for (const store of SCENARIO_STORES)
    it(`10 turns on ${store.name}: all but the aborted turns complete, truthful placeholders, real results kept`, async (context) => {
      const saver = await store.open(context);
      const thread = `supervisor-${store.name}-${Date.now()}`;
      const { brain, tools, supervisor, argocd } = await buildStack(saver);
      context.onTestFinished(() => brain.stub.close());
      const config = { configurable: { thread_id: thread } };
      const completed: number[] = [];
      for (const [turn, words] of TURNS.entries()) {
        const input = { messages: [new HumanMessage({ content: words, id: `user-${turn}` })] };
        if (ABORTED.has(turn)) {
          tools.held.add("sync_apps");
          const error = await abortedRun(
            (signal) => supervisor.invoke(input, { ...config, signal }),
            async () => {
              await tools.started$("sync_apps");
              if (turn === 3) {
                const { until } = await import("../support/multi-agent");
                await until(
                  () => pendingResultOf(saver, thread, "github_agent"),
                  "github's finished delegation stored",
                );
              }
            },
          );
          expect(error.name).toMatch(/Abort/);
          tools.held.delete("sync_apps");
          continue;
        }
        await supervisor.invoke(input, config);
        completed.push(turn);
      }
      expect(completed).toEqual([0, 2, 4, 5, 6, 7, 8, 9]);
      expect(brain.stub.rejections).toEqual([]);
      for (const request of brain.stub.requests) expect(splitPairs(request)).toEqual([]);

      const stored = await stateMessages(supervisor, config);
      expect(storedProblems(stored)).toEqual([]);
      expect(stored.filter((m) => HumanMessage.isInstance(m)).map((m) => m.content)).toEqual(TURNS);
      const child = await stateMessages(argocd, { configurable: { thread_id: `${thread}-argocd`, checkpoint_ns: "" } });
      expect(storedProblems(child)).toEqual([]);

      const sup = brain.requestsOf("supervisor");
      const sentAt = (words: string) => sup.filter((r) => lastUserText(r).endsWith(words)).map(sentResults);
      // Turn 3: the aborted delegation has no result; the model is told no result was recorded, never "did not run".
      // Turn 3: the aborted delegation is told as having no recorded result, never "did not run". (Its call may not
      // have been stored at all: an abort can come before the checkpoint write; then the model sees both questions.)
      const [afterAbort] = sentAt("what is the sync status?");
      const first = [...afterAbort.values()].filter((text) => /has no result/.test(text));
      expect(first).toEqual(
        first.map(() => expect.stringMatching(/"argocd_agent" .* has no result: no result was recorded/)),
      );
      expect(first.length).toBeLessThanOrEqual(1);
      // Turn 5: the finished sibling's REAL result is sent; the aborted one's run is known to have stopped.
      const [afterParallel] = sentAt("go on");
      const texts = [...afterParallel.values()];
      expect(texts.filter((t) => t === "github done")).toHaveLength(2);
      expect(
        texts.filter((t) => /"argocd_agent" .*the run stopped before its result was recorded/.test(t)),
      ).toHaveLength(1);
      for (const t of texts) expect(t).not.toMatch(/did not run|was cancelled/);
      // Stored: real results kept, placeholders marked with what is known.
      const synthetic = stored.filter(isSyntheticResult).map((m) => repairMarkerOf(m)?.toolRun);
      expect(synthetic.sort()).toEqual(["interrupted", ...first.map(() => "outcome_unknown")]);
      // The timed-out sub-agent tool: its error reached the sub-agent's model as the tool's result (createAgent's
      // ToolNode), and the delegation completed; the structured sub-agent was delivered (native output, no prefill).
      const jiraSent = brain.requestsOf("jira").flatMap((r) => [...sentResults(r).values()]);
      expect(jiraSent).toContainEqual(expect.stringMatching(/create_ticket timed out after 30 s/));
      const results = stored.filter((m) => m.getType() === "tool").map((m) => String(m.content));
      expect(results).toContain("jira done");
      expect(results).toContainEqual('{"service":"EC2","monthlyUsd":1234}');
      expect(tools.finished.filter((t) => t === "list_repos")).toHaveLength(3);
    }, 120_000);

  it("50 threads, each with a parallel delegation aborted and then continued: the same requests and repairs per thread", async () => {
    const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
    const saver = SqliteSaver.fromConnString(":memory:");
    const repairs: ToolCallRepair[] = [];
    const { brain, tools, supervisor } = await buildStack(saver, (r) => repairs.push(r));
    const perThread: { requests: number; repairs: string[] }[] = [];
    try {
      for (let k = 0; k < 50; k++) {
        const thread = `flat-${k}`;
        const config = { configurable: { thread_id: thread } };
        const [requestsBefore, repairsBefore] = [brain.stub.requests.length, repairs.length];
        tools.held.add("sync_apps");
        await abortedRun(
          (signal) =>
            supervisor.invoke({ messages: [new HumanMessage("check both repos and apps")] }, { ...config, signal }),
          async () => {
            await tools.started$("sync_apps");
            await until(() => pendingResultOf(saver, thread, "github_agent"), "github's finished delegation stored");
          },
        );
        tools.held.delete("sync_apps");
        await supervisor.invoke({ messages: [new HumanMessage("go on")] }, config);
        perThread.push({
          requests: brain.stub.requests.length - requestsBefore,
          repairs: repairs
            .slice(repairsBefore)
            .map((r) => `${r.action}:${r.toolRun ?? ""}`)
            .sort(),
        });
      }
    } finally {
      await brain.stub.close();
    }
    expect(brain.stub.rejections).toEqual([]);
    // The work per thread does not grow with the number of threads before it: the 50th costs what the first did.
    expect(new Set(perThread.map((t) => JSON.stringify(t))).size).toBe(1);
    // The finished sibling put back, the aborted one told its run stopped, and Bedrock's turn shaping (request only).
    expect(perThread[0].repairs).toEqual([
      "inserted_assistant_message:",
      "salvaged_result:",
      "synthesized_result:interrupted",
    ]);
  }, 300_000);
});
