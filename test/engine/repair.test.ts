import { describe, expect, it, vi } from "vitest";
import { AIMessage, ChatMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { repairToolCalls } from "../../src/engine";
import { findToolCallProblems } from "../../src/engine";
import { repairMarkerOf, toolCallIdsOf } from "../../src/messages/inspect";
import { ai, aiWithCalls, human, shape, system, toolResult } from "../support/builders";
import { ADAPTERS_PINNED, validatePayloadFor } from "../support/payloads";

const kinds = (messages: BaseMessage[], provider: "strict" | "openai" = "strict") =>
  findToolCallProblems(messages, { provider }).map((p) => p.kind);

describe("repairToolCalls: clean histories", () => {
  it("returns the very same array and no repairs for a valid history", () => {
    const h = [system(), human(), aiWithCalls("a", "b"), toolResult("b"), toolResult("a"), ai("answer")];
    const r = repairToolCalls(h);
    expect(r.messages).toBe(h);
    expect(r.repairs).toEqual([]);
    expect(findToolCallProblems(h)).toEqual([]);
  });

  it("keeps the identity of untouched messages when something is repaired", () => {
    const h = [human(), aiWithCalls("a"), human("next")];
    const r = repairToolCalls(h, { provider: "openai" });
    expect(r.messages).not.toBe(h);
    expect(r.messages[0]).toBe(h[0]);
    expect(r.messages[1]).toBe(h[1]);
    expect(r.messages[3]).toBe(h[2]);
  });
});

describe("1. orphaned call", () => {
  it("answers it right after its block with an error result naming the tool", () => {
    const h = [human(), aiWithCalls("a", "b"), toolResult("a"), human("new question")];
    const r = repairToolCalls(h, { provider: "openai" });
    expect(shape(r.messages)).toBe("human, ai[a,b], tool(a), tool(b), human");
    const synthetic = r.messages[3] as ToolMessage;
    expect(synthetic.status).toBe("error");
    expect(synthetic.content).toContain('Tool "tool_b"');
    // The run stopped between the call and its result: the tool may have started, so its outcome is unknown.
    expect(synthetic.content).toContain("its outcome is unknown");
    expect(synthetic.content).not.toContain("did not run");
    expect(repairMarkerOf(synthetic)).toMatchObject({
      synthetic: true,
      reason: "orphan_call",
      toolCallId: "b",
      toolRun: "outcome_unknown",
    });
    expect(r.repairs).toEqual([
      expect.objectContaining({
        problem: "orphan_call",
        action: "synthesized_result",
        index: 1,
        toolCallId: "b",
        toolName: "tool_b",
        toolRun: "outcome_unknown",
      }),
    ]);
  });

  it("keeps the machine-readable reason through lc serialization", () => {
    const r = repairToolCalls([human(), aiWithCalls("a"), human("x")], { provider: "openai" });
    const revived = JSON.parse(JSON.stringify(r.messages[2]));
    expect(revived.kwargs.additional_kwargs.tool_call_repair).toMatchObject({ synthetic: true, reason: "orphan_call" });
    expect(revived.kwargs.status).toBe("error");
  });

  it("removes the call from every location when asked, keeping the message's text", () => {
    const msg = new AIMessage({
      content: [
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "toolu_1", name: "search", input: {} },
      ],
      tool_calls: [{ id: "toolu_1", name: "search", args: {} }],
      additional_kwargs: {
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "search", arguments: "{}" } }],
      },
      response_metadata: { output: [{ type: "function_call", call_id: "toolu_1", name: "search", arguments: "{}" }] },
    });
    const r = repairToolCalls([human(), msg, human("next")], { orphanCalls: "remove", provider: "openai" });
    const cleaned = r.messages[1] as AIMessage;
    expect(toolCallIdsOf(cleaned)).toEqual([]);
    expect(cleaned.content).toEqual([{ type: "text", text: "Let me look." }]);
    expect(cleaned.additional_kwargs.tool_calls).toBeUndefined();
    expect((cleaned.response_metadata as { output: unknown[] }).output).toEqual([]);
    expect(r.repairs.map((x) => x.action)).toEqual(["removed_call"]);
  });

  it("removes the whole message only when nothing is left", () => {
    const r = repairToolCalls([human(), aiWithCalls("a"), human("next")], {
      orphanCalls: "remove",
      provider: "openai",
    });
    expect(shape(r.messages)).toBe("human, human");
    expect(r.repairs.map((x) => x.action)).toEqual(["removed_call", "removed_message"]);
  });
});

