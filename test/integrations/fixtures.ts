/**
 * Shared pieces of the integration tests: a weather tool that can abort the run it is called in (the
 * incident: a run aborted mid-tool, then a new message in the same thread), broken histories, stub
 * bookkeeping, and readers for what the stubs received.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach } from "vitest";
import { z } from "zod";
import { isSyntheticResult } from "../../src/messages/inspect";
import type { RunningStub } from "../support/stubs";

/**
 * `get_weather`. While `abortNextCall` is set, the next call aborts the run through `controller` and never
 * returns (like a client disconnect mid-tool); later calls answer.
 */
export function weatherTool() {
  const gate = { controller: new AbortController(), abortNextCall: false, calls: 0 };
  const getWeather = tool(
    async ({ city }: { city: string }) => {
      gate.calls++;
      if (gate.abortNextCall) {
        gate.abortNextCall = false;
        gate.controller.abort();
        return new Promise<string>(() => {});
      }
      return `sunny in ${city}`;
    },
    { name: "get_weather", description: "Weather for a city", schema: z.object({ city: z.string() }) },
  );
  return { getWeather, gate };
}

/** The scripted turn that calls `get_weather` for Paris. */
export const callWeather = { toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] };

/** A call left unanswered, then a new question: what a new input after an abort leaves in a thread. */
export function brokenHistory(callId = "tooluse_abandoned1"): BaseMessage[] {
  return [
    new HumanMessage({ content: "weather in Paris?", id: "h1" }),
    new AIMessage({
      content: "",
      id: "a1",
      tool_calls: [{ id: callId, name: "get_weather", args: { city: "Paris" }, type: "tool_call" }],
    }),
    new HumanMessage({ content: "never mind: what is 2 + 2?", id: "h2" }),
  ];
}

/** A valid history: a call, its result, an answer, a new question. */
export function cleanHistory(): BaseMessage[] {
  return [
    new HumanMessage({ content: "weather in Paris?", id: "h1" }),
    new AIMessage({
      content: "",
      id: "a1",
      tool_calls: [{ id: "tooluse_done1", name: "get_weather", args: { city: "Paris" }, type: "tool_call" }],
    }),
    new ToolMessage({ content: "sunny", tool_call_id: "tooluse_done1", id: "t1", name: "get_weather" }),
    new AIMessage({ content: "It is sunny.", id: "a2" }),
    new HumanMessage({ content: "thanks, and 2 + 2?", id: "h2" }),
  ];
}

/** Starts stubs and closes them after each test. */
export function stubTracker() {
  const running: RunningStub[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((stub) => stub.close()));
  });
  return async <T extends RunningStub>(stub: Promise<T>): Promise<T> => {
    const started = await stub;
    running.push(started);
    return started;
  };
}

/** Runs `run` and returns what it threw; fails when nothing is thrown. */
export async function rejectionOf(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the call to be rejected");
}

/** Runs until the tool aborts it (the run must end with an AbortError). */
export async function runUntilAborted(run: () => Promise<unknown>): Promise<void> {
  const error = await rejectionOf(run);
  if (error.name !== "AbortError") throw error;
}

/** A short picture of a history: `human ai[calls] tool(id) ...`, synthetic results marked with `*`. */
export function shapeOf(messages: readonly BaseMessage[]): string[] {
  return messages.map((m) => {
    if (AIMessage.isInstance(m)) return m.tool_calls?.length ? `ai[${m.tool_calls.map((c) => c.id).join(",")}]` : "ai";
    if (ToolMessage.isInstance(m)) return `tool(${m.tool_call_id})${isSyntheticResult(m) ? "*" : ""}`;
    return m.getType();
  });
}

type Dict = Record<string, unknown>;
const asDicts = (v: unknown): Dict[] => (Array.isArray(v) ? (v as Dict[]) : []);

/** The roles of a Bedrock Converse request and, per message, its block kinds (`text`, `toolUse:id`, `toolResult:id`). */
export function bedrockShape(request: unknown): string[] {
  return asDicts((request as Dict).messages).map((message) => {
    const blocks = asDicts(message.content).map((block) => {
      if (block.toolUse) return `toolUse:${(block.toolUse as Dict).toolUseId}`;
      if (block.toolResult) return `toolResult:${(block.toolResult as Dict).toolUseId}`;
      return Object.keys(block)[0];
    });
    return `${message.role}(${blocks.join(",")})`;
  });
}

/** The roles of an OpenAI Chat Completions request (`assistant[call ids]`, `tool:id`, `user`, `system`). */
export function openAIShape(request: unknown): string[] {
  return asDicts((request as Dict).messages).map((message) => {
    if (message.role === "tool") return `tool:${message.tool_call_id}`;
    const calls = asDicts(message.tool_calls);
    return calls.length ? `assistant[${calls.map((c) => c.id).join(",")}]` : String(message.role);
  });
}

/** Text of every user message in an OpenAI request (to see which turn the model was shown). */
export function openAIUserTexts(request: unknown): string[] {
  return asDicts((request as Dict).messages)
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

/** Names of the `on_custom_event` events of a `streamEvents` run, and their payloads. */
export async function customEventsOf(events: AsyncIterable<{ event: string; name: string; data: unknown }>) {
  const found: { name: string; data: unknown }[] = [];
  for await (const event of events)
    if (event.event === "on_custom_event") found.push({ name: event.name, data: event.data });
  return found;
}
