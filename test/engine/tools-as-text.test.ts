/**
 * The tools-as-text pass (src/engine/passes/tools-as-text.ts): a request that carries no tools
 * (`toolsInRequest: false`) sends every call as assistant text and every result as user text where the provider
 * refuses tool blocks without tools (Bedrock B3, and strict).
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { createRepairer, findToolCallProblems, isCleanHistory, repairToolCalls } from "../../src/engine";
import { ToolCallRepairInputError } from "../../src/errors";
import { repairMarkerOf, toolCallIdsOf } from "../../src/messages/inspect";
import type { Provider } from "../../src/types";
import { ai, aiWithCalls, human, shape, system, toolResult } from "../support/builders";
import { validatePayloadFor } from "../support/payloads";

const NO_TOOLS = { provider: "bedrock", toolsInRequest: false } as const;

/** A finished exchange, then a follow-up question: valid everywhere when tools are bound. */
const finished = (): BaseMessage[] => [
  system(),
  human("weather in Paris?"),
  aiWithCalls("call_a"),
  toolResult("call_a", "18C and sunny"),
  ai("It is 18C."),
  human("and tomorrow?"),
];

const textOf = (m: BaseMessage): string =>
  typeof m.content === "string" ? m.content : (m.content as { text?: string }[]).map((b) => b.text ?? "").join("\n");

describe("only when the request carries no tools and the provider needs tools for tool blocks", () => {
  it("default (tools assumed): a valid tool history comes back as the same array", () => {
    const h = finished();
    expect(repairToolCalls(h, { provider: "bedrock" }).messages).toBe(h);
    expect(findToolCallProblems(h, { provider: "bedrock" })).toEqual([]);
  });

  it.each(["openai", "openai-responses", "anthropic", "gemini"] as Provider[])(
    "%s takes tool blocks without tools: nothing changes",
    (provider) => {
      const h = finished();
      const r = repairToolCalls(h, { provider, toolsInRequest: false });
      expect(r.repairs).toEqual([]);
      expect(r.messages).toBe(h);
    },
  );

  it("bedrock and strict report every call and result, with rule B3", () => {
    for (const provider of ["bedrock", "strict"] as const) {
      const problems = findToolCallProblems(finished(), { provider, toolsInRequest: false });
      expect(problems.map((p) => [p.kind, p.index, p.toolCallId, p.rules])).toEqual([
        ["tool_blocks_without_tools", 2, "call_a", ["B3"]],
        ["tool_blocks_without_tools", 3, "call_a", ["B3"]],
      ]);
    }
  });

  it("the structural level never converts (storage does not know what a request carries)", () => {
    const h = finished();
    expect(repairToolCalls(h, { ...NO_TOOLS, level: "structural" }).messages).toBe(h);
  });

  it("refuses a value that is not a boolean, naming the option", () => {
    expect(() => repairToolCalls(finished(), { provider: "bedrock", toolsInRequest: "no" as never })).toThrow(
      ToolCallRepairInputError,
    );
    expect(() => createRepairer({ toolsInRequest: 0 as never })).toThrow(
      /options\.toolsInRequest is 0; expected a boolean/,
    );
  });
});