describe("2. displaced result", () => {
  it("moves the real result into place and never adds a synthetic duplicate", () => {
    const h = [human(), aiWithCalls("a"), human("meanwhile"), ai("thinking"), toolResult("a")];
    const r = repairToolCalls(h, { provider: "openai" });
    expect(shape(r.messages)).toBe("human, ai[a], tool(a), human, ai");
    expect(r.messages[2]).toBe(h[4]);
    expect(r.messages.filter((m) => repairMarkerOf(m)?.synthetic)).toEqual([]);
  });

  it("pulls a result that was stored before its call", () => {
    const h = [human(), toolResult("a"), aiWithCalls("a"), ai("x")];
    expect(shape(repairToolCalls(h, { provider: "openai" }).messages)).toBe("human, ai[a], tool(a), ai");
  });
});

describe("3. messages between a call and its results", () => {
  it("moves them after the result block, keeping their order", () => {
    const h = [human(), aiWithCalls("a", "b"), toolResult("a"), human("steer 1"), human("steer 2"), toolResult("b")];
    const r = repairToolCalls(h, { provider: "openai" });
    expect(shape(r.messages)).toBe("human, ai[a,b], tool(a), tool(b), human, human");
    expect(r.messages[4]).toBe(h[3]);
    expect(r.messages[5]).toBe(h[4]);
    expect(kinds(h, "openai")).toEqual(["interleaved_message", "interleaved_message", "displaced_result"]);
  });
});

describe("4. orphan result", () => {
  it("keeps its content as a user message by default", () => {
    const h = [human(), ai("hi"), toolResult("gone", "42 degrees")];
    const r = repairToolCalls(h, { provider: "openai" });
    expect(shape(r.messages)).toBe("human, ai, human");
    expect(r.messages[2].content).toContain("42 degrees");
    expect(r.messages[2].content).toContain("call gone");
    expect(r.repairs[0]).toMatchObject({ problem: "orphan_result", action: "converted_result", index: 2 });
  });

  it("drops it on option, and reports it", () => {
    const onRepair = vi.fn();
    const r = repairToolCalls([human(), ai("hi"), toolResult("gone")], {
      orphanResults: "drop",
      onRepair,
      provider: "openai",
    });
    expect(shape(r.messages)).toBe("human, ai");
    expect(onRepair).toHaveBeenCalledWith(expect.objectContaining({ action: "dropped_result", toolCallId: "gone" }), {
      surface: "engine",
    });
  });
});

describe("5. several results for one call", () => {
  it("keeps a real one over a synthetic one", () => {
    const first = repairToolCalls([human(), aiWithCalls("a"), human("x")], { provider: "openai" }).messages;
    const h = [...first, toolResult("a", "the real result")];
    const r = repairToolCalls(h, { provider: "openai" });
    const results = r.messages.filter((m) => m.getType() === "tool");
    expect(results).toHaveLength(1);
    expect(results[0].content).toBe("the real result");
    expect(r.repairs).toContainEqual(
      expect.objectContaining({ problem: "duplicate_result", action: "dropped_result" }),
    );
  });

  it("drops an identical copy and keeps a differing one's content", () => {
    const h = [human(), aiWithCalls("a"), toolResult("a", "one"), toolResult("a", "one"), toolResult("a", "two")];
    const r = repairToolCalls(h, { provider: "openai" });
    expect(shape(r.messages)).toBe("human, ai[a], tool(a), human");
    expect(r.messages[3].content).toContain("two");
  });
});

