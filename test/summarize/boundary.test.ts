import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  approximateTokenCounter,
  findSafeSummarizationBoundary,
  leadingSystemCount,
  pairToolCalls,
  type BoundaryOptions,
} from "../../src/summarize/boundary";
import { buildSummaryMessages } from "../../src/summarize/summarize";
import { validatePayloadFor } from "../support/payloads";
import { historyArb } from "./histories";
import { problemsEverywhere } from "./validity";

const call = (id: string, name = "search") => ({ id, name, args: { q: id }, type: "tool_call" as const });
const ai = (...ids: string[]) => new AIMessage({ content: "", tool_calls: ids.map((id) => call(id)) });
const result = (id: string) => new ToolMessage({ content: `result ${id}`, tool_call_id: id, name: "search" });
const human = (text: string) => new HumanMessage(text);
const answer = (text: string) => new AIMessage(text);

/** What the history looks like after summarization at the boundary (the summary text does not matter). */
function summarizedAt(messages: BaseMessage[], cut: number): BaseMessage[] {
  const at = Math.max(leadingSystemCount(messages), cut);
  return [
    ...messages.slice(0, leadingSystemCount(messages)),
    ...buildSummaryMessages("summary", messages.slice(at)),
    ...messages.slice(at),
  ];
}

describe("findSafeSummarizationBoundary", () => {
  it("keeps the last keepLast messages when the cut splits nothing", () => {
    const messages = [human("q1"), answer("a1"), human("q2"), answer("a2"), human("q3")];
    expect(findSafeSummarizationBoundary(messages, { keepLast: 2 })).toBe(3);
  });

  it("moves back to the assistant message when the cut lands inside a parallel result run", () => {
    const messages = [
      human("q1"),
      ai("a", "b", "c"),
      result("c"),
      result("a"),
      result("b"),
      answer("done"),
      human("q2"),
    ];
    // keepLast 4 would keep result(a), result(b), answer, q2: the cut lands on the second result.
    expect(findSafeSummarizationBoundary(messages, { keepLast: 4 })).toBe(1);
  });

  it("includes every caller of a mixed result run (one run answering two assistant messages)", () => {
    const messages = [human("q1"), ai("a"), ai("b"), result("b"), result("a"), answer("done"), human("q2")];
    // Cut on result(a): its caller is ai("a") at 1, before ai("b") which answers the first result of the run.
    expect(findSafeSummarizationBoundary(messages, { keepLast: 3 })).toBe(1);
    expect(findSafeSummarizationBoundary(messages, { keepLast: 4 })).toBe(1);
  });

  it("reaches a call far before its result", () => {
    const filler = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? human(`h${i}`) : answer(`a${i}`)));
    const messages = [human("q1"), ai("far"), ...filler, result("far"), human("q2")];
    expect(findSafeSummarizationBoundary(messages, { keepLast: 2 })).toBe(1);
  });

  it("follows chains: a newly kept message can point further back", () => {
    // result(b) pulls in ai("b") at 3, which keeps result(a) at 4, whose call is ai("a") at 1.
    const messages = [human("q"), ai("a"), answer("x"), ai("b"), result("a"), result("b"), human("q2")];
    expect(findSafeSummarizationBoundary(messages, { keepLast: 2 })).toBe(1);
  });

  it.each([
    [
      "Anthropic tool_use blocks with empty tool_calls",
      new AIMessage({ content: [{ type: "tool_use", id: "toolu_1", name: "search", input: {} }] }),
    ],
    [
      "raw OpenAI additional_kwargs.tool_calls",
      new AIMessage({
        content: "",
        additional_kwargs: {
          tool_calls: [{ id: "toolu_1", type: "function", function: { name: "search", arguments: "{}" } }],
        },
      }),
    ],
    [
      "Responses API output items",
      new AIMessage({
        content: "",
        response_metadata: { output: [{ type: "function_call", call_id: "toolu_1", name: "search", arguments: "{}" }] },
      }),
    ],
  ])("reads call ids stored as %s", (_label, caller) => {
    const messages = [human("q1"), caller, result("toolu_1"), answer("done"), human("q2")];
    expect(findSafeSummarizationBoundary(messages, { keepLast: 3 })).toBe(1);
  });

  it("never summarizes the leading system message", () => {
    const messages = [new SystemMessage("sys"), human("q1"), answer("a1"), human("q2")];
    expect(leadingSystemCount(messages)).toBe(1);
    expect(findSafeSummarizationBoundary(messages, { keepLast: 10 })).toBe(1);
    expect(findSafeSummarizationBoundary(messages, { keepLast: 0 })).toBe(4);
  });

  it("keeps a trailing open exchange (tools that may still run) even with keepLast 0", () => {
    const messages = [human("q1"), answer("a1"), human("q2"), ai("pending")];
    expect(findSafeSummarizationBoundary(messages, { keepLast: 0 })).toBe(3);
  });

  it("summarizes a result whose call is nowhere instead of keeping it first", () => {
    const messages = [human("q1"), answer("a1"), result("lost"), result("lost2"), human("q2")];
    expect(findSafeSummarizationBoundary(messages, { keepLast: 3 })).toBe(4);
  });

  it("rejects a budget that is not one", () => {
    expect(() => findSafeSummarizationBoundary([], { keepLast: -1 })).toThrow(TypeError);
    expect(() => findSafeSummarizationBoundary([], { keepLast: Number.NaN })).toThrow(TypeError);
    expect(() => findSafeSummarizationBoundary([], { maxTokens: 10 } as never)).toThrow(TypeError);
  });

  it("with a token budget keeps the longest tail that fits, system included", () => {
    const counter = (messages: BaseMessage[]) => messages.length * 10;
    const messages = [new SystemMessage("sys"), human("q1"), answer("a1"), human("q2"), answer("a2"), human("q3")];
    // 30 tokens: the system message and the last two messages.
    expect(findSafeSummarizationBoundary(messages, { maxTokens: 30, tokenCounter: counter })).toBe(4);
    expect(findSafeSummarizationBoundary(messages, { maxTokens: 5, tokenCounter: counter })).toBe(6);
    expect(findSafeSummarizationBoundary(messages, { maxTokens: 1000, tokenCounter: counter })).toBe(1);
  });

  it("lets the pairing win over the token budget", () => {
    const counter = (messages: BaseMessage[]) => messages.length * 10;
    const messages = [human("q1"), ai("a", "b"), result("a"), result("b"), human("q2")];
    expect(findSafeSummarizationBoundary(messages, { maxTokens: 20, tokenCounter: counter })).toBe(1);
  });
});

