/**
 * Setup shared by the doc snippets (the part of each snippet the reader does not see): the real LangChain
 * clients pointed at the local provider stubs of test/support/stubs (no network beyond 127.0.0.1), sample
 * tools and schemas, and the broken thread from the README. Files starting with `_` are not snippets.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import {
  anthropicModel,
  bedrockModel,
  openAIModel,
  startAnthropicStub,
  startBedrockStub,
  startOpenAIStub,
  type RunningStub,
  type Script,
} from "../../test/support/stubs";

const running: RunningStub[] = [];

async function started(start: Promise<RunningStub>): Promise<RunningStub> {
  const stub = await start;
  running.push(stub);
  return stub;
}

/** A ChatBedrockConverse talking to a local Bedrock stub that answers with `script` (default: "ok"). */
export async function bedrockChat(script?: Script, fields: Parameters<typeof bedrockModel>[1] = {}) {
  return bedrockModel(await started(startBedrockStub({ script })), fields);
}

/** A ChatOpenAI talking to a local OpenAI stub. */
export async function openAIChat(script?: Script) {
  return openAIModel(await started(startOpenAIStub({ script })));
}

/** A ChatAnthropic talking to a local Anthropic stub. */
export async function anthropicChat(script?: Script) {
  return anthropicModel(await started(startAnthropicStub({ script })));
}

/** Closes every stub a snippet started (the snippet's last line). */
export async function closeStubs(): Promise<void> {
  await Promise.all(running.splice(0).map((stub) => stub.close()));
}

export const searchFlights = tool(async ({ to }) => `TP1351 08:05 to ${to}, 142 EUR`, {
  name: "search_flights",
  description: "Search flights",
  schema: z.object({ to: z.string() }),
});

export const searchHotels = tool(async ({ near }) => `Hotel Alfama near ${near}, 95 EUR`, {
  name: "search_hotels",
  description: "Search hotels",
  schema: z.object({ near: z.string() }),
});

export const getWeather = tool(async ({ city }) => `It is 21C and sunny in ${city}.`, {
  name: "get_weather",
  description: "Current weather for a city.",
  schema: z.object({ city: z.string() }),
});

export const Weather = z.object({ city: z.string(), tempC: z.number(), sky: z.string() });
export const WEATHER_JSON = '{"city":"Paris","tempC":21,"sky":"sunny"}';

/** The README's incident: parallel calls, the stream cancelled while the hotel search ran, then a new message. */
export function brokenThread(): BaseMessage[] {
  return [
    new SystemMessage({ content: "You are a travel agent. Use the tools.", id: "sys" }),
    new HumanMessage({ content: "Find me a flight to Lisbon on May 3 and a hotel near Alfama.", id: "u1" }),
    new AIMessage({
      id: "a1",
      content: "",
      tool_calls: [
        { id: "tooluse_flights01", name: "search_flights", args: { to: "LIS" }, type: "tool_call" },
        { id: "tooluse_hotels02", name: "search_hotels", args: { near: "Alfama" }, type: "tool_call" },
      ],
    }),
    new ToolMessage({ id: "t1", tool_call_id: "tooluse_flights01", name: "search_flights", content: "TP1351 08:05, 142 EUR" }),
    new HumanMessage({ content: "Sorry, I cancelled that. Just the flight for now, please.", id: "u2" }),
  ];
}

/** Fails the snippet with `what` unless `condition` holds. */
export function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(`snippet check failed: ${what}`);
}
