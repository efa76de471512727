import { describe, expect, it } from "vitest";
import {
  validateAnthropicMessages,
  validateBedrockConverse,
  validateGeminiContents,
  validateOpenAIChatMessages,
  validateOpenAIResponsesInput,
  type PayloadViolation,
} from ".";
import { errorOf, inputError, throwingAt, throwingObject } from "../hostile";

const only = (violations: PayloadViolation[], rule: string) => violations.filter((v) => v.rule === rule);

// --- OpenAI Chat Completions -------------------------------------------------------------------------

const oUser = (content = "hi") => ({ role: "user", content });
const oAssistant = (...ids: string[]) => ({
  role: "assistant",
  content: null,
  tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "get_weather", arguments: "{}" } })),
});
const oTool = (id: string) => ({ role: "tool", tool_call_id: id, content: "sunny" });

describe("validateOpenAIChatMessages", () => {
  it("accepts calls answered right after, in any order", () => {
    const messages = [
      { role: "system", content: "s" },
      oUser(),
      oAssistant("call_a", "call_b"),
      oTool("call_b"),
      oTool("call_a"),
      { role: "assistant", content: "done" },
      oUser("next"),
    ];
    expect(validateOpenAIChatMessages(messages)).toEqual([]);
  });

  it("O1: names every call without a tool message straight after", () => {
    const violations = validateOpenAIChatMessages([
      oUser(),
      oAssistant("call_a", "call_b"),
      oTool("call_a"),
      oUser("x"),
    ]);
    expect(violations).toMatchObject([
      {
        rule: "O1",
        path: "messages[1]",
        message:
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
          "'tool_call_id'. The following tool_call_ids did not have response messages: call_b",
      },
    ]);
  });

  it("O1: a history ending on unanswered calls fails too", () => {
    expect(only(validateOpenAIChatMessages([oUser(), oAssistant("call_a")]), "O1")).toHaveLength(1);
  });

  it("O1 and O2: a user message between a call and its result", () => {
    const violations = validateOpenAIChatMessages([oUser(), oAssistant("call_a"), oUser("wait"), oTool("call_a")]);
    expect(violations.map((v) => v.rule)).toEqual(["O1", "O2"]);
  });

  it("O2: a leading tool message", () => {
    expect(validateOpenAIChatMessages([oTool("call_a"), oUser()])).toMatchObject([
      {
        rule: "O2",
        path: "messages[0]",
        message:
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
      },
    ]);
  });

  it("O2: a tool message whose id is not among the preceding calls", () => {
    const violations = validateOpenAIChatMessages([oUser(), oAssistant("call_a"), oTool("call_a"), oTool("call_z")]);
    expect(violations.map((v) => v.rule)).toEqual(["O2"]);
  });

  it("O3: the same tool_call_id answered twice", () => {
    const violations = validateOpenAIChatMessages([oUser(), oAssistant("call_x"), oTool("call_x"), oTool("call_x")]);
    expect(violations).toMatchObject([
      {
        rule: "O3",
        path: "messages[3]",
        message: "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_x', in messages[2] and messages[3].",
      },
    ]);
  });

  it("O4: a tool call id longer than 40 characters, but not one of exactly 40", () => {
    const long = `call_${"x".repeat(40)}`;
    expect(validateOpenAIChatMessages([oUser(), oAssistant(long), oTool(long)])).toMatchObject([
      {
        rule: "O4",
        path: "messages[1].tool_calls[0].id",
        message:
          "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with maximum length " +
          "40, but got a string with length 45 instead.",
      },
    ]);
    const forty = "c".repeat(40);
    expect(validateOpenAIChatMessages([oUser(), oAssistant(forty), oTool(forty)])).toEqual([]);
  });

  it("O5: a function name outside ^[a-zA-Z0-9_-]+$", () => {
    const call = (name: string) => ({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_a", type: "function", function: { name, arguments: "{}" } }],
    });
    expect(validateOpenAIChatMessages([oUser(), call("weather.get"), oTool("call_a")])).toMatchObject([
      {
        rule: "O5",
        path: "messages[1].tool_calls[0].function.name",
        message:
          "Invalid 'messages[1].tool_calls[0].function.name': string does not match pattern. Expected a " +
          "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
      },
    ]);
    expect(validateOpenAIChatMessages([oUser(), call("weather-get_2"), oTool("call_a")])).toEqual([]);
  });
});