describe("6. duplicate call ids", () => {
  it("renames the later call across messages consistently with its result", () => {
    const h = [human(), aiWithCalls("a"), toolResult("a", "first"), aiWithCalls("a"), toolResult("a", "second"), ai()];
    const r = repairToolCalls(h, { provider: "openai" });
    expect(shape(r.messages)).toBe("human, ai[a], tool(a), ai[a_2], tool(a_2), ai");
    expect(r.messages[4].content).toBe("second");
  });

  it("renames a duplicate within one message, in every location", () => {
    const msg = new AIMessage({
      content: [
        { type: "tool_use", id: "x", name: "t", input: {} },
        { type: "tool_use", id: "x", name: "t", input: {} },
      ],
      tool_calls: [
        { id: "x", name: "t", args: { n: 1 } },
        { id: "x", name: "t", args: { n: 2 } },
      ],
    });
    const r = repairToolCalls([human(), msg, toolResult("x", "1"), toolResult("x", "2"), ai()], {
      provider: "anthropic",
    });
    const fixed = r.messages[1] as AIMessage;
    expect(fixed.tool_calls!.map((c) => c.id)).toEqual(["x", "x_2"]);
    expect((fixed.content as { id: string }[]).map((b) => b.id)).toEqual(["x", "x_2"]);
    expect(r.messages.slice(2, 4).map((m) => [(m as ToolMessage).tool_call_id, m.content])).toEqual([
      ["x", "1"],
      ["x_2", "2"],
    ]);
  });
});

describe("7. invalid calls", () => {
  it("turns an invalid call into a call answered with an error that carries the parse failure", () => {
    const msg = new AIMessage({
      content: "",
      tool_calls: [],
      invalid_tool_calls: [
        { id: "call_bad", name: "search", args: "{not json", error: "Unexpected token", type: "invalid_tool_call" },
      ],
      additional_kwargs: {
        tool_calls: [{ id: "call_bad", type: "function", function: { name: "search", arguments: "{not json" } }],
      },
    });
    const r = repairToolCalls([human(), msg, human("next")], { provider: "openai" });
    expect(shape(r.messages)).toBe("human, ai[call_bad], tool(call_bad), human");
    expect((r.messages[1] as AIMessage).invalid_tool_calls).toEqual([]);
    expect(r.messages[2].content).toContain("could not be parsed");
    expect(r.messages[2].content).toContain("{not json");
    // No tool takes arguments that did not parse: this one is known never to have started.
    expect(r.messages[2].content).toContain("did not run");
    expect(repairMarkerOf(r.messages[2])).toMatchObject({ toolRun: "never_started" });
    expect(r.repairs.find((x) => x.action === "synthesized_result")).toMatchObject({
      toolCallId: "call_bad",
      toolRun: "never_started",
    });
  });

  it("removes it from every location on option", () => {
    const msg = new AIMessage({
      content: "text",
      tool_calls: [],
      invalid_tool_calls: [{ id: "call_bad", name: "search", args: "{", error: "e", type: "invalid_tool_call" }],
      additional_kwargs: {
        tool_calls: [{ id: "call_bad", type: "function", function: { name: "search", arguments: "{" } }],
      },
    });
    const r = repairToolCalls([human(), msg], { provider: "openai", invalidCalls: "remove" });
    const fixed = r.messages[1] as AIMessage;
    expect(toolCallIdsOf(fixed)).toEqual([]);
    expect(fixed.content).toBe("text");
  });
});

describe("8. ids the provider rejects", () => {
  it("rewrites them deterministically, collision-free, with the same mapping on calls and results", () => {
    const long = `call_${"x".repeat(60)}`;
    const h = [human(), aiWithCalls("fn.search:1", long), toolResult("fn.search:1"), toolResult(long), ai()];
    const r1 = repairToolCalls(h);
    const r2 = repairToolCalls(h);
    const ids = (r1.messages[1] as AIMessage).tool_calls!.map((c) => c.id!);
    expect(ids).toEqual((r2.messages[1] as AIMessage).tool_calls!.map((c) => c.id));
    expect(ids[0]).toBe("fn_search_1");
    expect(ids[1]!.length).toBeLessThanOrEqual(40);
    expect(r1.messages.slice(2, 4).map((m) => (m as ToolMessage).tool_call_id)).toEqual(ids);
  });

  it("leaves ids alone where the provider accepts them", () => {
    const h = [human(), aiWithCalls("fn.search:1"), toolResult("fn.search:1"), ai()];
    expect(repairToolCalls(h, { provider: "openai" }).messages).toBe(h);
  });
});

