/**
 * Side by side with langchain's `summarizationMiddleware` (langchain 1.5). Its cutoff helpers are not
 * exported, so the middleware's own `beforeModel` hook is called as createAgent would call it, with a fake
 * summarizer. Each case names a history, the provider it is valid for, and what the real adapter's payload
 * says after each summarization.
 *
 * Where langchain's output breaks:
 * - mixed result run (one run of results answering two assistant messages): its cutoff collects the ids of
 *   the results from the cut onwards and, searching back, stops at the first assistant message that carries
 *   any of them, so a result of an earlier assistant message in the same run is kept without its call (A2, R2);
 * - calls stored only as content `tool_use` blocks (tool_calls empty): it reads `tool_calls` only, finds no
 *   caller, and keeps tool results at the front of the history (A2);
 * - the kept part opens with a user message: its summary is a user message too, two user turns in a row (B6).
 * It also summarizes the system message away (not a provider error, but the system prompt is lost).
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { summarizationMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { summarizeHistory } from "../../src/summarize/summarize";
import { validatePayloadFor, type PayloadProvider } from "../support/payloads";

const call = (id: string) => ({ id, name: "search", args: { q: id }, type: "tool_call" as const });
const result = (id: string) => new ToolMessage({ content: `result ${id}`, tool_call_id: id, name: "search" });

/** langchain's summarizationMiddleware, run the way createAgent runs its beforeModel hook. */
async function langchainSummarize(messages: BaseMessage[], keep: number): Promise<BaseMessage[]> {
  const middleware = summarizationMiddleware({
    model: new FakeListChatModel({ responses: ["the summary"] }),
    trigger: { messages: 1 },
    keep: { messages: keep },
  });
  const hook = middleware.beforeModel as unknown as (
    state: { messages: BaseMessage[] },
    runtime: { context: Record<string, unknown> },
  ) => Promise<{ messages: BaseMessage[] } | undefined>;
  const update = await hook({ messages }, { context: {} });
  if (!update) return messages;
  return update.messages.slice(1); // drop RemoveMessage(REMOVE_ALL_MESSAGES)
}

async function oursSummarize(messages: BaseMessage[], keep: number): Promise<BaseMessage[]> {
  const model = new FakeListChatModel({ responses: ["the summary"] });
  return (await summarizeHistory(messages, { model, trigger: { messages: 1 }, keep: { messages: keep } })) ?? messages;
}

const rulesOf = async (provider: PayloadProvider, messages: BaseMessage[]) =>
  (await validatePayloadFor(provider, messages)).map((v) => v.rule);

interface Case {
  name: string;
  history: () => BaseMessage[];
  keep: number;
  provider: PayloadProvider;
  /** Rules langchain's output breaks for `provider` (ours breaks none). */
  langchainBreaks: string[];
}

/** Two assistant messages, then one run of results answering both (in the given order). */
const mixedRun = (order: ["toolu_a", "toolu_b"] | ["toolu_b", "toolu_a"]) => () => [
  new HumanMessage("compare a and b"),
  new AIMessage({ content: "", tool_calls: [call("toolu_a")] }),
  new AIMessage({ content: "", tool_calls: [call("toolu_b")] }),
  ...order.map(result),
  new AIMessage("done"),
  new HumanMessage("thanks"),
];

const contentBlockCalls = () => [
  new HumanMessage("look both up"),
  new AIMessage({
    content: [
      { type: "tool_use", id: "toolu_a", name: "search", input: { q: "a" } },
      { type: "tool_use", id: "toolu_b", name: "search", input: { q: "b" } },
    ],
  }),
  result("toolu_a"),
  result("toolu_b"),
  new AIMessage("done"),
  new HumanMessage("thanks"),
];

const plainTurns = () => [
  new HumanMessage("q1"),
  new AIMessage({ content: "", tool_calls: [call("toolu_a"), call("toolu_b")] }),
  result("toolu_b"),
  result("toolu_a"),
  new AIMessage("a1"),
  new HumanMessage("q2"),
  new AIMessage("a2"),
  new HumanMessage("q3"),
];

const CASES: Case[] = [
  // Results in call order: the cut's ids include toolu_b, so langchain stops at the second assistant message.
  {
    name: "mixed result run in call order, cut on its first result",
    history: mixedRun(["toolu_a", "toolu_b"]),
    keep: 4,
    provider: "anthropic",
    langchainBreaks: ["A2"],
  },
  {
    name: "mixed result run in call order, cut on its second result",
    history: mixedRun(["toolu_a", "toolu_b"]),
    keep: 3,
    provider: "anthropic",
    langchainBreaks: ["A2"],
  },
  {
    name: "mixed result run in reverse order, cut on its first result",
    history: mixedRun(["toolu_b", "toolu_a"]),
    keep: 4,
    provider: "anthropic",
    langchainBreaks: ["A2"],
  },
  {
    name: "mixed result run, Responses API",
    history: mixedRun(["toolu_a", "toolu_b"]),
    keep: 4,
    provider: "openai-responses",
    langchainBreaks: ["R2"],
  },
  {
    name: "calls only in content tool_use blocks, cut inside the run",
    history: contentBlockCalls,
    keep: 3,
    provider: "anthropic",
    langchainBreaks: ["A2"],
  },
  {
    name: "calls only in content tool_use blocks, cut on the run",
    history: contentBlockCalls,
    keep: 4,
    provider: "anthropic",
    langchainBreaks: ["A2", "A2"],
  },
  {
    name: "kept part opens with a user message",
    history: plainTurns,
    keep: 1,
    provider: "bedrock",
    langchainBreaks: ["B6"],
  },
  {
    name: "kept part opens with a user message, after a tool exchange",
    history: plainTurns,
    keep: 3,
    provider: "bedrock",
    langchainBreaks: ["B6"],
  },
];

describe("langchain summarizationMiddleware vs summarizeHistory", () => {
  it.each(CASES)("$name: langchain breaks $langchainBreaks on $provider, ours breaks nothing", async (c) => {
    expect(await rulesOf(c.provider, c.history())).toEqual([]);
    expect(await rulesOf(c.provider, await langchainSummarize(c.history(), c.keep))).toEqual(c.langchainBreaks);
    expect(await rulesOf(c.provider, await oursSummarize(c.history(), c.keep))).toEqual([]);
  });

  it("both are valid when the cut's results all belong to the earliest caller (reverse order, cut on the second)", async () => {
    const history = mixedRun(["toolu_b", "toolu_a"]);
    expect(await rulesOf("anthropic", await langchainSummarize(history(), 3))).toEqual([]);
    expect(await rulesOf("anthropic", await oursSummarize(history(), 3))).toEqual([]);
  });

  it("both are valid when a plain parallel run is cut in the middle (its cutoff handles that)", async () => {
    for (const keep of [4, 5]) {
      expect(await validatePayloadFor("strict", await langchainSummarize(plainTurns(), keep))).toEqual([]);
      expect(await validatePayloadFor("strict", await oursSummarize(plainTurns(), keep))).toEqual([]);
    }
  });

  it("langchain summarizes the system message away; ours keeps it first", async () => {
    const history = () => [new SystemMessage("You are terse."), ...plainTurns()];
    const theirs = await langchainSummarize(history(), 2);
    const ours = await oursSummarize(history(), 2);
    expect(theirs.some((m) => m.getType() === "system")).toBe(false);
    expect(ours[0].getType()).toBe("system");
    expect(ours[0].content).toBe("You are terse.");
  });
});
