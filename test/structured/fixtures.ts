/** Shared pieces of the structured-output agent tests: the weather tool and schema, stubs closed after each test, request readers. */
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach } from "vitest";
import { z } from "zod";
import { startBedrockStub } from "../support/stubs/bedrock";
import type { RunningStub, StubOptions } from "../support/stubs/common";

export const getWeather = tool(async ({ city }) => `It is 21C and sunny in ${city}.`, {
  name: "get_weather",
  description: "Current weather for a city.",
  schema: z.object({ city: z.string() }),
});

/** A Bedrock model id that gets the prompted strategy (no native structured output, no tool_choice in ChatBedrockConverse). */
export const LLAMA = "meta.llama3-1-70b-instruct-v1:0";

export const Weather = z.object({ city: z.string(), tempC: z.number(), sky: z.string() });
export const VALID = '{"city":"Paris","tempC":21,"sky":"sunny"}';
export const weatherCall = { name: "get_weather", args: { city: "Paris" } };
export const input = { messages: [new HumanMessage("What is the weather in Paris?")] };

/** Starts Bedrock stubs that are closed after each test of the file that calls this. */
export function bedrockStubs(): (options: StubOptions) => Promise<RunningStub> {
  let stubs: RunningStub[] = [];
  afterEach(async () => {
    await Promise.all(stubs.map((s) => s.close()));
    stubs = [];
  });
  return async (options) => {
    const started = await startBedrockStub(options);
    stubs.push(started);
    return started;
  };
}

export type ConverseRequest = {
  system?: { text?: string }[];
  messages: { role: string; content: { text?: string; toolUse?: unknown; toolResult?: unknown }[] }[];
  toolConfig?: { tools: { toolSpec: { name: string } }[]; toolChoice?: unknown };
  outputConfig?: { textFormat: { type: string; structure: { jsonSchema: { schema: string; name?: string } } } };
  additionalModelRequestFields?: Record<string, unknown>;
};
export const requestAt = (s: RunningStub, i: number) => s.requests[i] as ConverseRequest;
export const systemOf = (request: ConverseRequest) => (request.system ?? []).map((b) => b.text ?? "").join("\n");
export const lastTurn = (request: ConverseRequest) => request.messages[request.messages.length - 1];
export const lastText = (request: ConverseRequest) =>
  lastTurn(request)
    .content.map((b) => b.text ?? "")
    .join("");

/** Every request the stub received, as Converse requests. */
export const requestsOf = (s: RunningStub) => s.requests as ConverseRequest[];
/** The JSON schema a Converse request constrains its answer to, parsed. */
export const outputSchemaOf = (request: ConverseRequest) =>
  request.outputConfig
    ? (JSON.parse(request.outputConfig.textFormat.structure.jsonSchema.schema) as Record<string, unknown>)
    : undefined;
