import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  trimMessages,
  type BaseMessage,
} from "@langchain/core/messages";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toolCallIdsOf } from "../../src/messages/inspect";
import { approximateTokenCounter } from "../../src/summarize/boundary";
import { safeWindow, trimMessagesSafely } from "../../src/summarize/trim";
import { validatePayloadFor } from "../support/payloads";
import { historyArb } from "./histories";
import { problemsEverywhere, splitExchangeProblems } from "./validity";

const call = (id: string) => ({ id, name: "search", args: { q: id }, type: "tool_call" as const });
const ai = (...ids: string[]) => new AIMessage({ content: "", tool_calls: ids.map(call) });
const result = (id: string) => new ToolMessage({ content: `result ${id}`, tool_call_id: id, name: "search" });
/** Ten tokens a message: budgets below read as message counts. */
const tenEach = (messages: BaseMessage[]) => messages.length * 10;
const types = (messages: BaseMessage[]) => messages.map((m) => m.getType());

const exchange = () => [
  new HumanMessage("q1"),
  ai("a", "b"),
  result("a"),
  result("b"),
  new AIMessage("done"),
  new HumanMessage("q2"),
];

describe("trimMessagesSafely", () => {
  it("takes a model as tokenCounter, as core's trimMessages does (getNumTokens per message, summed)", async () => {
    const model = { getNumTokens: async (_content: unknown) => 10 };
    const safe = await trimMessagesSafely(exchange(), {
      maxTokens: 30,
      tokenCounter: model as never,
      strategy: "last",
    });
    expect(types(safe)).toEqual(["ai", "human"]);
  });

  it("drops the tool result core's trimMessages keeps after trimming its call away", async () => {
    const messages = exchange();
    const options = { maxTokens: 30, tokenCounter: tenEach, strategy: "last" as const };
    const core = await trimMessages(messages, options);
    expect(types(core)).toEqual(["tool", "ai", "human"]);
    expect(splitExchangeProblems(core).map((p) => p.kind)).toEqual(["orphan_result", "engine:orphan_result"]);

    const safe = await trimMessagesSafely(messages, options);
    expect(types(safe)).toEqual(["ai", "human"]);
    expect(splitExchangeProblems(safe)).toEqual([]);
  });

  it("drops a parallel result run cut in the middle, never exceeding the budget", async () => {
    const options = { maxTokens: 40, tokenCounter: tenEach, strategy: "last" as const };
    expect(types(await trimMessages(exchange(), options))).toEqual(["tool", "tool", "ai", "human"]);
    expect(types(await trimMessagesSafely(exchange(), options))).toEqual(["ai", "human"]);
  });

  it("with strategy first, does not end on calls whose results were trimmed", async () => {
    const options = { maxTokens: 30, tokenCounter: tenEach, strategy: "first" as const };
    const core = await trimMessages(exchange(), options);
    expect(splitExchangeProblems(core).map((p) => [p.kind, p.id])).toEqual([
      ["unanswered_call", "b"],
      ["engine:trailing_open_exchange", "b"],
    ]);
    expect(types(await trimMessagesSafely(exchange(), options))).toEqual(["human"]);
  });

  it("with endOn, does not end on an assistant message whose results endOn removed", async () => {
    const messages = [
      new HumanMessage("q1"),
      new AIMessage("a1"),
      new HumanMessage("q2"),
      ai("c"),
      result("c"),
      new HumanMessage("q3"),
    ];
    const options = { maxTokens: 1000, tokenCounter: tenEach, strategy: "last" as const, endOn: "ai" as const };
    expect(types(await trimMessages(messages, options)).at(-1)).toBe("ai");
    expect(splitExchangeProblems(await trimMessages(messages, options)).map((p) => p.kind)).toEqual([
      "unanswered_call",
      "engine:trailing_open_exchange",
    ]);
    expect(types(await trimMessagesSafely(messages, options))).toEqual(["human", "ai"]);
  });

  it("keeps the system message with includeSystem and honours startOn after its own moves", async () => {
    const messages = [new SystemMessage("sys"), ...exchange()];
    const options = {
      maxTokens: 50,
      tokenCounter: tenEach,
      strategy: "last" as const,
      includeSystem: true,
      startOn: "human" as const,
    };
    const safe = await trimMessagesSafely(messages, options);
    expect(types(safe)).toEqual(["system", "human"]);
    const wide = await trimMessagesSafely(messages, { ...options, maxTokens: 70 });
    expect(types(wide)).toEqual(["system", "human", "ai", "tool", "tool", "ai", "human"]);
  });

  it("drops a leading tool result the input already had", async () => {
    const messages = [result("lost"), new HumanMessage("q"), new AIMessage("a")];
    const safe = await trimMessagesSafely(messages, { maxTokens: 1000, tokenCounter: tenEach, strategy: "last" });
    expect(types(safe)).toEqual(["human", "ai"]);
  });
});

