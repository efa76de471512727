/**
 * Which errors count as a native request refused for the model or the schema (then the call falls back), and
 * which do not (then they are thrown as before), matched on the fixed parts of Bedrock's texts.
 */
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { nativeRefusalOf } from "../../src/structured/strategy";
import { withPromptedStructuredOutput } from "../../src/structured/react-agent";
import { bedrockModel } from "../support/stubs/bedrock";
import {
  GRAMMAR_TOO_LARGE,
  OUTPUT_CONFIG_UNSUPPORTED_CLAUDE,
  OUTPUT_CONFIG_UNSUPPORTED_OTHER,
} from "../support/stubs/bedrock-structured";
import { bedrockStubs, getWeather, input, requestsOf, Weather } from "./fixtures";

const tools = [getWeather];

const stub = bedrockStubs();

describe("nativeRefusalOf", () => {
  it.each([
    OUTPUT_CONFIG_UNSUPPORTED_CLAUDE,
    OUTPUT_CONFIG_UNSUPPORTED_OTHER,
    "For 'object' type, 'additionalProperties' must be explicitly set to false",
    "The model returned the following errors: For 'integer' type, properties maximum, minimum are not supported",
    "For 'string' type, property maxLength is not supported",
    "Recursive schemas are not supported",
    "Schemas contains too many parameters with union types (17 parameters with type arrays or anyOf) which exceeds the limit: 16",
    `The model returned the following errors: ${GRAMMAR_TOO_LARGE}`,
    "Schema is too complex for compilation. Simplify the schema.",
  ])("a refusal: %s", (text) => {
    expect(nativeRefusalOf(new Error(text))).toBe(text);
    expect(nativeRefusalOf(new Error("MiddlewareError", { cause: new Error(text) }))).toBe(text);
  });

  it.each([
    "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_a",
    "Too many requests, please wait before trying again.",
    "The model returned the following errors: Thinking may not be enabled when tool_choice forces tool use.",
    "Extra inputs are not permitted",
  ])("not a refusal: %s", (text) => {
    expect(nativeRefusalOf(new Error(text))).toBeUndefined();
  });

  it("reads any thrown value without throwing", () => {
    expect(nativeRefusalOf(undefined)).toBeUndefined();
    expect(nativeRefusalOf("For 'object' type, 'additionalProperties' must be explicitly set to false")).toBeDefined();
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("x");
        },
      },
    );
    expect(nativeRefusalOf(hostile)).toBeUndefined();
  });
});

it("an error that is no refusal (throttling) is thrown as before, with no fallback", async () => {
  const throttled = (_request: unknown, i: number) =>
    i === 1 ? { status: 429, message: "Too many requests" } : undefined;
  const s = await stub({ script: [{ text: "It is sunny." }], fail: throttled });
  const agent = createReactAgent(
    withPromptedStructuredOutput({ llm: bedrockModel(s), tools, responseFormat: Weather }),
  );
  await expect(agent.invoke(input)).rejects.toThrow(/Too many requests/);
  expect(requestsOf(s)).toHaveLength(2);
  expect(requestsOf(s)[1].outputConfig).toBeDefined();
});
