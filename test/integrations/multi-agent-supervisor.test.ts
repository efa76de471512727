/**
 * Issue 30's scenario on `@langchain/langgraph-supervisor` `createSupervisor` and `@langchain/langgraph-swarm`
 * `createSwarm`, set up as docs/multi-agent.md says: the real ChatBedrockConverse against the strict Converse stub,
 * the repair kit on every agent, `summarizationHook` in the supervisor's (each swarm agent's) `preModelHook`, and
 * `summarizedMessagesReducer` in the parent graph's `stateSchema`; on SQLite and PostgreSQL.
 *
 * The supervisor's script: ten turns with an aborted delegation, two parallel handoffs (createSupervisor follows one),
 * a sub-agent tool that times out and two ~60 KB tool results, under a 4,000-token trigger. What must hold: every
 * turn completes but the aborted one, no request is rejected, every user message is kept (stored or handed to the
 * summarizer), the stored parent thread is valid and bounded, no summary is stored after the latest user message,
 * the model sees the summary then the kept tail, the unfollowed handoff is answered with what is known, and the
 * summarizer runs at most 4 times (it ran on 9 of 17 supervisor calls before).
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Annotation, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createSupervisor } from "@langchain/langgraph-supervisor";
import { createHandoffTool, createSwarm } from "@langchain/langgraph-swarm";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { findToolCallProblems } from "../../src/engine";
import { isSummaryMessage } from "../../src/summarize/summarize";
import {
  composePreModelHooks,
  summarizationHook,
  summarizedMessagesReducer,
  toolCallRepairKit,
} from "../../src/langgraph";
import { postgresSaverOrSkip } from "../support/services";
import { bedrockModel, type RunningStub, type ScriptedTurn, startBedrockStub } from "../support/stubs";

type Converse = { system?: { text?: string }[]; messages: { role: string; content: Record<string, unknown>[] }[] };
const BIG = 60_000;
const SUMMARIZER_PROMPT = "You condense a conversation";
const text = (m: BaseMessage | undefined) =>
  m === undefined ? "" : typeof m.content === "string" ? m.content : JSON.stringify(m.content);
const systemOf = (body: Converse) => (body.system ?? []).map((b) => b.text ?? "").join("\n");
/** The text of the newest user question ("Turn n: ...") a request holds. */
const questionOf = (body: Converse) =>
  JSON.stringify(body.messages)
    .match(/Turn \d+: [A-Za-z ]+/g)
    ?.at(-1) ?? "";
const endsOnQuestion = (body: Converse) =>
  body.messages.at(-1)?.content.some((block) => typeof block.text === "string" && block.text.startsWith("Turn "));

/** The documented handoff text: an unanswered handoff was never followed, so no agent ran for it. */
const handoffText = ({ id, name }: { id: string; name?: string }) =>
  name?.startsWith("transfer_to_")
    ? `Handoff "${name}" (call ${id}) was not carried out: only one handoff of a step is followed, ` +
      "so no agent ran for this one. Call it again if that agent is still needed."
    : "";

const stores: {
  name: string;
  open: (context: Parameters<typeof postgresSaverOrSkip>[0]) => Promise<BaseCheckpointSaver>;
}[] = [
  { name: "SqliteSaver", open: async () => SqliteSaver.fromConnString(":memory:") },
  { name: "PostgresSaver", open: async (context) => (await postgresSaverOrSkip(context, "supervisor")).saver },
];

/** What every scenario asserts of the stored parent thread and of what the supervisor was sent. */
function expectBoundedValidThread(stored: BaseMessage[], questions: string[], summarizerInputs: string) {
  expect(findToolCallProblems(stored, { provider: "bedrock", level: "structural", trailingIsProblem: false })).toEqual(
    [],
  );
  const summaries = stored.flatMap((m, i) => (isSummaryMessage(m) ? [i] : []));
  const questionsAt = stored.flatMap((m, i) => (HumanMessage.isInstance(m) && !isSummaryMessage(m) ? [i] : []));
  const lastQuestion = Math.max(...questionsAt);
  expect(summaries.length).toBeGreaterThan(0);
  expect(Math.max(...summaries)).toBeLessThan(lastQuestion);
  for (const question of questions)
    expect(stored.some((m) => text(m).includes(question)) || summarizerInputs.includes(question), question).toBe(true);
}

