import { readFileSync } from "node:fs";
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { parseToolPairingError } from "../../src/recovery/parse-error";
import type { ProviderRejection } from "../../src/types";
import { aiWithCalls, human, toolResult } from "../support/builders";

/** What a LangChain chat model throws for each text: a plain Error, as most wrappers end up. */
const parse = (text: string, options?: Parameters<typeof parseToolPairingError>[1]) =>
  parseToolPairingError(new Error(text), options);
const summary = (r: ProviderRejection | undefined) =>
  r && { provider: r.provider, kind: r.kind, rule: r.rule, toolCallIds: r.toolCallIds, payloadIndex: r.payloadIndex };

describe("every error text of docs/provider-rules.md", () => {
  const cases: [string, string, Partial<ProviderRejection>][] = [
    [
      "O1",
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
        "'tool_call_id'. The following tool_call_ids did not have response messages: call_a, call_b",
      { provider: "openai", kind: "missing_results", toolCallIds: ["call_a", "call_b"] },
    ],
    [
      "O1b DeepSeek",
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
        "'tool_call_id'. (insufficient tool messages following tool_calls message)",
      { provider: "openai", kind: "missing_results", rule: "O1", toolCallIds: [] },
    ],
    [
      "O1b Qwen",
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
        "'tool_call_id'. The following tool_call_ids did not have response messages: message[532].role",
      { provider: "openai", kind: "missing_results", rule: "O1", toolCallIds: [], payloadIndex: 532 },
    ],
    [
      "O2",
      "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
      { provider: "openai", kind: "unexpected_results", toolCallIds: [] },
    ],
    [
      "O3",
      "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_x', in messages[7] and messages[8].",
      { provider: "openai", kind: "duplicate_results", toolCallIds: ["call_x"], payloadIndex: 8 },
    ],
    [
      "O4",
      "Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum length " +
        "40, but got a string with length 41 instead.",
      { provider: "openai", kind: "invalid_id", toolCallIds: [], payloadIndex: 2 },
    ],
    [
      "O5",
      "Invalid 'messages[1].tool_calls[0].function.name': string does not match pattern. Expected a " +
        "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
      { provider: "openai", kind: "invalid_tool_name", payloadIndex: 1 },
    ],
    [
      "R6",
      "Item 'fc_x' of type 'function_call' was provided without its required 'reasoning' item: 'rs_x'.",
      { provider: "openai-responses", kind: "reasoning_item_unpaired", toolCallIds: ["fc_x", "rs_x"] },
    ],
    [
      "R7",
      "Item 'rs_x' of type 'reasoning' was provided without its required following item.",
      { provider: "openai-responses", kind: "reasoning_item_unpaired", toolCallIds: ["rs_x"] },
    ],
    [
      "G6",
      "Function call is missing a thought_signature in functionCall parts. This is required for tools " +
        "to work correctly, and missing thought_signature may lead to degraded model performance. " +
        "Additional data, function call `default_api:get_weather` , position 2. Please refer to " +
        "https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
      { provider: "gemini", kind: "missing_thought_signature", toolCallIds: [] },
    ],
    [
      "R1",
      "No tool output found for function call call_x.",
      { provider: "openai-responses", kind: "missing_results", toolCallIds: ["call_x"] },
    ],
    [
      "R2",
      "No tool call found for function call output with call_id call_x.",
      { provider: "openai-responses", kind: "unexpected_results", toolCallIds: ["call_x"] },
    ],
    [
      "R3",
      "Invalid 'input[95].call_id': string too long. Expected a string with maximum length 64, but got a string with length 70 instead.",
      { provider: "openai-responses", kind: "invalid_id", payloadIndex: 95 },
    ],
    [
      "R5",
      "Duplicate item found with id fc_x. Remove duplicate items from your input and try again.",
      { provider: "openai-responses", kind: "duplicate_ids", toolCallIds: ["fc_x"] },
    ],
    [
      "A1",
      "messages.22: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a, " +
        "toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next " +
        "message.",
      { provider: "anthropic", kind: "missing_results", toolCallIds: ["toolu_a", "toolu_b"], payloadIndex: 22 },
    ],
    [
      "A2",
      "messages.48.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each " +
        "`tool_result` block must have a corresponding `tool_use` block in the previous message.",
      { provider: "anthropic", kind: "unexpected_results", toolCallIds: ["toolu_x"], payloadIndex: 48 },
    ],
    [
      "A3",
      "Did not find 1 tool_result block(s) at the beginning of this message. Messages following " +
        "tool_use blocks must begin with a matching number of tool_result blocks.",
      { provider: "anthropic", kind: "results_not_first" },
    ],
    [
      "A4",
      "messages.1.content.1: `tool_use` ids must be unique",
      { provider: "anthropic", kind: "duplicate_ids", payloadIndex: 1 },
    ],
    [
      "A5",
      "each tool_use must have a single result. Found multiple `tool_result` blocks with id: toolu_x",
      { provider: "anthropic", kind: "duplicate_results", toolCallIds: ["toolu_x"] },
    ],
    [
      "A6",
      "messages.1.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
      { provider: "anthropic", kind: "invalid_id", payloadIndex: 1 },
    ],
    [
      "A8",
      "This model does not support assistant message prefill. The conversation must end with a user message.",
      { provider: "anthropic", kind: "must_end_with_user" },
    ],
    [
      "A9",
      "messages.0: all messages must have non-empty content except for the optional final assistant message",
      { provider: "anthropic", kind: "empty_content", payloadIndex: 0 },
    ],
    [
      "A9 blank",
      "text content blocks must contain non-whitespace text",
      { provider: "anthropic", kind: "blank_text", rule: "A9" },
    ],
    [
      "A10",
      "Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a " +
        "final `assistant` message must start with a thinking block (preceeding the lastmost set of " +
        "`tool_use` and `tool_result` blocks).",
      { provider: "anthropic", kind: "thinking_block_required" },
    ],
    [
      "A12",
      "Unsupported content block type: thinking",
      { provider: "bedrock", kind: "unsupported_content_block", toolCallIds: [] },
    ],
    [
      "B1",
      "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_a, tooluse_b",
      { provider: "bedrock", kind: "missing_results", toolCallIds: ["tooluse_a", "tooluse_b"], payloadIndex: 2 },
    ],
    [
      "B2",
      "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of previous turn.",
      { provider: "bedrock", kind: "unexpected_results", payloadIndex: 2 },
    ],
    [
      "B3",
      "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
      { provider: "bedrock", kind: "tool_config_missing" },
    ],
    [
      "B4",
      "Value at 'messages.73.member.content.2.member.toolUse.name' failed to satisfy constraint: " +
        "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
      { provider: "bedrock", kind: "invalid_tool_name", payloadIndex: 73 },
    ],
    [
      "B4 id",
      "1 validation error detected: Value at 'messages.1.member.content.0.member.toolUse.toolUseId' " +
        "failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
      { provider: "bedrock", kind: "invalid_id", rule: "B4", payloadIndex: 1 },
    ],
    [
      "B5",
      "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
      { provider: "bedrock", kind: "must_start_with_user" },
    ],
    [
      "B6",
      "A conversation must alternate between user and assistant roles. Make sure the conversation " +
        "alternates between user and assistant roles and try again.",
      { provider: "bedrock", kind: "roles_must_alternate" },
    ],
    [
      "B7",
      "The model returned the following errors: This model does not support assistant message prefill. " +
        "The conversation must end with a user message.",
      { provider: "bedrock", kind: "must_end_with_user" },
    ],
    [
      "B7 Llama",
      "The model that you are using requires the last turn in the conversation to be a user message. " +
        "Add a user message to the conversation and try again.",
      { provider: "bedrock", kind: "must_end_with_user", rule: "B7" },
    ],
    [
      "B8",
      "The text field in the ContentBlock object at messages.1.content.0 is blank. Add text to the text field, and try again.",
      { provider: "bedrock", kind: "blank_text", payloadIndex: 1 },
    ],
    [
      "B9",
      "The content field in the Message object at messages.355 is empty. Add a ContentBlock object to the content field and try again.",
      { provider: "bedrock", kind: "empty_content", payloadIndex: 355 },
    ],
    [
      "B10",
      "The content field at messages.3.content.0.toolResult cannot be empty when status value is error.",
      { provider: "bedrock", kind: "empty_content", payloadIndex: 3 },
    ],
    [
      "G1",
      "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
      { provider: "gemini", kind: "misplaced_calls" },
    ],
    [
      "G2",
      "Please ensure that function response turn comes immediately after a function call turn.",
      { provider: "gemini", kind: "unexpected_results" },
    ],
    [
      "G3",
      "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
      { provider: "gemini", kind: "result_count_mismatch", toolCallIds: [] },
    ],
    [
      "G5",
      "Please ensure that single turn requests end with a user role or the role field is empty.",
      { provider: "gemini", kind: "must_end_with_user" },
    ],
    [
      "A3 counted",
      "messages.4: Did not find 2 tool_result block(s) at the beginning of this message. Messages " +
        "following tool_use blocks must begin with a matching number of tool_result blocks.",
      { provider: "anthropic", kind: "results_not_first", rule: "A3", payloadIndex: 4 },
    ],
    [
      "A10",
      "messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. " +
        "When `thinking` is enabled, a final `assistant` message must start with a thinking block " +
        "(preceeding the lastmost set of `tool_use` and `tool_result` blocks).",
      { provider: "anthropic", kind: "thinking_block_required", payloadIndex: 3 },
    ],
    [
      "B11",
      "The model returned the following errors: messages.1.content.0.type: Expected `thinking` or " +
        "`redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` " +
        "message must start with a thinking block (preceeding the lastmost set of `tool_use` and " +
        "`tool_result` blocks).",
      { provider: "bedrock", kind: "thinking_block_required", payloadIndex: 1 },
    ],
    [
      "A13",
      "messages.3: `web_fetch` tool use with id `srvtoolu_01Ab` was found without a corresponding `web_fetch_tool_result` block",
      { provider: "anthropic", kind: "server_tool_result_missing", toolCallIds: ["srvtoolu_01Ab"], payloadIndex: 3 },
    ],
    [
      "A14",
      "messages.1.content.0.thinking.signature: Field required",
      { provider: "anthropic", kind: "unsigned_reasoning", payloadIndex: 1 },
    ],
    [
      "A14 redacted",
      "messages.5.content.0.redacted_thinking.data: Field required",
      { provider: "anthropic", kind: "unsigned_reasoning", rule: "A14", payloadIndex: 5 },
    ],
    [
      "A14 invalid",
      "messages.1.content.0: Invalid `signature` in `thinking` block",
      { provider: "anthropic", kind: "unsigned_reasoning", rule: "A14", payloadIndex: 1 },
    ],
    [
      "B12",
      "The model returned the following errors: messages.1.content.0.thinking.signature: Field required",
      { provider: "bedrock", kind: "unsigned_reasoning", payloadIndex: 1 },
    ],
  ];

  for (const [name, text, expected] of cases) {
    it(name, () => {
      const rule = expected.rule ?? name.split(" ")[0];
      expect(parse(text)).toMatchObject({ ...expected, rule, text });
    });
  }

  /** Rows of the docs' tables: rule id and the backticked error texts of the third column. */
  function documentedTexts(): [string, string][] {
    const rows: [string, string][] = [];
    for (const line of readFileSync(new URL("../../docs/provider-rules.md", import.meta.url), "utf8").split("\n")) {
      const cells = line.split(" | ");
      const rule = /^\| ([A-Z]\d+b?) $/.exec(`${cells[0]} `)?.[1];
      if (!rule || rule === "A11") continue; // A11 has no fixed text ("400 invalid_request_error naming the message")
      for (const span of cells[2].matchAll(/``(.+?)``|`([^`]+)`/g)) rows.push([rule, (span[1] ?? span[2]).trim()]);
    }
    return rows;
  }

  it("the docs' tables hold every rule above", () => {
    const documented = new Set(documentedTexts().map(([rule]) => rule));
    for (const [name] of cases) expect(documented.has(name.split(" ")[0]), name).toBe(true);
  });

  for (const [rule, text] of documentedTexts()) {
    it(`docs ${rule}: ${text.slice(0, 60)}`, () => {
      const parsed = parse(text);
      expect(parsed, text).toBeDefined();
      // O1b is a variant of O1; the prefill text is A8 on Anthropic and B7 on Bedrock.
      const family = rule === "O1b" ? "O1" : rule;
      expect(parsed!.rule === family || (rule === "B7" && parsed!.rule === "A8")).toBe(true);
    });
  }
});

describe("ids as providers and adapters write them", () => {
  it("reads ids with hyphens, underscores, dots, colons and any length", () => {
    const long = `tooluse_${"x".repeat(5000)}`;
    expect(
      parse(
        `Expected toolResult blocks at messages.2.content for the following Ids: functions.get_weather:0, call-a_b.c, ${long}`,
      )?.toolCallIds,
    ).toEqual(["functions.get_weather:0", "call-a_b.c", long]);
    expect(parse("No tool output found for function call fn.a-b_c:9.")?.toolCallIds).toEqual(["fn.a-b_c:9"]);
  });

  it("stops at the sentence after an id list, and at LangChain's troubleshooting line", () => {
    expect(
      parse(
        "400 An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
          "'tool_call_id'. The following tool_call_ids did not have response messages: call_1, " +
          "call_2\n\nTroubleshooting URL: " +
          "https://docs.langchain.com/oss/javascript/langchain/errors/INVALID_TOOL_RESULTS/\n",
      )?.toolCallIds,
    ).toEqual(["call_1", "call_2"]);
  });

  it("LangGraph's INVALID_CHAT_HISTORY: the ids of the listed calls, not ids inside their arguments (JSON and Python repr)", () => {
    const json =
      "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. " +
      `Here are the first few of those tool calls: ${JSON.stringify([
        { name: "lookup", args: { id: "user-7", nested: { id: "x" } }, id: "call_a", type: "tool_call" },
        { name: "f", args: {}, id: "call_b", type: "tool_call" },
      ])}.\n\nEvery tool call (LLM requesting to call a tool) in the message history MUST have a corresponding ToolMessage`;
    expect(summary(parse(json))).toEqual({
      provider: "langgraph",
      kind: "missing_results",
      rule: "INVALID_CHAT_HISTORY",
      toolCallIds: ["call_a", "call_b"],
      payloadIndex: undefined,
    });
    const repr =
      "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. Here are the " +
      "first few of those tool calls: [{'name': 'lookup', 'args': {'id': 'user-7', 'q': \"it's\"}, " +
      "'id': 'toolu_01', 'type': 'tool_call'}]";
    expect(parse(repr)?.toolCallIds).toEqual(["toolu_01"]);
  });

  it("LangGraph's INVALID_CHAT_HISTORY with a quoted id list, in either quote style", () => {
    const head =
      "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. Here are the first few of the tool 'id' values: ";
    expect(summary(parse(`${head}['tooluse_xYz123-abc', 'call_2']`))).toEqual({
      provider: "langgraph",
      kind: "missing_results",
      rule: "INVALID_CHAT_HISTORY",
      toolCallIds: ["tooluse_xYz123-abc", "call_2"],
      payloadIndex: undefined,
    });
    expect(parse(`${head}["call_a", "call_b"]`)?.toolCallIds).toEqual(["call_a", "call_b"]);
  });

  it("a 1 MB text: every id list is capped, and the text kept is 4 KB", () => {
    const text = `Expected toolResult blocks at messages.2.content for the following Ids: ${"a, ".repeat(350_000)}z`;
    const parsed = parse(text)!;
    expect(parsed.toolCallIds).toHaveLength(1000);
    expect(parsed.text.length).toBe(4096);
    const buried = `${"x".repeat(1_000_000)} No tool output found for function call call_late.`;
    expect(parse(buried)?.toolCallIds).toEqual(["call_late"]);
  });
});

const B1 = "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_a";

describe("error shapes", () => {
  it("a bare string and a plain Error", () => {
    expect(parseToolPairingError(B1)?.toolCallIds).toEqual(["tooluse_a"]);
    expect(parseToolPairingError(new Error(B1))?.toolCallIds).toEqual(["tooluse_a"]);
  });

  it("an AWS SDK ValidationException (ChatBedrockConverse rethrows it as is)", () => {
    const error = Object.assign(new Error(B1), {
      name: "ValidationException",
      $fault: "client",
      $metadata: { httpStatusCode: 400 },
      __type: "ValidationException",
    });
    expect(parseToolPairingError(error)?.provider).toBe("bedrock");
  });

  it("the Anthropic SDK's error: the provider's message inside the JSON body, not the SDK's summary", () => {
    const message =
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a. " +
      "Each `tool_use` block must have a corresponding `tool_result` block in the next message.";
    const body = { type: "error", error: { type: "invalid_request_error", message } };
    const error = Object.assign(new Error(`400 ${JSON.stringify(body)}`), { status: 400, error: body });
    expect(parseToolPairingError(error)).toMatchObject({
      provider: "anthropic",
      toolCallIds: ["toolu_a"],
      text: message,
      payloadIndex: 1,
    });
  });

  it("the OpenAI SDK's error: a position from `param` when the text has none", () => {
    const message =
      "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
    const error = Object.assign(new Error(`400 ${message}`), {
      status: 400,
      error: { message, type: "invalid_request_error", param: "messages.[2].role", code: null },
      param: "messages.[2].role",
    });
    expect(parseToolPairingError(error)).toMatchObject({
      provider: "openai",
      kind: "unexpected_results",
      payloadIndex: 2,
      text: message,
    });
  });

  it("Google errors: @google/generative-ai, google-common (gaxios) and @google/genai shapes", () => {
    const g3 =
      "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";
    const fetchError = Object.assign(
      new Error(
        "[GoogleGenerativeAI Error]: Error fetching from " +
          "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent: [400 " +
          `Bad Request] ${g3}`,
      ),
      { status: 400, statusText: "Bad Request" },
    );
    const gaxios = Object.assign(new Error("Request failed with status code 400"), {
      response: { status: 400, data: { error: { code: 400, message: g3, status: "INVALID_ARGUMENT" } } },
    });
    const genai = Object.assign(
      new Error(JSON.stringify({ error: { code: 400, message: g3, status: "INVALID_ARGUMENT" } })),
      { name: "ApiError", status: 400 },
    );
    for (const error of [fetchError, gaxios, genai])
      expect(parseToolPairingError(error)).toMatchObject({ provider: "gemini", kind: "result_count_mismatch" });
    expect(parseToolPairingError(gaxios)?.text).toBe(g3);
  });

  it("LangChain's wrapped errors: the cause chain is followed (a middleware error around the SDK's error)", () => {
    const sdk = Object.assign(new Error(B1), { name: "ValidationException", $metadata: { httpStatusCode: 400 } });
    const wrapped = new Error("Model call failed", { cause: new Error(B1.slice(0, 10), { cause: sdk }) });
    expect(parseToolPairingError(wrapped)).toMatchObject({ provider: "bedrock", toolCallIds: ["tooluse_a"] });
  });

  it("the caller's provider decides only texts several providers send; the error's shape and the text win", () => {
    const prefill =
      "This model does not support assistant message prefill. The conversation must end with a user message.";
    expect(parse(prefill, { provider: "bedrock" })?.provider).toBe("bedrock");
    expect(parse(prefill)?.provider).toBe("anthropic");
    expect(parse("No tool output found for function call call_x.", { provider: "openai" })?.provider).toBe(
      "openai-responses",
    );
    // A thread repaired for OpenAI, sent to Bedrock: the caller says openai, the error says Bedrock.
    expect(parse(B1, { provider: "openai" })?.provider).toBe("bedrock");
    const aws = Object.assign(new Error(prefill), { name: "ValidationException", $metadata: { httpStatusCode: 400 } });
    expect(parseToolPairingError(aws, { provider: "anthropic" })?.provider).toBe("bedrock");
    // Bedrock's wrapper of model errors is Bedrock's own text, even without the AWS error's shape.
    const wrapped = `The model returned the following errors: ${prefill}`;
    expect(parse(wrapped, { provider: "anthropic" })).toMatchObject({ provider: "bedrock", rule: "B7" });
  });
});

describe("not about the history: undefined", () => {
  const history = "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_a";
  const cases: [string, unknown][] = [
    [
      "429 rate limit",
      Object.assign(
        new Error("429 Rate limit reached for gpt-4.1-mini in organization org-x on tokens per min (TPM)"),
        { status: 429 },
      ),
    ],
    ["a 429 whose body quotes a history text", Object.assign(new Error(history), { status: 429 })],
    [
      "Bedrock throttling",
      Object.assign(new Error("Too many requests, please wait before trying again."), {
        name: "ThrottlingException",
        $metadata: { httpStatusCode: 429 },
      }),
    ],
    ["500", Object.assign(new Error("500 Internal server error"), { status: 500 })],
    [
      "529 overloaded",
      Object.assign(new Error('529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'), {
        status: 529,
      }),
    ],
    [
      "Bedrock 5xx with a history text",
      Object.assign(new Error(history), { $fault: "server", $metadata: { httpStatusCode: 503 } }),
    ],
    ["401", Object.assign(new Error("401 Incorrect API key provided"), { status: 401 })],
    [
      "OpenAI context length",
      Object.assign(
        new Error(
          "400 This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        ),
        { status: 400, code: "context_length_exceeded" },
      ),
    ],
    [
      "Anthropic context length",
      Object.assign(new Error("prompt is too long: 210000 tokens > 200000 maximum"), { status: 400 }),
    ],
    [
      "Bedrock context length",
      Object.assign(new Error("Input is too long for requested model."), {
        name: "ValidationException",
        $metadata: { httpStatusCode: 400 },
      }),
    ],
    ["network", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" })],
    ["abort", Object.assign(new Error(history), { name: "AbortError" })],
    [
      "an abort around a history text",
      new Error("aborted", { cause: Object.assign(new Error("The operation was aborted"), { name: "AbortError" }) }),
    ],
    ["nothing", undefined],
    ["null", null],
    ["a number", 400],
    ["an empty object", {}],
  ];
  for (const [name, error] of cases) it(name, () => expect(parseToolPairingError(error)).toBeUndefined());

  // No history change fixes a tool definition, although the text ends like O5 ("Expected a string that matches the pattern ...").
  const definitionText =
    "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.";
  it("OpenAI's error about a tool definition's name (the O5 sentence under a `tools[...]` path)", () => {
    const sdkError = Object.assign(new Error(`400 ${definitionText}`), {
      status: 400,
      error: {
        message: definitionText,
        type: "invalid_request_error",
        param: "tools[0].function.name",
        code: "invalid_value",
      },
    });
    expect(parseToolPairingError(sdkError, { provider: "openai" })).toBeUndefined();
    expect(parse(definitionText, { provider: "openai" })).toBeUndefined();
  });

  // B4 is about a tool call's id or name; Bedrock's other constraints on paths inside tool blocks (a result's text
  // over the length limit, a tool input's size) are not fixed by renaming ids.
  it("Bedrock constraints on other fields of a tool block (a result's text length, a tool input)", () => {
    const aws = (path: string, constraint: string) =>
      Object.assign(
        new Error(`1 validation error detected: Value at '${path}' failed to satisfy constraint: ${constraint}`),
        { name: "ValidationException", $metadata: { httpStatusCode: 400 } },
      );
    expect(
      parseToolPairingError(
        aws(
          "messages.3.member.content.1.member.toolResult.content.0.member.text",
          "Member must have length less than or equal to 100000",
        ),
      ),
    ).toBeUndefined();
    expect(
      parseToolPairingError(aws("messages.2.member.content.0.member.toolUse.input", "Member must not be null")),
    ).toBeUndefined();
    expect(
      parseToolPairingError(
        aws(
          "messages.2.member.content.0.member.toolResult.status",
          "Member must satisfy enum value set: [success, error]",
        ),
      ),
    ).toBeUndefined();
    // The id and the name themselves still are.
    expect(
      parseToolPairingError(
        aws(
          "messages.2.member.content.0.member.toolResult.toolUseId",
          "Member must have length less than or equal to 64",
        ),
      )?.kind,
    ).toBe("invalid_id");
    expect(
      parseToolPairingError(
        aws("messages.2.member.content.0.member.toolUse.name", "Member must have length less than or equal to 64"),
      )?.kind,
    ).toBe("invalid_tool_name");
  });

  it("other request parameters: tool_choice, response_format, Responses text.format, and a `param` naming tools", () => {
    expect(
      parse("Invalid 'tool_choice': Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."),
    ).toBeUndefined();
    expect(
      parse(
        "Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string " +
          "that matches the pattern '^[a-zA-Z0-9_-]+$'.",
      ),
    ).toBeUndefined();
    expect(
      parse(
        "Invalid 'text.format.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
      ),
    ).toBeUndefined();
    const withParam = Object.assign(
      new Error("string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."),
      { status: 400, param: "tools[3].function.name" },
    );
    expect(parseToolPairingError(withParam)).toBeUndefined();
  });

  it("the same sentence about a call in the history is still O5", () => {
    expect(
      summary(
        parse(
          "Invalid 'messages[2].tool_calls[0].function.name': string does not match pattern. Expected a " +
            "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        ),
      ),
    ).toMatchObject({ rule: "O5", kind: "invalid_tool_name" });
    expect(summary(parse("Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."))).toMatchObject({
      rule: "O5",
      kind: "invalid_tool_name",
    });
  });

  it("never throws: throwing getters, cyclic causes", () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error("boom");
        },
      },
    );
    expect(parseToolPairingError(hostile)).toBeUndefined();
    const a: Record<string, unknown> = { message: "x" };
    a.cause = { message: "y", cause: a };
    expect(parseToolPairingError(a)).toBeUndefined();
  });
});

describe("messageIndex: the provider's position mapped back to the LangChain messages that were sent", () => {
  it("Bedrock: the system message is lifted out, results merged into one user turn", () => {
    const sent = [
      new SystemMessage("s"),
      human("q"),
      aiWithCalls("a", "b"),
      toolResult("a"),
      toolResult("b"),
      human("next"),
      aiWithCalls("c"),
      human("again"),
    ];
    const parsed = parse("Expected toolResult blocks at messages.5.content for the following Ids: c", {
      messages: sent,
      provider: "bedrock",
    });
    expect(parsed).toMatchObject({ payloadIndex: 5, messageIndex: 7 });
    const blank = parse(
      "The text field in the ContentBlock object at messages.2.content.1 is blank. Add text to the text field, and try again.",
      { messages: sent },
    );
    expect(blank).toMatchObject({ payloadIndex: 2, messageIndex: 4 });
  });

  it("Anthropic: a block index inside merged results names the very ToolMessage", () => {
    const sent = [human("q"), aiWithCalls("toolu_a", "toolu_b"), toolResult("toolu_a"), toolResult("toolu_x")];
    const text =
      "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each " +
      "`tool_result` block must have a corresponding `tool_use` block in the previous message.";
    expect(parse(text, { messages: sent })).toMatchObject({
      payloadIndex: 2,
      messageIndex: 3,
      toolCallIds: ["toolu_x"],
    });
  });

  it("OpenAI Chat Completions: one entry per message, system included", () => {
    const sent = [
      new SystemMessage("s"),
      human("q"),
      aiWithCalls("call_a"),
      toolResult("call_a"),
      toolResult("call_a"),
    ];
    expect(
      parse("Invalid parameter: Duplicate value for 'tool_call_id' of 'call_a', in messages[3] and messages[4].", {
        messages: sent,
      })?.messageIndex,
    ).toBe(4);
  });

  it("Responses: items per call", () => {
    const sent = [
      human("q"),
      new AIMessage({
        content: "",
        tool_calls: [
          { id: "a", name: "f", args: {} },
          { id: "b".repeat(70), name: "f", args: {} },
        ],
      }),
    ];
    const text =
      "Invalid 'input[3].call_id': string too long. Expected a string with maximum length 64, but got a string with length 70 instead.";
    expect(parse(text, { messages: sent })).toMatchObject({ payloadIndex: 3, messageIndex: 1 });
  });

  it("no messageIndex without the messages, or for a position nothing was built from", () => {
    expect(
      parse("Expected toolResult blocks at messages.2.content for the following Ids: c")?.messageIndex,
    ).toBeUndefined();
    const sent = [new HumanMessage("q"), aiWithCalls("c")];
    const beyond = parse("Expected toolResult blocks at messages.2.content for the following Ids: c", {
      messages: sent,
    });
    expect(beyond?.payloadIndex).toBe(2);
    expect(beyond?.messageIndex).toBeUndefined();
    expect(
      parse("Expected toolResult blocks at messages.1.content for the following Ids: c", { messages: [42 as never] })
        ?.messageIndex,
    ).toBeUndefined();
  });
});

describe("the corpus of docs/recovery.md", () => {
  /** Its rows: rule, kind, ids, position, text (a code span, in single or double backticks). */
  const rows = readFileSync(new URL("../../docs/recovery.md", import.meta.url), "utf8")
    .split("\n")
    .flatMap((line) => {
      const match = /^\| ([A-Z][\w]*) \| (\w+) \| ([^|]*)\| ([^|]*)\| (?:``(.+)``|`(.+)`) \|$/.exec(line);
      return match ? [match] : [];
    });

  it("holds the texts the issue recorded", () => expect(rows.length).toBeGreaterThanOrEqual(6));

  for (const [, rule, kind, ids, position, ticked, plain] of rows) {
    const text = ticked ?? plain;
    it(`${rule}: ${text.slice(0, 70)}`, () => {
      const parsed = parse(text);
      expect(parsed, text).toMatchObject({ rule, kind, toolCallIds: ids.trim() ? ids.trim().split(", ") : [] });
      expect(parsed!.payloadIndex).toBe(position.trim() ? Number(position) : undefined);
    });
  }
});

describe("the clients' error code for pairing rejections", () => {
  const sdkError = (message: string, body: Record<string, unknown>) =>
    Object.assign(new Error(message), { status: 400, error: body, lc_error_code: "INVALID_TOOL_RESULTS" });

  it("an error with the code and a text no rule knows is a pairing rejection, from the sender its shape shows", () => {
    const error = sdkError("400 a new wording", {
      type: "error",
      error: { type: "invalid_request_error", message: "x" },
    });
    expect(parseToolPairingError(error)).toMatchObject({
      provider: "anthropic",
      kind: "invalid_tool_results",
      rule: "INVALID_TOOL_RESULTS",
      toolCallIds: [],
    });
  });

  it("a known text wins over the code", () => {
    const error = sdkError("400 No tool output found for function call call_x.", { message: "m", param: "input" });
    expect(parseToolPairingError(error)).toMatchObject({
      kind: "missing_results",
      rule: "R1",
      toolCallIds: ["call_x"],
    });
  });

  it("the code on an error about a tool definition is no rejection", () => {
    const body = { type: "error", error: { type: "invalid_request_error", message: "tools.0.custom.name: too long" } };
    expect(parseToolPairingError(sdkError("400 tools.0.custom.name: too long", body))).toBeUndefined();
  });

  it("without the code, the same unknown text is no rejection", () => {
    const error = Object.assign(new Error("400 a new wording"), { status: 400 });
    expect(parseToolPairingError(error)).toBeUndefined();
  });
});
