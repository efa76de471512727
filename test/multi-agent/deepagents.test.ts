/**
 * Issue 30's scenario for deepagents: `createDeepAgent({ subagents, middleware: [toolCallRepairMiddleware()] })`
 * delegating through its `task` tool, on the real ChatBedrockConverse against the strict Converse stub, on SQLite
 * and PostgreSQL. deepagents' own patch middleware answers every open call first, with its "was cancelled" text;
 * the package, after it, takes that text for no result: a finished delegation's real result (a pending write of
 * the aborted step) replaces it, an interrupted one gets the package's honest words, in the request and stored.
 */
import { HumanMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { createDeepAgent } from "deepagents";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toolCallRepairMiddleware } from "../../src/integrations/middleware";
import { promptedStructuredOutputMiddleware } from "../../src/structured/middleware";
import { isSyntheticResult, repairMarkerOf } from "../../src/messages/inspect";
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
  driven,
} from "../support/multi-agent";

const PLAN: [string, string[]][] = [
  ["both", ["github", "argocd"]],
  ["repos", ["github"]],
  ["sync", ["argocd"]],
  ["ticket", ["jira"]],
  ["cost", ["aws"]],
];
const ABORTED = new Set([1, 3]);
const CANCELLED = /was cancelled - another message came in/;

async function buildDeepAgent(saver: BaseCheckpointSaver) {
  const brain = await startMultiAgentStub(
    {
      main: (request) => {
        if (endsOnToolResults(request)) return { text: "Here is what the subagents reported." };
        const said = lastUserText(request);
        const agents = PLAN.find(([word]) => said.includes(word))?.[1] ?? [];
        return agents.length > 0
          ? { toolCalls: agents.map((agent) => ({ name: "task", args: { description: said, subagent_type: agent } })) }
          : { text: `Answer to: ${said}` };
      },
      ...SUB_AGENT_SCRIPTS,
    },
    () => ({ text: "?" }),
  );
  const tools = new SubAgentTools();
  const subagents = Object.entries(SUB_TOOL).map(([agent, name]) => ({
    name: agent,
    description: `The ${agent} agent.`,
    systemPrompt: `You are the ${agent} agent. ${agentTag(agent)}`,
    tools: [tools.make(name, bigResult(agent), agent === "jira")],
    model: brain.model(),
    ...(agent === "aws" && {
      responseFormat: z.object({ service: z.string(), monthlyUsd: z.number() }),
      middleware: [promptedStructuredOutputMiddleware()],
    }),
  }));
  const agent = createDeepAgent({
    model: brain.model(),
    systemPrompt: `You are the platform engineer. ${agentTag("main")}`,
    subagents: subagents as never,
    middleware: [toolCallRepairMiddleware()],
    checkpointer: saver,
  });
  return { brain, tools, agent };
}

describe("deepagents createDeepAgent with subagents and toolCallRepairMiddleware, on ChatBedrockConverse (issue 30)", () => {
  for (const store of SCENARIO_STORES)
    it(`10 turns on ${store.name}: the finished delegation's real result replaces deepagents' "cancelled"`, async (context) => {
      const saver = await store.open(context);
      const thread = `deep-${store.name}-${Date.now()}`;
      const { brain, tools, agent } = await buildDeepAgent(saver);
      context.onTestFinished(() => brain.stub.close());
      const config = { configurable: { thread_id: thread }, recursionLimit: 50 };
      const completed: number[] = [];
      for (const [turn, words] of TURNS.entries()) {
        const input = { messages: [new HumanMessage({ content: words, id: `user-${turn}` })] };
        if (ABORTED.has(turn)) {
          tools.held.add("sync_apps");
          const error = await abortedRun(
            (signal) => driven(agent).invoke(input, { ...config, signal }),
            async () => {
              await tools.started$("sync_apps");
              if (turn === 3)
                await until(() => pendingResultOf(saver, thread, "task"), "github's finished task stored");
            },
          );
          expect(error.name).toMatch(/Abort/);
          tools.held.delete("sync_apps");
          continue;
        }
        // deepagents 1.14 lets a subagent's tool error end the whole run (createAgent's own ToolNode answers it
        // with an error result instead): the task call is left open, and the next turn repairs it.
        const failed = await driven(agent)
          .invoke(input, config)
          .then(
            () => undefined,
            (error: Error) => error.message,
          );
        if (failed) expect([turn, failed]).toEqual([5, expect.stringMatching(/create_ticket timed out after 30 s/)]);
        else completed.push(turn);
      }
      expect(completed).toEqual([0, 2, 4, 6, 7, 8, 9]);
      expect(brain.stub.rejections).toEqual([]);
      for (const request of brain.stub.requests) expect(splitPairs(request)).toEqual([]);

      const stored = await stateMessages(agent, config);
      expect(storedProblems(stored)).toEqual([]);
      expect(stored.filter((m) => HumanMessage.isInstance(m)).map((m) => m.content)).toEqual(TURNS);
      const results = stored.filter((m) => m.getType() === "tool").map((m) => String(m.content));
      for (const text of results) expect(text).not.toMatch(CANCELLED);

      const main = brain.requestsOf("main");
      const sentAt = (words: string) => main.filter((r) => lastUserText(r).endsWith(words)).map(sentResults);
      // Turn 3: the aborted delegation is told as having no recorded result. (Its call may not have been stored at
      // all: an abort can come before the checkpoint write, durability "async"; then the model sees both questions.)
      const [afterAbort] = sentAt("what is the sync status?");
      const first = [...afterAbort.values()].filter((t) => /has no result/.test(t));
      expect(first).toEqual(first.map(() => expect.stringMatching(/"task" .* has no result: no result was recorded/)));
      expect(first.length).toBeLessThanOrEqual(1);
      const [afterParallel] = sentAt("go on");
      const texts = [...afterParallel.values()];
      // The finished delegation's real result, in the very request of the next turn.
      expect(texts.filter((t) => t === "github done")).toHaveLength(2);
      expect(texts.filter((t) => /"task" .*the run stopped before its result was recorded/.test(t))).toHaveLength(1);
      for (const request of main) for (const t of sentResults(request).values()) expect(t).not.toMatch(CANCELLED);
      expect(
        stored
          .filter(isSyntheticResult)
          .map((m) => repairMarkerOf(m)?.toolRun)
          .sort(),
      ).toEqual(["interrupted", ...first.map(() => "outcome_unknown"), "outcome_unknown"]);
      // The turn after the failed one: the open task call is told as having no recorded result.
      const [afterFailure] = sentAt("what does our AWS account cost?");
      expect([...afterFailure.values()].filter((t) => /has no result: no result was recorded/.test(t))).toHaveLength(
        first.length + 1,
      );
      expect(results).toContain('{"service":"EC2","monthlyUsd":1234}');
    }, 120_000);
});
