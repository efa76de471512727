/**
 * The adapter traps listed at the top of payloads.ts: what the real converters send for histories that
 * look fine in LangChain, and which provider rule that breaks.
 */
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { payloadFor, validatePayloadFor } from "./payloads";
import { pinnedTo } from "./versions";

const call = (id: string) => ({ id, name: "get_weather", args: { city: "Paris" } });
const invalidCall = (id: string) => ({
  id,
  name: "get_weather",
  args: "{bad json",
  error: "unparsable",
  type: "invalid_tool_call" as const,
});
const exchange = (id = "call_a", result = "sunny"): BaseMessage[] => [
  new HumanMessage("weather?"),
  new AIMessage({ content: "", tool_calls: [call(id)] }),
  new ToolMessage({ content: result, tool_call_id: id }),
];
const rulesOf = async (provider: Parameters<typeof validatePayloadFor>[0], messages: BaseMessage[]) =>
  (await validatePayloadFor(provider, messages)).map((v) => `${v.provider}:${v.rule}`);

describe("payloadFor / validatePayloadFor", () => {
  it("finds nothing in a complete exchange on any provider", async () => {
    const messages = [new SystemMessage("be brief"), ...exchange(), new AIMessage("sunny"), new HumanMessage("thanks")];
    expect(await validatePayloadFor("strict", messages)).toEqual([]);
  });

  it("reports an unanswered call on every provider, with each provider's text", async () => {
    const messages = [...exchange().slice(0, 2), new HumanMessage("never mind")];
    const violations = await validatePayloadFor("strict", messages);
    expect(violations.map((v) => `${v.provider}:${v.rule}`)).toEqual([
      "openai:O1",
      "openai-responses:R1",
      "anthropic:A1",
      "bedrock:B1",
    ]);
    expect(violations[3].message).toBe(
      "Expected toolResult blocks at messages.2.content for the following Ids: call_a",
    );
  });
});