describe("pairToolCalls", () => {
  it("pairs each result with the latest earlier caller of its id", () => {
    const messages = [human("q"), ai("a", "b"), result("b"), result("a"), ai("c"), result("zzz")];
    const pairing = pairToolCalls(messages);
    expect(pairing.callIndexOf).toEqual([undefined, undefined, 1, 1, undefined, undefined]);
    expect(pairing.lastResultIndexOf[1]).toBe(3);
    expect(pairing.lastResultIndexOf[4]).toBe(-1);
  });
});

const budgetArb = (length: number): fc.Arbitrary<BoundaryOptions> =>
  fc.oneof(
    fc.integer({ min: 0, max: length + 2 }).map((keepLast) => ({ keepLast })),
    fc.integer({ min: 0, max: 1500 }).map((maxTokens) => ({ maxTokens, tokenCounter: approximateTokenCounter })),
  );

const historyWithBudget = (maxTurns: number) =>
  historyArb(maxTurns).chain((messages) => fc.tuple(fc.constant(messages), budgetArb(messages.length)));

describe("findSafeSummarizationBoundary properties", () => {
  it("system + summary + kept tail is valid for the strictest rules, for any history and budget", () => {
    fc.assert(
      fc.property(historyWithBudget(8), ([messages, budget]) => {
        expect(problemsEverywhere(messages)).toEqual([]);
        const cut = findSafeSummarizationBoundary(messages, budget);
        expect(cut).toBeGreaterThanOrEqual(leadingSystemCount(messages));
        expect(cut).toBeLessThanOrEqual(messages.length);
        expect(problemsEverywhere(summarizedAt(messages, cut))).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });

  it("only ever moves the cut back from the budget (keeps at least keepLast messages)", () => {
    fc.assert(
      fc.property(historyArb(8), fc.nat(40), (messages, keepLast) => {
        const cut = findSafeSummarizationBoundary(messages, { keepLast });
        expect(cut).toBeLessThanOrEqual(Math.max(leadingSystemCount(messages), messages.length - keepLast));
      }),
      { numRuns: 200 },
    );
  });

  it("no kept tool result answers a summarized call", () => {
    fc.assert(
      fc.property(historyWithBudget(8), ([messages, budget]) => {
        const cut = findSafeSummarizationBoundary(messages, budget);
        const { callIndexOf } = pairToolCalls(messages);
        callIndexOf.forEach((caller, i) => {
          if (caller !== undefined && i >= cut) expect(caller).toBeGreaterThanOrEqual(cut);
        });
      }),
      { numRuns: 300 },
    );
  });

  it("the payload the real adapters would send passes the payload validators", async () => {
    await fc.assert(
      fc.asyncProperty(historyWithBudget(5), async ([messages, budget]) => {
        const cut = findSafeSummarizationBoundary(messages, budget);
        expect(await validatePayloadFor("strict", summarizedAt(messages, cut))).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });
});

describe("findSafeSummarizationBoundary with a partly answered trailing exchange", () => {
  it("keeps the assistant message and its results when some of its calls are still open", () => {
    const h = [human("q"), ai("a", "b"), result("a")];
    expect(findSafeSummarizationBoundary(h, { keepLast: 0 })).toBe(1);
    expect(findSafeSummarizationBoundary(h, { keepLast: 1 })).toBe(1);
  });
});
