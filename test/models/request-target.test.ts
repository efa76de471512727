/** Whether a request is sure to carry no tools: only where the model reads them from the call options alone. */
import { ChatAnthropic } from "@langchain/anthropic";
import { ChatBedrockConverse } from "@langchain/aws";
import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { callOptionsCarryNoTools, toolsComeFromCallOptions } from "../../src/models/request-target";

const credentials = { accessKeyId: "x", secretAccessKey: "x" };
const bedrock = () =>
  new ChatBedrockConverse({ model: "us.anthropic.claude-sonnet-4-6-v1:0", region: "us-east-1", credentials });
const weather = {
  type: "function",
  function: { name: "get_weather", description: "weather", parameters: { type: "object", properties: {} } },
} as const;

describe("toolsComeFromCallOptions", () => {
  it("ChatBedrockConverse, bare or bound (its invocationParams builds toolConfig from options.tools alone)", () => {
    expect(toolsComeFromCallOptions(bedrock())).toBe(true);
    expect(toolsComeFromCallOptions(bedrock().bindTools([weather]))).toBe(true);
  });

  it("not the models whose tools this package does not read (they do not need tools for tool blocks either)", () => {
    expect(toolsComeFromCallOptions(new ChatOpenAI({ model: "gpt-4o", apiKey: "x" }))).toBe(false);
    expect(toolsComeFromCallOptions(new ChatAnthropic({ model: "claude-sonnet-4-6", apiKey: "x" }))).toBe(false);
    expect(toolsComeFromCallOptions(undefined)).toBe(false);
    expect(toolsComeFromCallOptions({ tools: [] })).toBe(false);
  });
});

describe("callOptionsCarryNoTools", () => {
  it("absent, null or empty tools: none; any tool: some", () => {
    expect(callOptionsCarryNoTools(undefined)).toBe(true);
    expect(callOptionsCarryNoTools({})).toBe(true);
    expect(callOptionsCarryNoTools({ tools: [] })).toBe(true);
    expect(callOptionsCarryNoTools({ tools: null, tool_choice: "any" })).toBe(true);
    expect(callOptionsCarryNoTools({ tools: [weather] })).toBe(false);
  });

  it("what bindTools puts in the call options (withStructuredOutput binds through it) carries tools", () => {
    const bound = bedrock().bindTools([weather]) as unknown as { kwargs?: object; config?: object };
    expect(callOptionsCarryNoTools({ ...bound.config, ...bound.kwargs })).toBe(false);
  });
});