describe("safeWindow", () => {
  it("moves the start past a result whose call is outside, and the end before open calls", () => {
    const messages = exchange();
    expect(safeWindow(messages, { start: 3, end: 6 })).toEqual({ start: 4, end: 6 });
    expect(safeWindow(messages, { start: 0, end: 3 })).toEqual({ start: 0, end: 1 });
  });

  it("follows a chain where each move uncovers the next split exchange, in one pass", () => {
    // ai(c0) ai(c1) r(c0) ai(c2) r(c1) ai(c3) r(c2) ...: each result answers the call two messages back, so
    // every move of the start uncovers the next orphan (the old step-by-step loop rescanned the window each time).
    const messages: BaseMessage[] = [ai("c0")];
    for (let k = 1; k < 200; k++) messages.push(ai(`c${k}`), result(`c${k - 1}`));
    expect(safeWindow(messages, { start: 1, end: messages.length })).toEqual({
      start: messages.length,
      end: messages.length,
    });
    // Whole: nothing is orphaned (the last call is simply unanswered, a problem the input already had).
    expect(safeWindow(messages, { start: 0, end: messages.length })).toEqual({ start: 0, end: messages.length });
    // Cut before the last result: the end moves back before ai(c198), whose result is outside, which leaves
    // r(c197) outside, and so on down the chain: nothing can be kept.
    expect(safeWindow(messages, { start: 0, end: messages.length - 1 })).toEqual({ start: 0, end: 0 });
  });

  it("is the fixed point of the step-by-step moves it replaces (end first, then start)", () => {
    const windowCase = historyArb(6).chain((messages) =>
      fc.tuple(
        fc.constant(messages),
        fc.nat(messages.length),
        fc.nat(messages.length),
        fc.constantFrom(undefined, "human" as const, "ai" as const),
      ),
    );
    fc.assert(
      fc.property(windowCase, ([messages, a, b, on]) => {
        const window = { start: Math.min(a, b), end: Math.max(a, b) };
        const options = { startOn: on, endOn: on === "ai" ? ("ai" as const) : undefined };
        expect(safeWindow(messages, window, options)).toEqual(stepwiseWindow(messages, window, options));
      }),
      { numRuns: 400 },
    );
  });
});

/** The window by single moves, each one necessary, until nothing moves: first the end, then the start. */
function stepwiseWindow(
  messages: BaseMessage[],
  window: { start: number; end: number },
  on: { startOn?: string; endOn?: string },
) {
  const callerOf = (i: number) => {
    const m = messages[i];
    if (!ToolMessage.isInstance(m)) return undefined;
    for (let j = i - 1; j >= 0; j--) if (toolCallIdsOf(messages[j]).includes(m.tool_call_id)) return j;
    return undefined;
  };
  let { start, end } = window;
  const endIsOpen = () => {
    for (let i = start; i < end; i++) for (let r = end; r < messages.length; r++) if (callerOf(r) === i) return true;
    return false;
  };
  while (end > start && ((on.endOn && messages[end - 1].getType() !== on.endOn) || endIsOpen())) end--;
  const startIsOrphaned = () => {
    if (ToolMessage.isInstance(messages[start])) return true;
    if (on.startOn && messages[start].getType() !== on.startOn) return true;
    for (let i = start; i < end; i++) {
      const caller = callerOf(i);
      if (caller !== undefined && caller < start) return true;
    }
    return false;
  };
  while (start < end && startIsOrphaned()) start++;
  return { start, end };
}

const trimCase = historyArb(6).chain((messages) =>
  fc.tuple(
    fc.constant(messages),
    fc.integer({ min: 0, max: 1200 }),
    fc.constantFrom("first" as const, "last" as const),
    fc.boolean(),
  ),
);

describe("trimMessagesSafely properties", () => {
  it("never splits an exchange and keeps a sub-window of what trimMessages kept", async () => {
    await fc.assert(
      fc.asyncProperty(trimCase, async ([messages, maxTokens, strategy, allowPartial]) => {
        // core's "first" + allowPartial rewrites the caller's message content in place: keep it to "last".
        const options = {
          maxTokens,
          tokenCounter: approximateTokenCounter,
          strategy,
          allowPartial: strategy === "last" && allowPartial,
        };
        const core = await trimMessages(messages, options);
        const safe = await trimMessagesSafely(messages, options);
        expect(splitExchangeProblems(safe)).toEqual([]);
        // trimMessages copies messages ("last"), so compare by what a message says, not by identity.
        const keyOf = (m: BaseMessage) =>
          JSON.stringify([m.getType(), m.content, (m as ToolMessage).tool_call_id, toolCallIdsOf(m)]);
        const coreKeys = core.map(keyOf);
        const positions = safe.map((m) => coreKeys.indexOf(keyOf(m)));
        expect(positions.every((p, i) => p >= 0 && (i === 0 || p === positions[i - 1] + 1))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("keeps exactly what trimMessages keeps when that is already valid (the binary search finds core's window)", async () => {
    await fc.assert(
      fc.asyncProperty(trimCase, async ([messages, maxTokens, strategy, allowPartial]) => {
        const options = {
          maxTokens,
          tokenCounter: approximateTokenCounter,
          strategy,
          allowPartial: strategy === "last" && allowPartial,
        };
        const core = await trimMessages(messages, options);
        fc.pre(splitExchangeProblems(core).length === 0 && !ToolMessage.isInstance(core[0]));
        const keyOf = (m: BaseMessage) =>
          JSON.stringify([m.getType(), m.content, (m as ToolMessage).tool_call_id, toolCallIdsOf(m)]);
        expect((await trimMessagesSafely(messages, options)).map(keyOf)).toEqual(core.map(keyOf));
      }),
      { numRuns: 200 },
    );
  });

  it("with startOn human and includeSystem, the result is valid for every provider", async () => {
    await fc.assert(
      fc.asyncProperty(historyArb(5), fc.integer({ min: 0, max: 1200 }), async (messages, maxTokens) => {
        const safe = await trimMessagesSafely(messages, {
          maxTokens,
          tokenCounter: approximateTokenCounter,
          strategy: "last",
          includeSystem: true,
          startOn: "human",
        });
        expect(problemsEverywhere(safe)).toEqual([]);
        if (safe.some((m) => m.getType() !== "system")) expect(await validatePayloadFor("strict", safe)).toEqual([]);
      }),
      { numRuns: 80 },
    );
  });
});
