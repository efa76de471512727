/**
 * composePreModelHooks: summarization and repair in createReactAgent's one preModelHook. The summary is applied
 * first (a persisted rewrite of `messages`), the repair hook is handed the summarized list (it writes
 * `llmInputMessages`), and the hook returns one update the messages reducer applies as a full replacement.
 */
import { AIMessage, type BaseMessage, HumanMessage, RemoveMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { MemorySaver, REMOVE_ALL_MESSAGES, messagesStateReducer } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { findToolCallProblems } from "../../src/engine";
import { ToolCallRepairInputError } from "../../src/errors";
import { composePreModelHooks } from "../../src/integrations/compose-hooks";
import { toolCallRepairHook } from "../../src/integrations/hook";
import { summarizationHook } from "../../src/integrations/summarization";
import { DEFAULT_SUMMARY_PREFIX, isSummaryMessage } from "../../src/summarize/summarize";
import { bedrockModel, startBedrockStub, type ScriptedTurn } from "../support/stubs";
import { bedrockShape, shapeOf, stubTracker } from "./fixtures";

const track = stubTracker();
const thread = (id: string) => ({ configurable: { thread_id: id } });
type Dict = Record<string, unknown>;

const lookup = tool(async ({ page }: { page: number }) => `page ${page} content`, {
  name: "lookup",
  description: "Look a page up",
  schema: z.object({ page: z.number() }),
});

/** The agent model's script: after tool results, an answer; otherwise two parallel lookups. */
function parallelLookups(request: unknown): ScriptedTurn {
  const messages = (request as { messages: { content: Dict[] }[] }).messages;
  const last = messages.at(-1)?.content ?? [];
  if (last.some((block) => block.toolResult)) return { text: "Here is what I found." };
  return {
    toolCalls: [
      { name: "lookup", args: { page: 1 } },
      { name: "lookup", args: { page: 2 } },
    ],
  };
}

/** The text of the first user turn of a Converse request. */
const firstUserText = (request: unknown) => {
  const first = (request as { messages: { role: string; content: Dict[] }[] }).messages[0];
  return String(first?.content.find((b) => typeof b.text === "string")?.text ?? "");
};

const call = (id: string) => ({ id, name: "lookup", args: { page: 1 }, type: "tool_call" as const });

describe("composePreModelHooks with createReactAgent, ChatBedrockConverse and MemorySaver", () => {
  it("summarizes mid-exchange (after a parallel result run) and every request is valid", async () => {
    const stub = await track(startBedrockStub({ script: parallelLookups }));
    const summarizerStub = await track(startBedrockStub({ script: (_r, i) => ({ text: `summary #${i + 1}` }) }));
    const llm = bedrockModel(stub);
    const agent = createReactAgent({
      llm,
      tools: [lookup],
      prompt: "You are helpful.",
      preModelHook: composePreModelHooks(
        summarizationHook({ model: bedrockModel(summarizerStub), trigger: { messages: 8 }, keep: { messages: 2 } }),
        toolCallRepairHook({ model: llm }),
      ),
      checkpointer: new MemorySaver(),
    });
    for (let i = 1; i <= 4; i++) await agent.invoke({ messages: [new HumanMessage(`question ${i}`)] }, thread("t"));

    expect(stub.rejections).toEqual([]);
    expect(summarizerStub.rejections).toEqual([]);
    expect(summarizerStub.calls).toBe(3);
    // The first summary fired right after the second turn's result run: the kept tail is that exchange,
    // whose results keep: { messages: 2 } would have split from their call.
    const summarized = stub.requests.find((r) => firstUserText(r).startsWith(DEFAULT_SUMMARY_PREFIX));
    expect(bedrockShape(summarized)).toEqual([
      "user(text)",
      expect.stringMatching(/^assistant\(toolUse:tooluse_\w+,toolUse:tooluse_\w+\)$/),
      expect.stringMatching(/^user\(toolResult:tooluse_\w+,toolResult:tooluse_\w+\)$/),
    ]);
    expect(firstUserText(summarized)).toContain("summary #1");

    const stored = (await agent.getState(thread("t"))).values.messages as BaseMessage[];
    expect(findToolCallProblems(stored, { level: "structural" })).toEqual([]);
    expect(isSummaryMessage(stored[0])).toBe(true);
    expect(stored.length).toBeLessThanOrEqual(9);
    // The model saw each new question before it was summarized away (keep: { messages: 2 } keeps only the exchange).
    for (let i = 1; i <= 4; i++)
      expect(stub.requests.some((r) => JSON.stringify(r).includes(`"question ${i}"`))).toBe(true);
  });

  it(
    "repairs the summarized list: an abandoned call in the kept tail is answered in the request, and " +
      "persisted with persist: true",
    async () => {
      const stub = await track(startBedrockStub({ script: [{ text: "fine" }] }));
      const summarizerStub = await track(startBedrockStub({ script: [{ text: "they talked about pages" }] }));
      const llm = bedrockModel(stub);
      const agent = createReactAgent({
        llm,
        tools: [lookup],
        preModelHook: composePreModelHooks(
          summarizationHook({ model: bedrockModel(summarizerStub), trigger: { messages: 4 }, keep: { messages: 2 } }),
          toolCallRepairHook({ model: llm, persist: true }),
        ),
        checkpointer: new MemorySaver(),
      });
      const history = [
        new HumanMessage({ content: "hello", id: "h0" }),
        new AIMessage({ content: "hi", id: "a0" }),
        new HumanMessage({ content: "look page 1 up", id: "h1" }),
        new AIMessage({ content: "", id: "a1", tool_calls: [call("tooluse_abandoned1")] }),
        new HumanMessage({ content: "never mind, what is 2 + 2?", id: "h2" }),
      ];
      await agent.invoke({ messages: history }, thread("t"));

      expect(stub.rejections).toEqual([]);
      expect(bedrockShape(stub.requests[0])).toEqual([
        "user(text)", // the summary
        "assistant(toolUse:tooluse_abandoned1)",
        "user(toolResult:tooluse_abandoned1)", // the repair hook's placeholder, on the summarized list
        "assistant(text)", // Bedrock shaping, request only
        "user(text)",
      ]);
      const stored = (await agent.getState(thread("t"))).values.messages as BaseMessage[];
      // One update: the summary and the structural repair both reached state.
      expect(shapeOf(stored)).toEqual(["human", "ai[tooluse_abandoned1]", "tool(tooluse_abandoned1)*", "human", "ai"]);
      expect(isSummaryMessage(stored[0])).toBe(true);
      expect(findToolCallProblems(stored, { level: "structural" })).toEqual([]);
    },
  );
});

describe("composePreModelHooks: one update", () => {
  const summarizer = () => new FakeListChatModel({ responses: ["the summary"] });
  const state = () => ({
    messages: [
      new HumanMessage({ content: "q1", id: "h1" }),
      new AIMessage({ content: "", id: "a1", tool_calls: [call("c1"), call("c2")] }),
      new ToolMessage({ content: "r1", tool_call_id: "c1", id: "t1" }),
      new ToolMessage({ content: "r2", tool_call_id: "c2", id: "t2" }),
      new AIMessage({ content: "a", id: "a2" }),
      new HumanMessage({ content: "q2", id: "h2" }),
    ],
  });

  it("hands the repair hook the summarized list and returns REMOVE_ALL first, then the final list", async () => {
    const seen: BaseMessage[][] = [];
    const spy = (s: { messages?: BaseMessage[] }) => {
      seen.push(s.messages ?? []);
      return {};
    };
    const hook = composePreModelHooks(
      summarizationHook({ model: summarizer(), trigger: { messages: 3 }, keep: { messages: 1 } }),
      spy,
      toolCallRepairHook(),
    );
    const update = await hook(state());
    expect(seen[0].map((m) => m.getType())).toEqual(["human", "ai", "human"]);
    expect(RemoveMessage.isInstance(update.messages![0]) && update.messages![0].id === REMOVE_ALL_MESSAGES).toBe(true);
    const stored = messagesStateReducer(state().messages, update.messages!);
    expect(stored.map((m) => m.getType())).toEqual(["human", "ai", "human"]);
    // The repair hook found the summarized list clean and wrote it as the model input.
    expect(update.llmInputMessages!.map((m) => m.id)).toEqual(stored.map((m) => m.id));
  });

  it("applies appended messages the way the reducer does, and writes nothing when no hook does", async () => {
    const reminder = () => ({ messages: [new HumanMessage({ content: "reminder", id: "r" })] });
    const hook = composePreModelHooks(reminder, toolCallRepairHook());
    const update = await hook(state());
    const stored = messagesStateReducer(state().messages, update.messages!);
    expect(stored.map((m) => m.id)).toEqual(["h1", "a1", "t1", "t2", "a2", "h2", "r"]);
    // The repair hook saw the reminder: for the model, two user turns in a row become one.
    expect(update.llmInputMessages!.at(-1)!.content).toBe("q2\n\nreminder");
    expect(
      await composePreModelHooks(
        () => ({}),
        () => undefined,
      )(state()),
    ).toEqual({});
  });

  it("replaces a model input written before a later rewrite of the messages (it would be stale)", async () => {
    const writesInput = (s: { messages?: BaseMessage[] }) => ({ llmInputMessages: s.messages });
    const hook = composePreModelHooks(
      writesInput,
      summarizationHook({ model: summarizer(), trigger: { messages: 3 }, keep: { messages: 1 } }),
    );
    const update = await hook(state());
    expect(update.llmInputMessages!.map((m) => m.getType())).toEqual(["human", "ai", "human"]);
  });

  it("refuses toolCallRepairHook before summarizationHook", () => {
    const summarize = summarizationHook({ model: summarizer(), trigger: { messages: 3 }, keep: { messages: 1 } });
    expect(() => composePreModelHooks(toolCallRepairHook(), summarize)).toThrow(ToolCallRepairInputError);
    expect(() => composePreModelHooks(toolCallRepairHook(), summarize)).toThrow(
      /put the summarization hook first and toolCallRepairHook last/,
    );
  });
});
