/**
 * A request-level fix learnt from a rejection is remembered for the thread (per surface and process): the next
 * request of that thread goes out with it and is accepted the first time. Through the real clients and the stubs.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { withRequestRepair } from "../../src/integrations/model-wrapper";
import { requestLessons } from "../../src/recovery/force-repair";
import type { ProviderRejection } from "../../src/types";
import { aiWithCalls, human, toolResult } from "../support/builders";
import { bedrockModel, startBedrockStub } from "../support/stubs";
import { stubTracker } from "../integrations/fixtures";

const track = stubTracker();
const lookup = tool(async () => "sunny", { name: "tool_call_1", description: "weather", schema: z.object({}) });

/** A thread shaped for OpenAI (a call id with a dot, which Bedrock refuses: B4), then a new question. */
const thread = (): BaseMessage[] => [
  human("weather?"),
  aiWithCalls("call.1"),
  toolResult("call.1"),
  human("and tomorrow?"),
];

describe("withRequestRepair with a provider option that does not match the model (createReactAgent, MemorySaver)", () => {
  it("is rejected once: the thread's second turn is shaped for the provider that rejected, first time", async () => {
    const stub = await track(startBedrockStub());
    const llm = withRequestRepair(bedrockModel(stub), { provider: "openai" });
    const agent = createReactAgent({ llm, tools: [lookup], checkpointer: new MemorySaver() });
    const turn = (thread_id: string, messages: BaseMessage[]) =>
      agent.invoke({ messages }, { configurable: { thread_id } });
    await turn("lessons-1", thread());
    expect(stub.rejections.map((r) => r.rule)).toEqual(["B4"]);
    expect(stub.calls).toBe(2);
    await turn("lessons-1", [human("and the day after?")]);
    // The second turn: one request, accepted, with the call id Bedrock takes.
    expect(stub.calls).toBe(3);
    expect(stub.rejections).toHaveLength(1);
    expect(JSON.stringify(stub.requests[2])).not.toContain(`"toolUseId":"call.1"`);
    expect(JSON.stringify(stub.requests[2])).toContain("and the day after?");
    // Another thread has learnt nothing: its first request is rejected as the first thread's was.
    await turn("lessons-2", thread());
    expect(stub.rejections).toHaveLength(2);
  });
});

describe("requestLessons", () => {
  const rejection = (kind: ProviderRejection["kind"], provider: ProviderRejection["provider"] = "bedrock") =>
    ({ kind, provider, rule: "x", toolCallIds: [], text: "" }) as ProviderRejection;

  it("learns the rejecting provider, no tools (B3), system messages as text (A11); nothing from a history fix", () => {
    const lessons = requestLessons();
    lessons.learn("t", rejection("missing_results"), { provider: "bedrock" });
    expect(lessons.of("t")).toBeUndefined();
    lessons.learn("t", rejection("invalid_id"), { provider: "openai" });
    lessons.learn("t", rejection("tool_config_missing"), { provider: "bedrock" });
    lessons.learn("t", rejection("misplaced_system_message", "anthropic"), { provider: "anthropic" });
    expect(lessons.of("t")).toEqual({ provider: "bedrock", toolsInRequest: false, systemMessages: "user-text" });
    lessons.learn("", rejection("tool_config_missing"), {});
    expect(lessons.of("")).toBeUndefined();
  });

  it("keeps the threads taught last, up to its bound", () => {
    const lessons = requestLessons(2);
    const bedrock = { provider: "bedrock" as const };
    for (const t of ["a", "b"]) lessons.learn(t, rejection("tool_config_missing"), bedrock);
    lessons.learn("a", rejection("misplaced_system_message"), bedrock); // taught again: "b" is the oldest now
    lessons.learn("c", rejection("tool_config_missing"), bedrock);
    expect(["a", "b", "c"].map((t) => lessons.of(t) !== undefined)).toEqual([true, false, true]);
    expect(lessons.of("a")).toEqual({ toolsInRequest: false, systemMessages: "user-text" });
  });
});
