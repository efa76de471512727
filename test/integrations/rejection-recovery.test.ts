/**
 * The middleware's one retry after a rejection, through createAgent and the real clients against the stubs:
 * recovered with exactly two requests, the fix persisted (the next turn is accepted on its first request),
 * the original error rethrown with its diagnosis when the retry fails too, and errors that are not about the
 * history passed through after one request.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { findToolCallProblems } from "../../src/engine";
import { toolCallRepairMiddleware } from "../../src/integrations/middleware";
import { isSyntheticResult } from "../../src/messages/inspect";
import { rejectionDiagnosisOf } from "../../src/recovery/force-repair";
import type { ToolCallRepair } from "../../src/types";
import {
  anthropicModel,
  bedrockModel,
  droppedLargeResults,
  openAIModel,
  startAnthropicStub,
  startBedrockStub,
  startOpenAIStub,
  type RunningStub,
  type StubOptions,
} from "../support/stubs";
import { bedrockShape, customEventsOf, rejectionOf, shapeOf, stubTracker, weatherTool } from "./fixtures";

const track = stubTracker();
const thread = (id: string) => ({ configurable: { thread_id: id } });
const storedMessages = async (agent: { getState(config: object): Promise<{ values: unknown }> }, config: object) =>
  ((await agent.getState(config)).values as { messages: BaseMessage[] }).messages;

/** A finished exchange whose ids another provider wrote (Kimi-style `functions.name:N`), then a new question. */
function threadFromAnotherProvider(): BaseMessage[] {
  return [
    new HumanMessage({ content: "weather in Paris?", id: "h1" }),
    new AIMessage({
      content: "",
      id: "a1",
      tool_calls: [{ id: "functions.get_weather:0", name: "get_weather", args: { city: "Paris" }, type: "tool_call" }],
    }),
    new ToolMessage({
      content: "sunny in Paris",
      tool_call_id: "functions.get_weather:0",
      name: "get_weather",
      id: "t1",
    }),
    new AIMessage({ content: "It is sunny.", id: "a2" }),
    new HumanMessage({ content: "and tomorrow?", id: "h2" }),
  ];
}

describe("(a) a thread repaired for the wrong provider: rejected, recovered, answered", () => {
  it('provider "openai" given, the model is Bedrock: two requests, the fix persisted and reported with its rejection', async () => {
    const stub = await track(startBedrockStub());
    const { getWeather } = weatherTool();
    const repairs: ToolCallRepair[] = [];
    const agent = createAgent({
      model: bedrockModel(stub),
      tools: [getWeather],
      middleware: [toolCallRepairMiddleware({ provider: "openai", onRepair: (r) => repairs.push(r) })],
      checkpointer: new MemorySaver(),
    });
    const result = await agent.invoke({ messages: threadFromAnotherProvider() }, thread("a"));

    expect(result.messages.at(-1)?.text).toBe("ok");
    expect(stub.calls).toBe(2);
    expect(stub.rejections.map((r) => r.rule)).toEqual(["B4"]);
    expect(bedrockShape(stub.requests[1])[1]).toMatch(/^assistant\(toolUse:[a-zA-Z0-9_-]+\)$/);
    expect(repairs).toEqual([
      expect.objectContaining({
        action: "renamed_call_id",
        toolCallId: "functions.get_weather:0",
        rejection: expect.objectContaining({ provider: "bedrock", kind: "invalid_id", rule: "B4" }),
      }),
    ]);

    // Stored: structural repairs only. Bedrock's id pattern is request shaping: the middleware remembers for the
    // thread that Bedrock rejected a request shaped for OpenAI, so the next turn is shaped for Bedrock (one request).
    const stored = await storedMessages(agent, thread("a"));
    expect(findToolCallProblems(stored, { provider: "bedrock", level: "structural" })).toEqual([]);
    expect(stored.map((m) => m.text).slice(-2)).toEqual(["and tomorrow?", "ok"]);
    await agent.invoke({ messages: [new HumanMessage("thanks")] }, thread("a"));
    expect(stub.calls).toBe(3);
    expect(stub.rejections.map((r) => r.rule)).toEqual(["B4"]);
    // Another thread has learnt nothing yet: its first turn is rejected and recovered.
    await agent.invoke({ messages: threadFromAnotherProvider() }, thread("a2"));
    expect(stub.calls).toBe(5);
    expect(stub.rejections.map((r) => r.rule)).toEqual(["B4", "B4"]);
  });

  it("without the provider option the model decides: the same thread goes through on its first request", async () => {
    const stub = await track(startBedrockStub());
    const agent = createAgent({
      model: bedrockModel(stub),
      tools: [weatherTool().getWeather],
      middleware: [toolCallRepairMiddleware()],
      checkpointer: new MemorySaver(),
    });
    expect((await agent.invoke({ messages: threadFromAnotherProvider() }, thread("m"))).messages.at(-1)?.text).toBe(
      "ok",
    );
    await agent.invoke({ messages: [new HumanMessage("thanks")] }, thread("m"));
    expect(stub.calls).toBe(2);
    expect(stub.rejections).toEqual([]);
  });
});

