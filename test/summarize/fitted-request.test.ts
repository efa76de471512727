/**
 * Issue 34: the summarizer is called only when a summary shrinks what the model is sent. A tool result too large
 * for the trigger is shortened in the request only (with a note), and when that brings the request under the
 * trigger nothing is summarized. Issue 30: `summarizedMessagesReducer` takes a subgraph's summarized list as a
 * replacement in the parent graph.
 */
import { AIMessage, HumanMessage, RemoveMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { messagesStateReducer, REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { composePreModelHooks } from "../../src/integrations/compose-hooks";
import { summarizationHook, summarizedMessagesReducer } from "../../src/integrations/summarization";
import { buildSummaryMessages, summarizeHistory } from "../../src/summarize/summarize";
import { RecordingSummarizer } from "./fakes";

const big = "x".repeat(60_000);
const call = (id: string) => ({ id, name: "list_apps", args: {}, type: "tool_call" as const });
const exchange = (n: number, result = `result ${n}`): BaseMessage[] => [
  new HumanMessage({ content: `question ${n}`, id: `h${n}` }),
  new AIMessage({ content: "", tool_calls: [call(`c${n}`)], id: `a${n}` }),
  new ToolMessage({ content: result, tool_call_id: `c${n}`, name: "list_apps", id: `t${n}` }),
  new AIMessage({ content: `answer ${n} ${"w".repeat(400)}`, id: `r${n}` }),
];
const text = (m: BaseMessage) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));

describe("no summarizer call that cannot help", () => {
  it("shortens an oversized result in the kept tail for the request, calls no summarizer, stores nothing", async () => {
    const summarizer = new RecordingSummarizer();
    const options = { model: summarizer, trigger: { tokens: 4000 }, keep: { messages: 4 } };
    const history = [...exchange(1), ...exchange(2), ...exchange(3, big)];
    expect(await summarizeHistory(history, options)).toBeUndefined();
    expect(summarizer.prompts).toEqual([]);

    const update = await composePreModelHooks(summarizationHook(options), async () => ({}))({ messages: history });
    expect(update.messages).toBeUndefined();
    const sent = update.llmInputMessages!;
    expect(sent.map((m) => m.id)).toEqual(history.map((m) => m.id));
    expect(text(sent[10])).toMatch(/^x+\n\n\[Shortened in this request: the first \d+ of 60000 characters/);
    expect(text(sent[10]).length).toBeLessThan(5_000);
    expect(text(history[10])).toBe(big);
  });

  it("still summarizes when the shortened request reaches the trigger", async () => {
    const summarizer = new RecordingSummarizer();
    const options = { model: summarizer, trigger: { tokens: 4000 }, keep: { messages: 4 } };
    const history = [...Array.from({ length: 40 }, (_, n) => exchange(n)).flat(), ...exchange(40, big)];
    const summarized = await summarizeHistory(history, options);
    expect(summarizer.prompts).toHaveLength(1);
    expect(summarized!.at(-2)!.content).toBe(big);
  });

  it("writes no model input for a trigger that counts only messages", async () => {
    const hook = summarizationHook({ model: new RecordingSummarizer(), trigger: { messages: 100 } });
    expect(await composePreModelHooks(hook)({ messages: exchange(1, big) })).toEqual({});
  });
});

describe("summarizedMessagesReducer", () => {
  const stored = [...exchange(1), ...exchange(2), ...exchange(3)];

  it("takes a subgraph's list that brings a new summary as the replacement of what it was given", () => {
    const tail = stored.slice(8);
    const fromSubgraph = [
      ...buildSummaryMessages("they asked twice", tail),
      ...tail,
      new AIMessage({ content: "new", id: "n" }),
    ];
    expect(fromSubgraph.slice(0, 2).every((m) => m.additional_kwargs.lc_source === "summarization")).toBe(true);
    const written = new AIMessage({ content: "written meanwhile", id: "w" });
    const next = summarizedMessagesReducer([...stored, written], fromSubgraph);
    expect(next.map((m) => m.content)).toEqual([...fromSubgraph.map((m) => m.content), "written meanwhile"]);
    expect(new Set(next.map((m) => m.id)).size).toBe(next.length);
    // messagesStateReducer alone keeps the summarized prefix and appends the summary after the newest question.
    const merged = messagesStateReducer(stored, fromSubgraph);
    expect(merged.slice(0, 8).map((m) => m.id)).toEqual(stored.slice(0, 8).map((m) => m.id));
  });

  it("is messagesStateReducer for any other update", () => {
    const append = [new AIMessage({ content: "more", id: "m" })];
    expect(summarizedMessagesReducer(stored, append)).toEqual(messagesStateReducer(stored, append));
    const replace = [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...buildSummaryMessages("s", []), stored[11]];
    expect(summarizedMessagesReducer(stored, replace).map((m) => m.content)).toEqual(
      messagesStateReducer(stored, replace).map((m) => m.content),
    );
  });
});
