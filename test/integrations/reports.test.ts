/**
 * What an operator gets from every report: the thread it was made in (its id, its checkpoint namespace) and the
 * surface that made it, in `onRepair` and in the custom event; one report per call and outcome across a setup's
 * pieces; metrics and span events through OpenTelemetry. Through real agents, savers and the strict stubs.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import {
  context as otelContext,
  metrics,
  ROOT_CONTEXT,
  trace,
  type Context,
  type ContextManager,
} from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { createAgent } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { repairToolCalls } from "../../src/engine";
import { TOOL_CALL_REPAIR_EVENT } from "../../src/integrations/events";
import { toolCallRepairHook } from "../../src/integrations/hook";
import { toolCallRepair } from "../../src/integrations/middleware";
import { withRequestRepair } from "../../src/integrations/model-wrapper";
import { toolCallRepairKit, toolCallRepairNode } from "../../src/integrations/node";
import { repairThread } from "../../src/threads/repair-thread";
import type { RepairContext, ToolCallRepair } from "../../src/types";
import { aiWithCalls, human } from "../support/builders";
import { bedrockModel, startBedrockStub, type RunningStub, type Script } from "../support/stubs";
import { bothToolsThenAnswer, storedThread, threadConfig, ToolBench, until } from "./support/checkpoint-scenarios";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function stub(script: Script): Promise<RunningStub> {
  const started = await startBedrockStub({ script });
  cleanups.push(() => started.close());
  return started;
}

type Report = { repair: ToolCallRepair; context: RepairContext };
const recorder = () => {
  const reports: Report[] = [];
  return { reports, onRepair: (repair: ToolCallRepair, context: RepairContext) => reports.push({ repair, context }) };
};
const contexts = (reports: Report[]) => reports.map((r) => [r.repair.action, r.context]);

/** A call left unanswered, then a new question: every provider refuses it (O1, A1, B1). */
const brokenThread = () => [human("look it up"), aiWithCalls("call_0"), human("never mind")];

describe("every report names its thread and the surface that made it", () => {
  it("createAgent + toolCallRepair: onRepair and the custom event carry the thread id, the namespace and the surface", async () => {
    const model = await stub(() => ({ text: "answer" }));
    const { reports, onRepair } = recorder();
    const repair = toolCallRepair({ onRepair });
    const agent = createAgent({
      model: bedrockModel(model),
      tools: new ToolBench().all,
      middleware: [repair.middleware],
      checkpointer: repair.checkpointer(new MemorySaver()),
    });
    const events: unknown[] = [];
    for await (const event of agent.streamEvents(
      { messages: brokenThread() },
      { ...threadConfig("t-7"), version: "v2" },
    ))
      if (event.event === "on_custom_event" && event.name === TOOL_CALL_REPAIR_EVENT) events.push(event.data);
    expect(model.rejections).toEqual([]);
    // The stored fix (the new input's placeholder), then the request's shaping for Bedrock (a user turn after results).
    expect(contexts(reports)).toEqual([
      ["synthesized_result", { surface: "middleware", threadId: "t-7", checkpointNs: "" }],
      ["inserted_assistant_message", { surface: "middleware", threadId: "t-7", checkpointNs: "" }],
    ]);
    // The custom event's payload is the repair with the same context.
    expect(events).toEqual(expect.arrayContaining(reports.map((r) => ({ ...r.repair, ...r.context }))));
  });

  it("a node in a subgraph with a checkpointer of its own names the subgraph's namespace", async () => {
    const { reports, onRepair } = recorder();
    const inner = new StateGraph(MessagesAnnotation)
      .addNode("repair", toolCallRepairNode({ onRepair }))
      .addEdge(START, "repair")
      .compile({ checkpointer: true });
    const outer = new StateGraph(MessagesAnnotation)
      .addNode("sub", inner)
      .addEdge(START, "sub")
      .compile({ checkpointer: new MemorySaver() });
    await outer.invoke({ messages: brokenThread() }, threadConfig("t-sub"));
    expect(contexts(reports)).toEqual([
      ["synthesized_result", { surface: "node", threadId: "t-sub", checkpointNs: "sub" }],
    ]);
  });

  it("the hook, the model wrapper, repairThread and the engine say which they are", async () => {
    const model = await stub(() => ({ text: "answer" }));
    const { reports, onRepair } = recorder();
    const agent = createReactAgent({
      llm: bedrockModel(model),
      tools: new ToolBench().all,
      preModelHook: toolCallRepairHook({ provider: "bedrock", persist: true, onRepair }),
      checkpointer: new MemorySaver(),
    });
    await agent.invoke({ messages: brokenThread() }, threadConfig("t-hook"));
    expect(reports.map((r) => r.context)).toEqual([
      { surface: "hook", threadId: "t-hook", checkpointNs: "" },
      { surface: "hook", threadId: "t-hook", checkpointNs: "" },
    ]);

    const wrapped = recorder();
    const llm = withRequestRepair(bedrockModel(model), { onRepair: wrapped.onRepair });
    await RunnableLambda.from(() => llm.invoke(brokenThread())).invoke(null, threadConfig("t-model"));
    expect(wrapped.reports.length).toBeGreaterThan(1);
    for (const { context } of wrapped.reports) expect(context).toEqual({ surface: "model", threadId: "t-model" });

    const saver = new MemorySaver();
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("tools", () => ({}))
      .addEdge(START, "tools")
      .compile({ checkpointer: saver });
    await graph.updateState(threadConfig("t-thread"), { messages: brokenThread() }, "tools");
    const stored = recorder();
    await repairThread(graph, threadConfig("t-thread"), { dryRun: false, onRepair: stored.onRepair, asNode: "tools" });
    expect(stored.reports.map((r) => r.context)).toEqual([{ surface: "thread", threadId: "t-thread" }]);

    const direct = recorder();
    repairToolCalls(brokenThread(), { onRepair: direct.onRepair });
    expect(direct.reports.length).toBeGreaterThan(0);
    for (const { context } of direct.reports) expect(context).toEqual({ surface: "engine" });
  });
});

