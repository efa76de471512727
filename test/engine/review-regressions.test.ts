/**
 * Regressions found in review: each history once made the clean path disagree with the finders, or made
 * repair need a second run, or lost a message's role.
 */
import { describe, expect, it } from "vitest";
import { AIMessage, ChatMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { convertMessagesToResponsesInput } from "@langchain/openai";
import { findToolCallProblems, isCleanHistory, repairToolCalls } from "../../src/engine";
import { validateOpenAIResponsesInput } from "../support/validate";
import type { Provider } from "../../src/types";

/** The fast path agrees with the finders, and repair converges in one run. */
function expectConsistent(h: BaseMessage[], provider: Provider, keep = false) {
  const clean = isCleanHistory(h, { provider, trailing: keep ? "keep" : "answer" });
  const problems = findToolCallProblems(h, { provider, trailingIsProblem: !keep });
  expect(clean).toBe(problems.length === 0);
  const options = { provider, trailing: keep ? ("keep" as const) : ("answer" as const) };
  const once = repairToolCalls(h, options);
  const twice = repairToolCalls(once.messages, options);
  expect(twice.repairs).toEqual([]);
  expect(twice.messages).toBe(once.messages);
  return once;
}

describe("review regressions", () => {
  it("leaves v1 messages' tool_call blocks alone on Bedrock (the constructor writes them back)", () => {
    const v1 = new AIMessage({
      content: [{ type: "tool_call", id: "call_a", name: "f", args: {} }],
      tool_calls: [{ id: "call_a", name: "f", args: {}, type: "tool_call" }],
      response_metadata: { output_version: "v1" },
    });
    const h = [new HumanMessage("hi"), v1, new ToolMessage({ content: "r", tool_call_id: "call_a" })];
    const r = expectConsistent(h, "strict");
    expect(r.messages).toBe(h);
  });

  it("renaming a duplicated Responses call also frees its item id (R5)", () => {
    const turn = () =>
      new AIMessage({
        content: "",
        tool_calls: [{ id: "call_1", name: "f", args: {}, type: "tool_call" }],
        response_metadata: {
          output: [{ type: "function_call", id: "fc_1", call_id: "call_1", name: "f", arguments: "{}" }],
        },
      });
    const h = [
      new HumanMessage("q"),
      turn(),
      new ToolMessage({ content: "r1", tool_call_id: "call_1" }),
      new HumanMessage("again"),
      turn(),
      new ToolMessage({ content: "r2", tool_call_id: "call_1" }),
      new HumanMessage("q3"),
    ];
    const { messages } = expectConsistent(h, "openai-responses");
    expect(
      validateOpenAIResponsesInput(convertMessagesToResponsesInput({ messages, zdrEnabled: false, model: "gpt-5" })),
    ).toEqual([]);
  });

  it("never merges an assistant ChatMessage into a user message", () => {
    const h = [
      new HumanMessage("question"),
      new ChatMessage({ role: "assistant", content: "the answer", id: "chat1" }),
    ];
    // Stored as it is; for a request (strict) typed by its role, an assistant turn of its own.
    expect(repairToolCalls(h, { level: "structural" }).messages).toBe(h);
    const r = repairToolCalls(h);
    expect(r.messages.map((m) => m.getType())).toEqual(["human", "ai"]);
    expect(r.messages[1]).toMatchObject({ id: "chat1", content: "the answer" });
  });

  it("bridges a user ChatMessage after a user message instead of merging it", () => {
    const h = [
      new HumanMessage("a"),
      new AIMessage("b"),
      new HumanMessage("c"),
      new ChatMessage({ role: "user", content: "d" }),
    ];
    const r = expectConsistent(h, "bedrock");
    expect(r.messages.map((m) => m.getType())).toEqual(["human", "ai", "human", "ai", "generic"]);
  });

  it("removes two copies of an unanswered server tool call in one run", () => {
    const srv = () =>
      new AIMessage({ content: [{ type: "server_tool_use", id: "srvtoolu_2", name: "web_search", input: {} }] });
    expectConsistent(
      [new HumanMessage("q"), srv(), new HumanMessage("q2"), srv(), new HumanMessage("q3")],
      "anthropic",
    );
  });

  it("keeps a paused server tool call as a trailing exchange in storage", () => {
    const h = [
      new HumanMessage("hi"),
      new AIMessage({ content: [{ type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }] }),
    ];
    expect(expectConsistent(h, "anthropic", true).messages).toBe(h);
  });

  it("drops a null invalid_tool_calls entry instead of inventing a call", () => {
    const m = new AIMessage({ content: "text", tool_calls: [] });
    Object.assign(m, { invalid_tool_calls: [null] });
    const r = expectConsistent([new HumanMessage("q"), m], "openai");
    expect(r.messages.filter((x) => x.getType() === "tool")).toEqual([]);
  });

  it("treats array args as malformed on both paths", () => {
    const m = new AIMessage({ content: "", tool_calls: [] });
    Object.assign(m, { tool_calls: [{ id: "call_1", name: "f", args: [] }] });
    expectConsistent([new HumanMessage("hi"), m, new ToolMessage({ content: "r", tool_call_id: "call_1" })], "openai");
  });

  it("removes an empty user ChatMessage on Bedrock", () => {
    expectConsistent(
      [new HumanMessage("hi"), new AIMessage("ok"), new ChatMessage({ role: "user", content: "" })],
      "bedrock",
    );
  });

  it("judges a null content block alike on the clean path and in the finders", () => {
    const m = new AIMessage({ content: "x", tool_calls: [] });
    Object.assign(m, { content: [null] });
    expectConsistent([new HumanMessage("hi"), m], "bedrock");
  });

  it("reads additional_kwargs.tool_calls: null as no calls", () => {
    const h = [
      new HumanMessage("hi"),
      new AIMessage({ content: "x", additional_kwargs: { tool_calls: null } as never }),
    ];
    expect(expectConsistent(h, "strict").messages).toBe(h);
  });
});

describe("renamed calls keep what is keyed by their id", () => {
  const KEY = "__gemini_function_call_thought_signatures__";
  /** A Gemini step whose calls (one per city) were all stored with an empty id; the signature keyed by "". */
  const signedUnderEmptyId = (...cities: string[]) => [
    new HumanMessage(`weather in ${cities.join(" and ")}?`),
    new AIMessage({
      content: "",
      tool_calls: cities.map((city) => ({ id: "", name: "get_weather", args: { city } })),
      additional_kwargs: { [KEY]: { "": "REAL_SIGNATURE" } },
    }),
  ];

  it("a call stored with an empty id keeps its Gemini thought signature under its new id", () => {
    const { messages } = repairToolCalls(signedUnderEmptyId("Paris"), { provider: "gemini" });
    const ai = messages[1] as AIMessage;
    const id = ai.tool_calls![0].id!;
    expect(id).not.toBe("");
    expect(ai.additional_kwargs[KEY]).toEqual({ [id]: "REAL_SIGNATURE" });
  });

  it("two calls stored with an empty id: the signature stays with the first (the signed one), not the last", () => {
    const { messages, repairs } = repairToolCalls(signedUnderEmptyId("Paris", "Rome"), { provider: "gemini" });
    const first = messages.find(
      (m) => AIMessage.isInstance(m) && m.tool_calls?.[0]?.args.city === "Paris",
    ) as AIMessage;
    expect(first.additional_kwargs[KEY]).toEqual({ [first.tool_calls![0].id!]: "REAL_SIGNATURE" });
    expect(repairs.map((r) => r.action)).not.toContain("rebuilt_message");
  });
});

describe("the clean walk's id table", () => {
  it("grows past its first size and still finds a repeated id", () => {
    const h: BaseMessage[] = [new HumanMessage("hi")];
    for (let i = 0; i < 400; i++)
      h.push(
        new AIMessage({ content: "", tool_calls: [{ id: `c${i}`, name: "t", args: {} }] }),
        new ToolMessage({ content: "ok", tool_call_id: `c${i}` }),
      );
    expect(isCleanHistory(h, { provider: "openai" })).toBe(true);
    const repeated = [
      ...h,
      new AIMessage({ content: "", tool_calls: [{ id: "c7", name: "t", args: {} }] }),
      new ToolMessage({ content: "ok", tool_call_id: "c7" }),
    ];
    expect(isCleanHistory(repeated, { provider: "openai" })).toBe(false);
    expect(findToolCallProblems(repeated, { provider: "openai" }).map((p) => p.kind)).toContain("duplicate_call_id");
    expect(isCleanHistory(h, { provider: "openai" })).toBe(true);
  });
});