// --- OpenAI Responses --------------------------------------------------------------------------------

const rCall = (callId: string, id?: string) => ({
  type: "function_call",
  call_id: callId,
  name: "get_weather",
  arguments: "{}",
  ...(id ? { id } : {}),
});
const rOutput = (callId: string) => ({ type: "function_call_output", call_id: callId, output: "sunny" });
const rUser = { role: "user", content: "hi" };

describe("validateOpenAIResponsesInput", () => {
  it("accepts a call with its output, and a plain string input", () => {
    expect(validateOpenAIResponsesInput([rUser, rCall("call_a", "fc_1"), rOutput("call_a"), rUser])).toEqual([]);
    expect(validateOpenAIResponsesInput("hello")).toEqual([]);
  });

  it("R1: a function_call without output", () => {
    expect(validateOpenAIResponsesInput([rUser, rCall("call_x"), rUser])).toMatchObject([
      { rule: "R1", path: "input[1]", message: "No tool output found for function call call_x." },
    ]);
  });

  it("R2: an output without its call", () => {
    expect(validateOpenAIResponsesInput([rUser, rOutput("call_x")])).toMatchObject([
      { rule: "R2", path: "input[1]", message: "No tool call found for function call output with call_id call_x." },
    ]);
  });

  it("R3: a call_id longer than 64 characters, but not one of 64", () => {
    const long = "c".repeat(65);
    const violations = validateOpenAIResponsesInput([rUser, rCall(long), rOutput(long)]);
    expect(violations).toContainEqual(
      expect.objectContaining({
        rule: "R3",
        path: "input[1].call_id",
        message:
          "Invalid 'input[1].call_id': string too long. Expected a string with maximum length 64, but got a string with length 65 instead.",
      }),
    );
    const ok = "c".repeat(64);
    expect(validateOpenAIResponsesInput([rUser, rCall(ok), rOutput(ok)])).toEqual([]);
  });

  it("R5: two items with one id", () => {
    const violations = validateOpenAIResponsesInput([
      rUser,
      rCall("call_a", "fc_x"),
      rOutput("call_a"),
      rCall("call_b", "fc_x"),
      rOutput("call_b"),
    ]);
    expect(violations).toMatchObject([
      {
        rule: "R5",
        message: "Duplicate item found with id fc_x. Remove duplicate items from your input and try again.",
      },
    ]);
  });
});

// --- Anthropic -------------------------------------------------------------------------------------

const aUse = (id: string) => ({ type: "tool_use", id, name: "get_weather", input: {} });
const aResult = (id: string) => ({ type: "tool_result", tool_use_id: id, content: "sunny" });
const aText = (text: string) => ({ type: "text", text });
const user = (...content: unknown[]) => ({ role: "user", content });
const assistant = (...content: unknown[]) => ({ role: "assistant", content });

