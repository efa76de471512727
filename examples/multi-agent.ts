/**
 * `npx tsx examples/multi-agent.ts`: the incident's multi-agent stacks (docs/multi-agent.md), through the REAL
 * ChatBedrockConverse against the local strict Converse stub (test/support/stubs; no network beyond 127.0.0.1).
 *
 * 1. A langchain createAgent supervisor whose tools invoke sub-agents, with `toolCallRepair()`.
 * 2. A deepagents `createDeepAgent` with subagents (its `task` tool), with `toolCallRepairMiddleware()`.
 *
 * In each, the user asks for two delegations at once; one finishes, the other is still running when the client
 * disconnects (the run is aborted); the user then writes again in the same thread. What the supervisor's model is
 * SENT in that next turn is printed: the finished delegation's real result, and the aborted one's placeholder.
 */
import { HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createDeepAgent } from "deepagents";
import { createAgent } from "langchain";
import { z } from "zod";
import { toolCallRepair, toolCallRepairMiddleware } from "../src/langchain";
import {
  abortedRun,
  agentTag,
  driven,
  endsOnToolResults,
  lastUserText,
  pendingResultOf,
  sentResults,
  startMultiAgentStub,
  SubAgentTools,
  until,
} from "../test/support/multi-agent";
import { printWrapped } from "./print";

const SUB_TOOL: Record<string, string> = { github: "list_repos", argocd: "sync_apps" };

/** The one stub every agent talks to: the supervisor delegates to both, each sub-agent calls its tool, then answers. */
async function startBrain(delegate: (agent: string, said: string) => { name: string; args: Record<string, unknown> }) {
  return startMultiAgentStub(
    {
      supervisor: (request) => {
        if (endsOnToolResults(request)) return { text: "Here is what the agents reported." };
        const said = lastUserText(request);
        return said.includes("both")
          ? { toolCalls: ["github", "argocd"].map((agent) => delegate(agent, said)) }
          : { text: "Noted." };
      },
      ...Object.fromEntries(
        Object.entries(SUB_TOOL).map(([agent, name]) => [
          agent,
          (request: unknown) =>
            endsOnToolResults(request)
              ? { text: `${agent} finished: 12 items` }
              : { toolCalls: [{ name, args: { query: lastUserText(request) } }] },
        ]),
      ),
    },
    () => ({ text: "?" }),
  );
}

/** Runs the two turns on `agent` and prints what its model was sent in the second. */
async function twoTurns(
  title: string,
  brain: Awaited<ReturnType<typeof startBrain>>,
  agent: unknown,
  saver: MemorySaver,
  tools: SubAgentTools,
  callName: string,
) {
  const config = { configurable: { thread_id: title }, recursionLimit: 50 };
  tools.held.add("sync_apps");
  await abortedRun(
    (signal) =>
      driven(agent).invoke(
        { messages: [new HumanMessage("check both the repos and the apps")] },
        { ...config, signal },
      ),
    async () => {
      await tools.started$("sync_apps");
      await until(() => pendingResultOf(saver, title, callName), "the finished delegation's result stored");
    },
  );
  tools.held.delete("sync_apps");
  console.log(`\n== ${title} ==\nturn 1 (aborted while argocd was still syncing; github had finished)`);
  await driven(agent).invoke({ messages: [new HumanMessage("go on")] }, config);
  const sent = brain.requestsOf("supervisor").at(-1)!;
  console.log(`turn 2: the supervisor's model was sent (rejected requests: ${brain.stub.rejections.length}):`);
  for (const [id, text] of sentResults(sent))
    printWrapped(`  ${id}: `, text.length > 400 ? `${text.slice(0, 400)}...` : text);
  await brain.stub.close();
}

// 1. createAgent supervisor, sub-agents as tools.
{
  const brain = await startBrain((agent) => ({ name: `${agent}_agent`, args: { task: `ask ${agent}` } }));
  const tools = new SubAgentTools();
  const saver = new MemorySaver();
  const repair = toolCallRepair();
  const subAgent = (agent: string) =>
    createAgent({
      model: brain.model(),
      tools: [tools.make(SUB_TOOL[agent], `${agent}: 12 items`)],
      systemPrompt: `You are the ${agent} agent. ${agentTag(agent)}`,
      middleware: [toolCallRepairMiddleware()],
    });
  const delegateTo = (agent: string) => {
    const sub = subAgent(agent);
    return tool(
      async ({ task }: { task: string }, config: RunnableConfig) =>
        String((await sub.invoke({ messages: [new HumanMessage(task)] }, config)).messages.at(-1)?.content),
      {
        name: `${agent}_agent`,
        description: `Delegates to the ${agent} agent.`,
        schema: z.object({ task: z.string() }),
      },
    );
  };
  const supervisor = createAgent({
    model: brain.model(),
    tools: [delegateTo("github"), delegateTo("argocd")],
    systemPrompt: `You are the platform engineer supervisor. ${agentTag("supervisor")}`,
    middleware: [repair.middleware],
    checkpointer: repair.checkpointer(saver),
  });
  await twoTurns("createAgent supervisor with sub-agents as tools", brain, supervisor, saver, tools, "github_agent");
}

// 2. deepagents: the package's middleware after deepagents' own patch middleware.
{
  const brain = await startBrain((agent) => ({
    name: "task",
    args: { description: `ask ${agent}`, subagent_type: agent },
  }));
  const tools = new SubAgentTools();
  const saver = new MemorySaver();
  const agent = createDeepAgent({
    model: brain.model(),
    systemPrompt: `You are the platform engineer. ${agentTag("supervisor")}`,
    subagents: Object.entries(SUB_TOOL).map(([name, toolName]) => ({
      name,
      description: `The ${name} agent.`,
      systemPrompt: `You are the ${name} agent. ${agentTag(name)}`,
      tools: [tools.make(toolName, `${name}: 12 items`)],
      model: brain.model(),
    })) as never,
    middleware: [toolCallRepairMiddleware()],
    checkpointer: saver,
  });
  await twoTurns("deepagents createDeepAgent with subagents", brain, agent, saver, tools, "task");
}
