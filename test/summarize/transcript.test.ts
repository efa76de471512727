import { AIMessage, getBufferString, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { contentText, messagesToTranscript } from "../../src/summarize/summarize";

const weatherCall = (id: string, city: string) => ({
  id,
  name: "get_weather",
  args: { city },
  type: "tool_call" as const,
});

const parallelHistory = () => [
  new SystemMessage("Be brief."),
  new HumanMessage("Weather in Paris and Rome?"),
  new AIMessage({
    content: "Checking both.",
    tool_calls: [weatherCall("call_p", "Paris"), weatherCall("call_r", "Rome")],
  }),
  new ToolMessage({ content: "18C, sunny", tool_call_id: "call_r", name: "get_weather" }),
  new ToolMessage({ content: "timeout", tool_call_id: "call_p", name: "get_weather", status: "error" }),
  new AIMessage("Rome is 18C; Paris timed out."),
];

describe("messagesToTranscript", () => {
  it("keeps two parallel calls to the same tool distinguishable, with each result pinned to its call", () => {
    expect(messagesToTranscript(parallelHistory())).toBe(
      [
        "System: Be brief.",
        "User: Weather in Paris and Rome?",
        "Assistant: Checking both.",
        "Assistant called 2 tools in parallel:",
        '  - get_weather [id call_p] {"city":"Paris"}',
        '  - get_weather [id call_r] {"city":"Rome"}',
        "Tool result for call_r (get_weather): 18C, sunny",
        "Tool result for call_p (get_weather), error: timeout",
        "Assistant: Rome is 18C; Paris timed out.",
      ].join("\n"),
    );
  });

  it("pins results where core's getBufferString does not (its result lines carry no call id)", () => {
    const resultLines = (text: string) => text.split("\n").filter((line) => line.startsWith("Tool"));
    const bufferResults = resultLines(getBufferString(parallelHistory()));
    expect(bufferResults).toEqual(["Tool: get_weather, 18C, sunny", "Tool: get_weather, timeout"]);
    const ourResults = resultLines(messagesToTranscript(parallelHistory()));
    expect(ourResults).toEqual([
      "Tool result for call_r (get_weather): 18C, sunny",
      "Tool result for call_p (get_weather), error: timeout",
    ]);
  });

  it("shows a call once when it is mirrored in content blocks and tool_calls (Anthropic)", () => {
    const message = new AIMessage({
      content: [
        { type: "text", text: "Looking." },
        { type: "tool_use", id: "toolu_1", name: "search", input: { q: "x" } },
      ],
      tool_calls: [{ id: "toolu_1", name: "search", args: { q: "x" }, type: "tool_call" }],
    });
    expect(messagesToTranscript([message])).toBe(
      ["Assistant: Looking.", "Assistant called 1 tool:", '  - search [id toolu_1] {"q":"x"}'].join("\n"),
    );
  });

  it("reads calls from every location an adapter sends", () => {
    const message = new AIMessage({
      content: [{ type: "tool_use", id: "toolu_2", name: "fetch", input: { url: "u" } }],
      additional_kwargs: {
        tool_calls: [{ id: "call_raw", type: "function", function: { name: "calc", arguments: '{"x":1}' } }],
      },
      response_metadata: { output: [{ type: "function_call", call_id: "fc_1", name: "lookup", arguments: '{"k":2}' }] },
    });
    expect(messagesToTranscript([message]).split("\n")).toEqual([
      "Assistant called 3 tools in parallel:",
      '  - calc [id call_raw] {"x":1}',
      '  - fetch [id toolu_2] {"url":"u"}',
      '  - lookup [id fc_1] {"k":2}',
    ]);
  });

  it("is graceful when ids are missing or match no call", () => {
    const transcript = messagesToTranscript([
      new AIMessage({
        content: "",
        tool_calls: [{ name: "search", args: {}, type: "tool_call" } as never, weatherCall("call_ok", "Oslo")],
      }),
      new ToolMessage({ content: "r", tool_call_id: "", name: "search" }),
      new ToolMessage({ content: "r2", tool_call_id: "call_unknown" }),
      new ToolMessage({ content: "r3", tool_call_id: "call_ok" }),
    ]);
    expect(transcript).toContain("  - search [no id] {}");
    expect(transcript).toContain("Tool result with no call id (search): r");
    expect(transcript).toContain("Tool result for call_unknown, no matching call: r2");
    expect(transcript).toContain("Tool result for call_ok (get_weather): r3");
  });

  it("pins a result to the latest call of a reused id", () => {
    const transcript = messagesToTranscript([
      new AIMessage({ content: "", tool_calls: [{ id: "dup", name: "first_tool", args: {}, type: "tool_call" }] }),
      new ToolMessage({ content: "one", tool_call_id: "dup" }),
      new AIMessage({ content: "", tool_calls: [{ id: "dup", name: "second_tool", args: {}, type: "tool_call" }] }),
      new ToolMessage({ content: "two", tool_call_id: "dup" }),
    ]);
    expect(transcript).toContain("Tool result for dup (first_tool): one");
    expect(transcript).toContain("Tool result for dup (second_tool): two");
  });
});

describe("contentText", () => {
  it("joins text blocks and leaves out tool-call and reasoning blocks", () => {
    expect(
      contentText([
        { type: "thinking", thinking: "secret" },
        { type: "text", text: "a" },
        { type: "tool_use", id: "t", name: "n", input: {} },
        { type: "image_url", image_url: "data:" },
        { text: "bedrock text" },
      ]),
    ).toBe("a\n[image]\nbedrock text");
  });
});