describe("the conversion", () => {
  it(
    "calls become assistant text after its own words (tool, id, arguments); results become user " +
      "text; Bedrock accepts it without toolConfig",
    async () => {
      const h = [
        human("weather in Paris and Rome?"),
        new AIMessage({
          id: "a1",
          content: "Checking both.",
          tool_calls: [
            { id: "call_p", name: "get_weather", args: { city: "Paris" }, type: "tool_call" },
            { id: "call_r", name: "get_weather", args: { city: "Rome" }, type: "tool_call" },
          ],
        }),
        new ToolMessage({ id: "t1", tool_call_id: "call_p", name: "get_weather", content: "18C" }),
        new ToolMessage({ id: "t2", tool_call_id: "call_r", name: "get_weather", content: "timeout", status: "error" }),
        human("thanks"),
      ];
      const { messages, repairs } = repairToolCalls(h, NO_TOOLS);

      expect(shape(messages)).toBe("human, ai, human");
      expect(messages[0]).toBe(h[0]);
      expect(messages[1].content).toBe(
        'Checking both.\n\n[Called tool "get_weather" (call call_p) with arguments ' +
          '{"city":"Paris"}]\n[Called tool "get_weather" (call call_r) with arguments {"city":"Rome"}]',
      );
      expect(messages[1].id).toBe("a1");
      expect(textOf(messages[2])).toBe(
        '[Result of tool "get_weather" for call call_p:]\n18C\n\n[Result of tool "get_weather" for call ' +
          "call_r (the tool reported an error):]\ntimeout\n\nthanks",
      );
      expect(
        repairs.filter((r) => r.action === "converted_to_text").map((r) => [r.index, r.toolCallId, r.problem]),
      ).toEqual([
        [1, "call_p", "tool_blocks_without_tools"],
        [1, "call_r", "tool_blocks_without_tools"],
        [2, "call_p", "tool_blocks_without_tools"],
        [3, "call_r", "tool_blocks_without_tools"],
      ]);
      expect(await validatePayloadFor("bedrock", messages, { tools: [] })).toEqual([]);
      expect((await validatePayloadFor("bedrock", h, { tools: [] })).map((v) => v.rule)).toContain("B3");
    },
  );

  it("removes a call from every location: tool_calls, raw kwargs, content blocks, invalid_tool_calls, Responses output", () => {
    const everywhere = new AIMessage({
      id: "a1",
      content: [
        { type: "text", text: "on it" },
        { type: "tool_use", id: "call_a", name: "search", input: { q: "x" } },
      ],
      tool_calls: [{ id: "call_a", name: "search", args: { q: "x" }, type: "tool_call" }],
      invalid_tool_calls: [
        { id: "call_bad", name: "search", args: "{oops", error: "bad json", type: "invalid_tool_call" },
      ],
      additional_kwargs: {
        tool_calls: [{ id: "call_a", type: "function", function: { name: "search", arguments: '{"q":"x"}' } }],
      },
      response_metadata: {
        output: [{ type: "function_call", id: "fc_1", call_id: "call_a", name: "search", arguments: '{"q":"x"}' }],
      },
    });
    for (const provider of ["bedrock", "strict"] as const) {
      const { messages } = repairToolCalls([human("q"), everywhere, toolResult("call_a"), human("next")], {
        provider,
        toolsInRequest: false,
      });
      const converted = messages.find((m) => AIMessage.isInstance(m) && m.id === "a1") as AIMessage;
      expect(toolCallIdsOf(converted)).toEqual([]);
      expect(converted.tool_calls).toEqual([]);
      expect(converted.invalid_tool_calls).toEqual([]);
      expect(converted.additional_kwargs.tool_calls).toBeUndefined();
      expect(messages.some((m) => ToolMessage.isInstance(m))).toBe(false);
      const text = textOf(converted);
      expect(text).toContain("on it");
      expect(text).toContain('[Called tool "search" (call call_a) with arguments {"q":"x"}]');
      // The invalid call was answered (an error result) before it was written out: its raw arguments stay readable.
      expect(messages.map(textOf).join("\n")).toContain("{oops");
    }
  });

  it("a result keeps its id, its images, and any other block as its JSON; marked, not synthetic", () => {
    const image = { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } };
    const result = new ToolMessage({
      id: "t1",
      tool_call_id: "call_a",
      name: "render",
      content: [{ type: "text", text: "rendered" }, image, { type: "json", json: { w: 2 } }],
    });
    const { messages } = repairToolCalls(
      [human("draw"), aiWithCalls("call_a"), result, ai("done"), human("next")],
      NO_TOOLS,
    );
    const converted = messages[2] as HumanMessage;
    expect(HumanMessage.isInstance(converted)).toBe(true);
    expect(converted.id).toBe("t1");
    expect(converted.content).toEqual([
      { type: "text", text: '[Result of tool "render" for call call_a:]' },
      { type: "text", text: "rendered" },
      image,
      { type: "text", text: '{"type":"json","json":{"w":2}}' },
    ]);
    expect(repairMarkerOf(converted)).toEqual({
      synthetic: false,
      reason: "tool_blocks_without_tools",
      toolCallId: "call_a",
      toolName: "render",
    });
  });

  it("an empty result says so; an unanswered call is answered first, and its synthetic result is written out marked synthetic", () => {
    const { messages } = repairToolCalls(
      [human("q"), aiWithCalls("call_a", "call_b"), toolResult("call_a", ""), human("next")],
      NO_TOOLS,
    );
    const text = messages.map(textOf).join("\n");
    expect(text).toContain('[Result of tool "tool_call_a" for call call_a:]\n(the tool returned no output)');
    expect(text).toMatch(
      /\[Result of tool "tool_call_b" for call call_b \(the tool reported an error\):\]\nTool "tool_call_b" \(call call_b\) has no result/,
    );
    expect(shape(messages)).toBe("human, ai, human");
  });

  it("keeps every untouched message as the very same object", () => {
    const h = finished();
    const { messages } = repairToolCalls(h, NO_TOOLS);
    expect(messages[0]).toBe(h[0]);
    expect(messages[1]).toBe(h[1]);
    expect(messages).toContain(h[4]);
  });

  it("is idempotent, and the fast path agrees: a converted history is clean, the original is not", () => {
    const h = finished();
    expect(isCleanHistory(h, NO_TOOLS)).toBe(false);
    const once = repairToolCalls(h, NO_TOOLS);
    const twice = repairToolCalls(once.messages, NO_TOOLS);
    expect(twice.repairs).toEqual([]);
    expect(twice.messages).toBe(once.messages);
    expect(isCleanHistory(once.messages, NO_TOOLS)).toBe(true);
    expect(findToolCallProblems(once.messages, NO_TOOLS)).toEqual([]);
  });

  it("a history without tool blocks is left alone", () => {
    const h = [human("hi"), ai("hello"), human("bye")];
    expect(isCleanHistory(h, NO_TOOLS)).toBe(true);
    expect(repairToolCalls(h, NO_TOOLS).messages).toBe(h);
  });

  it("a system message between the exchanges stays where it is (Bedrock lifts it)", () => {
    const h = [
      human("q"),
      aiWithCalls("call_a"),
      toolResult("call_a"),
      new SystemMessage("be brief"),
      ai("done"),
      human("next"),
    ];
    const { messages } = repairToolCalls(h, NO_TOOLS);
    expect(messages).toContain(h[3]);
  });
});