/** Whether a Bedrock request carries `text` as a tool result. */
const sendsResult = (request: unknown, text: string) => JSON.stringify(request).includes(JSON.stringify(text));

describe("one report per call and outcome: a thread that broke before the package was adopted", () => {
  /**
   * Without the package: a run aborted while `slow_lookup` runs, after `lookup` finished (its result a pending
   * write), then a new message, which Bedrock refuses (B1). Returns the two calls' ids.
   */
  async function brokenBeforeAdoption(plain: { invoke: (input: never, config: never) => Promise<unknown> }) {
    const bench = BENCH;
    const inner = SAVER;
    const controller = new AbortController();
    bench.holdSlow = true;
    const slowStarted = bench.nextSlowStart();
    const first = { messages: [new HumanMessage({ content: "first question", id: "h1" })] };
    const outcome = plain
      .invoke(first as never, { ...threadConfig("t"), signal: controller.signal } as never)
      .catch((error: Error) => error);
    await slowStarted;
    await until(async () => {
      const writes = (await inner.getTuple(threadConfig("t")))?.pendingWrites ?? [];
      return writes.some(([, c, v]) => c === "messages" && [v].flat().some((m) => ToolMessage.isInstance(m)));
    }, "the finished sibling's pending write");
    controller.abort();
    await outcome;
    bench.holdSlow = false;
    const second = { messages: [new HumanMessage({ content: "second question", id: "h2" })] };
    await expect(plain.invoke(second as never, threadConfig("t") as never)).rejects.toThrow(/toolResult/);
    const calls = (await storedThread(inner, "t")).find((m) => AIMessage.isInstance(m) && m.tool_calls?.length);
    return (calls as AIMessage).tool_calls!.map((c) => c.id!);
  }

  let BENCH: ToolBench;
  let SAVER: MemorySaver;

  const third = { messages: [new HumanMessage({ content: "third question", id: "h3" })] };

  /** What the calls were reported as, and what the model and the store got for the finished one. */
  async function expectOneReportEach(
    model: RunningStub,
    reports: Report[],
    [finished, held]: string[],
    requestsBefore: number,
  ) {
    expect(model.rejections.map((r) => r.rule)).toEqual(["B1"]);
    const ofCall = (id: string) => reports.filter((r) => r.repair.toolCallId === id).map((r) => r.repair.action);
    expect(ofCall(finished)).toEqual(["salvaged_result"]);
    expect(ofCall(held)).toEqual(["synthesized_result"]);
    // The model is sent the real result in the very turn, and the stored thread holds it.
    expect(model.requests.slice(requestsBefore).every((r) => sendsResult(r, "lookup result for alpha"))).toBe(true);
    const stored = await storedThread(SAVER, "t");
    expect(stored.some((m) => ToolMessage.isInstance(m) && m.content === "lookup result for alpha")).toBe(true);
  }

  it("createAgent continued with toolCallRepair(): the finished call reported once, salvaged", async () => {
    const model = await stub(bothToolsThenAnswer());
    BENCH = new ToolBench();
    SAVER = new MemorySaver();
    const plain = createAgent({ model: bedrockModel(model), tools: BENCH.all, checkpointer: SAVER });
    const calls = await brokenBeforeAdoption(plain);

    const { reports, onRepair } = recorder();
    const repair = toolCallRepair({ onRepair });
    const agent = createAgent({
      model: bedrockModel(model),
      tools: BENCH.all,
      middleware: [repair.middleware],
      checkpointer: repair.checkpointer(SAVER),
    });
    const before = model.requests.length;
    await agent.invoke(third, threadConfig("t"));
    await expectOneReportEach(model, reports, calls, before);
  });

  it("createReactAgent continued with toolCallRepairKit() (model, hook, checkpointer): the same", async () => {
    const model = await stub(bothToolsThenAnswer());
    BENCH = new ToolBench();
    SAVER = new MemorySaver();
    const plain = createReactAgent({ llm: bedrockModel(model), tools: BENCH.all, version: "v2", checkpointer: SAVER });
    const calls = await brokenBeforeAdoption(plain);

    const { reports, onRepair } = recorder();
    const kit = toolCallRepairKit({ onRepair });
    const agent = createReactAgent({
      llm: kit.model(bedrockModel(model)),
      tools: BENCH.all,
      version: "v2",
      preModelHook: kit.preModelHook,
      checkpointer: kit.checkpointer(SAVER),
    });
    const before = model.requests.length;
    await agent.invoke(third, threadConfig("t"));
    await expectOneReportEach(model, reports, calls, before);
  });
});

