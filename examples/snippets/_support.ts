/**
 * Setup shared by the doc snippets (the part of each snippet the reader does not see): the real LangChain
 * clients pointed at the local provider stubs of test/support/stubs (no network beyond 127.0.0.1), sample
 * tools and schemas, and the broken thread from the README. Files starting with `_` are not snippets.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { z } from "zod";
import {
  anthropicModel,
  bedrockModel,
  openAIModel,
  startAnthropicStub,
  startBedrockStub,
  startOpenAIStub,
  droppedLargeResults,
  type RunningStub,
  type Script,
  type StubOptions,
} from "../../test/support/stubs";

const running: RunningStub[] = [];

async function started(start: Promise<RunningStub>): Promise<RunningStub> {
  const stub = await start;
  running.push(stub);
  return stub;
}

/**
 * A ChatBedrockConverse talking to a local Bedrock stub that answers with `script` (default: "ok"). `stub`: more
 * stub options (a gateway's own rule, ...); `onStub` is handed the running stub (its requests and rejections).
 */
export async function bedrockChat(
  script?: Script,
  fields: Parameters<typeof bedrockModel>[1] = {},
  stub: Omit<StubOptions, "script"> = {},
  onStub?: (stub: RunningStub) => void,
) {
  const running = await started(startBedrockStub({ ...stub, script }));
  onStub?.(running);
  return bedrockModel(running, fields);
}

/** A tool whose result is longer than the gateway of {@link gatewayDroppingLargeResults} lets through. */
export const getReport = tool(async () => `full report: ${"data ".repeat(400)}`, {
  name: "get_report",
  description: "A long report",
  schema: z.object({}),
});

/**
 * A gateway in front of Bedrock that drops tool results longer than 1,000 characters: Bedrock then rejects the
 * request (B1) naming those calls, though the history is valid by every rule the engine knows.
 */
export const gatewayDroppingLargeResults: Omit<StubOptions, "script"> = {
  extraRule: droppedLargeResults("bedrock", 1000),
};

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

/** While true, `search_hotels` runs until its run is aborted (the incident: the stream cancelled mid-tool). */
let holdHotels = false;
let hotelsStarted: (() => void) | undefined;

export const searchHotels = tool(
  async ({ near }, config) => {
    hotelsStarted?.();
    if (holdHotels) {
      await new Promise((_, reject) => {
        const signal = (config as { signal?: AbortSignal } | undefined)?.signal;
        if (signal?.aborted) reject(new Error("aborted"));
        signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
      });
    }
    return `Hotel Alfama near ${near}, 95 EUR`;
  },
  { name: "search_hotels", description: "Search hotels", schema: z.object({ near: z.string() }) },
);

/** A model script for the incident: both searches in parallel on the first request, then `text` on every later one. */
export function incidentScript(text: string): Script {
  return (_request, callIndex) =>
    callIndex === 0
      ? {
          toolCalls: [
            { name: "search_flights", args: { to: "LIS" } },
            { name: "search_hotels", args: { near: "Alfama" } },
          ],
        }
      : { text };
}

/** Waits (without timers) until `condition` holds. */
async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 20_000; turn++) {
    if (await condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`gave up waiting for ${what}`);
}

interface Invocable {
  invoke(input: never, config?: RunnableConfig): Promise<unknown>;
}

/**
 * The incident, for real: runs `input` on thread `threadId` and aborts it while `search_hotels` runs, after
 * `search_flights` has finished. With `saver` (the inner saver), waits until the flight result is stored there
 * as a pending write (per-call tool tasks) before aborting. Resolves once the run has stopped.
 */
export async function abortWhileHotelsRun(
  graph: Invocable,
  input: unknown,
  threadId: string,
  saver?: BaseCheckpointSaver,
): Promise<void> {
  const controller = new AbortController();
  holdHotels = true;
  const started = new Promise<void>((resolve) => (hotelsStarted = resolve));
  const config = { configurable: { thread_id: threadId } };
  const run = graph.invoke(input as never, { ...config, signal: controller.signal }).then(
    () => new Error("the run was expected to be aborted"),
    (error: Error) => error,
  );
  await started;
  if (saver)
    await until(async () => {
      const writes = (await saver.getTuple(config))?.pendingWrites ?? [];
      return writes.some(
        ([, channel, value]) =>
          channel === "messages" && Array.isArray(value) && value.some((m) => ToolMessage.isInstance(m)),
      );
    }, "the flight search's result in the saver's pending writes");
  controller.abort();
  const error = await run;
  holdHotels = false;
  hotelsStarted = undefined;
  check(/abort/i.test(error.message), `the run is aborted (${error.message})`);
  // The aborted run's last writes land a few promise hops after invoke() rejects (docs/checkpointer.md).
  for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
}

/** The thread as `saver` stores it (read from the inner saver, not through a wrapper). */
export async function storedMessages(saver: BaseCheckpointSaver, threadId: string): Promise<BaseMessage[]> {
  const tuple = await saver.getTuple({ configurable: { thread_id: threadId } });
  return (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
}

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
    new ToolMessage({
      id: "t1",
      tool_call_id: "tooluse_flights01",
      name: "search_flights",
      content: "TP1351 08:05, 142 EUR",
    }),
    new HumanMessage({ content: "Sorry, I cancelled that. Just the flight for now, please.", id: "u2" }),
  ];
}

/** Fails the snippet with `what` unless `condition` holds. */
export function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(`snippet check failed: ${what}`);
}

export type { RunningStub };

/** A thread of `turns` finished exchanges (question, weather call, result, answer), each message with its id. */
export function longThread(turns: number): BaseMessage[] {
  const out: BaseMessage[] = [];
  for (let i = 0; i < turns; i++) {
    out.push(new HumanMessage({ content: `Weather in city ${i}?`, id: `h${i}` }));
    out.push(
      new AIMessage({
        content: "",
        id: `a${i}`,
        tool_calls: [{ id: `call_${i}`, name: "get_weather", args: { city: `city ${i}` }, type: "tool_call" }],
      }),
    );
    out.push(
      new ToolMessage({
        content: `It is 21C and sunny in city ${i}.`,
        tool_call_id: `call_${i}`,
        name: "get_weather",
        id: `t${i}`,
      }),
    );
    out.push(new AIMessage({ content: `Sunny in city ${i}.`, id: `r${i}` }));
  }
  return out;
}