describe("validateAnthropicMessages", () => {
  it("accepts results first, text after, and merges consecutive user turns", () => {
    const messages = [
      { role: "user", content: "hi" },
      assistant(aText("let me check"), aUse("toolu_a"), aUse("toolu_b")),
      user(aResult("toolu_a")),
      user(aResult("toolu_b"), aText("and also")),
      { role: "assistant", content: "done" },
      { role: "user", content: "thanks" },
    ];
    expect(validateAnthropicMessages(messages, { noPrefill: true })).toEqual([]);
  });

  it("A1: tool_use ids without tool_result in the next turn", () => {
    const violations = validateAnthropicMessages([
      user(aText("hi")),
      assistant(aUse("toolu_a"), aUse("toolu_b")),
      user(aText("never mind")),
    ]);
    expect(violations).toMatchObject([
      {
        rule: "A1",
        path: "messages.1",
        message:
          "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a, " +
          "toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next " +
          "message.",
      },
    ]);
  });

  it("A1: a history ending on tool_use fails", () => {
    expect(only(validateAnthropicMessages([user(aText("hi")), assistant(aUse("toolu_a"))]), "A1")).toHaveLength(1);
  });

  it("A2: a tool_result that matches no tool_use of the previous assistant turn", () => {
    const violations = validateAnthropicMessages([
      user(aText("hi")),
      assistant(aUse("toolu_a")),
      user(aResult("toolu_a"), aResult("toolu_x")),
    ]);
    expect(violations).toMatchObject([
      {
        rule: "A2",
        path: "messages.2.content.1",
        message:
          "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each " +
          "`tool_result` block must have a corresponding `tool_use` block in the previous message.",
      },
    ]);
  });

  it("A2: a tool_result as first message", () => {
    expect(only(validateAnthropicMessages([user(aResult("toolu_a"), aText("hi"))]), "A2")).toHaveLength(1);
  });

  it("A3: a text block before the results (a user message inserted between call and results)", () => {
    const violations = validateAnthropicMessages([
      user(aText("hi")),
      assistant(aUse("toolu_a")),
      { role: "user", content: "wait" },
      user(aResult("toolu_a")),
    ]);
    expect(violations).toMatchObject([
      {
        rule: "A3",
        path: "messages.2",
        message:
          "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following " +
          "`tool_use` blocks must begin with a matching number of `tool_result` blocks.",
      },
    ]);
  });

  it("A4: a tool_use id used twice in the request", () => {
    const violations = validateAnthropicMessages([
      user(aText("hi")),
      assistant(aUse("toolu_a"), aUse("toolu_a")),
      user(aResult("toolu_a")),
    ]);
    expect(violations).toContainEqual(
      expect.objectContaining({
        rule: "A4",
        path: "messages.1.content.1",
        message: "messages.1.content.1: `tool_use` ids must be unique",
      }),
    );
  });

  it("A5: two results for one tool_use", () => {
    const violations = validateAnthropicMessages([
      user(aText("hi")),
      assistant(aUse("toolu_a")),
      user(aResult("toolu_a"), aResult("toolu_a")),
    ]);
    expect(violations).toMatchObject([
      {
        rule: "A5",
        path: "messages.2.content.1",
        message: "each tool_use must have a single result. Found multiple `tool_result` blocks with id: toolu_a",
      },
    ]);
  });

  it("A6: an id outside ^[a-zA-Z0-9_-]+$", () => {
    const violations = validateAnthropicMessages([
      user(aText("hi")),
      assistant(aText("x"), aUse("tooluse.a:1")),
      user(aResult("tooluse.a:1")),
    ]);
    expect(violations).toMatchObject([
      {
        rule: "A6",
        path: "messages.1.content.1.tool_use.id",
        message: "messages.1.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
      },
      {
        rule: "A6",
        path: "messages.2.content.0.tool_result.tool_use_id",
        message: "messages.2.content.0.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'",
      },
    ]);
  });

  it("A8: a trailing assistant message, only for no-prefill models", () => {
    const messages = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "Sure" },
    ];
    expect(validateAnthropicMessages(messages, { noPrefill: true })).toMatchObject([
      {
        rule: "A8",
        path: "messages.1",
        message:
          "This model does not support assistant message prefill. The conversation must end with a user message.",
      },
    ]);
    expect(validateAnthropicMessages(messages)).toEqual([]);
  });

  it("A9: an empty message that is not the final assistant one", () => {
    expect(
      validateAnthropicMessages([
        { role: "user", content: "hi" },
        { role: "assistant", content: "" },
        { role: "user", content: "x" },
      ]),
    ).toMatchObject([
      {
        rule: "A9",
        path: "messages.1",
        message: "messages.1: all messages must have non-empty content except for the optional final assistant message",
      },
    ]);
    expect(
      validateAnthropicMessages([
        { role: "user", content: "hi" },
        { role: "assistant", content: "" },
      ]),
    ).toEqual([]);
  });

  it("A9: a whitespace-only or empty text block", () => {
    const violations = validateAnthropicMessages([
      user(aText("hi"), aText("  \n")),
      assistant(aText("")),
      user(aText("x")),
    ]);
    expect(violations).toMatchObject([
      { rule: "A9", path: "messages.0.content.1", message: "text content blocks must contain non-whitespace text" },
      { rule: "A9", path: "messages.1.content.0", message: "text content blocks must be non-empty" },
    ]);
  });
});

// --- Bedrock Converse --------------------------------------------------------------------------------

const bText = (text: string) => ({ text });
const bUse = (toolUseId: string, name = "get_weather") => ({ toolUse: { toolUseId, name, input: {} } });
const bResult = (toolUseId: string, extra: Record<string, unknown> = {}) => ({
  toolResult: { toolUseId, content: [{ text: "sunny" }], ...extra },
});
const bUser = (...content: unknown[]) => ({ role: "user", content });
const bAssistant = (...content: unknown[]) => ({ role: "assistant", content });
const toolConfig = { tools: [{ toolSpec: { name: "get_weather", inputSchema: { json: { type: "object" } } } }] };
const converse = (...messages: unknown[]) => ({ messages, toolConfig });