describe("adapter traps", () => {
  it("Bedrock sends a HumanMessage after tool results as a second user turn (B6)", async () => {
    expect(await rulesOf("strict", [...exchange(), new HumanMessage("and tomorrow?")])).toEqual(["bedrock:B6"]);
  });

  it("Bedrock and Anthropic: an AIMessage('') without calls is an empty message (B9, A9)", async () => {
    const messages = [new HumanMessage("hi"), new AIMessage(""), new HumanMessage("hello?")];
    expect(await rulesOf("strict", messages)).toEqual(["anthropic:A9", "bedrock:B9"]);
  });

  it("Bedrock throws locally on HumanMessage('') and on an empty text block in an AIMessage", async () => {
    expect(await validatePayloadFor("bedrock", [new HumanMessage("")])).toEqual([
      {
        provider: "bedrock",
        rule: "LOCAL",
        message: "Invalid message content: empty string. 'human' must contain non-empty content.",
      },
    ]);
    const emptyBlock = [
      new HumanMessage("hi"),
      new AIMessage({ content: [{ type: "text", text: "" }] }),
      new HumanMessage("x"),
    ];
    const [violation] = await validatePayloadFor("bedrock", emptyBlock);
    expect(violation.rule).toBe("LOCAL");
    expect(violation.message).toContain("Unsupported content block type: text");
  });

  it("Bedrock throws locally on tool_use content blocks (an AIMessage from ChatAnthropic), even with tool_calls set", async () => {
    const fromAnthropic = new AIMessage({
      content: [{ type: "tool_use", id: "toolu_a", name: "get_weather", input: { city: "Paris" } }],
      tool_calls: [call("toolu_a")],
    });
    const messages = [
      new HumanMessage("weather?"),
      fromAnthropic,
      new ToolMessage({ content: "sunny", tool_call_id: "toolu_a" }),
    ];
    const violations = await validatePayloadFor("strict", messages);
    expect(violations.map((v) => `${v.provider}:${v.rule}`)).toEqual(["bedrock:LOCAL"]);
    expect(violations[0].message).toContain("Unsupported content block type: tool_use");
  });

  it("Bedrock sends an empty ToolMessage as a blank text block (B8)", async () => {
    expect(await rulesOf("strict", exchange("call_a", ""))).toEqual(["bedrock:B8"]);
  });

  it("Bedrock and Anthropic drop ToolMessage.status: an error result is sent as a success", async () => {
    const messages = [
      ...exchange().slice(0, 2),
      new ToolMessage({ content: "boom", tool_call_id: "call_a", status: "error" }),
    ];
    const bedrock = await payloadFor("bedrock", messages);
    const anthropic = await payloadFor("anthropic", messages);
    expect(bedrock.provider === "bedrock" && bedrock.request.messages).toEqual(
      expect.arrayContaining([
        { role: "user", content: [{ toolResult: { toolUseId: "call_a", content: [{ text: "boom" }] } }] },
      ]),
    );
    expect(anthropic.provider === "anthropic" && anthropic.messages[2]).toEqual({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "call_a", content: "boom" }],
    });
  });

  it("Bedrock without tools bound sends no toolConfig, so any tool history fails (B3)", async () => {
    const violations = await validatePayloadFor(
      "bedrock",
      [...exchange(), new AIMessage("ok"), new HumanMessage("x")],
      {
        tools: [],
      },
    );
    expect(violations.map((v) => v.rule)).toEqual(["B3"]);
  });

  it("ChatOpenAI drops a call that only lives in invalid_tool_calls but sends its ToolMessage (O2, R2)", async () => {
    const messages = [
      new HumanMessage("weather?"),
      new AIMessage({ content: "", tool_calls: [], invalid_tool_calls: [invalidCall("call_a")] }),
      new ToolMessage({ content: "bad arguments", tool_call_id: "call_a" }),
    ];
    expect(await rulesOf("openai", messages)).toEqual(["openai:O2"]);
    expect(await rulesOf("openai-responses", messages)).toEqual(["openai-responses:R2"]);
  });

  it("ChatOpenAI re-sends raw additional_kwargs.tool_calls, malformed arguments included, when no call parsed", async () => {
    const raw = { id: "call_a", type: "function" as const, function: { name: "get_weather", arguments: "{bad json" } };
    const messages = [
      new HumanMessage("weather?"),
      new AIMessage({
        content: "",
        additional_kwargs: { tool_calls: [raw] },
        invalid_tool_calls: [invalidCall("call_a")],
      }),
      new ToolMessage({ content: "bad arguments", tool_call_id: "call_a" }),
    ];
    const payload = await payloadFor("openai", messages);
    expect(payload.provider === "openai" && payload.messages[1]).toMatchObject({ tool_calls: [raw] });
  });

  it("ChatAnthropic sends tool_use content blocks even when tool_calls is empty (A1)", async () => {
    const messages = [
      new HumanMessage("weather?"),
      new AIMessage({ content: [{ type: "tool_use", id: "toolu_a", name: "get_weather", input: {} }], tool_calls: [] }),
      new HumanMessage("hello?"),
    ];
    expect(await rulesOf("anthropic", messages)).toEqual(["anthropic:A1"]);
  });

  it("ChatAnthropic sends a HumanMessage between a call and its result as a turn before the result (A3)", async () => {
    const [question, ai, result] = exchange("toolu_a");
    expect(await rulesOf("anthropic", [question, ai, new HumanMessage("hurry"), result])).toEqual(["anthropic:A3"]);
  });

  // @langchain/anthropic 1.3.28 (the newest for core 1.1.x) throws "System messages are only permitted as the
  // first passed message" instead.
  it.skipIf(
    pinnedTo("@langchain/anthropic", "1.5.11", "ChatAnthropic sending a later SystemMessage in place") !== undefined,
  )("ChatAnthropic sends a SystemMessage that is not first inside messages, with role system", async () => {
    const payload = await payloadFor("anthropic", [
      new HumanMessage("hi"),
      new AIMessage("yes"),
      new SystemMessage("note"),
      new HumanMessage("go"),
    ]);
    expect(payload.provider === "anthropic" && payload.messages[2]).toEqual({ role: "system", content: "note" });
  });

  it("Responses API re-sends response_metadata.output function_call items even when tool_calls is empty (R1)", async () => {
    const output = [{ type: "function_call", id: "fc_1", call_id: "call_a", name: "get_weather", arguments: "{}" }];
    const messages = [
      new HumanMessage("weather?"),
      new AIMessage({ content: "", tool_calls: [], response_metadata: { output } }),
      new HumanMessage("hello?"),
    ];
    expect(await rulesOf("openai-responses", messages)).toEqual(["openai-responses:R1"]);
  });
});