describe.each(stores)("createSupervisor on $name: the issue-30 script", (store) => {
  it("completes every turn but the aborted one, bounded, truthful, at most 4 summarizer calls", async (context) => {
    let abort: AbortController | undefined;
    const supervisorRequests: Converse[] = [];
    const stub: RunningStub = await startBedrockStub({
      script: (request): ScriptedTurn => {
        const body = request as Converse;
        const system = systemOf(body);
        if (system.includes(SUMMARIZER_PROMPT)) return { text: "The user asked about repositories, apps and syncs." };
        const question = questionOf(body);
        if (system.includes("GitHub agent"))
          return JSON.stringify(body.messages.at(-1)).includes("Successfully transferred")
            ? { toolCalls: [{ name: "list_repos", args: { question } }] }
            : { text: `GitHub: ${"repository list ".repeat(100)}` };
        if (system.includes("Argo agent")) return { text: `Argo: ${"app synced ".repeat(120)}` };
        supervisorRequests.push(body);
        if (!endsOnQuestion(body)) return { text: `Supervisor: ${"done ".repeat(240)}` };
        if (question.includes("parallel"))
          return {
            toolCalls: [
              { name: "transfer_to_github", args: {} },
              { name: "transfer_to_argo", args: {} },
            ],
          };
        if (question.includes("apps")) return { toolCalls: [{ name: "list_apps", args: {} }] };
        return {
          toolCalls: [{ name: question.includes("argo") ? "transfer_to_argo" : "transfer_to_github", args: {} }],
        };
      },
    });
    context.onTestFinished(() => stub.close());
    const saver = await store.open(context);
    const llm = bedrockModel(stub);
    const repair = toolCallRepairKit({ syntheticResultText: handoffText });
    const listRepos = tool(
      async ({ question }, config) => {
        if (question.includes("timeout")) throw new Error("ETIMEDOUT: the GitHub API did not answer within 30 s");
        if (question.includes("abort")) {
          // The client disconnects while the delegation runs: the tool is still waiting when the run stops.
          abort?.abort();
          await new Promise((_, reject) => config.signal?.addEventListener("abort", reject, { once: true }));
        }
        return `repos for ${question}`;
      },
      { name: "list_repos", description: "Lists repositories", schema: z.object({ question: z.string() }) },
    );
    const listApps = tool(async () => `apps: ${"a".repeat(BIG)}`, {
      name: "list_apps",
      description: "Lists the ArgoCD applications",
      schema: z.object({}),
    });
    const agent = (name: string, prompt: string, tools = [listRepos]) =>
      createReactAgent({ name, llm: repair.model(llm), tools, prompt, preModelHook: repair.preModelHook });
    const graph = createSupervisor({
      agents: [agent("github", "You are the GitHub agent."), agent("argo", "You are the Argo agent.", [])],
      llm: repair.model(llm),
      tools: [listApps],
      prompt: "You are the supervisor.",
      stateSchema: Annotation.Root({
        messages: Annotation<BaseMessage[]>({ reducer: summarizedMessagesReducer, default: () => [] }),
      }),
      preModelHook: composePreModelHooks(
        summarizationHook({ model: llm, trigger: { tokens: 4000 }, keep: { messages: 6 } }),
        repair.preModelHook,
      ),
    }).compile({ checkpointer: repair.checkpointer(saver) });

    const questions = [
      "Turn 1: list github repos",
      "Turn 2: list the apps",
      "Turn 3: github abort please",
      "Turn 4: github again",
      "Turn 5: github and argo in parallel",
      "Turn 6: github timeout",
      "Turn 7: list the apps again",
      "Turn 8: argo status",
      "Turn 9: github branches",
      "Turn 10: argo history",
    ];
    const config = { configurable: { thread_id: `supervisor-${store.name}` } };
    const completed: string[] = [];
    const storedApps: number[] = [];
    for (const question of questions) {
      abort = new AbortController();
      try {
        const result = await graph.invoke(
          { messages: [new HumanMessage(question)] },
          { ...config, signal: abort.signal },
        );
        if (text(result.messages.at(-1)).startsWith("Supervisor:")) completed.push(question);
      } catch (error) {
        if (!abort.signal.aborted) throw error;
      }
      const now = (await graph.getState(config)).values.messages as BaseMessage[];
      if (question.includes("apps"))
        storedApps.push(
          ...now.filter((m) => ToolMessage.isInstance(m) && m.name === "list_apps").map((m) => text(m).length),
        );
    }

    expect(stub.rejections).toEqual([]);
    expect(completed).toEqual(questions.filter((q) => !q.includes("abort")));
    const stored = (await graph.getState(config)).values.messages as BaseMessage[];
    const summarizerRequests = stub.requests.filter((r) => systemOf(r as Converse).includes(SUMMARIZER_PROMPT));
    expect(summarizerRequests.length).toBeGreaterThan(0);
    expect(summarizerRequests.length).toBeLessThanOrEqual(4);
    expectBoundedValidThread(stored, questions, JSON.stringify(summarizerRequests));
    // Bounded: after ten turns and two 60 KB results, fewer messages than the last three turns wrote unsummarized.
    expect(stored.length).toBeLessThan(30);
    expect(JSON.stringify(stored).length).toBeLessThan(2 * BIG + 40_000);
    // The stored 60 KB result is whole; the request that carried it past the trigger was sent it shortened, with a note.
    expect(storedApps.length).toBeGreaterThan(0);
    expect(storedApps.every((length) => length > BIG)).toBe(true);
    expect(supervisorRequests.some((r) => JSON.stringify(r).includes("[Shortened in this request"))).toBe(true);
    // After a summary, the supervisor is sent the summary first, then the kept tail.
    const last = supervisorRequests.at(-1)!;
    expect(JSON.stringify(last.messages[0])).toContain("Summary of the conversation so far");
    expect(JSON.stringify(last.messages.slice(1))).toContain("Turn 10");
    // The parallel handoff createSupervisor did not follow is answered with what is known, never "the run stopped".
    const all = JSON.stringify(stub.requests);
    expect(all).not.toContain("the run stopped before its result was recorded");
    expect(all).toContain('Handoff \\"transfer_to_argo\\"');
  });
});