describe("validateBedrockConverse", () => {
  it("accepts a complete exchange", () => {
    const request = converse(
      bUser(bText("hi")),
      bAssistant(bText("checking"), bUse("tooluse_a"), bUse("tooluse_b")),
      bUser(bResult("tooluse_b"), bResult("tooluse_a")),
      bAssistant(bText("done")),
      bUser(bText("thanks")),
    );
    expect(validateBedrockConverse(request, { noPrefill: true })).toEqual([]);
  });

  it("B1: the next user message lacks results for some ids", () => {
    const request = converse(bUser(bText("hi")), bAssistant(bUse("tooluse_a"), bUse("tooluse_b")), bUser(bText("hm")));
    expect(validateBedrockConverse(request)).toMatchObject([
      {
        rule: "B1",
        path: "messages.2.content",
        message: "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_a, tooluse_b",
      },
    ]);
  });

  it("B2: more results than the previous turn's toolUse blocks", () => {
    const request = converse(
      bUser(bText("hi")),
      bAssistant(bUse("tooluse_a")),
      bUser(bResult("tooluse_a"), bResult("tooluse_x")),
    );
    expect(validateBedrockConverse(request)).toMatchObject([
      {
        rule: "B2",
        path: "messages.2.content",
        message:
          "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of previous turn.",
      },
    ]);
  });

  it("B3: tool blocks without toolConfig", () => {
    const messages = [bUser(bText("hi")), bAssistant(bUse("tooluse_a")), bUser(bResult("tooluse_a"))];
    expect(validateBedrockConverse({ messages })).toMatchObject([
      {
        rule: "B3",
        path: "toolConfig",
        message: "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
      },
    ]);
    expect(validateBedrockConverse({ messages, toolConfig })).toEqual([]);
  });

  it("B4: a tool name or id outside the allowed pattern or length", () => {
    const request = converse(
      bUser(bText("hi")),
      bAssistant(bText("x"), bUse("tooluse_a", "weather.get")),
      bUser(bResult("tooluse_a")),
    );
    expect(validateBedrockConverse(request)).toMatchObject([
      {
        rule: "B4",
        path: "messages.1.member.content.1.member.toolUse.name",
        message:
          "Value at 'messages.1.member.content.1.member.toolUse.name' failed to satisfy constraint: Member " +
          "must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
      },
    ]);
    const long = "t".repeat(65);
    const tooLong = converse(bUser(bText("hi")), bAssistant(bUse(long)), bUser(bResult(long)));
    expect(validateBedrockConverse(tooLong).map((v) => v.message)).toEqual([
      "Value at 'messages.1.member.content.0.member.toolUse.toolUseId' failed to satisfy constraint: " +
        "Member must have length less than or equal to 64",
      "Value at 'messages.2.member.content.0.member.toolResult.toolUseId' failed to satisfy " +
        "constraint: Member must have length less than or equal to 64",
    ]);
  });

  it("B5: a conversation that starts with an assistant message", () => {
    expect(validateBedrockConverse({ messages: [bAssistant(bText("hello")), bUser(bText("hi"))] })).toMatchObject([
      {
        rule: "B5",
        path: "messages.0",
        message:
          "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
      },
    ]);
  });

  it("B6: two user messages in a row (a human message after tool results), unless alternation is not required", () => {
    const request = converse(
      bUser(bText("hi")),
      bAssistant(bUse("tooluse_a")),
      bUser(bResult("tooluse_a")),
      bUser(bText("next")),
    );
    expect(validateBedrockConverse(request)).toMatchObject([
      {
        rule: "B6",
        path: "messages.3",
        message:
          "A conversation must alternate between user and assistant roles. Make sure the conversation " +
          "alternates between user and assistant roles and try again.",
      },
    ]);
    expect(validateBedrockConverse(request, { requireAlternation: false })).toEqual([]);
  });

  it("B7: a trailing assistant message, only for no-prefill models", () => {
    const request = { messages: [bUser(bText("hi")), bAssistant(bText("Sure"))] };
    expect(validateBedrockConverse(request, { noPrefill: true })).toMatchObject([
      {
        rule: "B7",
        path: "messages.1",
        message:
          "The model returned the following errors: This model does not support assistant message prefill. " +
          "The conversation must end with a user message.",
      },
    ]);
    expect(validateBedrockConverse(request)).toEqual([]);
  });

  it("B8: a blank text block, in a message or inside a toolResult", () => {
    expect(
      validateBedrockConverse({ messages: [bUser(bText("hi")), bAssistant(bText(" \n")), bUser(bText("x"))] }),
    ).toMatchObject([
      {
        rule: "B8",
        path: "messages.1.content.0",
        message:
          "The text field in the ContentBlock object at messages.1.content.0 is blank. Add text to the text field, and try again.",
      },
    ]);
    const emptyResult = converse(
      bUser(bText("hi")),
      bAssistant(bUse("tooluse_a")),
      bUser({ toolResult: { toolUseId: "tooluse_a", content: [{ text: "" }] } }),
    );
    expect(validateBedrockConverse(emptyResult).map((v) => [v.rule, v.path])).toEqual([
      ["B8", "messages.2.content.0.toolResult.content.0"],
    ]);
  });

  it("B9: an empty content array", () => {
    expect(validateBedrockConverse({ messages: [bUser(bText("hi")), bAssistant(), bUser(bText("x"))] })).toMatchObject([
      {
        rule: "B9",
        path: "messages.1",
        message:
          "The content field in the Message object at messages.1 is empty. Add a ContentBlock object to the content field and try again.",
      },
    ]);
  });

  it("B10: an error result without content", () => {
    const request = (content: unknown[]) =>
      converse(
        bUser(bText("hi")),
        bAssistant(bUse("tooluse_a")),
        bUser({ toolResult: { toolUseId: "tooluse_a", status: "error", content } }),
      );
    expect(validateBedrockConverse(request([]))).toMatchObject([
      {
        rule: "B10",
        path: "messages.2.content.0.toolResult",
        message: "The content field at messages.2.content.0.toolResult cannot be empty when status value is error.",
      },
    ]);
    expect(validateBedrockConverse(request([{ text: "tool failed" }]))).toEqual([]);
  });
});