/** A context manager on AsyncLocalStorage (what @opentelemetry/context-async-hooks provides), so a span is active across awaits. */
class AsyncContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active = () => this.storage.getStore() ?? ROOT_CONTEXT;
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(context, () => fn.apply(thisArg, args));
  }
  bind = <T>(_context: Context, target: T) => target;
  enable = () => this;
  disable = () => {
    this.storage.disable();
    return this;
  };
}

/** A metric reader collected on demand. */
class CollectingReader extends MetricReader {
  protected override async onShutdown() {}
  protected override async onForceFlush() {}
}

describe("metrics and span events, with @opentelemetry/api and the real SDK", () => {
  it("counts each repair on langgraph-tool-repair (action, problem, provider, surface), an event on the active span", async () => {
    const reader = new CollectingReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const spans = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    otelContext.setGlobalContextManager(new AsyncContextManager());
    metrics.setGlobalMeterProvider(meterProvider);
    trace.setGlobalTracerProvider(tracerProvider);
    cleanups.push(() => {
      metrics.disable();
      trace.disable();
      otelContext.disable();
    });

    const model = await stub(() => ({ text: "answer" }));
    const repair = toolCallRepair();
    const agent = createAgent({
      model: bedrockModel(model),
      tools: new ToolBench().all,
      middleware: [repair.middleware],
      checkpointer: repair.checkpointer(new MemorySaver()),
    });
    await trace.getTracer("test").startActiveSpan("operator's run", async (span) => {
      await agent.invoke({ messages: brokenThread() }, threadConfig("t-otel"));
      // The next turn needs the same request shaping: made again, counted once (as onRepair hears it).
      await agent.invoke({ messages: [human("and now?")] }, threadConfig("t-otel"));
      span.end();
    });
    expect(model.rejections).toEqual([]);

    const { resourceMetrics } = await reader.collect();
    const scope = resourceMetrics.scopeMetrics.find((s) => s.scope.name === "langgraph-tool-repair");
    const counter = scope?.metrics.find((m) => m.descriptor.name === "tool_call_repair.repairs");
    expect(counter?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([
      [{ action: "synthesized_result", problem: "orphan_call", provider: "strict", surface: "middleware" }, 1],
      [
        {
          action: "inserted_assistant_message",
          problem: "consecutive_same_role",
          provider: "bedrock",
          surface: "middleware",
        },
        1,
      ],
    ]);

    const [run] = spans.getFinishedSpans().filter((s) => s.name === "operator's run");
    const events = run.events.filter((e) => e.name === TOOL_CALL_REPAIR_EVENT).map((e) => e.attributes);
    // The repair and its context as the custom event carries them, and the provider.
    expect(events[0]).toEqual({
      action: "synthesized_result",
      problem: "orphan_call",
      index: 1,
      toolCallId: "call_0",
      toolName: "tool_call_0",
      toolRun: "outcome_unknown",
      detail: expect.stringContaining("call_0"),
      provider: "strict",
      surface: "middleware",
      threadId: "t-otel",
      checkpointNs: "",
    });
    // Span events follow the custom events: the request's shaping on each of the two model calls.
    expect(events.map((e) => e?.action)).toEqual([
      "synthesized_result",
      "inserted_assistant_message",
      "inserted_assistant_message",
    ]);
  });
});