describe("the request differs from the state (the middleware's own request-only repair)", () => {
  it("the rejection is applied to the state itself: the persisted thread is structurally valid", async () => {
    const stub = await track(startBedrockStub());
    const agent = createAgent({
      model: bedrockModel(stub),
      tools: [weatherTool().getWeather],
      // No repair on input: the orphan call below is repaired in the request only, then Bedrock refuses the ids.
      middleware: [toolCallRepairMiddleware({ provider: "openai", repairOnInput: false })],
      checkpointer: new MemorySaver(),
    });
    const orphan = new AIMessage({
      content: "",
      id: "a0",
      tool_calls: [{ id: "functions.get_weather:9", name: "get_weather", args: { city: "Rome" }, type: "tool_call" }],
    });
    const history = [
      new HumanMessage({ content: "weather in Rome?", id: "h0" }),
      orphan,
      ...threadFromAnotherProvider(),
    ];
    expect((await agent.invoke({ messages: history }, thread("s"))).messages.at(-1)?.text).toBe("ok");
    expect(stub.calls).toBe(2);
    const stored = await storedMessages(agent, thread("s"));
    expect(findToolCallProblems(stored, { provider: "bedrock", level: "structural" })).toEqual([]);
    expect(stored.filter((m) => m.text === "ok")).toHaveLength(1);
    // The orphan call is answered in storage; Bedrock's id pattern stays request shaping, which the middleware now
    // applies to this thread's requests: the next turn goes through on its first request.
    await agent.invoke({ messages: [new HumanMessage("thanks")] }, thread("s"));
    expect(stub.calls).toBe(3);
  });
});

/** A tool whose output is larger than the gateway in front of the provider lets through. */
function reportTool() {
  return tool(async () => `full report: ${"data ".repeat(400)}`, {
    name: "get_report",
    description: "A long report",
    schema: z.object({}),
  });
}
const callReport = { toolCalls: [{ name: "get_report", args: {} }] };

type Provider = "bedrock" | "openai" | "anthropic";
const STUBS: Record<
  Provider,
  {
    start: (o: StubOptions) => Promise<RunningStub>;
    model: (s: RunningStub) => ReturnType<typeof bedrockModel | typeof openAIModel | typeof anthropicModel>;
  }
> = {
  bedrock: { start: startBedrockStub, model: (s) => bedrockModel(s) },
  openai: { start: startOpenAIStub, model: (s) => openAIModel(s) },
  anthropic: { start: startAnthropicStub, model: (s) => anthropicModel(s) },
};