// --- Gemini --------------------------------------------------------------------------------------------

const gUser = { role: "user", parts: [{ text: "hi" }] };
const gModel = { role: "model", parts: [{ text: "hello" }] };
const gCall = (n = 1) => ({
  role: "model",
  parts: Array.from({ length: n }, (_, i) => ({ functionCall: { name: `f${i}`, args: {} } })),
});
const gResponse = (n = 1) => ({
  role: "user",
  parts: Array.from({ length: n }, (_, i) => ({ functionResponse: { name: `f${i}`, response: {} } })),
});

describe("validateGeminiContents", () => {
  it("accepts user, call, grouped responses, user", () => {
    expect(validateGeminiContents([gUser, gCall(2), gResponse(2), gModel, gUser])).toEqual([]);
  });

  it("G1: a call turn after a model turn", () => {
    expect(validateGeminiContents([gUser, gModel, gCall(), gResponse()])).toMatchObject([
      {
        rule: "G1",
        path: "contents[2]",
        message:
          "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
      },
    ]);
  });

  it("G2: a response turn that does not follow a call turn", () => {
    expect(validateGeminiContents([gUser, gModel, gResponse()])).toMatchObject([
      {
        rule: "G2",
        path: "contents[2]",
        message: "Please ensure that function response turn comes immediately after a function call turn.",
      },
    ]);
  });

  it("G3: parallel calls answered by separate contents", () => {
    const violations = validateGeminiContents([gUser, gCall(2), gResponse(1), gResponse(1)]);
    expect(violations).toContainEqual(
      expect.objectContaining({
        rule: "G3",
        path: "contents[2]",
        message:
          "Please ensure that the number of function response parts is equal to the number of function " +
          "call parts of the function call turn.",
      }),
    );
  });

  it("G5: a request ending on a model turn", () => {
    expect(validateGeminiContents([gUser, gModel])).toMatchObject([
      {
        rule: "G5",
        path: "contents[1]",
        message: "Please ensure that single turn requests end with a user role or the role field is empty.",
      },
    ]);
    expect(validateGeminiContents([gUser, gModel, { parts: [{ text: "no role" }] }])).toEqual([]);
  });
});

// --- Where each violation lands, and the ids it names ------------------------------------------------

