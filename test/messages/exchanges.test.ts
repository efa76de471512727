/**
 * The two definitions of "the exchange a history ends on" (src/messages/exchanges.ts), against each other:
 * where the provider's view finds an open exchange with an unanswered client call, ToolNode's view finds the
 * same exchange and the same client calls; the cases where they differ are the ones documented there.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ToolCallRepairInputError } from "../../src/errors";
import { resumableExchange, trailingOpenExchange, unansweredCallIds } from "../../src/messages/exchanges";
import { isAssistant, isToolResult, resultIdOf, toolCallIdsOf } from "../../src/messages/inspect";
import { ai, aiWithCalls, human, toolResult } from "../support/builders";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);
const IDS = ["a", "b", "c", "d"] as const;

/** An assistant message whose content also holds an Anthropic server tool call (answered inline or not). */
function aiWithServerTool(clientIds: string[], answeredInline: boolean): AIMessage {
  const content: Record<string, unknown>[] = [
    { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
  ];
  if (answeredInline) content.push({ type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] });
  return new AIMessage({
    content: content as never,
    tool_calls: clientIds.map((id) => ({ id, name: "lookup", args: {}, type: "tool_call" as const })),
  });
}

const messageArb: fc.Arbitrary<() => BaseMessage> = fc.oneof(
  fc.constant(() => human()),
  fc.constant(() => ai()),
  fc.uniqueArray(fc.constantFrom(...IDS), { minLength: 1, maxLength: 3 }).map((ids) => () => aiWithCalls(...ids)),
  fc.tuple(fc.uniqueArray(fc.constantFrom(...IDS), { maxLength: 2 }), fc.boolean()).map(
    ([ids, inline]) =>
      () =>
        aiWithServerTool(ids, inline),
  ),
  fc.constantFrom(...IDS).map((id) => () => toolResult(id)),
);
const historyArb = fc.array(messageArb, { maxLength: 12 }).map((makers) => makers.map((make) => make()));

describe("trailingOpenExchange (the provider's view) and resumableExchange (ToolNode's view)", () => {
  it("where the provider sees an open exchange with an unanswered client call, ToolNode sees the same exchange and calls", () => {
    fc.assert(
      fc.property(historyArb, (messages) => {
        const provider = trailingOpenExchange(messages);
        const clientCalls = provider?.unanswered.filter((id) => id !== "srvtoolu_1") ?? [];
        if (clientCalls.length === 0) return;
        expect(resumableExchange(messages)).toEqual({ index: provider!.index, unanswered: clientCalls });
      }),
      { numRuns: RUNS },
    );
  });

  it("they differ where documented: a message after the calls, or only a server tool left open", () => {
    // Something other than the exchange's results follows it: an orphan call to the provider, resumable to ToolNode.
    const interrupted = [human(), aiWithCalls("a"), human()];
    expect(trailingOpenExchange(interrupted)).toBeUndefined();
    expect(resumableExchange(interrupted)).toEqual({ index: 1, unanswered: ["a"] });
    // An unanswered server tool keeps the exchange open for the provider; no ToolNode runs it.
    const serverOnly = [human(), aiWithServerTool([], false)];
    expect(trailingOpenExchange(serverOnly)).toEqual({ index: 1, unanswered: ["srvtoolu_1"] });
    expect(resumableExchange(serverOnly)).toBeUndefined();
  });
});

describe("unansweredCallIds (every call, anywhere in the history, that no result answers)", () => {
  it("lists calls without any result, in order, from every assistant message", () => {
    expect([...unansweredCallIds([aiWithCalls("a", "b"), toolResult("a"), human(), aiWithCalls("c")])]).toEqual([
      "b",
      "c",
    ]);
    // A server tool answered inline is not open; one without its result is.
    expect([...unansweredCallIds([human(), aiWithServerTool(["a"], true), toolResult("a")])]).toEqual([]);
    expect([...unansweredCallIds([human(), aiWithServerTool([], false)])]).toEqual(["srvtoolu_1"]);
  });

  it("keeps the definition the storage layers had (every call id of every assistant message, minus every result's id)", () => {
    const before = (messages: readonly BaseMessage[]) => {
      const calls = new Set<string>();
      for (const m of messages) if (isAssistant(m)) for (const id of toolCallIdsOf(m)) calls.add(id);
      for (const m of messages) if (isToolResult(m) && resultIdOf(m) !== undefined) calls.delete(resultIdOf(m)!);
      return [...calls];
    };
    fc.assert(
      fc.property(historyArb, (messages) => {
        expect([...unansweredCallIds(messages)]).toEqual(before(messages));
      }),
      { numRuns: RUNS },
    );
  });

  it("refuses what is not an array with an input error, like its siblings", () => {
    for (const fn of [unansweredCallIds, trailingOpenExchange, resumableExchange])
      expect(() => fn(null as never)).toThrow(ToolCallRepairInputError);
  });
});