describe("(b) a rule the engine does not model: rejected once, recovered, the next turn accepted on its first request", () => {
  const savers: [string, () => BaseCheckpointSaver][] = [
    ["MemorySaver", () => new MemorySaver()],
    ["SqliteSaver", () => SqliteSaver.fromConnString(":memory:")],
  ];
  for (const provider of ["bedrock", "openai", "anthropic"] as const) {
    for (const [saverName, saver] of savers) {
      it(`${provider}, ${saverName}`, async () => {
        const stub = await track(
          STUBS[provider].start({ script: [callReport], extraRule: droppedLargeResults(provider, 1000) }),
        );
        const repairs: ToolCallRepair[] = [];
        const agent = createAgent({
          model: STUBS[provider].model(stub),
          tools: [reportTool()],
          middleware: [toolCallRepairMiddleware({ provider, onRepair: (r) => repairs.push(r) })],
          checkpointer: saver(),
        });
        const first = await agent.invoke(
          { messages: [new HumanMessage("get me the report")] },
          thread(`b-${provider}`),
        );
        expect(first.messages.at(-1)?.text).toBe("ok");
        // The call, the rejected request with the report, its retry.
        expect(stub.calls).toBe(3);
        expect(stub.rejections.map((r) => r.rule)).toEqual([
          { bedrock: "B1", openai: "O1", anthropic: "A1" }[provider],
        ]);
        expect(repairs.filter((r) => r.rejection).map((r) => r.action)).toEqual(
          expect.arrayContaining(["synthesized_result", "converted_result"]),
        );

        const stored = await storedMessages(agent, thread(`b-${provider}`));
        const results = stored.filter(ToolMessage.isInstance);
        expect(results).toHaveLength(1);
        expect(isSyntheticResult(results[0])).toBe(true);
        expect(stored.some((m) => HumanMessage.isInstance(m) && m.text.includes("full report: data"))).toBe(true);
        expect(shapeOf(stored).at(-1)).toBe("ai");

        const second = await agent.invoke(
          { messages: [new HumanMessage("thanks, anything else?")] },
          thread(`b-${provider}`),
        );
        expect(second.messages.at(-1)?.text).toBe("ok");
        expect(stub.calls).toBe(4);
        expect(stub.rejections).toHaveLength(1);
      });
    }
  }

  it("the repairs reach the custom event 'tool_call_repair', each with its rejection", async () => {
    const stub = await track(startOpenAIStub({ script: [callReport], extraRule: droppedLargeResults("openai", 1000) }));
    const agent = createAgent({
      model: openAIModel(stub),
      tools: [reportTool()],
      middleware: [toolCallRepairMiddleware({ provider: "openai" })],
    });
    const events = await customEventsOf(
      agent.streamEvents({ messages: [new HumanMessage("report?")] }, { version: "v2" }),
    );
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) {
      expect(event.name).toBe("tool_call_repair");
      expect(event.data).toMatchObject({ rejection: { provider: "openai", rule: "O1", kind: "missing_results" } });
    }
  });
});

describe("a second rejection: the original error, with the diagnosis attached; never a loop", () => {
  it("rethrows the first error after exactly two requests", async () => {
    // Rejects every request that holds any tool result: nothing a repair does gets through.
    const stub = await track(
      startOpenAIStub({
        script: [callReport],
        extraRule: (request) => {
          const messages = (request as { messages: { role: string; tool_call_id?: string }[] }).messages;
          const ids = messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
          return ids.length
            ? {
                rule: "O1",
                message:
                  "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
                  `'tool_call_id'. The following tool_call_ids did not have response messages: ${ids.join(", ")}`,
              }
            : undefined;
        },
      }),
    );
    const agent = createAgent({
      model: openAIModel(stub),
      tools: [reportTool()],
      middleware: [toolCallRepairMiddleware({ provider: "openai" })],
    });
    const error = await rejectionOf(() => agent.invoke({ messages: [new HumanMessage("report?")] }));
    expect(stub.calls).toBe(3);
    const original = rootWithDiagnosis(error);
    expect(original?.message).toContain("did not have response messages: call_");
    const diagnosis = rejectionDiagnosisOf(original)!;
    expect(diagnosis).toMatchObject({
      retried: true,
      rejection: { provider: "openai", kind: "missing_results" },
      retryRejection: { kind: "missing_results" },
    });
    expect(diagnosis.repairs.length).toBeGreaterThan(0);
    expect((original as Error).cause).toBe(diagnosis);
  });
});

/** The error in a chain that carries the diagnosis (createAgent wraps middleware errors). */
function rootWithDiagnosis(error: unknown): Error | undefined {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) if (rejectionDiagnosisOf(e)) return e as Error;
  return undefined;
}