describe("payloadIndex and toolCallIds", () => {
  const indexInPath = (path: string) => Number(/^(?:messages|input|contents)(?:\.|\[)(\d+)/.exec(path)?.[1]);

  const cases: [string, PayloadViolation[]][] = [
    [
      "openai",
      validateOpenAIChatMessages([
        oTool("call_z"),
        oUser(),
        oAssistant("call_a", "call_b"),
        oTool("call_a"),
        oTool("call_a"),
        oUser("x"),
      ]),
    ],
    [
      "responses",
      validateOpenAIResponsesInput([
        rUser,
        rCall("call_x", "fc_1"),
        rOutput("call_y"),
        rCall("call_z", "fc_1"),
        rOutput("call_z"),
      ]),
    ],
    [
      "anthropic",
      validateAnthropicMessages([
        user(aResult("toolu_x")),
        assistant(aUse("toolu_a"), aUse("toolu_a")),
        user(aText("hm")),
      ]),
    ],
    [
      "bedrock",
      validateBedrockConverse(
        converse(bAssistant(bText(" ")), bUser(bText("hi")), bAssistant(bUse("a.b")), bUser(bText("x"))),
      ),
    ],
    ["gemini", validateGeminiContents([gUser, gModel, gResponse(), gModel])],
  ];

  for (const [name, violations] of cases) {
    it(`${name}: the index a path names is the payloadIndex, and every named id is in the text`, () => {
      expect(violations.length).toBeGreaterThan(1);
      for (const v of violations) {
        if (v.path && /^(messages|input|contents)/.test(v.path))
          expect(v.payloadIndex, v.message).toBe(indexInPath(v.path));
        for (const id of v.toolCallIds ?? []) expect(v.message).toContain(id);
      }
    });
  }

  it("names the ids and entries a provider would", () => {
    expect(cases[0][1].map((v) => [v.rule, v.payloadIndex, v.toolCallIds])).toEqual([
      ["O2", 0, undefined],
      ["O1", 2, ["call_b"]],
      ["O3", 4, ["call_a"]],
    ]);
    expect(cases[1][1].map((v) => [v.rule, v.payloadIndex, v.toolCallIds])).toEqual([
      ["R1", 1, ["call_x"]],
      ["R2", 2, ["call_y"]],
      ["R5", 3, ["fc_1"]],
    ]);
    expect(cases[3][1].find((v) => v.rule === "B1")).toMatchObject({ payloadIndex: 3, toolCallIds: ["a.b"] });
  });
});

describe("validators read a payload leniently, but never throw a raw error", () => {
  it("a payload whose entries cannot be read is an input error naming the validator's argument", () => {
    const entries = [
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ];
    for (const [name, argument, fn] of [
      ["validateOpenAIChatMessages", "messages", (p: unknown) => validateOpenAIChatMessages(p)],
      ["validateOpenAIResponsesInput", "input", (p: unknown) => validateOpenAIResponsesInput(p)],
      ["validateAnthropicMessages", "messages", (p: unknown) => validateAnthropicMessages(p)],
      ["validateGeminiContents", "contents", (p: unknown) => validateGeminiContents(p)],
      ["validateBedrockConverse", "request", (p: unknown) => validateBedrockConverse({ messages: p })],
    ] as const) {
      expect(errorOf(() => fn(throwingAt(entries, 1)))).toMatchObject(
        inputError(argument, `${name}: ${argument} could not be read (IDX)`),
      );
      expect(fn(42)).toEqual(name === "validateBedrockConverse" ? expect.any(Array) : []);
    }
    expect(errorOf(() => validateBedrockConverse(throwingObject()))).toMatchObject(
      inputError("request", "could not be read (GETTER)"),
    );
  });

  it("options are checked, each named", () => {
    expect(errorOf(() => validateAnthropicMessages([], { noPrefill: "yes" } as never))).toMatchObject(
      inputError("options.noPrefill", "expected a boolean"),
    );
    expect(errorOf(() => validateAnthropicMessages([], { systemInMessages: "all" } as never))).toMatchObject(
      inputError("options.systemInMessages"),
    );
    expect(errorOf(() => validateBedrockConverse({}, { requireAlternation: 1 } as never))).toMatchObject(
      inputError("options.requireAlternation"),
    );
    expect(errorOf(() => validateBedrockConverse({}, throwingObject() as never))).toMatchObject(
      inputError("options.noPrefill", "could not be read (GETTER)"),
    );
    expect(errorOf(() => validateAnthropicMessages([], "x" as never))).toMatchObject(inputError("options"));
  });
});