describe("9. trailing open exchange", () => {
  it("answers by default (before a model call)", () => {
    const r = repairToolCalls([human(), aiWithCalls("a", "b"), toolResult("a")]);
    expect(shape(r.messages)).toBe("human, ai[a,b], tool(a), tool(b)");
    expect(r.repairs[0]).toMatchObject({ problem: "trailing_open_exchange", action: "synthesized_result" });
  });

  it("keeps it for storage layers where a resume may still run the tools", () => {
    const h = [human(), aiWithCalls("a", "b"), toolResult("a")];
    expect(repairToolCalls(h, { trailing: "keep" }).messages).toBe(h);
  });

  it("still repairs older exchanges while keeping the trailing one", () => {
    const h = [human(), aiWithCalls("old"), human("again"), aiWithCalls("new")];
    const r = repairToolCalls(h, { trailing: "keep", provider: "openai" });
    expect(shape(r.messages)).toBe("human, ai[old], tool(old), human, ai[new]");
  });

  it("removes it on option", () => {
    const r = repairToolCalls([human(), aiWithCalls("a")], { trailing: "remove", provider: "openai" });
    expect(shape(r.messages)).toBe("human");
  });
});

describe("10. history cut by a trim; empty messages and blank blocks", () => {
  it("turns a leading tool result into a user message (Bedrock B5)", () => {
    const r = repairToolCalls([system(), toolResult("gone"), ai("answer"), human("q")], { provider: "bedrock" });
    expect(shape(r.messages)).toBe("system, human, ai, human");
  });

  it("puts a user message before a leading assistant message (Bedrock B5)", () => {
    const r = repairToolCalls([aiWithCalls("a"), toolResult("a"), ai("x"), human()], { provider: "bedrock" });
    expect(shape(r.messages)).toBe("human, ai[a], tool(a), ai, human");
    expect(repairMarkerOf(r.messages[0])).toMatchObject({ synthetic: true, reason: "leading_non_user" });
  });

  it("removes empty assistant messages and blank text blocks (B8, B9, A9)", () => {
    const blank = new AIMessage({ content: "", tool_calls: [] });
    const blocks = new AIMessage({
      content: [
        { type: "text", text: "  " },
        { type: "text", text: "real" },
      ],
      tool_calls: [],
    });
    const r = repairToolCalls([human(), blank, human("again"), blocks], { provider: "anthropic" });
    expect(shape(r.messages)).toBe("human, human, ai");
    expect(r.messages[2].content).toEqual([{ type: "text", text: "real" }]);
  });

  it("does not touch empty assistant messages for OpenAI, which accepts them", () => {
    const h = [human(), new AIMessage({ content: "", tool_calls: [] })];
    expect(repairToolCalls(h, { provider: "openai" }).messages).toBe(h);
  });
});

describe("11. parallel calls partly answered, any order, many problems at once", () => {
  it("repairs everything in one call and is then clean", () => {
    const h = [
      toolResult("stray"),
      human(),
      aiWithCalls("c", "a", "b"),
      toolResult("b"),
      human("interrupt"),
      toolResult("c"),
      aiWithCalls("d"),
      toolResult("d"),
      toolResult("d"),
      human(),
    ];
    const r = repairToolCalls(h, { provider: "openai" });
    expect(shape(r.messages)).toBe("human, human, ai[c,a,b], tool(b), tool(c), tool(a), human, ai[d], tool(d), human");
    expect(repairToolCalls(r.messages, { provider: "openai" }).messages).toBe(r.messages);
    expect(findToolCallProblems(r.messages, { provider: "openai" })).toEqual([]);
  });
});

describe("bedrock turn order (B6)", () => {
  it("bridges tool results followed by a user message and merges two user messages", () => {
    const h = [human("a"), aiWithCalls("x"), toolResult("x"), human("b"), human("c")];
    const r = repairToolCalls(h, { provider: "bedrock" });
    expect(shape(r.messages)).toBe("human, ai[x], tool(x), ai, human");
    expect(r.messages[4].content).toBe("b\n\nc");
  });
});