/** The innermost error: what the client threw, under createAgent's wrapping. */
function rootError(error: unknown): Error {
  let e = error as Error;
  while (e.cause instanceof Error) e = e.cause;
  return e;
}

describe("(c) not about the history: passed through after exactly one request", () => {
  const failures = {
    "a 429": {
      bedrock: { status: 429, message: "Too many requests, please wait before trying again." },
      openai: {
        status: 429,
        message:
          "Rate limit reached for gpt-4.1-mini in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1.",
      },
      anthropic: { status: 429, message: "Number of request tokens has exceeded your per-minute rate limit." },
    },
    "a context-length error": {
      bedrock: { status: 400, message: "Input is too long for requested model." },
      openai: {
        status: 400,
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        type: "context_length_exceeded",
      },
      anthropic: { status: 400, message: "prompt is too long: 210000 tokens > 200000 maximum" },
    },
  } as const;

  for (const [what, byProvider] of Object.entries(failures)) {
    for (const provider of ["bedrock", "openai", "anthropic"] as const) {
      it(`${what} from ${provider} reaches the caller unchanged`, async () => {
        const run = async (middleware: boolean) => {
          const stub = await track(STUBS[provider].start({ fail: () => byProvider[provider] }));
          const { getWeather } = weatherTool();
          const agent = createAgent({
            model: STUBS[provider].model(stub),
            tools: [getWeather],
            middleware: middleware ? [toolCallRepairMiddleware({ provider })] : [],
          });
          const error = await rejectionOf(() => agent.invoke({ messages: threadFromAnotherProvider() }));
          return { stub, error: rootError(error) };
        };
        const baseline = await run(false);
        const withRecovery = await run(true);
        expect(withRecovery.stub.calls).toBe(1);
        expect(withRecovery.error.constructor).toBe(baseline.error.constructor);
        expect(withRecovery.error.message).toBe(baseline.error.message);
        expect(withRecovery.error.message).toContain(byProvider[provider].message);
        expect(rejectionDiagnosisOf(withRecovery.error)).toBeUndefined();
      });
    }
  }

  it("recoverRejections: false leaves the rejection to the caller", async () => {
    const stub = await track(startBedrockStub());
    const agent = createAgent({
      model: bedrockModel(stub),
      tools: [weatherTool().getWeather],
      middleware: [toolCallRepairMiddleware({ provider: "openai", recoverRejections: false })],
    });
    const error = await rejectionOf(() => agent.invoke({ messages: threadFromAnotherProvider() }));
    expect(error.message).toContain("failed to satisfy constraint");
    expect(stub.calls).toBe(1);
  });
});

describe("(d) streaming: the recovered answer streams", () => {
  for (const provider of ["bedrock", "anthropic"] as const) {
    it(`${provider}, streamMode "messages": the answer's tokens arrive after the retry; one rejection, two requests`, async () => {
      const stub = await track(STUBS[provider].start({ script: [{ text: "Tomorrow too." }] }));
      const agent = createAgent({
        model: STUBS[provider].model(stub),
        tools: [weatherTool().getWeather],
        middleware: [toolCallRepairMiddleware({ provider: "openai" })],
      });
      const tokens: string[] = [];
      for await (const [chunk] of await agent.stream(
        { messages: threadFromAnotherProvider() },
        { streamMode: "messages" },
      )) {
        if (chunk.getType() === "ai") tokens.push(chunk.text);
      }
      expect(tokens.length).toBeGreaterThan(0);
      expect(tokens.join("")).toBe("Tomorrow too.");
      expect(stub.calls).toBe(2);
      expect(stub.rejections.map((r) => r.rule)).toEqual([provider === "bedrock" ? "B4" : "A6"]);
      // Streamed: the retry went to the streaming endpoint (Bedrock's own path, Anthropic's `stream: true`).
      if (provider === "bedrock")
        expect(stub.paths.map((p) => p.split("/").pop())).toEqual(["converse-stream", "converse-stream"]);
      else expect(stub.requests.map((r) => (r as { stream?: boolean }).stream)).toEqual([true, true]);
    });
  }
});