describe.each(stores)("createSwarm on $name", (store) => {
  it("keeps the stored parent thread bounded with the summary before the latest user message", async (context) => {
    const stub = await startBedrockStub({
      script: (request): ScriptedTurn => {
        const body = request as Converse;
        if (systemOf(body).includes(SUMMARIZER_PROMPT)) return { text: "They looked up flights and hotels." };
        if (!endsOnQuestion(body)) return { text: `Done: ${"ok ".repeat(300)}` };
        const question = questionOf(body);
        if (question.includes("hotel") && systemOf(body).includes("flights"))
          return { toolCalls: [{ name: "transfer_to_hotels", args: {} }] };
        return { toolCalls: [{ name: "search", args: {} }] };
      },
    });
    context.onTestFinished(() => stub.close());
    const saver = await store.open(context);
    const llm = bedrockModel(stub);
    const repair = toolCallRepairKit();
    const search = tool(async () => `results: ${"r".repeat(BIG)}`, {
      name: "search",
      description: "Searches",
      schema: z.object({}),
    });
    const agent = (name: string, other: string) =>
      createReactAgent({
        name,
        llm: repair.model(llm),
        tools: [search, createHandoffTool({ agentName: other })],
        prompt: `You book ${name}.`,
        preModelHook: composePreModelHooks(
          summarizationHook({ model: llm, trigger: { tokens: 4000 }, keep: { messages: 4 } }),
          repair.preModelHook,
        ),
      });
    const graph = createSwarm({
      agents: [agent("flights", "hotels"), agent("hotels", "flights")],
      defaultActiveAgent: "flights",
      stateSchema: Annotation.Root({
        messages: Annotation<BaseMessage[]>({ reducer: summarizedMessagesReducer, default: () => [] }),
        activeAgent: Annotation<string>(),
      }),
    }).compile({ checkpointer: repair.checkpointer(saver) });
    const questions = ["Turn 1: flights", "Turn 2: a hotel", "Turn 3: hotel rooms", "Turn 4: more", "Turn 5: again"];
    const config = { configurable: { thread_id: `swarm-${store.name}` } };
    for (const question of questions) {
      const result = await graph.invoke({ messages: [new HumanMessage(question)] }, config);
      expect(AIMessage.isInstance(result.messages.at(-1)) && text(result.messages.at(-1)).startsWith("Done:")).toBe(
        true,
      );
    }
    expect(stub.rejections).toEqual([]);
    const stored = (await graph.getState(config)).values.messages as BaseMessage[];
    const summarizerRequests = stub.requests.filter((r) => systemOf(r as Converse).includes(SUMMARIZER_PROMPT));
    expect(summarizerRequests.length).toBeLessThanOrEqual(questions.length);
    expectBoundedValidThread(stored, questions, JSON.stringify(summarizerRequests));
    expect(stored.length).toBeLessThan(15);
  });
});