describe("bad input", () => {
  it("coerces plain and lc-serialized messages and reports it", () => {
    const plain = [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "ok" },
      JSON.parse(JSON.stringify(new AIMessage({ content: "done", tool_calls: [] }))),
    ];
    const r = repairToolCalls(plain as never[], { provider: "openai" });
    expect(shape(r.messages as BaseMessage[])).toBe("human, ai[call_1], tool(call_1), ai");
    expect(r.repairs.filter((x) => x.action === "coerced_message").map((x) => x.index)).toEqual([0, 1, 2, 3]);
  });

  it("refuses what is not a message with an error naming the index", () => {
    expect(() => repairToolCalls([human(), 42 as never])).toThrow(/messages\[1\] is a number/);
    expect(() => repairToolCalls([human(), { foo: 1 } as never])).toThrow(/messages\[1\]/);
    expect(() => findToolCallProblems([null])).toThrow(/messages\[0\] is null/);
  });

  it("reports a result without an id and keeps its content", () => {
    const r = repairToolCalls([human(), ai(), new ToolMessage({ content: "data", tool_call_id: undefined as never })], {
      provider: "openai",
    });
    expect(r.repairs[0]).toMatchObject({ problem: "missing_result_id", action: "converted_result" });
    expect(r.messages[2].content).toContain("data");
  });

  it("gives a call without an id a fresh one and answers it", () => {
    const msg = new AIMessage({ content: "", tool_calls: [{ name: "f", args: {} } as never] });
    const r = repairToolCalls([human(), msg, human("next")], { provider: "openai" });
    const id = (r.messages[1] as AIMessage).tool_calls![0].id!;
    expect(id).toMatch(/^call_/);
    expect((r.messages[2] as unknown as ToolMessage).tool_call_id).toBe(id);
  });

  it("keeps digits of numeric ids so calls and results still match", () => {
    const plain = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "", tool_calls: [{ id: 7, name: "f", args: {} }] },
      { role: "tool", tool_call_id: 7, content: "ok" },
    ];
    const r = repairToolCalls(plain as never[], { provider: "openai" });
    expect(shape(r.messages as BaseMessage[])).toBe("human, ai[7], tool(7)");
  });

  it("handles null content and a malformed tool_calls entry without throwing", () => {
    const weird = new AIMessage({ content: "x", tool_calls: [] });
    Object.assign(weird, { content: null, tool_calls: [{ id: "a", name: "f", args: "oops" }, "junk"] });
    const r = repairToolCalls([new HumanMessage("q"), weird, human("r")], { provider: "openai" });
    expect(r.repairs.map((x) => x.problem)).toContain("malformed_message");
    expect(shape(r.messages)).toBe("human, ai[a], tool(a), human");
  });
});

describe("a repair is idempotent when a late pass changes what an earlier one judged", () => {
  it("a steer moved out of a tool loop leaves a loop opened by reasoning the adapter drops: closed in the same repair", () => {
    // Found by the idempotence property: a user message steered in between a call and its result, then a loop
    // whose opening turn holds only an empty signed reasoning block (@langchain/aws drops it, B11).
    const h: BaseMessage[] = [
      human("user question 1"),
      aiWithCalls("call_1"),
      new ChatMessage({ role: "user", content: "chat as user 1" }),
      toolResult("call_1"),
      new AIMessage({
        content: [{ type: "reasoning", reasoning: "", signature: "sig_empty" }] as never,
        tool_calls: [{ id: "call_2", name: "web_search", args: {}, type: "tool_call" }],
      }),
      toolResult("call_2"),
    ];
    const options = { provider: "strict", orphanCalls: "answer" } as const;
    const once = repairToolCalls(h, options);
    const twice = repairToolCalls(once.messages, options);
    expect(twice.repairs).toEqual([]);
    expect(twice.messages).toBe(once.messages);
    expect(once.repairs.map((r) => r.action)).toContain("converted_to_text");
  });
});

describe("an assistant message left with only an empty signed reasoning block", () => {
  it.skipIf(ADAPTERS_PINNED !== undefined)(
    "is removed from a Bedrock request (@langchain/aws drops the block and would send empty content, B9)",
    async () => {
      const h: BaseMessage[] = [
        human("q"),
        new AIMessage({ content: [{ type: "reasoning", reasoning: "", signature: "sig_empty" }] as never }),
        human("next"),
      ];
      expect(await validatePayloadFor("bedrock", h)).toEqual([expect.objectContaining({ rule: "B9" })]);
      const { messages, repairs } = repairToolCalls(h, { provider: "bedrock" });
      expect(repairs).toContainEqual(expect.objectContaining({ problem: "empty_message", index: 1 }));
      expect(await validatePayloadFor("bedrock", messages)).toEqual([]);
    },
  );
});
